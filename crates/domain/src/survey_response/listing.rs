//! PostHog's JSON responses list (`GET …/surveys/{id}/responses/`): a slice of a survey's
//! responses, newest first, by `offset` and `limit`, each with its answers in the survey's
//! question order and where it was answered (`extra`). What a client asks
//! ([`ResponsesQuery`]), what the store reads ([`SliceRequest`], [`ResponseSlice`]) and what is
//! answered ([`ResponseList`]).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{AnswerKeys, DateWindow, ResponseContext, ScoreRange, SurveyResponse, is_given};
use crate::error::ValidationError;
use crate::survey::{QuestionType, Questions, Survey};

/// Responses a page holds when the client does not say (PostHog's default).
pub const DEFAULT_LIST_LIMIT: u32 = 100;
/// Most responses one page holds (PostHog's bound; fewer once their answers pass
/// [`PAGE_ANSWER_BYTES`](super::PAGE_ANSWER_BYTES)).
pub const MAX_LIST_LIMIT: u32 = 500;

/// What a client asks of the list: PostHog's `SurveyResponsesQuerySerializer`, read by the API.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponsesQuery {
    /// Only responses at or after this (default: the survey's start, else its creation).
    pub since: Option<DateTime<Utc>>,
    /// Only responses at or before this (default: the survey's end, else now).
    pub until: Option<DateTime<Utc>>,
    /// Only responses that answered this question, showing only its answer.
    pub question_id: Option<String>,
    /// Only responses whose answer to `question_id` is a number within this.
    pub score: ScoreRange,
    pub exclude_archived: bool,
    /// 1 to [`MAX_LIST_LIMIT`] (the API checks it).
    pub limit: u32,
    pub offset: u64,
}

impl Default for ResponsesQuery {
    fn default() -> Self {
        Self {
            since: None,
            until: None,
            question_id: None,
            score: ScoreRange::default(),
            exclude_archived: false,
            limit: DEFAULT_LIST_LIMIT,
            offset: 0,
        }
    }
}

impl ResponsesQuery {
    /// The query, if its parameters go together.
    ///
    /// # Errors
    /// `invalid_input` (`attr: null`, PostHog's message) for a score bound without
    /// `question_id`.
    pub fn checked(self) -> Result<Self, ValidationError> {
        if self.score.is_bounded() && self.question_id.is_none() {
            return Err(ValidationError::invalid_input(
                "score_lte and score_gte require question_id to be specified",
            ));
        }
        Ok(self)
    }

    /// The window read: `since`/`until`, else the survey's run (from its start, or creation
    /// when never launched, to its end, or `now`). Not narrowed to the run when given, as
    /// PostHog reads it.
    pub fn window(&self, survey: &Survey, now: DateTime<Utc>) -> DateWindow {
        DateWindow {
            from: Some(
                self.since
                    .unwrap_or(survey.state.start_date.unwrap_or(survey.created_at)),
            ),
            to: Some(self.until.unwrap_or(survey.state.end_date.unwrap_or(now))),
        }
    }
}

/// One slice of a survey's responses, as the store reads it
/// ([`SurveyResponseRepository::slice`](super::SurveyResponseRepository::slice)).
#[derive(Debug, Clone, PartialEq)]
pub struct SliceRequest {
    pub window: DateWindow,
    pub exclude_archived: bool,
    /// Only responses that gave this question an answer.
    pub question: Option<AnswerKeys>,
    /// Only responses whose answer to `question` is a number within this.
    pub score: ScoreRange,
    pub offset: u64,
    pub limit: u32,
}

/// What the store read: the slice's responses and whether more follow it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResponseSlice {
    pub responses: Vec<SurveyResponse>,
    /// More responses follow (also when the slice ended early on its answers' size).
    pub has_more: bool,
    /// The slice ended before `limit` on its answers' size.
    pub cut_short: bool,
}

/// An answer as the list shows it: text (a number as written), or a multiple choice's
/// choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerText {
    Text(String),
    Choices(Vec<String>),
}

impl AnswerText {
    /// A given answer as shown: a string as it is, a number or boolean as written, a list as
    /// its items' texts (nulls left out), an object as its JSON text. `None` for an answer
    /// not given ([`is_given`]).
    pub fn of(answer: &Value) -> Option<Self> {
        if !is_given(answer) {
            return None;
        }
        let text = |value: &Value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        Some(match answer {
            Value::Array(items) => {
                Self::Choices(items.iter().filter(|i| !i.is_null()).map(text).collect())
            }
            other => Self::Text(text(other)),
        })
    }
}

/// One answer of a listed response.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedAnswer {
    /// The question's id (`""` for a question without one).
    pub question_id: String,
    pub question_index: usize,
    /// The question's text and type in the survey's base language.
    pub question_text: String,
    pub question_type: QuestionType,
    pub answer: AnswerText,
}

