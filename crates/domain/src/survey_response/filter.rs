//! Which of a survey's responses a read keeps: a time window and, optionally, no archived ones
//! (the list, the export and the results share these), and for the list, what the answers hold
//! (one question answered, a text searched for). The predicates here are the definition both
//! stores follow: the fake calls them, the SQL spells them out.

use serde_json::{Map, Value};

use super::DateWindow;
use crate::error::{ValidationCode, ValidationError};
use crate::survey::Questions;

/// Which responses a list, an export or the results read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResponseFilter {
    pub window: DateWindow,
    pub exclude_archived: bool,
}

/// The stored answer keys that hold one question's answer, in priority order: its id, then its
/// index for older SDKs that keyed answers so (unless the index is itself a question's id) —
/// the mapping `keyed_by_question` applies when responses are read.
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

    /// The question's answer among a response's stored answers.
    pub fn answer<'a>(&self, answers: &'a Map<String, Value>) -> Option<&'a Value> {
        answers
            .get(&self.id)
            .or_else(|| self.index.as_ref().and_then(|index| answers.get(index)))
    }
}

/// Whether an answer was given: anything but `null`, `""` and `[]` (what SDKs send for a
/// skipped optional question).
pub fn is_answered(answer: &Value) -> bool {
    match answer {
        Value::Null => false,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => true,
    }
}

/// The texts of an answer that a search looks in: the answer itself when it is a string, its
/// strings when it is a list (multiple choice); numbers and objects are not searched.
pub fn answer_texts(answer: &Value) -> Vec<&str> {
    match answer {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
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
            return Err(ValidationError::field(
                "search",
                ValidationCode::MaxLength,
                format!("Ensure this field has no more than {MAX_SEARCH_CHARS} characters."),
            ));
        }
        Ok((!raw.is_empty()).then(|| Self(raw.to_owned())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `text` holds this search, ignoring case.
    pub fn found_in(&self, text: &str) -> bool {
        text.to_lowercase().contains(&self.0.to_lowercase())
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

impl AnswerFilter {
    /// Whether a response with these stored answers is kept.
    pub fn keeps(&self, answers: &Map<String, Value>) -> bool {
        let searched = |answer: &Value| {
            self.search.as_ref().is_none_or(|search| {
                answer_texts(answer)
                    .into_iter()
                    .any(|text| search.found_in(text))
            })
        };
        match &self.question {
            Some(keys) => keys
                .answer(answers)
                .is_some_and(|answer| is_answered(answer) && searched(answer)),
            None => self.search.is_none() || answers.values().any(searched),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn answers(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_question_is_found_by_its_id_first_then_by_its_index() {
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
        let b = keys[1].as_ref().unwrap();
        assert_eq!(
            b.answer(&answers(json!({"1": "legacy"}))),
            Some(&json!("legacy"))
        );
        assert_eq!(
            b.answer(&answers(json!({"1": "legacy", "0": "own"}))),
            Some(&json!("own"))
        );
    }

    #[test]
    fn skipped_answers_are_not_answers() {
        for skipped in [json!(null), json!(""), json!([])] {
            assert!(!is_answered(&skipped), "{skipped}");
        }
        for given in [json!(0), json!("x"), json!(["a"]), json!(false)] {
            assert!(is_answered(&given), "{given}");
        }
    }

    #[test]
    fn a_search_ignores_case_and_reads_lists_but_not_numbers() {
        let search = |text: &str| AnswerFilter {
            question: None,
            search: SearchText::parse(text).unwrap(),
        };
        let response = answers(json!({"q": "Too SLOW", "m": ["Fast", "50%_off"], "r": 10}));
        assert!(search("slow").keeps(&response));
        assert!(search("fast").keeps(&response));
        assert!(search("%_").keeps(&response));
        assert!(!search("10").keeps(&response));
        assert!(!search("%x").keeps(&response));
        assert!(search("").keeps(&response));
    }

    #[test]
    fn a_named_question_must_be_answered_and_holds_the_search() {
        let filter = |search: &str| AnswerFilter {
            question: Some(AnswerKeys {
                id: "q".into(),
                index: None,
            }),
            search: SearchText::parse(search).unwrap(),
        };
        assert!(filter("").keeps(&answers(json!({"q": "hello"}))));
        assert!(!filter("").keeps(&answers(json!({"q": ""}))));
        assert!(!filter("").keeps(&answers(json!({"other": "hello"}))));
        assert!(!filter("hello").keeps(&answers(json!({"q": "bye", "other": "hello"}))));
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
