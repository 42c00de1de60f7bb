//! A question's `translations`: its texts and choices by language. Read field by field with
//! PostHog's `Question {n}: …` messages when sent (`QuestionTranslations::parse_sent`, called by
//! the question parser); the keys are checked against the survey's base language and the
//! stored question later (`with_checked_keys`, from `Questions`), as the survey-level ones are.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::html::sanitize;
use super::question::question_keys::{
    BUTTON_TEXT, CHOICES, DESCRIPTION, LINK, LOWER_BOUND_LABEL, QUESTION, UPPER_BOUND_LABEL,
};
use super::question_parser::check_link;
use super::translations::{LanguageCode, bounds_error, checked_keys, feed_key};

/// The text fields a question's translation holds (`link` and `choices` apart).
const TEXT_FIELDS: [&str; 5] = [
    QUESTION,
    DESCRIPTION,
    BUTTON_TEXT,
    LOWER_BOUND_LABEL,
    UPPER_BOUND_LABEL,
];

/// One language's texts of a question: the fields PostHog's SDKs apply, sanitized when sent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QuestionTranslation {
    /// `question`, `description`, `buttonText`, the bound labels and `link`, by wire name.
    #[serde(flatten)]
    pub texts: BTreeMap<String, String>,
    /// As many as the question has, in its order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
}

impl QuestionTranslation {
    fn is_empty(&self) -> bool {
        self.texts.is_empty() && self.choices.is_none()
    }
}

/// A question's translations by language code. Read back from storage only when every entry has
/// this shape; otherwise the stored value stays in the question's `extra` as it was.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct QuestionTranslations(BTreeMap<String, QuestionTranslation>);

impl QuestionTranslations {
    /// Reads the `translations` of question `number` (1-based) as sent: known fields checked
    /// and sanitized, others dropped, an empty `link` left out, choices dropped from a question
    /// without choices (`has_choices`), entries left empty dropped.
    ///
    /// # Errors
    /// PostHog's message for the first broken rule; past the bounds of `translations`.
    pub(crate) fn parse_sent(
        value: Value,
        number: usize,
        has_choices: bool,
    ) -> Result<Self, String> {
        let Value::Object(entries) = value else {
            return Err(format!("Question {number}: translations must be an object"));
        };
        if let Some(detail) = bounds_error(&entries) {
            return Err(format!("Question {number}: {detail}"));
        }
        let mut kept = BTreeMap::new();
        for (language, entry) in entries {
            let Value::Object(fields) = entry else {
                return Err(format!(
                    "Question {number}: Translation for '{language}' must be an object"
                ));
            };
            let not_a_string = |field: &str| {
                format!(
                    "Question {number}: Translation '{language}' field '{field}' must be a string"
                )
            };
            let mut translation = QuestionTranslation::default();
            for (field, value) in fields {
                if field == CHOICES {
                    let choices = read_choices(value, number, &language)?;
                    translation.choices = has_choices.then_some(choices);
                } else if field == LINK {
                    let Value::String(link) = value else {
                        return Err(not_a_string(LINK));
                    };
                    if !link.is_empty() {
                        check_link(&link)?;
                        translation.texts.insert(field, link);
                    }
                } else if TEXT_FIELDS.contains(&field.as_str()) {
                    let Value::String(text) = value else {
                        return Err(not_a_string(&field));
                    };
                    translation.texts.insert(field, sanitize(&text));
                }
            }
            if !translation.is_empty() {
                kept.insert(language, translation);
            }
        }
        Ok(Self(kept))
    }

    /// The entries with their keys checked and normalised against the survey's `base`
    /// language, those the `stored` question (at the same index) holds kept as they are; each
    /// entry's choices as many as the question's (`choice_count`).
    ///
    /// # Errors
    /// The first bad key (`Question {n} translation: …`) or choice count.
    pub(crate) fn with_checked_keys(
        self,
        number: usize,
        base: &LanguageCode,
        raw_base: Option<&str>,
        stored: Option<&Self>,
        choice_count: Option<usize>,
    ) -> Result<Self, String> {
        let stored = |key: &str| stored.is_some_and(|stored| stored.0.contains_key(key));
        let context = format!("Question {number} translation");
        let checked = checked_keys(self.0, base, raw_base, stored, &context)?;
        for (language, translation) in &checked {
            if let (Some(choices), Some(count)) = (&translation.choices, choice_count)
                && choices.len() != count
            {
                return Err(format!(
                    "Question {number}: Translation '{language}' has {} choices but question has \
                     {count} choices. Array lengths must match to avoid partial translations.",
                    choices.len()
                ));
            }
        }
        Ok(Self(checked))
    }

    /// What the public feed carries: the entries under keys PostHog keeps, normalised, their
    /// contents as stored; `None` when none is left.
    pub fn for_feed(&self, base: &LanguageCode) -> Option<Self> {
        let kept: BTreeMap<_, _> = self
            .0
            .iter()
            .filter_map(|(key, entry)| Some((feed_key(key, base)?, entry.clone())))
            .collect();
        (!kept.is_empty()).then_some(Self(kept))
    }

    /// The entry under `language`, taken out.
    pub(crate) fn take(mut self, language: &str) -> Option<QuestionTranslation> {
        self.0.remove(language)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &QuestionTranslation)> {
        self.0.iter().map(|(key, entry)| (key.as_str(), entry))
    }
}

/// A translation's `choices`: a list of non-blank strings, sanitized.
fn read_choices(value: Value, number: usize, language: &str) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "Question {number}: Translation '{language}' field 'choices' must be a list of strings"
        ));
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::String(choice) if choice.trim().is_empty() => {
                Err("Question choices cannot be empty".to_owned())
            }
            Value::String(choice) => Ok(sanitize(&choice)),
            _ => Err("Question choices must be strings".to_owned()),
        })
        .collect()
}