/// One response as the list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedResponse {
    /// Its latest response event's uuid (what archive and delete calls name).
    pub uuid: Uuid,
    pub distinct_id: String,
    pub submitted_at: DateTime<Utc>,
    /// Its given answers, in question order.
    pub answers: Vec<ListedAnswer>,
    /// `session_id` and `extra` come from here.
    pub context: ResponseContext,
}

/// A page of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseList {
    pub results: Vec<ListedResponse>,
    pub has_more: bool,
    /// The limit asked, or the rows the page holds when their answers cut it short (so the
    /// next page is at `offset + limit` either way).
    pub limit: u32,
    pub offset: u64,
}

impl ListedResponse {
    /// `response` with its answers laid out along `questions` (only `only`'s, when given):
    /// a question's answer is the one under its id, else under its index (as
    /// [`AnswerKeys`] names them; a question without an id has its index alone, unless that is
    /// another question's id), and is listed when given.
    pub fn new(
        response: SurveyResponse,
        questions: Option<&Questions>,
        only: Option<&str>,
    ) -> Self {
        let answers = questions
            .map(|questions| listed_answers(questions, &response.answers, only))
            .unwrap_or_default();
        Self {
            uuid: response.uuid,
            distinct_id: response.distinct_id,
            submitted_at: response.timestamp,
            answers,
            context: response.context,
        }
    }
}

fn listed_answers(
    questions: &Questions,
    stored: &Map<String, Value>,
    only: Option<&str>,
) -> Vec<ListedAnswer> {
    let ids: Vec<Option<&str>> = questions.iter().map(|q| q.base().id.as_deref()).collect();
    questions
        .iter()
        .zip(AnswerKeys::of(questions))
        .enumerate()
        .filter_map(|(index, (question, keys))| {
            let id = question.base().id.clone().unwrap_or_default();
            if only.is_some_and(|only| only != id) {
                return None;
            }
            let answer = match keys {
                Some(keys) => stored
                    .get(&keys.id)
                    .or_else(|| keys.index.as_ref().and_then(|index| stored.get(index))),
                None => {
                    let index_key = index.to_string();
                    (!ids.contains(&Some(index_key.as_str())))
                        .then(|| stored.get(&index_key))
                        .flatten()
                }
            }?;
            Some(ListedAnswer {
                question_id: id,
                question_index: index,
                question_text: question.base().question.clone(),
                question_type: question.question_type(),
                answer: AnswerText::of(answer)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn response(answers: Value) -> SurveyResponse {
        SurveyResponse {
            uuid: Uuid::from_u128(1),
            distinct_id: "ada".into(),
            submission_id: None,
            timestamp: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
            answers: answers.as_object().unwrap().clone(),
            completed: None,
            partially_completed: false,
            context: ResponseContext::default(),
            archived: false,
        }
    }

    fn questions() -> Questions {
        Questions::parse(json!([
            {"type": "rating", "question": "How likely?", "id": "nps", "scale": 10},
            {"type": "open", "question": "Why?", "id": "why"},
            {"type": "multiple_choice", "question": "Which?", "id": "which", "choices": ["a", "b"]},
        ]))
        .unwrap()
    }

    #[test]
    fn answers_are_listed_in_question_order_as_text_or_choices_given_ones_only() {
        let listed = ListedResponse::new(
            response(json!({"which": ["a", null, "b"], "nps": 9, "why": ""})),
            Some(&questions()),
            None,
        );
        let shown: Vec<(usize, &str, AnswerText)> = listed
            .answers
            .iter()
            .map(|a| (a.question_index, a.question_id.as_str(), a.answer.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                (0, "nps", AnswerText::Text("9".into())),
                (
                    2,
                    "which",
                    AnswerText::Choices(vec!["a".into(), "b".into()])
                ),
            ]
        );
        assert_eq!(listed.answers[0].question_type, QuestionType::Rating);
        assert_eq!(listed.answers[0].question_text, "How likely?");
    }

    #[test]
    fn legacy_index_keys_answer_their_question_and_one_question_can_be_shown_alone() {
        let listed = ListedResponse::new(
            response(json!({"1": "Loved it", "0": "7", "nps": "8"})),
            Some(&questions()),
            Some("why"),
        );
        assert_eq!(listed.answers.len(), 1);
        assert_eq!(listed.answers[0].question_id, "why");
        assert_eq!(
            listed.answers[0].answer,
            AnswerText::Text("Loved it".into())
        );
    }

    #[test]
    fn a_score_bound_needs_a_question() {
        let query = ResponsesQuery {
            score: ScoreRange {
                gte: Some(7.0),
                lte: None,
            },
            ..ResponsesQuery::default()
        };
        let error = query.clone().checked().unwrap_err();
        assert_eq!(
            (error.attr, error.detail.as_str()),
            (
                None,
                "score_lte and score_gte require question_id to be specified"
            )
        );
        assert!(
            ResponsesQuery {
                question_id: Some("nps".into()),
                ..query
            }
            .checked()
            .is_ok()
        );
    }
}
