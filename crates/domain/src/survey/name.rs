//! A survey's name, checked once as it comes in (`SurveyName::parse`).

use crate::error::ValidationError;

/// Longest survey name.
pub const MAX_NAME_CHARS: usize = 400;

/// A survey's name: trimmed, not blank, at most [`MAX_NAME_CHARS`] characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurveyName(String);

impl SurveyName {
    /// # Errors
    /// DRF's `blank` or `max_length` error for `name`.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let name = raw.trim();
        if name.is_empty() {
            return Err(ValidationError::blank("name"));
        }
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(ValidationError::too_long("name", MAX_NAME_CHARS));
        }
        Ok(Self(name.to_owned()))
    }

    /// A name built to fit (a copy's: a kept name and a short tail), not checked again.
    pub(crate) fn fitted(name: String) -> Self {
        debug_assert!(name.chars().count() <= MAX_NAME_CHARS && !name.trim().is_empty());
        Self(name)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ValidationCode;

    #[test]
    fn names_are_trimmed_and_must_not_be_blank_or_too_long() {
        assert_eq!(SurveyName::parse("  Hi  ").unwrap().as_str(), "Hi");
        let blank = SurveyName::parse("   ").unwrap_err();
        assert_eq!(
            (blank.attr.as_deref(), blank.code, blank.detail.as_str()),
            (
                Some("name"),
                ValidationCode::Blank,
                "This field may not be blank."
            )
        );
        let long = SurveyName::parse(&"x".repeat(401)).unwrap_err();
        assert_eq!(
            (long.code, long.detail.as_str()),
            (
                ValidationCode::MaxLength,
                "Ensure this field has no more than 400 characters."
            )
        );
        assert!(SurveyName::parse(&"x".repeat(400)).is_ok());
    }
}
