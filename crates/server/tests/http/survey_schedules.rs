//! Recurring surveys over time, over HTTP, with the schedule rounds every second: a survey moves
//! on to its next iteration as it begins (its answer, the public feed and the internal targeting
//! flag follow, so a person who answered the first iteration is asked again), stops once its
//! last iteration has ended, and when resumed after that starts its schedule again.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app_with, within};

/// Long enough for a round (every second here) and the snapshot change to reach `/flags`.
const A_FEW_ROUNDS: Duration = Duration::from_secs(15);

async fn spawn() -> TestApp {
    spawn_app_with(|args| args.survey_schedule_secs = 1).await
}

/// A weekly survey of `count` iterations launched at `start`.
async fn weekly(app: &TestApp, tenant: &Tenant, count: i32, start: DateTime<Utc>) -> Value {
    let path = format!("/api/projects/{}/surveys/", tenant.project_id);
    let body = json!({"name": format!("Pulse {count}"), "type": "popover",
                      "questions": [{"type": "open", "question": "How is it going?"}],
                      "start_date": start, "iteration_count": count, "iteration_frequency_days": 7});
    let (status, survey) =
        parts(app.send_json(Method::POST, &path, &tenant.key, &body).await).await;
    assert_eq!(status, 201, "{survey}");
    survey
}

async fn read(app: &TestApp, tenant: &Tenant, id: &str) -> Value {
    let path = format!("/api/projects/{}/surveys/{id}/", tenant.project_id);
    parts(app.get(&path, &tenant.key).await).await.1
}

#[tokio::test]
async fn a_person_who_answered_one_iteration_is_asked_again_in_the_next() {
    let app = spawn().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    // The second iteration begins a few seconds from now.
    let start = Utc::now() - chrono::Duration::days(7) + chrono::Duration::seconds(4);
    let survey = weekly(&app, &ada, 3, start).await;
    let id = survey["id"].as_str().unwrap().to_owned();
    assert_eq!(survey["current_iteration"], 1);
    let internal = format!("survey-targeting-{}-custom", id.replace('-', ""));
    let asked = async || {
        let (_, answer) = app
            .flags(&json!({"token": token, "distinct_id": "person-1"}))
            .await;
        answer["flags"][&internal]["enabled"].as_bool().unwrap()
    };
    let answered = app
        .request(Method::POST, "/e/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "survey sent",
            "properties": {"distinct_id": "person-1", "$survey_id": id, "$survey_response": "Fine",
                           "$survey_iteration": 1,
                           "$set": {format!("$survey_responded/{id}/1"): true}}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200);
    assert!(!asked().await, "answered the first iteration: not asked");
    within(A_FEW_ROUNDS, "the second iteration", async || {
        read(&app, &ada, &id).await["current_iteration"] == 2
    })
    .await;
    let moved = read(&app, &ada, &id).await;
    assert_eq!(
        moved["current_iteration_start_date"],
        moved["iteration_start_dates"][1]
    );
    within(A_FEW_ROUNDS, "asked again in the second iteration", asked).await;
    let feed = app.survey_feed(&token).await;
    assert_eq!(feed["surveys"][0]["current_iteration"], 2);
}

#[tokio::test]
async fn a_schedule_that_ended_stops_its_survey_and_a_resume_starts_it_again() {
    let app = spawn().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    // Two weekly iterations launched a month ago: over two weeks ago.
    let survey = weekly(&app, &ada, 2, Utc::now() - chrono::Duration::days(30)).await;
    let id = survey["id"].as_str().unwrap().to_owned();
    within(
        A_FEW_ROUNDS,
        "the survey stopped by its schedule",
        async || !read(&app, &ada, &id).await["end_date"].is_null(),
    )
    .await;
    let path = format!("/api/projects/{}/surveys/{id}/", ada.project_id);
    let before = Utc::now();
    let (status, resumed) = parts(
        app.send_json(Method::PATCH, &path, &ada.key, &json!({"end_date": null}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{resumed}");
    let started: DateTime<Utc> = resumed["start_date"].as_str().unwrap().parse().unwrap();
    assert!(
        started >= before - chrono::Duration::seconds(1),
        "{resumed}"
    );
    assert_eq!(resumed["iteration_start_dates"][0], resumed["start_date"]);
    assert_eq!(resumed["current_iteration"], 1);
    // Rounds go by and it keeps running.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(read(&app, &ada, &id).await["end_date"].is_null());
}
