//! How a submission's response events add up to its response, as PostHog merges them: each
//! question's latest given answer, the latest event's uuid, person and time. A capture merges
//! its own events of a submission in time order ([`SubmissionDraft::of_events`]); storage then
//! merges that draft into the response the submission may already have
//! ([`SubmissionDraft::merged_into`]), the rule both stores implement. Neither ever carries a
//! response's answers and context past [`MAX_RESPONSE_BYTES`].

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{MAX_RESPONSE_BYTES, ResponseContext, SurveyEvent, SurveyEventKind, SurveyResponse};

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
fn within_response_bound(answers: &Map<String, Value>, context: &ResponseContext) -> bool {
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

    /// The submission's response once this draft is merged into `stored`, the response it
    /// had (`None`: the draft makes a new one). When the draft's latest event is later than the
    /// response's (by time, then uuid), its answers and context values override the
    /// response's and its latest event becomes the response's; otherwise (events arriving after
    /// later ones, or a retry) it only fills in the answer keys and context values the response
    /// lacks. So a response is exact whenever each capture's events are later than the ones
    /// before; when a question was answered twice and the later answer arrived first, the
    /// later one stays. `completed` is the latest one sent either way; `archived` stays. Merged
    /// answers and context that would pass [`MAX_RESPONSE_BYTES`] stay as stored.
    pub fn merged_into(self, stored: Option<&SurveyResponse>) -> SurveyResponse {
        let Some(stored) = stored else {
            return self.merged_into_nothing();
        };
        let mut merged = self.merged_unbounded(stored);
        if !within_response_bound(&merged.answers, &merged.context) {
            merged.answers.clone_from(&stored.answers);
            merged.context = stored.context.clone();
        }
        merged
    }

    /// The response this draft makes alone (within the bound, as [`Self::absorb_later`] kept it).
    fn merged_into_nothing(self) -> SurveyResponse {
        SurveyResponse {
            uuid: self.uuid,
            distinct_id: self.distinct_id,
            submission_id: self.submission_id,
            timestamp: self.timestamp,
            answers: self.answers,
            completed: self.completed,
            partially_completed: self.partially_completed,
            context: self.context,
            archived: false,
        }
    }

    /// [`Self::merged_into`] a stored response, before the bound is applied.
    fn merged_unbounded(self, stored: &SurveyResponse) -> SurveyResponse {
        if (stored.timestamp, stored.uuid) < (self.timestamp, self.uuid) {
            let mut answers = stored.answers.clone();
            answers.extend(self.answers);
            SurveyResponse {
                uuid: self.uuid,
                distinct_id: self.distinct_id,
                submission_id: self.submission_id,
                timestamp: self.timestamp,
                answers,
                completed: self.completed.or(stored.completed),
                partially_completed: self.partially_completed,
                context: self.context.or(stored.context.clone()),
                archived: stored.archived,
            }
        } else {
            let mut answers = stored.answers.clone();
            for (key, answer) in self.answers {
                answers.entry(key).or_insert(answer);
            }
            SurveyResponse {
                answers,
                completed: stored.completed.or(self.completed),
                context: stored.context.clone().or(self.context),
                ..stored.clone()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn event(kind: SurveyEventKind, second: i64, properties: Value) -> SurveyEvent {
        SurveyEvent {
            uuid: Uuid::from_u128(u128::try_from(second).unwrap()),
            kind,
            survey_id: "s".into(),
            distinct_id: format!("person-{second}"),
            timestamp: Utc.timestamp_opt(1_800_000_000 + second, 0).unwrap(),
            submission_id: Some("sub".into()),
            properties: properties.as_object().unwrap().clone(),
        }
    }

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

    #[test]
    fn a_later_draft_overrides_and_an_earlier_one_only_fills_in() {
        let stored = SubmissionDraft::of_events(&[event(
            SurveyEventKind::Sent,
            5,
            json!({"$survey_response_a": "five"}),
        )])
        .remove(0)
        .merged_into(None);
        let later = SubmissionDraft::of_events(&[event(
            SurveyEventKind::Abandoned,
            6,
            json!({"$survey_partially_completed": "true", "$survey_response_a": "six",
                   "$survey_response_b": "b"}),
        )])
        .remove(0);
        let merged = later.merged_into(Some(&stored));
        assert_eq!(
            Value::Object(merged.answers.clone()),
            json!({"a": "six", "b": "b"})
        );
        assert_eq!(merged.uuid, Uuid::from_u128(6));
        assert!(merged.partially_completed);

        let earlier = SubmissionDraft::of_events(&[event(
            SurveyEventKind::Sent,
            1,
            json!({"$survey_response_a": "one", "$survey_response_c": "c", "$survey_completed": true}),
        )])
        .remove(0);
        let filled = earlier.merged_into(Some(&merged));
        assert_eq!(
            Value::Object(filled.answers.clone()),
            json!({"a": "six", "b": "b", "c": "c"})
        );
        assert_eq!(filled.uuid, Uuid::from_u128(6));
        assert_eq!(filled.completed, Some(true));
        assert!(filled.partially_completed);
    }
}
