//! `score_gte`/`score_lte`: a question's answer read as a number (PostHog's `toFloat(answer)`)
//! and bounded. Both stores read answers as numbers by [`numeric_answer`]'s rule.

use serde_json::Value;

/// Bounds on a question's answer as a number, each inclusive; neither: no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScoreRange {
    pub gte: Option<f64>,
    pub lte: Option<f64>,
}

impl ScoreRange {
    /// Whether a bound is set (the list then needs a question to read scores from).
    pub fn is_bounded(&self) -> bool {
        self.gte.is_some() || self.lte.is_some()
    }

    /// Whether `answer` is a number within the bounds (always, without bounds).
    pub fn contains(&self, answer: &Value) -> bool {
        if !self.is_bounded() {
            return true;
        }
        numeric_answer(answer).is_some_and(|score| {
            self.gte.is_none_or(|gte| score >= gte) && self.lte.is_none_or(|lte| score <= lte)
        })
    }
}

/// An answer as a number: a JSON number, or a string that is a decimal number as written —
/// an optional sign, digits with an optional fraction (or a fraction alone), and an optional
/// exponent of at most two digits, nothing around it (`"9"`, `"-1.5"`, `".5"`, `"2e3"`); any
/// other answer is no number.
pub fn numeric_answer(answer: &Value) -> Option<f64> {
    match answer {
        Value::Number(number) => number.as_f64(),
        Value::String(text) if is_decimal(text) => text.parse().ok(),
        _ => None,
    }
}

/// `^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,2})?$`, the pattern the SQL store
/// matches.
fn is_decimal(text: &str) -> bool {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = text.strip_prefix(['+', '-']).unwrap_or(text);
    let whole = digits(rest);
    let mut rest = &rest[whole..];
    let fraction = match rest.strip_prefix('.') {
        Some(after) => {
            let n = digits(after);
            rest = &after[n..];
            n
        }
        None => 0,
    };
    if whole == 0 && fraction == 0 {
        return false;
    }
    if let Some(exponent) = rest.strip_prefix(['e', 'E']) {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        let n = digits(exponent);
        return (1..=2).contains(&n) && n == exponent.len();
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_and_decimal_texts_are_scores_and_nothing_else_is() {
        for (answer, score) in [
            (json!(9), Some(9.0)),
            (json!("9"), Some(9.0)),
            (json!("-1.5"), Some(-1.5)),
            (json!("+.5"), Some(0.5)),
            (json!("5."), Some(5.0)),
            (json!("2e3"), Some(2000.0)),
            (json!("2E-2"), Some(0.02)),
            (json!(" 9"), None),
            (json!("9 "), None),
            (json!("."), None),
            (json!("1e"), None),
            (json!("1e999"), None),
            (json!("inf"), None),
            (json!("NaN"), None),
            (json!("0x1A"), None),
            (json!(""), None),
            (json!(["9"]), None),
            (json!(true), None),
        ] {
            assert_eq!(numeric_answer(&answer), score, "{answer}");
        }
    }

    #[test]
    fn a_range_keeps_scores_within_its_inclusive_bounds() {
        let range = ScoreRange {
            gte: Some(7.0),
            lte: Some(9.0),
        };
        assert!(range.contains(&json!("7")));
        assert!(range.contains(&json!(9)));
        assert!(!range.contains(&json!("10")));
        assert!(!range.contains(&json!("great")));
        assert!(ScoreRange::default().contains(&json!("great")));
    }
}
