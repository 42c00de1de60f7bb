//! How deeply a plugin's source nests, bounded before oxc parses it.
//!
//! oxc's parser recurses once (or a few times) per level of nesting: brackets, but also chains
//! that close nothing (`!!!x`, `a=b=c`, `a=>b=>c`, `if(a)if(b)`, `else if`, labels, generics).
//! A thread that runs out of stack aborts the whole process — every tenant — and no panic
//! handler can catch it, so a source is measured by this single pass over its bytes first and
//! refused past [`MAX_NESTING`]; the parse itself then runs on a thread whose stack is sized for
//! that bound with a wide margin (`super::PARSER_STACK_BYTES`).
//!
//! The pass only has to be *conservative*: it may count more levels than the parser descends (a
//! plugin's capabilities are then not read, which keeps the old ones — never an error for the
//! client), but never fewer by more than a small factor. So it counts every token of a chain
//! since the last point where the parser surely unwinds (`;`, a newline that ends a statement,
//! a `,` for expression chains), and refuses whatever it cannot lex for certain: text where a
//! regular expression and a division would read differently, JSX, HTML-like comments, anything
//! unterminated or unbalanced.

/// The deepest nesting measured here that is handed to the parser. Real plugins stay far below
/// (a handful of units per level of code); oxc needs at most about 3 KiB of stack a unit in a
/// debug build, 1.5 KiB in release (measured for every construct above).
pub(super) const MAX_NESTING: usize = 1000;

/// Why a source is not handed to the parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    TooDeep { line: usize },
    Unreadable { line: usize, what: &'static str },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooDeep { line } => write!(
                formatter,
                "the source nests more than {MAX_NESTING} levels deep (line {line})"
            ),
            Self::Unreadable { line, what } => {
                write!(formatter, "{what} (line {line}): not analyzed")
            }
        }
    }
}

/// Checks that `source` nests at most [`MAX_NESTING`] levels. `jsx`: the dialect allows JSX,
/// whose text children this pass cannot tell from code, so only self-closing elements pass.
///
/// # Errors
/// The first reason found not to parse it.
pub(super) fn check(source: &str, jsx: bool) -> Result<(), Refusal> {
    // In scripts, `<!--` and `-->` start comments that end at the line's end (Annex B); read as
    // code they could open a template literal that hides what the parser sees.
    if source.contains("<!--") || source.contains("-->") {
        return Err(Refusal::Unreadable {
            line: 1,
            what: "an HTML-like comment",
        });
    }
    Scanner::new(source, jsx).run()
}

/// What the last token was, for the two questions the next one asks: is a `/` a division or a
/// regular expression, and does a newline end the statement?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing yet, an operator, an opening bracket or a keyword like `return`: a `/` starts a
    /// regular expression, a newline ends nothing.
    ExpectsOperand,
    /// A name, a literal or `]`: a `/` divides; a newline before a name ends the statement.
    Operand,
    /// `)`, `}`, `++`, `--` or a postfix `!`: usually an operand, but a regular expression may
    /// follow (`if (a) /x/`, `} /x/`), so a `/` is checked both ways.
    Ambiguous,
    /// `.` or `?.`: the next word is a property name, whatever it spells.
    Dot,
}

/// One open bracket: what closes it and the count of the levels around it.
#[derive(Debug)]
struct Frame {
    opener: u8,
    /// Nesting outside this bracket, itself included.
    depth: usize,
    /// The enclosing level's counts, resumed when it closes.
    outer: Level,
    /// `(` of `if`, `for`, `while` or `with`: a statement follows its `)`.
    condition: bool,
}

/// The open chains of one bracket level.
#[derive(Debug, Clone, Copy, Default)]
struct Level {
    /// Statement nesting that a `,` does not end: `if`, `else`, loops, labels, and `<`
    /// (generics nest across their commas).
    statements: usize,
    /// Every other token since the expression began.
    expression: usize,
}

/// A template literal's `${` frame.
const TEMPLATE: u8 = b'`';

