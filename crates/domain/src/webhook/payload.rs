//! What a delivery says: the Standard Webhooks payload (`{type, timestamp, data}`) of one survey
//! response event, or the same as a Slack incoming-webhook message. Built once, at a delivery's
//! first attempt, and stored, so every retry sends the same bytes under the same `webhook-id`.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use super::{WebhookEvent, WebhookFormat};
use crate::survey::Questions;
use crate::survey_response::{SurveyEvent, keyed_by_question};
use crate::tenancy::ProjectId;

/// The survey a response event belongs to, as it is when the delivery is first attempted
/// (`None` once deleted, or for a `$survey_id` the project never had).
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadSurvey {
    pub name: String,
    pub questions: Option<Questions>,
}

/// Everything a response event's payload is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseEventSources {
    pub event_type: WebhookEvent,
    pub project: ProjectId,
    /// The `survey sent` event the delivery is about.
    pub event: SurveyEvent,
    pub survey: Option<PayloadSurvey>,
    /// The uuids of the submission's `survey sent` events up to this one, oldest first.
    pub submission_events: Vec<Uuid>,
}

/// The body of a response event's delivery, in the webhook's format.
pub fn response_body(sources: &ResponseEventSources, format: WebhookFormat) -> Vec<u8> {
    let answers = answers(sources);
    let value = match format {
        WebhookFormat::Standard => standard(sources, answers),
        WebhookFormat::Slack => slack(sources, &answers),
    };
    serde_json::to_vec(&value).expect("a JSON value serializes")
}

/// The body `POST …/test/` sends: a `webhook.test` event whose `data` has the shape of a real
/// response event's, with sample values, so a receiver can be built against it.
pub fn test_body(project: ProjectId, format: WebhookFormat, now: DateTime<Utc>) -> Vec<u8> {
    let value = match format {
        WebhookFormat::Standard => json!({
            "type": "webhook.test",
            "timestamp": time(now),
            "data": {
                "project_id": project.0,
                "survey": {"id": Uuid::nil(), "name": "Sample survey"},
                "response": {
                    "submission_id": Uuid::nil(),
                    "distinct_id": "sample-person",
                    "timestamp": time(now),
                    "completed": true,
                    "event_uuid": Uuid::nil(),
                    "event_uuids": [Uuid::nil()],
                },
                "answers": [{
                    "question_id": "sample-question",
                    "question": "How are we doing?",
                    "type": "open",
                    "value": "This is a test message from Burrow.",
                }],
            },
        }),
        WebhookFormat::Slack => {
            json!({"text": "This is a test message from Burrow: the webhook works."})
        }
    };
    serde_json::to_vec(&value).expect("a JSON value serializes")
}

/// One answer with its question, in the survey's question order; answers to questions the
/// survey does not (or no longer) have follow, by key.
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    question_id: String,
    question: Option<String>,
    question_type: Option<&'static str>,
    value: Value,
}

fn answers(sources: &ResponseEventSources) -> Vec<Answer> {
    let questions = sources.survey.as_ref().and_then(|s| s.questions.as_ref());
    let mut given = keyed_by_question(sources.event.answers(), questions);
    let mut answers = Vec::with_capacity(given.len());
    for question in questions.into_iter().flat_map(Questions::iter) {
        let base = question.base();
        let Some(value) = base.id.as_deref().and_then(|id| given.remove(id)) else {
            continue;
        };
        answers.push(Answer {
            question_id: base.id.clone().unwrap_or_default(),
            question: Some(base.question.clone()),
            question_type: Some(question.question_type().as_str()),
            value,
        });
    }
    answers.extend(given.into_iter().map(|(question_id, value)| Answer {
        question_id,
        question: None,
        question_type: None,
        value,
    }));
    answers
}

fn standard(sources: &ResponseEventSources, answers: Vec<Answer>) -> Value {
    let event = &sources.event;
    json!({
        "type": sources.event_type.as_str(),
        "timestamp": time(event.timestamp),
        "data": {
            "project_id": sources.project.0,
            "survey": {
                "id": event.survey_id,
                "name": sources.survey.as_ref().map(|survey| &survey.name),
            },
            "response": {
                "submission_id": event.submission_id,
                "distinct_id": event.distinct_id,
                "timestamp": time(event.timestamp),
                "completed": completes(event),
                "event_uuid": event.uuid,
                "event_uuids": sources.submission_events,
            },
            "answers": answers.into_iter().map(|answer| json!({
                "question_id": answer.question_id,
                "question": answer.question,
                "type": answer.question_type,
                "value": answer.value,
            })).collect::<Vec<_>>(),
        },
    })
}

