//! The fake's merge of a capture's submission draft into the response the submission has, as
//! `SurveyResponseRepository::record` states it (the SQL of `record_capture.sql` spells the same
//! rule; the contract tests hold the two to it).

use crate::survey_response::{SubmissionDraft, SurveyResponse, within_response_bound};

/// The submission's response once `draft` is merged into `stored` (`None`: the draft makes a
/// new one).
pub(super) fn merged(draft: SubmissionDraft, stored: Option<&SurveyResponse>) -> SurveyResponse {
    let Some(stored) = stored else {
        return SurveyResponse {
            uuid: draft.uuid,
            distinct_id: draft.distinct_id,
            submission_id: draft.submission_id,
            timestamp: draft.timestamp,
            answers: draft.answers,
            completed: draft.completed,
            partially_completed: draft.partially_completed,
            context: draft.context,
            archived: false,
        };
    };
    let mut merged = merged_unbounded(draft, stored);
    if !within_response_bound(&merged.answers, &merged.context) {
        merged.answers.clone_from(&stored.answers);
        merged.context = stored.context.clone();
    }
    merged
}

/// [`merged`] into a stored response, before the bound is applied.
fn merged_unbounded(draft: SubmissionDraft, stored: &SurveyResponse) -> SurveyResponse {
    let mut answers = stored.answers.clone();
    if (stored.timestamp, stored.uuid) < (draft.timestamp, draft.uuid) {
        answers.extend(draft.answers);
        SurveyResponse {
            uuid: draft.uuid,
            distinct_id: draft.distinct_id,
            submission_id: draft.submission_id,
            timestamp: draft.timestamp,
            answers,
            completed: draft.completed.or(stored.completed),
            partially_completed: draft.partially_completed,
            context: draft.context.or(stored.context.clone()),
            archived: stored.archived,
        }
    } else {
        for (key, answer) in draft.answers {
            answers.entry(key).or_insert(answer);
        }
        SurveyResponse {
            answers,
            completed: stored.completed.or(draft.completed),
            context: stored.context.clone().or(draft.context),
            ..stored.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use uuid::Uuid;

    use super::*;
    use crate::survey_response::SurveyEventKind;
    use crate::testing::survey_event;

    fn draft(kind: SurveyEventKind, second: i64, properties: Value) -> SubmissionDraft {
        SubmissionDraft::of_events(&[survey_event(kind, second, properties)]).remove(0)
    }

    #[test]
    fn a_later_draft_overrides_and_an_earlier_one_only_fills_in() {
        let stored = merged(
            draft(
                SurveyEventKind::Sent,
                5,
                json!({"$survey_response_a": "five"}),
            ),
            None,
        );
        let later = draft(
            SurveyEventKind::Abandoned,
            6,
            json!({"$survey_partially_completed": "true", "$survey_response_a": "six",
                   "$survey_response_b": "b"}),
        );
        let merged_later = merged(later, Some(&stored));
        assert_eq!(
            Value::Object(merged_later.answers.clone()),
            json!({"a": "six", "b": "b"})
        );
        assert_eq!(merged_later.uuid, Uuid::from_u128(6));
        assert!(merged_later.partially_completed);

        let earlier = draft(
            SurveyEventKind::Sent,
            1,
            json!({"$survey_response_a": "one", "$survey_response_c": "c", "$survey_completed": true}),
        );
        let filled = merged(earlier, Some(&merged_later));
        assert_eq!(
            Value::Object(filled.answers.clone()),
            json!({"a": "six", "b": "b", "c": "c"})
        );
        assert_eq!(filled.uuid, Uuid::from_u128(6));
        assert_eq!(filled.completed, Some(true));
        assert!(filled.partially_completed);
    }
}