struct Scanner<'s> {
    text: &'s str,
    bytes: &'s [u8],
    at: usize,
    line: usize,
    jsx: bool,
    frames: Vec<Frame>,
    level: Level,
    last: Last,
    /// A line ended since the last token.
    newline: bool,
    /// The last token was a name read where a statement starts: a `:` after it is a label.
    label_candidate: bool,
    /// A statement starts here (after `;`, `{`, a condition's `)`, `else`, a label).
    statement_start: bool,
    /// The statement chain ends at the next token unless it is `else`.
    ended: bool,
    /// The last word, when it was a keyword that takes a condition.
    condition_keyword: bool,
}

impl<'s> Scanner<'s> {
    fn new(text: &'s str, jsx: bool) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            at: 0,
            line: 1,
            jsx,
            frames: Vec::new(),
            level: Level::default(),
            last: Last::ExpectsOperand,
            newline: false,
            label_candidate: false,
            statement_start: true,
            ended: false,
            condition_keyword: false,
        }
    }

    fn run(mut self) -> Result<(), Refusal> {
        if self.bytes.starts_with(b"#!") {
            self.line_comment();
        }
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'\n' => {
                    self.line += 1;
                    self.newline = true;
                    self.at += 1;
                }
                b'\r' => {
                    self.newline = true;
                    self.at += 1;
                }
                b' ' | b'\t' | 0x0b | 0x0c => self.at += 1,
                _ if self.line_separator_at(self.at) => {
                    self.newline = true;
                    self.at += 3;
                }
                0x80.. if self.space_at(self.at) => {
                    self.at += self.char_len(self.at);
                }
                b'/' if self.peek(1) == Some(b'/') => self.line_comment(),
                b'/' if self.peek(1) == Some(b'*') => self.block_comment()?,
                _ => self.token(byte)?,
            }
        }
        // Brackets left open at the end were counted all the same: the parser may report them.
        Ok(())
    }

    /// One token starting with `byte`, not whitespace or a comment.
    fn token(&mut self, byte: u8) -> Result<(), Refusal> {
        let word = is_word_byte(byte).then(|| self.word_at(self.at));
        let label = std::mem::take(&mut self.label_candidate);
        self.begin_token(word);
        let statement_start = std::mem::take(&mut self.statement_start);
        let condition = std::mem::take(&mut self.condition_keyword);
        if let Some(word) = word {
            self.word(word, statement_start);
            return self.bounded();
        }
        match byte {
            b'\'' | b'"' => {
                self.string(byte)?;
                self.operand();
            }
            b'`' => {
                self.at += 1;
                self.template()?;
            }
            b'(' | b'[' | b'{' => {
                self.at += 1;
                self.open(byte, condition);
            }
            b')' | b']' | b'}' => {
                self.at += 1;
                self.close(byte)?;
            }
            b'/' => self.slash()?,
            b';' => {
                self.at += 1;
                self.level.expression = 0;
                self.ended = true;
                self.statement_start = true;
                self.last = Last::ExpectsOperand;
            }
            b',' => {
                self.at += 1;
                self.level.expression = 0;
                self.last = Last::ExpectsOperand;
            }
            b'.' => {
                self.at += 1;
                self.last = Last::Dot;
            }
            b'?' if self.peek(1) == Some(b'.')
                && !self.peek(2).is_some_and(|b| b.is_ascii_digit()) =>
            {
                self.at += 2;
                self.last = Last::Dot;
            }
            b':' if label => {
                self.at += 1;
                self.level.statements += 1;
                self.statement_start = true;
                self.last = Last::ExpectsOperand;
            }
            b'<' if self.jsx && !matches!(self.last, Last::Operand | Last::Ambiguous) => {
                self.at = self
                    .self_closing_element_end()
                    .ok_or_else(|| self.unreadable("JSX with children or expressions"))?;
                self.operand();
            }
            b'<' => {
                self.at += 1;
                self.level.statements += 1;
                self.last = Last::ExpectsOperand;
            }
            b'+' | b'-' if self.peek(1) == Some(byte) => {
                self.at += 2;
                self.level.expression += 1;
                self.last = match self.last {
                    Last::Operand | Last::Ambiguous => Last::Ambiguous,
                    _ => Last::ExpectsOperand,
                };
            }
            b'!' if matches!(self.last, Last::Operand | Last::Ambiguous)
                && self.peek(1) != Some(b'=') =>
            {
                // TypeScript's non-null assertion `a!`.
                self.at += 1;
                self.level.expression += 1;
                self.last = Last::Ambiguous;
            }
            _ => {
                self.at += 1;
                self.level.expression += 1;
                self.last = Last::ExpectsOperand;
            }
        }
        self.bounded()
    }

    /// Settles what the gap before a token ended: a pending `;` or a newline that the parser's
    /// automatic semicolon insertion turns into a statement's end.
    fn begin_token(&mut self, word: Option<&[u8]>) {
        let continues = word.is_some_and(|word| CONTINUATIONS.contains(&word));
        let newline_ends = self.newline
            && word.is_some()
            && !continues
            && matches!(self.last, Last::Operand | Last::Ambiguous)
            && !self.statement_start
            && self.frames.last().is_none_or(|frame| frame.opener == b'{');
        if newline_ends {
            self.level.expression = 0;
            self.ended = true;
            self.statement_start = true;
        }
        if self.ended && word != Some(b"else") {
            self.level.statements = 0;
        }
        self.ended = false;
        self.newline = false;
    }

    /// `word`, at `self.at`: a name, a number or a keyword.
    fn word(&mut self, word: &[u8], statement_start: bool) {
        self.at += word.len();
        let after_dot = self.last == Last::Dot;
        if after_dot || !KEYWORDS.contains(&word) {
            self.label_candidate = statement_start && !after_dot;
            self.operand();
            return;
        }
        if STATEMENT_KEYWORDS.contains(&word) {
            self.level.statements += 1;
            self.condition_keyword = CONDITION_KEYWORDS.contains(&word);
            self.statement_start = matches!(word, b"else" | b"do");
        } else {
            self.level.expression += 1;
        }
        self.last = if OPERAND_KEYWORDS.contains(&word) {
            Last::Operand
        } else {
            Last::ExpectsOperand
        };
    }

    /// A string literal, `quote` at `self.at`.
    fn string(&mut self, quote: u8) -> Result<(), Refusal> {
        self.at += 1;
        loop {
            match self.bytes.get(self.at) {
                None | Some(b'\n' | b'\r') => return Err(self.unreadable("an unterminated string")),
                Some(b'\\') => self.escape(),
                Some(&byte) if byte == quote => {
                    self.at += 1;
                    return Ok(());
                }
                Some(_) => self.at += 1,
            }
        }
    }

    /// The text of a template literal after its `` ` `` or a `}` closing one of its `${`.
    fn template(&mut self) -> Result<(), Refusal> {
        loop {
            match self.bytes.get(self.at) {
                None => return Err(self.unreadable("an unterminated template literal")),
                Some(b'\\') => self.escape(),
                Some(b'`') => {
                    self.at += 1;
                    self.operand();
                    return Ok(());
                }
                Some(b'$') if self.peek(1) == Some(b'{') => {
                    self.at += 2;
                    self.open(TEMPLATE, false);
                    return Ok(());
                }
                Some(b'\n') => {
                    self.line += 1;
                    self.at += 1;
                }
                Some(_) => self.at += 1,
            }
        }
    }

    /// `\` and the character it escapes (a line continuation included).
    fn escape(&mut self) {
        self.at += 1;
        match self.bytes.get(self.at) {
            Some(b'\r') if self.peek(1) == Some(b'\n') => {
                self.line += 1;
                self.at += 2;
            }
            Some(b'\n') => {
                self.line += 1;
                self.at += 1;
            }
            Some(_) => self.at += 1,
            None => {}
        }
    }

    /// A `/` that starts no comment: a regular expression where an operand is expected, else a
    /// division — after `)` or `}` only when reading it as a regular expression would not hide
    /// brackets or quotes from this pass.
    fn slash(&mut self) -> Result<(), Refusal> {
        match self.last {
            Last::ExpectsOperand => {
                let end = self
                    .regex_end(self.at)
                    .ok_or_else(|| self.unreadable("an unterminated regular expression"))?;
                self.at = end;
                while self.bytes.get(self.at).copied().is_some_and(is_word_byte) {
                    self.at += 1;
                }
                self.operand();
                return Ok(());
            }
            Last::Ambiguous => {
                if let Some(end) = self.regex_end(self.at)
                    && hides_code(&self.bytes[self.at + 1..end - 1])
                {
                    return Err(
                        self.unreadable("a `/` that may start a regular expression or divide")
                    );
                }
            }
            Last::Operand | Last::Dot => {}
        }
        self.at += 1;
        self.level.expression += 1;
        self.last = Last::ExpectsOperand;
        Ok(())
    }

    /// Where a JSX element at `self.at` ends when it is a self-closing tag whose attributes are
    /// plain strings (`<div />`, `<a href="x"/>`); the text of elements with children or
    /// expressions cannot be told from code here.
    fn self_closing_element_end(&self) -> Option<usize> {
        let mut at = self.at + 1;
        let mut quote = None;
        while let Some(&byte) = self.bytes.get(at) {
            match (quote, byte) {
                (_, b'\n' | b'\r') => return None,
                (Some(open), _) if byte == open => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => quote = Some(byte),
                (None, b'/') if self.bytes.get(at + 1) == Some(&b'>') => return Some(at + 2),
                (None, b'{' | b'}' | b'<' | b'>' | b'/') => return None,
                (None, _) => {}
            }
            at += 1;
        }
        None
    }

    /// Where a regular expression whose `/` is at `start` ends (after its closing `/`), read
    /// as oxc's lexer reads one: escapes, classes, no line terminator.
    fn regex_end(&self, start: usize) -> Option<usize> {
        let mut at = start + 1;
        let mut class = false;
        loop {
            let byte = *self.bytes.get(at)?;
            if byte == b'\n' || byte == b'\r' || self.line_separator_at(at) {
                return None;
            }
            match byte {
                b'\\' => {
                    let next = *self.bytes.get(at + 1)?;
                    if next == b'\n' || next == b'\r' || self.line_separator_at(at + 1) {
                        return None;
                    }
                    at += 2;
                    continue;
                }
                b'/' if !class => return Some(at + 1),
                b'[' => class = true,
                b']' => class = false,
                _ => {}
            }
            at += 1;
        }
    }

    fn open(&mut self, opener: u8, condition: bool) {
        let depth = self.depth() + 1;
        self.frames.push(Frame {
            opener,
            depth,
            outer: self.level,
            condition,
        });
        self.level = Level::default();
        self.statement_start = opener == b'{';
        self.last = Last::ExpectsOperand;
    }

    fn close(&mut self, closer: u8) -> Result<(), Refusal> {
        let Some(frame) = self.frames.pop() else {
            return Err(self.unreadable("an unbalanced bracket"));
        };
        let expected = match frame.opener {
            b'(' => b')',
            b'[' => b']',
            _ => b'}',
        };
        if closer != expected {
            return Err(self.unreadable("an unbalanced bracket"));
        }
        self.level = frame.outer;
        if frame.opener == TEMPLATE {
            return self.template();
        }
        self.level.expression += 1;
        if frame.condition {
            self.statement_start = true;
            self.last = Last::ExpectsOperand;
        } else {
            self.last = if closer == b']' {
                Last::Operand
            } else {
                Last::Ambiguous
            };
        }
        Ok(())
    }

    /// A name, number, string or template ended: counted in the expression chain.
    fn operand(&mut self) {
        self.level.expression += 1;
        self.last = Last::Operand;
    }

    fn depth(&self) -> usize {
        self.frames.last().map_or(0, |frame| frame.depth)
            + self.level.statements
            + self.level.expression
    }

    /// Every token ends here: refused once the count passes the bound.
    fn bounded(&self) -> Result<(), Refusal> {
        if self.depth() > MAX_NESTING {
            Err(Refusal::TooDeep { line: self.line })
        } else {
            Ok(())
        }
    }

    fn line_comment(&mut self) {
        while let Some(&byte) = self.bytes.get(self.at) {
            if byte == b'\n' || byte == b'\r' || self.line_separator_at(self.at) {
                return;
            }
            self.at += 1;
        }
    }

    fn block_comment(&mut self) -> Result<(), Refusal> {
        let start_line = self.line;
        self.at += 2;
        loop {
            match self.bytes.get(self.at) {
                None => {
                    return Err(Refusal::Unreadable {
                        line: start_line,
                        what: "an unterminated comment",
                    });
                }
                Some(b'*') if self.peek(1) == Some(b'/') => {
                    self.at += 2;
                    return Ok(());
                }
                Some(b'\n') => {
                    self.line += 1;
                    self.newline = true;
                    self.at += 1;
                }
                Some(b'\r') => {
                    self.newline = true;
                    self.at += 1;
                }
                Some(_) if self.line_separator_at(self.at) => {
                    self.newline = true;
                    self.at += 3;
                }
                Some(_) => self.at += 1,
            }
        }
    }

    /// U+2028 or U+2029, which end lines (and `//` comments) as `\n` does.
    fn line_separator_at(&self, at: usize) -> bool {
        matches!(self.bytes.get(at..at + 3), Some([0xe2, 0x80, 0xa8 | 0xa9]))
    }

    /// Non-ASCII white space at `at` (JavaScript's Zs and U+FEFF), which separates tokens.
    fn space_at(&self, at: usize) -> bool {
        self.text
            .get(at..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| !c.is_ascii() && (c.is_whitespace() || c == '\u{feff}'))
    }

    fn char_len(&self, at: usize) -> usize {
        self.text
            .get(at..)
            .and_then(|rest| rest.chars().next())
            .map_or(1, char::len_utf8)
    }

    /// The name or number starting at `start`: word bytes up to white space, a line
    /// terminator or punctuation.
    fn word_at(&self, start: usize) -> &'s [u8] {
        let bytes: &'s [u8] = self.bytes;
        let mut end = start;
        while end < bytes.len() && is_word_byte(bytes[end]) {
            if bytes[end] >= 0x80 {
                if self.line_separator_at(end) || self.space_at(end) {
                    break;
                }
                end += self.char_len(end);
            } else {
                end += 1;
            }
        }
        &bytes[start..end]
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    fn unreadable(&self, what: &'static str) -> Refusal {
        Refusal::Unreadable {
            line: self.line,
            what,
        }
    }
}