/// A Slack message: who answered which survey, then each question and answer; Slack's `mrkdwn`
/// control characters in user text are escaped.
fn slack(sources: &ResponseEventSources, answers: &[Answer]) -> Value {
    let event = &sources.event;
    let survey = sources
        .survey
        .as_ref()
        .map_or_else(|| event.survey_id.clone(), |survey| survey.name.clone());
    let what = match sources.event_type {
        WebhookEvent::ResponseCreated => "New response",
        WebhookEvent::ResponseUpdated => "Updated response",
        WebhookEvent::ResponseCompleted => "Completed response",
    };
    let mut text = format!(
        "{what} to *{}* from {}",
        escape(&survey),
        escape(&event.distinct_id)
    );
    for answer in answers {
        let question = answer.question.as_deref().unwrap_or(&answer.question_id);
        text.push_str(&format!(
            "\n*{}*\n{}",
            escape(question),
            escape(&answer_text(&answer.value))
        ));
    }
    json!({"text": text})
}

fn answer_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(answer_text).collect::<Vec<_>>().join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Slack's three control characters, as its message formatting asks.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Whether a send finishes its submission: `$survey_completed`, or, for SDKs that send a
/// response in one event without saying, `true`.
pub fn completes(event: &SurveyEvent) -> bool {
    event.completed().unwrap_or(true)
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::survey_response::SurveyEventKind;

    fn answers_of(body: &Value) -> Option<&Vec<Value>> {
        body.pointer("/data/answers")?.as_array()
    }

    fn sources(format_properties: Value, survey: Option<PayloadSurvey>) -> ResponseEventSources {
        ResponseEventSources {
            event_type: WebhookEvent::ResponseCompleted,
            project: ProjectId(7),
            event: SurveyEvent {
                uuid: Uuid::from_u128(1),
                kind: SurveyEventKind::Sent,
                survey_id: "s1".into(),
                distinct_id: "person <1>".into(),
                timestamp: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
                submission_id: Some("sub".into()),
                properties: format_properties.as_object().unwrap().clone(),
            },
            survey,
            submission_events: vec![Uuid::from_u128(0), Uuid::from_u128(1)],
        }
    }

    fn survey() -> PayloadSurvey {
        PayloadSurvey {
            name: "NPS".into(),
            questions: Some(
                Questions::parse(json!([
                    {"id": "q1", "type": "rating", "question": "How likely?", "scale": 10, "display": "number"},
                    {"id": "q2", "type": "multiple_choice", "question": "Why?", "choices": ["a", "b"]},
                ]))
                .unwrap(),
            ),
        }
    }

    #[test]
    fn a_standard_body_carries_the_survey_the_response_and_each_answer_with_its_question() {
        let body = response_body(
            &sources(
                json!({"$survey_response_q2": ["a", "b"], "$survey_response_q1": 9, "$survey_response_x": "?", "$survey_completed": true}),
                Some(survey()),
            ),
            WebhookFormat::Standard,
        );
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["type"], "survey_response.completed");
        assert_eq!(body["timestamp"], "2027-01-15T08:00:00.000Z");
        assert_eq!(body["data"]["survey"], json!({"id": "s1", "name": "NPS"}));
        assert_eq!(body["data"]["response"]["completed"], true);
        assert_eq!(body["data"]["response"]["submission_id"], "sub");
        assert_eq!(
            body["data"]["response"]["event_uuids"],
            json!([Uuid::from_u128(0), Uuid::from_u128(1)])
        );
        assert_eq!(
            answers_of(&body).unwrap(),
            &vec![
                json!({"question_id": "q1", "question": "How likely?", "type": "rating", "value": 9}),
                json!({"question_id": "q2", "question": "Why?", "type": "multiple_choice", "value": ["a", "b"]}),
                json!({"question_id": "x", "question": null, "type": null, "value": "?"}),
            ]
        );
    }

    #[test]
    fn legacy_index_keys_name_their_question_and_a_missing_survey_leaves_names_out() {
        let body = response_body(
            &sources(
                json!({"$survey_response": 3, "$survey_response_1": ["b"]}),
                Some(survey()),
            ),
            WebhookFormat::Standard,
        );
        let body: Value = serde_json::from_slice(&body).unwrap();
        let ids: Vec<&Value> = answers_of(&body)
            .unwrap()
            .iter()
            .map(|a| &a["question_id"])
            .collect();
        assert_eq!(ids, [&json!("q1"), &json!("q2")]);
        let orphan = response_body(
            &sources(json!({"$survey_response_q1": 1}), None),
            WebhookFormat::Standard,
        );
        let orphan: Value = serde_json::from_slice(&orphan).unwrap();
        assert_eq!(orphan["data"]["survey"], json!({"id": "s1", "name": null}));
        // Without `$survey_completed`, a send is a whole response.
        assert_eq!(orphan["data"]["response"]["completed"], true);
    }

    #[test]
    fn a_slack_body_is_escaped_text() {
        let body = response_body(
            &sources(
                json!({"$survey_response_q1": 9, "$survey_response_q2": ["a", "<b>"]}),
                Some(survey()),
            ),
            WebhookFormat::Slack,
        );
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body,
            json!({"text": "Completed response to *NPS* from person &lt;1&gt;\n*How likely?*\n9\n*Why?*\na, &lt;b&gt;"})
        );
    }
}
