//! `FlagKey`: the identifier clients evaluate a flag by, checked once on the way in.

use std::sync::OnceLock;

use regex::Regex;

use crate::error::{ValidationCode, ValidationError};

/// Longest flag key.
pub const MAX_KEY_CHARS: usize = 400;
/// What a flag key is made of (the OpenAPI document states it as given here).
pub const KEY_PATTERN: &str = "^[a-zA-Z0-9_-]+$";

/// A valid flag key: [`KEY_PATTERN`], at most [`MAX_KEY_CHARS`] characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagKey(String);

impl FlagKey {
    /// # Errors
    /// PostHog's messages with `attr: key` for a blank, long or ill-formed key.
    pub fn parse(key: &str) -> Result<Self, ValidationError> {
        static KEY: OnceLock<Regex> = OnceLock::new();
        let pattern = KEY.get_or_init(|| Regex::new(KEY_PATTERN).expect("static regex compiles"));
        if key.is_empty() {
            return Err(ValidationError::blank("key"));
        }
        if key.chars().count() > MAX_KEY_CHARS {
            return Err(ValidationError::too_long("key", MAX_KEY_CHARS));
        }
        if !pattern.is_match(key) {
            return Err(ValidationError::field(
                "key",
                ValidationCode::InvalidKey,
                "Only letters, numbers, hyphens (\"-\") & underscores (\"_\") are allowed.",
            ));
        }
        Ok(Self(key.to_owned()))
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

    #[test]
    fn keys_allow_letters_digits_hyphens_and_underscores_only() {
        assert!(FlagKey::parse("beta-feature_2").is_ok());
        let error = FlagKey::parse("beta feature").unwrap_err();
        assert_eq!(error.code, ValidationCode::InvalidKey);
        assert_eq!(error.attr.as_deref(), Some("key"));
        assert_eq!(FlagKey::parse("").unwrap_err().code, ValidationCode::Blank);
        assert_eq!(
            FlagKey::parse(&"k".repeat(401)).unwrap_err().code,
            ValidationCode::MaxLength
        );
    }
}