/// Bytes of names and numbers: ASCII letters, digits, `_`, `$`, `\` (escapes), `#` (private
/// names) and every byte of a non-ASCII character.
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'$' | b'\\' | b'#') || byte >= 0x80
}

/// Whether a regular expression's body, read as code instead, would open a string or close a
/// bracket it did not open: then the two readings differ in what this pass counts.
fn hides_code(body: &[u8]) -> bool {
    let mut open = Vec::new();
    for &byte in body {
        match byte {
            b'\'' | b'"' | b'`' => return true,
            b'(' | b'[' | b'{' => open.push(byte),
            b')' | b']' | b'}' => {
                let expected = match byte {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if open.pop() != Some(expected) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Reserved words and the contextual ones that nest; any other word is a name.
const KEYWORDS: &[&[u8]] = &[
    b"as",
    b"async",
    b"await",
    b"break",
    b"case",
    b"catch",
    b"class",
    b"const",
    b"continue",
    b"debugger",
    b"default",
    b"delete",
    b"do",
    b"else",
    b"export",
    b"extends",
    b"false",
    b"finally",
    b"for",
    b"function",
    b"if",
    b"implements",
    b"import",
    b"in",
    b"infer",
    b"instanceof",
    b"keyof",
    b"let",
    b"new",
    b"null",
    b"of",
    b"readonly",
    b"return",
    b"satisfies",
    b"super",
    b"switch",
    b"this",
    b"throw",
    b"true",
    b"try",
    b"typeof",
    b"unique",
    b"var",
    b"void",
    b"while",
    b"with",
    b"yield",
];

/// Keywords that nest a statement inside the one they start.
const STATEMENT_KEYWORDS: &[&[u8]] = &[b"if", b"else", b"for", b"while", b"do", b"with"];

/// Keywords whose `(…)` is followed by a statement.
const CONDITION_KEYWORDS: &[&[u8]] = &[b"if", b"for", b"while", b"with"];

/// Keywords that are values: a `/` after them divides.
const OPERAND_KEYWORDS: &[&[u8]] = &[b"this", b"super", b"null", b"true", b"false"];

/// Words that continue the statement before a newline instead of starting one.
const CONTINUATIONS: &[&[u8]] = &[
    b"else",
    b"catch",
    b"finally",
    b"in",
    b"instanceof",
    b"of",
    b"as",
    b"satisfies",
    b"extends",
    b"implements",
    b"while",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(source: &str) -> bool {
        check(source, false).is_ok()
    }

    #[test]
    fn ordinary_code_passes() {
        for source in [
            "export function processEvent(event) { if (a) { return event } else { return null } }",
            "const a = (b + c) / (d + e) / 2\nconst re = /[/]\\//g.test(x)",
            "if (x) /re/.test(y)\nlet s = 'a(' + \"b[\" + `c{${d}}`",
            "module.exports = { a: 1, b: 2, c: [1, 2, 3], d: x => y => z }",
            "// a comment ((((\n/* another (((( */ let a = 1",
            "function f<T extends Map<K, V>>(a: T): T { return a! }",
            "x = a++ / 2; y = a! / 3; z = this / 4",
        ] {
            assert_eq!(check(source, false), Ok(()), "{source}");
        }
    }

    #[test]
    fn each_kind_of_deep_nesting_is_refused() {
        let deep = MAX_NESTING + 1;
        for source in [
            format!("const a={}1{};", "(".repeat(deep), ")".repeat(deep)),
            format!("const a={}1;", "!".repeat(deep)),
            format!("{}1;", "a=".repeat(deep)),
            format!("{}1;", "a=>".repeat(deep)),
            format!("{}1;", "a?b:".repeat(deep)),
            format!("{}x;", "if(a)".repeat(deep)),
            format!("if(a)x;{}", "else if(a)x;".repeat(deep)),
            format!("{}x;", "a:".repeat(deep)),
            format!("{}X;", "new ".repeat(deep)),
            format!("{}1{}", "`${".repeat(deep), "}`".repeat(deep)),
            format!("let x: {}T{};", "A<B,".repeat(deep), ">".repeat(deep)),
            format!("{}x, y;", "if(a)".repeat(deep)),
            format!("{}x\ny", "if(a)\n".repeat(deep)),
            // Labels nest statements that a comma does not end, inside function bodies too.
            format!(
                "{}{}",
                "a:b:c:d:e:f:g:h:i:j: y, function(){".repeat(deep / 10),
                "}".repeat(deep / 10)
            ),
        ] {
            assert!(
                matches!(check(&source, false), Err(Refusal::TooDeep { .. })),
                "{}",
                &source[..40]
            );
        }
    }

    #[test]
    fn long_flat_code_is_not_deep() {
        let object = format!("module.exports = {{ {} }}", "a: [1, 2], ".repeat(5000));
        let statements = "a = b + c;\n".repeat(5000);
        let lines = "a = b + c\n".repeat(5000);
        for source in [object, statements, lines] {
            assert!(depth_ok(&source));
        }
    }

    #[test]
    fn text_the_parser_reads_as_code_is_never_hidden_in_a_string_or_comment() {
        let parens = format!(
            "{}1{}",
            "(".repeat(MAX_NESTING + 1),
            ")".repeat(MAX_NESTING + 1)
        );
        for source in [
            // A regular expression after `)` holding a quote.
            format!("if (a) x = (b) /'/; {parens}; '"),
            format!("x = {{}} /`/; {parens}; `"),
            // `//` comments end at U+2028 too.
            format!("// comment\u{2028}{parens}"),
            // HTML-like comments in scripts.
            format!("<!-- `\n{parens}\n`"),
            // A property named like a keyword divides.
            format!("a.return / {parens} / 1"),
        ] {
            assert!(check(&source, false).is_err(), "{}", &source[..20]);
        }
        assert!(check("x = <div>'</div>", true).is_err());
        assert!(check("x = <div a={b} />", true).is_err());
        assert_eq!(check("x = <div a=\"b\" />", true), Ok(()));
    }

    #[test]
    fn unterminated_and_unbalanced_sources_are_refused() {
        for source in ["'abc", "`abc", "/* abc", "x = /abc", "(]", ")", "'a\nb'"] {
            assert!(check(source, false).is_err(), "{source}");
        }
    }
}
