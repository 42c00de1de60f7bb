//! `form_content`: the layout PostHog's form builder (a TipTap document) saves with a survey.
//! Nothing renders from it (the SDKs read the questions), so Burrow keeps it as sent and gives
//! it back, within a bound PostHog does not set.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ValidationError;
use crate::json_fields::json_length;

/// The most bytes a survey's `form_content` may take as JSON.
pub const MAX_FORM_CONTENT_BYTES: usize = 262_144;

/// A form builder's document, any JSON value within [`MAX_FORM_CONTENT_BYTES`] (read back from
/// storage as stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FormContent(Value);

impl FormContent {
    /// # Errors
    /// `form_content` heavier than [`MAX_FORM_CONTENT_BYTES`].
    pub fn parse(value: Value) -> Result<Self, ValidationError> {
        if json_length(&value) > MAX_FORM_CONTENT_BYTES {
            return Err(ValidationError::invalid(
                "form_content",
                format!("Form content may take at most {MAX_FORM_CONTENT_BYTES} bytes as JSON."),
            ));
        }
        Ok(Self(value))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_document_is_kept_as_sent_within_its_bound() {
        let document = json!({"type": "doc", "content": [{"type": "paragraph"}]});
        let kept = FormContent::parse(document.clone()).unwrap();
        assert_eq!(serde_json::to_value(&kept).unwrap(), document);
        let heavy = json!({"text": "x".repeat(MAX_FORM_CONTENT_BYTES)});
        let error = FormContent::parse(heavy).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("form_content"));
    }
}
