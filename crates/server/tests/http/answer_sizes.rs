//! Answers of a bounded size: capture refuses an event past PostHog's event limit and a survey
//! answer past the answer limit with PostHog's error body.

use domain::survey_response::{MAX_ANSWER_BYTES, MAX_EVENT_BYTES};
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app};

/// A launched survey with one open question: its id and the question's id.
async fn open_survey(app: &TestApp, tenant: &Tenant) -> (String, String) {
    let (status, survey) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/surveys/", tenant.project_id),
            &tenant.key,
            &json!({"name": "Essays", "type": "api", "start_date": "2026-01-01T00:00:00Z",
                    "questions": [{"type": "open", "question": "Tell us everything"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    (
        survey["id"].as_str().unwrap().to_owned(),
        survey["questions"][0]["id"].as_str().unwrap().to_owned(),
    )
}

fn answer_event(survey: &str, question: &str, person: &str, answer: &str) -> Value {
    json!({
        "event": "survey sent",
        "distinct_id": person,
        "properties": {"$survey_id": survey, format!("$survey_response_{question}"): answer},
    })
}

async fn capture(app: &TestApp, token: &str, events: Vec<Value>) -> (u16, Value) {
    parts(
        app.request(Method::POST, "/batch/")
            .json(&json!({"api_key": token, "batch": events}))
            .send()
            .await
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn an_oversized_event_or_answer_refuses_the_whole_request_with_posthogs_body() {
    let app = spawn_app().await;
    let tenant = app.tenant("essays@example.com", &["*"]).await;
    let (survey, question) = open_survey(&app, &tenant).await;
    let token = app.project_token(&tenant).await;
    let fine = answer_event(&survey, &question, "p1", "short");

    let padding = "x".repeat(MAX_EVENT_BYTES);
    let pageview = json!({"event": "$pageview", "distinct_id": "p2",
                          "properties": {"$current_url": padding}});
    let (status, body) = capture(&app, &token, vec![fine.clone(), pageview]).await;
    assert_eq!(status, 413);
    assert_eq!(
        body,
        json!({"type": "invalid_request", "code": "payload_too_large",
               "detail": "Event 1 exceeds the maximum event size of 1000000 bytes.",
               "attr": null})
    );

    let essay = "y".repeat(MAX_ANSWER_BYTES);
    let long = answer_event(&survey, &question, "p3", &essay);
    let (status, body) = capture(&app, &token, vec![fine.clone(), long]).await;
    assert_eq!(status, 400);
    let attr = format!("$survey_response_{question}");
    assert_eq!(
        body,
        json!({"type": "validation_error", "code": "max_length",
               "detail": format!("Event 1: {attr} is larger than the limit of 65536 bytes."),
               "attr": attr})
    );
    assert_eq!(
        app.rows("survey_events").await,
        0,
        "nothing of either is stored"
    );

    // An answer at the limit (its JSON text, quotes included) is stored and listed whole.
    let longest = "z".repeat(MAX_ANSWER_BYTES - 2);
    let at_limit = answer_event(&survey, &question, "p4", &longest);
    assert_eq!(
        capture(&app, &token, vec![fine, at_limit]).await,
        (200, json!({"status": 1}))
    );
    let (status, list) = parts(
        app.get(
            &format!(
                "/api/projects/{}/surveys/{survey}/responses/",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let answers: Vec<&Value> = list["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["answers"][&question])
        .collect();
    assert_eq!(list["count"], 2);
    assert!(answers.contains(&&json!(longest)));
}
