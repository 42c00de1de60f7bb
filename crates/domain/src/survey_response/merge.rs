//! How a submission's response events add up to its response, as PostHog merges them: each
//! question's latest given answer, the latest event's uuid, person and time. A capture merges
//! its own events of a submission in time order ([`SubmissionDraft::of_events`]); storage then
//! merges that draft into the response the submission may already have, by the rule
//! [`SurveyResponseRepository::record`](super::SurveyResponseRepository::record)
//! states. Neither ever carries a response's answers and context past [`MAX_RESPONSE_BYTES`].

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{MAX_RESPONSE_BYTES, ResponseContext, SurveyEvent, SurveyEventKind};

/// Whether an answer was given: anything but `null`, `""` and `[]`.
pub fn is_given(answer: &Value) -> bool {
    match answer {
        Value::Null => false,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => true,
    }
}

/// Whether answers and a context weigh at most [`MAX_RESPONSE_BYTES`] together, as JSON text
/// (PostgreSQL weighs its `jsonb` columns, give or take a few bytes a key).
pub(crate) fn within_response_bound(
    answers: &Map<String, Value>,
    context: &ResponseContext,
) -> bool {
    let weight =
        |value: &Map<String, Value>| serde_json::to_vec(value).map_or(usize::MAX, |v| v.len());
    weight(answers).saturating_add(weight(&context.to_stored())) <= MAX_RESPONSE_BYTES
}

/// One submission's response events of one capture, merged.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmissionDraft {
    pub survey_id: String,
    pub submission_key: String,
    pub submission_id: Option<String>,
    /// The latest event's (by time, then uuid).
    pub uuid: Uuid,
    pub distinct_id: String,
    pub timestamp: DateTime<Utc>,
    /// Each answer key's latest given answer; answers never given are absent.
    pub answers: Map<String, Value>,
    /// The latest `$survey_completed` sent.
    pub completed: Option<bool>,
    /// The latest event is a partially completed dismissal or abandon.
    pub partially_completed: bool,
    /// Each context value the latest event that had one gave.
    pub context: ResponseContext,
}

impl SubmissionDraft {
    /// The drafts of the submissions these events answer (only their response events,
    /// [`SurveyEvent::is_response`]), in `(survey id, submission key)` order.
    pub fn of_events<'a>(events: impl IntoIterator<Item = &'a SurveyEvent>) -> Vec<Self> {
        let mut submissions: BTreeMap<(&str, String), Vec<&SurveyEvent>> = BTreeMap::new();
        for event in events.into_iter().filter(|event| event.is_response()) {
            submissions
                .entry((event.survey_id.as_str(), event.submission_key()))
                .or_default()
                .push(event);
        }
        submissions
            .into_iter()
            .map(|((survey_id, submission_key), mut events)| {
                events.sort_by_key(|event| (event.timestamp, event.uuid));
                let mut draft = Self {
                    survey_id: survey_id.to_owned(),
                    submission_key,
                    submission_id: None,
                    uuid: Uuid::nil(),
                    distinct_id: String::new(),
                    timestamp: DateTime::<Utc>::MIN_UTC,
                    answers: Map::new(),
                    completed: None,
                    partially_completed: false,
                    context: ResponseContext::default(),
                };
                for event in events {
                    draft.absorb_later(event);
                }
                draft
            })
            .collect()
    }

    /// Takes in an event later than every one taken so far (its answers and context only while
    /// they keep the draft within [`MAX_RESPONSE_BYTES`]).
    fn absorb_later(&mut self, event: &SurveyEvent) {
        self.submission_id.clone_from(&event.submission_id);
        self.uuid = event.uuid;
        self.distinct_id.clone_from(&event.distinct_id);
        self.timestamp = event.timestamp;
        self.completed = event.completed().or(self.completed);
        self.partially_completed = event.kind != SurveyEventKind::Sent;
        let mut answers = self.answers.clone();
        answers.extend(event.answers().into_iter().filter(|(_, v)| is_given(v)));
        let context = ResponseContext::of(&event.properties).or(self.context.clone());
        if within_response_bound(&answers, &context) {
            self.answers = answers;
            self.context = context;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::survey_event as event;

    #[test]
    fn a_submissions_events_merge_each_questions_latest_given_answer() {
        let events = [
            event(
                SurveyEventKind::Sent,
                3,
                json!({"$survey_response_b": "", "$survey_response_c": "late"}),
            ),
            event(
                SurveyEventKind::Sent,
                1,
                json!({"$survey_response_a": "A", "$survey_response_b": "B", "$survey_completed": false,
                       "$survey_iteration": 2, "$session_id": "s-1"}),
            ),
            event(
                SurveyEventKind::Dismissed,
                2,
                json!({"$survey_partially_completed": true, "$survey_response_a": "A2"}),
            ),
            // Not a response event: a dismissal of a survey never answered.
            event(
                SurveyEventKind::Dismissed,
                4,
                json!({"$survey_response_a": "ignored"}),
            ),
        ];
        let drafts = SubmissionDraft::of_events(&events);
        assert_eq!(drafts.len(), 1);
        let draft = &drafts[0];
        assert_eq!(
            Value::Object(draft.answers.clone()),
            json!({"a": "A2", "b": "B", "c": "late"})
        );
        assert_eq!(draft.uuid, Uuid::from_u128(3));
        assert_eq!(draft.distinct_id, "person-3");
        assert_eq!(draft.completed, Some(false));
        assert!(!draft.partially_completed);
        assert_eq!(draft.context.iteration.as_deref(), Some("2"));
        assert_eq!(draft.context.session_id.as_deref(), Some("s-1"));
    }
}
