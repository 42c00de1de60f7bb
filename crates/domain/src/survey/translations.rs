//! A survey's languages: its `base_language` (`LanguageCode`) and the survey-level
//! `translations` (`SurveyTranslations`), parsed once with PostHog's messages. Sent entries are
//! read field by field (`SurveyTranslations::parse`); their keys are checked against the base
//! language and the stored keys later (`SurveyTranslations::with_checked_keys`, from `plan`),
//! since both may change in the same write.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::html::sanitize;
use crate::error::{ValidationCode, ValidationError};
use crate::json_fields::json_length;

/// The longest `base_language` (PostHog's column).
pub const MAX_LANGUAGE_CHARS: usize = 20;
/// The most languages a survey's `translations`, and each question's, may hold.
pub const MAX_TRANSLATION_LANGUAGES: usize = 100;
/// The most bytes the survey's `translations`, and each question's, may take as JSON, as sent.
pub const MAX_TRANSLATIONS_BYTES: usize = 65_536;

/// Keys that name the untranslated text rather than a language.
const SENTINELS: [&str; 3] = ["default", "original", "base"];

/// A survey-level translation's fields by wire name.
pub mod translation_keys {
    pub const NAME: &str = "name";
    pub const DESCRIPTION: &str = "description";
    pub const THANK_YOU_HEADER: &str = "thankYouMessageHeader";
    pub const THANK_YOU_DESCRIPTION: &str = "thankYouMessageDescription";
    pub const THANK_YOU_CLOSE_BUTTON: &str = "thankYouMessageCloseButtonText";
    /// Every field kept, in the order they are written.
    pub const ALL: [&str; 5] = [
        NAME,
        DESCRIPTION,
        THANK_YOU_HEADER,
        THANK_YOU_DESCRIPTION,
        THANK_YOU_CLOSE_BUTTON,
    ];
}

/// A BCP-47 language code as PostHog normalises it: lower case, `-` for `_`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LanguageCode(String);

impl Default for LanguageCode {
    fn default() -> Self {
        Self("en".to_owned())
    }
}

impl LanguageCode {
    /// A survey's `base_language` as sent: blank is `en`; else normalised and checked.
    ///
    /// # Errors
    /// Over 20 characters, a sentinel, or not a BCP-47 shape (`attr: base_language`).
    pub fn parse_base(sent: &str) -> Result<Self, ValidationError> {
        if sent.chars().count() > MAX_LANGUAGE_CHARS {
            return Err(ValidationError::too_long(
                "base_language",
                MAX_LANGUAGE_CHARS,
            ));
        }
        let normalized = normalize(sent);
        if normalized.is_empty() {
            return Ok(Self::default());
        }
        if SENTINELS.contains(&normalized.as_str()) {
            return Err(ValidationError::invalid(
                "base_language",
                format!(
                    "'{sent}' is not a valid language code. Use a BCP-47 code like 'en' or 'es'."
                ),
            ));
        }
        if !is_bcp47(&normalized) {
            return Err(ValidationError::invalid(
                "base_language",
                format!(
                    "'{sent}' is not a valid language code. Use BCP-47 codes like 'en', 'es', or 'es-MX'."
                ),
            ));
        }
        Ok(Self(normalized))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A stored code, as it was written.
    pub fn stored(code: String) -> Self {
        Self(code)
    }
}

/// A `base_language` as sent: its code, and the text sent, which PostHog's messages name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentBaseLanguage {
    pub code: LanguageCode,
    pub sent: String,
}

impl SentBaseLanguage {
    /// # Errors
    /// As [`LanguageCode::parse_base`].
    pub fn parse(sent: String) -> Result<Self, ValidationError> {
        Ok(Self {
            code: LanguageCode::parse_base(&sent)?,
            sent,
        })
    }
}

/// `strip().lower().replace("_", "-")`.
fn normalize(code: &str) -> String {
    code.trim().to_lowercase().replace('_', "-")
}

