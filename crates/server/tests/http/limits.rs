//! `responses_limit`: the response that reaches it stops the survey in the same write (an end
//! date, the limit cleared, as PostHog's task does hours later), so its internal targeting flag
//! turns off and the feed shows it ended at once; retried sends and partial sends of one
//! submission count once.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{parts, spawn_app, within};

#[tokio::test]
async fn the_response_that_reaches_the_limit_stops_the_survey_at_once() {
    let app = spawn_app().await;
    let tenant = app.tenant("limit@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (status, survey) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/surveys/", tenant.project_id),
            &tenant.key,
            &json!({"name": "Two answers", "type": "popover", "responses_limit": 2,
                    "start_date": "2026-01-01T00:00:00Z",
                    "questions": [{"type": "open", "question": "Why?"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let id = survey["id"].as_str().unwrap().to_owned();
    let internal = format!("survey-targeting-{}-custom", id.replace('-', ""));
    let send = |person: &str, submission: &str, completed: bool| {
        json!({"event": "survey sent", "distinct_id": person, "uuid": uuid::Uuid::now_v7(),
               "properties": {"$survey_id": id, "$survey_submission_id": submission,
                              "$survey_completed": completed}})
    };
    let capture = async |events: Vec<Value>| {
        let response = app
            .request(Method::POST, "/batch/")
            .json(&json!({"api_key": token, "batch": events}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    };
    let flag_for_someone_new = async || {
        let (_, flags) = app
            .flags(&json!({"token": token, "distinct_id": "someone-new"}))
            .await;
        flags["flags"][&internal]["enabled"].clone()
    };
    let survey_path = format!("/api/projects/{}/surveys/{id}/", tenant.project_id);

    // One submission in two partial sends, and a retry of the first: one response.
    let first = send("ada", "sub-1", false);
    capture(vec![first.clone(), send("ada", "sub-1", true)]).await;
    capture(vec![first]).await;
    let (_, running) = parts(app.get(&survey_path, &tenant.key).await).await;
    assert_eq!(running["end_date"], Value::Null, "{running}");
    assert_eq!(running["responses_limit"], 2);
    assert_eq!(flag_for_someone_new().await, true);

    // The second response reaches the limit.
    capture(vec![send("alan", "sub-2", true)]).await;
    let (_, stopped) = parts(app.get(&survey_path, &tenant.key).await).await;
    assert!(stopped["end_date"].is_string(), "{stopped}");
    assert_eq!(stopped["responses_limit"], Value::Null, "{stopped}");
    within(
        Duration::from_secs(2),
        "the stopped survey's flag and feed",
        || async {
            let feed = app.survey_feed(&token).await;
            flag_for_someone_new().await == false && feed["surveys"][0]["end_date"].is_string()
        },
    )
    .await;
    // A late answer is still stored; the survey stays stopped.
    capture(vec![send("grace", "sub-3", true)]).await;
    let (_, counts) = parts(
        app.get(
            &format!(
                "/api/projects/{}/surveys/responses_count/",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(counts[&id], 3);
}
