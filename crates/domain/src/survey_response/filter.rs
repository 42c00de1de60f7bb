//! Which of a survey's responses a read keeps: a time window and, optionally, no archived ones
//! (the list, the export and the results share these), and for the list, what the answers hold
//! (one question answered, a text searched for). What they keep is the port's to state
//! (`SurveyResponseRepository::responses`).

use super::DateWindow;
use crate::error::ValidationError;
use crate::survey::Questions;

/// Which responses a list, an export or the results read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResponseFilter {
    pub window: DateWindow,
    pub exclude_archived: bool,
}

/// The stored answer keys that hold one question's answer, in priority order: its id, then its
/// index for older SDKs that keyed answers so (unless the index is itself a question's id) —
/// the mapping `keyed_by_question` applies when responses are read. A question's answer is the
/// value under its id, else the value under its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerKeys {
    pub id: String,
    pub index: Option<String>,
}

impl AnswerKeys {
    /// Each question's keys, in the survey's order; `None` for a question without an id (its
    /// answers cannot be named).
    pub fn of(questions: &Questions) -> Vec<Option<Self>> {
        let ids: Vec<Option<&str>> = questions.iter().map(|q| q.base().id.as_deref()).collect();
        ids.iter()
            .enumerate()
            .map(|(index, id)| {
                let id = (*id).filter(|id| !id.is_empty())?;
                let index = index.to_string();
                let index = (!ids.contains(&Some(index.as_str()))).then_some(index);
                Some(Self {
                    id: id.to_owned(),
                    index,
                })
            })
            .collect()
    }
}

/// Longest text a search takes (a search is typed by a person, not pasted from a file).
pub const MAX_SEARCH_CHARS: usize = 200;

/// A text searched for in answers, case-insensitively, as a substring (`%` and `_` are
/// ordinary characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchText(String);

impl SearchText {
    /// `None` for an empty search.
    ///
    /// # Errors
    /// `MaxLength` (`attr: search`) beyond [`MAX_SEARCH_CHARS`] characters.
    pub fn parse(raw: &str) -> Result<Option<Self>, ValidationError> {
        if raw.chars().count() > MAX_SEARCH_CHARS {
            return Err(ValidationError::too_long("search", MAX_SEARCH_CHARS));
        }
        Ok((!raw.is_empty()).then(|| Self(raw.to_owned())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a listed response's answers must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerFilter {
    /// Only responses that answered this question.
    pub question: Option<AnswerKeys>,
    /// Only responses with a text answer holding this: to `question` when one is named, to any
    /// question otherwise.
    pub search: Option<SearchText>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_question_is_keyed_by_its_id_then_by_its_index_unless_that_is_another_questions_id() {
        let questions = Questions::parse(json!([
            {"type": "open", "question": "A", "id": "a"},
            {"type": "open", "question": "B", "id": "0"},
        ]))
        .unwrap();
        let keys = AnswerKeys::of(&questions);
        // Index 0 is question B's id, so it never names question A.
        assert_eq!(
            keys,
            [
                Some(AnswerKeys {
                    id: "a".into(),
                    index: None
                }),
                Some(AnswerKeys {
                    id: "0".into(),
                    index: Some("1".into())
                }),
            ]
        );
    }

    #[test]
    fn a_search_is_bounded() {
        let long = "x".repeat(MAX_SEARCH_CHARS + 1);
        assert_eq!(
            SearchText::parse(&long).unwrap_err().attr.as_deref(),
            Some("search")
        );
        assert!(SearchText::parse(&long[1..]).unwrap().is_some());
    }
}
