//! The free-form objects of a survey: `appearance` (checked and its thank-you texts sanitized)
//! and `conditions` (must be an object).

use serde_json::{Map, Value};

use super::html::sanitize;
use crate::error::{ValidationCode, ValidationError};

const SANITIZED_APPEARANCE_TEXTS: [&str; 3] = [
    "thankYouMessageHeader",
    "thankYouMessageDescription",
    "thankYouMessageCloseButtonText",
];

/// A survey's checked `appearance`, its thank-you texts sanitized.
#[derive(Debug, Clone, PartialEq)]
pub struct Appearance(Map<String, Value>);

impl Appearance {
    /// # Errors
    /// PostHog's messages with `attr: appearance`.
    pub fn parse(value: &Value) -> Result<Self, ValidationError> {
        parse_appearance(value).map(Self)
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

/// A survey's display `conditions`: any object.
#[derive(Debug, Clone, PartialEq)]
pub struct Conditions(Map<String, Value>);

impl Conditions {
    /// # Errors
    /// `Conditions must be an object` with `attr: conditions`.
    pub fn parse(value: &Value) -> Result<Self, ValidationError> {
        parse_conditions(value).map(Self)
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

fn parse_appearance(value: &Value) -> Result<Map<String, Value>, ValidationError> {
    let invalid =
        |detail: &str| ValidationError::field("appearance", ValidationCode::Invalid, detail);
    let Value::Object(appearance) = value else {
        return Err(invalid("Appearance must be an object"));
    };
    let mut appearance = appearance.clone();
    for field in SANITIZED_APPEARANCE_TEXTS {
        if let Some(Value::String(text)) = appearance.get(field) {
            let clean = sanitize(text);
            appearance.insert(field.into(), Value::String(clean));
        }
    }
    match appearance.get("thankYouMessageDescriptionContentType") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "text" || t == "html" => {}
        Some(_) => {
            return Err(invalid(
                "thankYouMessageDescriptionContentType must be one of ['text', 'html']",
            ));
        }
    }
    match appearance.get("surveyPopupDelaySeconds") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.as_f64().is_some_and(|s| s >= 0.0) => {}
        Some(_) => {
            return Err(invalid(
                "Survey popup delay seconds must be a positive integer",
            ));
        }
    }
    match appearance.get("whiteLabel") {
        None | Some(Value::Null) | Some(Value::Bool(_)) => {}
        Some(_) => return Err(invalid("whiteLabel must be a boolean")),
    }
    Ok(appearance)
}

fn parse_conditions(value: &Value) -> Result<Map<String, Value>, ValidationError> {
    match value {
        Value::Object(conditions) => Ok(conditions.clone()),
        _ => Err(ValidationError::field(
            "conditions",
            ValidationCode::Invalid,
            "Conditions must be an object",
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn appearance_must_be_an_object_with_sane_settings() {
        assert_eq!(
            parse_appearance(&json!("red")).unwrap_err().detail,
            "Appearance must be an object"
        );
        assert_eq!(
            parse_appearance(&json!({"surveyPopupDelaySeconds": -1}))
                .unwrap_err()
                .detail,
            "Survey popup delay seconds must be a positive integer"
        );
        assert_eq!(
            parse_appearance(&json!({"whiteLabel": "yes"}))
                .unwrap_err()
                .detail,
            "whiteLabel must be a boolean"
        );
        assert_eq!(
            parse_appearance(&json!({"thankYouMessageDescriptionContentType": "md"}))
                .unwrap_err()
                .detail,
            "thankYouMessageDescriptionContentType must be one of ['text', 'html']"
        );
    }

    #[test]
    fn thank_you_texts_are_sanitized_and_other_values_round_trip() {
        let parsed = parse_appearance(&json!({
            "thankYouMessageHeader": "<script>x</script>Thanks!",
            "backgroundColor": " ",
            "surveyPopupDelaySeconds": 0
        }))
        .unwrap();
        assert_eq!(parsed["thankYouMessageHeader"], "Thanks!");
        assert_eq!(parsed["backgroundColor"], " ");
    }

    #[test]
    fn conditions_must_be_an_object() {
        assert_eq!(
            parse_conditions(&json!([])).unwrap_err().detail,
            "Conditions must be an object"
        );
        assert!(parse_conditions(&json!({"url": "x"})).is_ok());
    }
}