/// `^[a-z]{2,3}(-[a-z0-9]{2,8}){0,3}$`.
fn is_bcp47(code: &str) -> bool {
    let mut parts = code.split('-');
    let language = parts.next().unwrap_or("");
    let subtags: Vec<&str> = parts.collect();
    (2..=3).contains(&language.len())
        && language.bytes().all(|b| b.is_ascii_lowercase())
        && subtags.len() <= 3
        && subtags.iter().all(|tag| {
            (2..=8).contains(&tag.len())
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// One language's survey-level texts: the fields PostHog keeps, each a sanitized string.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SurveyTranslation(BTreeMap<String, String>);

impl SurveyTranslation {
    /// The text of `field` (one of [`translation_keys::ALL`]).
    pub fn get(&self, field: &str) -> Option<&str> {
        self.0.get(field).map(String::as_str)
    }

    /// The entry as the public feed carries it: without `description`.
    pub fn for_feed(&self) -> Self {
        let mut kept = self.0.clone();
        kept.remove(translation_keys::DESCRIPTION);
        Self(kept)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A survey's `translations`: entries by language code. Stored keys are normalised (or kept as
/// they were when grandfathered); sent keys are raw until checked.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SurveyTranslations(BTreeMap<String, SurveyTranslation>);

impl SurveyTranslations {
    /// Reads `translations` as sent: each entry's kept fields, sanitized; other fields dropped;
    /// entries left empty dropped. Keys are checked later ([`Self::with_checked_keys`]).
    ///
    /// # Errors
    /// PostHog's messages (`attr: translations`); past [`MAX_TRANSLATION_LANGUAGES`] or
    /// [`MAX_TRANSLATIONS_BYTES`], `max_length`.
    pub fn parse(value: Value) -> Result<Self, ValidationError> {
        let invalid = |detail: String| ValidationError::invalid("translations", detail);
        let Value::Object(entries) = value else {
            return Err(invalid("Translations must be an object".to_owned()));
        };
        if let Some(detail) = bounds_error(&entries) {
            return Err(ValidationError::field(
                "translations",
                ValidationCode::MaxLength,
                detail,
            ));
        }
        let mut kept = BTreeMap::new();
        for (language, entry) in entries {
            let Value::Object(fields) = entry else {
                return Err(invalid(format!(
                    "Translation for '{language}' must be an object"
                )));
            };
            let mut texts = BTreeMap::new();
            for (field, text) in fields {
                if !translation_keys::ALL.contains(&field.as_str()) {
                    continue;
                }
                let Value::String(text) = text else {
                    return Err(invalid(format!(
                        "Translation for '{language}': '{field}' must be a string"
                    )));
                };
                texts.insert(field, sanitize(&text));
            }
            if !texts.is_empty() {
                kept.insert(language, SurveyTranslation(texts));
            }
        }
        Ok(Self(kept))
    }

    /// The sent entries with their keys checked and normalised against the survey's `base`
    /// language; a key already in `stored` is kept as it is, unchecked (PostHog's
    /// grandfathering).
    ///
    /// # Errors
    /// The first bad key, with PostHog's `Survey translation: …` messages.
    pub(crate) fn with_checked_keys(
        self,
        base: &LanguageCode,
        raw_base: Option<&str>,
        stored: Option<&Self>,
    ) -> Result<Self, ValidationError> {
        let stored = |key: &str| stored.is_some_and(|stored| stored.0.contains_key(key));
        checked_keys(self.0, base, raw_base, stored, "Survey translation")
            .map(Self)
            .map_err(|detail| ValidationError::invalid("translations", detail))
    }

    /// The keys, as stored.
    pub(crate) fn into_keys(self) -> Vec<String> {
        self.0.into_keys().collect()
    }

    /// The entry under `language`, taken out.
    pub(crate) fn take(mut self, language: &str) -> Option<SurveyTranslation> {
        self.0.remove(language)
    }

    /// Whether a key, normalised, is `language`.
    pub(crate) fn names(&self, language: &LanguageCode) -> bool {
        self.0.keys().any(|key| normalize(key) == language.as_str())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &SurveyTranslation)> {
        self.0.iter().map(|(key, entry)| (key.as_str(), entry))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// What the public feed carries (PostHog's `SurveyAPISerializer`): only valid keys other
    /// than `base`, normalised; only the fields the SDKs show; entries left empty dropped.
    pub fn for_feed(&self, base: &LanguageCode) -> Self {
        let mut kept = BTreeMap::new();
        for (key, entry) in &self.0 {
            let entry = entry.for_feed();
            if let Some(key) = feed_key(key, base).filter(|_| !entry.is_empty()) {
                kept.insert(key, entry);
            }
        }
        Self(kept)
    }
}

/// PostHog sets no bounds; a `translations` object (the survey's, or a question's) is held to
/// ours before any of it is read: what it weighs past them, as a message.
pub(super) fn bounds_error(entries: &Map<String, Value>) -> Option<String> {
    let too_large =
        entries.len() > MAX_TRANSLATION_LANGUAGES || json_length(entries) > MAX_TRANSLATIONS_BYTES;
    too_large.then(|| {
        format!(
            "Translations may hold at most {MAX_TRANSLATION_LANGUAGES} languages and \
             {MAX_TRANSLATIONS_BYTES} bytes as JSON."
        )
    })
}

/// Translation entries with their keys checked and normalised, except those `stored` already
/// holds as they are (PostHog's grandfathering); `context` starts each message.
pub(super) fn checked_keys<T>(
    entries: BTreeMap<String, T>,
    base: &LanguageCode,
    raw_base: Option<&str>,
    stored: impl Fn(&str) -> bool,
    context: &str,
) -> Result<BTreeMap<String, T>, String> {
    let mut checked = BTreeMap::new();
    for (raw, entry) in entries {
        let key = if stored(&raw) {
            raw.clone()
        } else {
            check_key(&raw, base, raw_base, context)?
        };
        if checked.contains_key(&key) {
            return Err(format!(
                "{context}: '{raw}' collides with another translation for '{key}'."
            ));
        }
        checked.insert(key, entry);
    }
    Ok(checked)
}

/// Whether the public feed keeps a stored key, and as what: PostHog's `SurveyAPISerializer`
/// drops sentinels, keys that are not BCP-47 and the base language, and normalises the rest.
pub(super) fn feed_key(key: &str, base: &LanguageCode) -> Option<String> {
    let normalized = normalize(key);
    let kept = !SENTINELS.contains(&normalized.as_str())
        && is_bcp47(&normalized)
        && normalized != base.as_str();
    kept.then_some(normalized)
}

/// A new translation key checked and normalised; `context` starts each message.
fn check_key(
    raw: &str,
    base: &LanguageCode,
    raw_base: Option<&str>,
    context: &str,
) -> Result<String, String> {
    let normalized = normalize(raw);
    if normalized.is_empty() {
        return Err(format!(
            "{context}: translation language code cannot be empty."
        ));
    }
    if SENTINELS.contains(&normalized.as_str()) {
        return Err(format!(
            "{context}: '{raw}' is not a valid translation language. The untranslated text is \
             the original — set the survey's base language instead of adding it as a translation."
        ));
    }
    if !is_bcp47(&normalized) {
        return Err(format!(
            "{context}: '{raw}' is not a valid language code. Use BCP-47 codes like 'en', 'es', \
             or 'es-MX' (not language names like 'english')."
        ));
    }
    if normalized == base.as_str() {
        let shown = raw_base.unwrap_or(base.as_str());
        return Err(format!(
            "{context}: '{raw}' matches the survey's base language ('{shown}'). The original \
             text already covers this language — translate to a different language."
        ));
    }
    Ok(normalized)
}
