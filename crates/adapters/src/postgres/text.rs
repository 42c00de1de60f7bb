//! Text as PostgreSQL can store it. Its `text` and `jsonb` cannot hold U+0000, which captured
//! events may carry anywhere (ids, property names and values), so every such string is written
//! — and looked up — with U+FFFD in its place. This is the one place that replacement happens.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What U+0000 becomes: the replacement character, so the text stays valid and visibly altered.
const NUL_REPLACEMENT: &str = "\u{FFFD}";

/// `text` as stored: unchanged (borrowed) unless it holds U+0000, which PostgreSQL refuses.
pub(crate) fn pg_text(text: &str) -> Cow<'_, str> {
    if text.contains('\0') {
        Cow::Owned(text.replace('\0', NUL_REPLACEMENT))
    } else {
        Cow::Borrowed(text)
    }
}

/// A `LIKE` pattern matching what contains `term`: its `\`, `%` and `_` escaped, so they match
/// themselves (backslash is the default escape character).
pub(crate) fn contains_pattern(term: &str) -> String {
    let mut pattern = String::from("%");
    for c in term.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// A `jsonb` object as stored: every key and string inside, at any depth, through [`pg_text`].
pub(crate) fn pg_object(fields: Map<String, Value>) -> Map<String, Value> {
    fields
        .into_iter()
        .map(|(key, value)| (pg_string(key), pg_json(value)))
        .collect()
}

fn pg_json(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(pg_string(text)),
        Value::Array(items) => Value::Array(items.into_iter().map(pg_json).collect()),
        Value::Object(fields) => Value::Object(pg_object(fields)),
        other => other,
    }
}

/// [`pg_text`] of an owned string, which is kept as it is when nothing needs replacing.
pub(crate) fn pg_string(text: String) -> String {
    match pg_text(&text) {
        Cow::Owned(replaced) => replaced,
        Cow::Borrowed(_) => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_without_nul_is_borrowed_and_nul_becomes_the_replacement_character() {
        assert!(matches!(pg_text("plain"), Cow::Borrowed("plain")));
        assert_eq!(pg_text("a\0b\0"), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(pg_string("p\0".to_owned()), "p\u{FFFD}");
    }

    #[test]
    fn json_strings_and_keys_are_replaced_at_any_depth() {
        let sent = json!({"a\0": ["b\0", {"c\0": "d\0"}, 1, null, true], "e": "f"});
        let stored = pg_object(sent.as_object().unwrap().clone());
        assert_eq!(
            Value::Object(stored),
            json!({"a\u{FFFD}": ["b\u{FFFD}", {"c\u{FFFD}": "d\u{FFFD}"}, 1, null, true], "e": "f"})
        );
    }
}
