//! Deleting answers: one response with the sends behind it, a survey's test data, and a
//! data-subject request for persons; counts, stats and the activity log follow.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app};
use crate::survey_requests::{created, survey_id};

struct Survey {
    id: String,
    question: String,
}

/// A launched API survey named `name` with one open question, `question`.
async fn survey(app: &TestApp, tenant: &Tenant, name: &str, question: &str) -> Survey {
    let survey = created(
        app,
        tenant,
        json!({"name": name, "type": "api", "start_date": "2026-01-01T00:00:00Z",
               "questions": [{"type": "open", "question": question}]}),
    )
    .await;
    Survey {
        id: survey_id(&survey).to_owned(),
        question: survey["questions"][0]["id"].as_str().unwrap().to_owned(),
    }
}

fn sent(survey: &Survey, person: &str, submission: &str, completed: bool, second: u32) -> Value {
    json!({
        "event": "survey sent",
        "uuid": uuid::Uuid::now_v7(),
        "distinct_id": person,
        "timestamp": format!("2026-11-24T10:00:{second:02}Z"),
        "properties": {
            "$survey_id": survey.id,
            "$survey_submission_id": submission,
            "$survey_completed": completed,
            format!("$survey_response_{}", survey.question): format!("{person} says"),
            "$set": {format!("$survey_responded/{}", survey.id): true},
        },
    })
}

fn shown(survey: &Survey, person: &str) -> Value {
    json!({"event": "survey shown", "distinct_id": person,
           "properties": {"$survey_id": survey.id}})
}

async fn count(app: &TestApp, tenant: &Tenant, survey: &Survey, query: &str) -> Value {
    let (status, counts) = parts(
        app.get(
            &format!(
                "/api/projects/{}/surveys/responses_count/?{query}",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{counts}");
    counts[&survey.id].clone()
}

/// The survey's sent count, archived responses left out.
async fn sent_stats(app: &TestApp, tenant: &Tenant, survey: &Survey) -> Value {
    let (_, stats) = parts(
        app.get(
            &format!(
                "/api/projects/{}/surveys/{}/stats/?exclude_archived=true",
                tenant.project_id, survey.id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    stats["stats"]["survey sent"]["total_count"].clone()
}

async fn activities(app: &TestApp, tenant: &Tenant, survey: &Survey) -> Vec<Value> {
    let (_, log) = parts(
        app.get(
            &format!(
                "/api/projects/{}/surveys/{}/activity/",
                tenant.project_id, survey.id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    log["results"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_deleted_response_takes_its_sends_and_counts_with_it_and_is_logged() {
    let app = spawn_app().await;
    let tenant = app.tenant("delete@example.com", &["*"]).await;
    let survey = survey(&app, &tenant, "Deletable", "Why?").await;
    let partial = sent(&survey, "ada", "sub-1", false, 1);
    let archived = sent(&survey, "grace", "sub-3", true, 3);
    app.capture_batch(
        &tenant,
        vec![
            partial.clone(),
            sent(&survey, "ada", "sub-1", true, 2),
            archived.clone(),
            sent(&survey, "alan", "sub-2", true, 4),
        ],
    )
    .await;
    let responses = format!(
        "/api/projects/{}/surveys/{}/responses/",
        tenant.project_id, survey.id
    );
    let archive = format!("{responses}{}/archive/", archived["uuid"].as_str().unwrap());
    assert_eq!(
        app.send_json(Method::POST, &archive, &tenant.key, &json!({}))
            .await
            .status(),
        200
    );
    assert_eq!(count(&app, &tenant, &survey, "").await, 3);
    assert_eq!(
        count(&app, &tenant, &survey, "exclude_archived=true").await,
        2
    );
    let events_before = app.rows("survey_events").await;

    // Named by the uuid of any send of its submission (here the partial one).
    let one = format!("{responses}{}/", partial["uuid"].as_str().unwrap());
    let reader = app
        .key(domain::admin::KeyRequest {
            email: tenant.email.clone(),
            scopes: vec!["survey:read".into()],
            ..domain::admin::KeyRequest::default()
        })
        .await;
    assert_eq!(
        app.send_json(Method::DELETE, &one, &reader, &json!({}))
            .await
            .status(),
        403
    );
    let response = app
        .send_json(Method::DELETE, &one, &tenant.key, &json!({}))
        .await;
    assert_eq!(response.status(), 204);
    assert_eq!(
        app.rows("survey_events").await,
        events_before - 2,
        "both sends are gone"
    );
    assert_eq!(count(&app, &tenant, &survey, "").await, 2);
    assert_eq!(
        sent_stats(&app, &tenant, &survey).await,
        1,
        "stats leave the archived one out"
    );
    let (_, listed) = parts(app.get(&format!("{responses}browse/"), &tenant.key).await).await;
    let people: Vec<&str> = listed["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["distinct_id"].as_str().unwrap())
        .collect();
    assert_eq!(people, ["alan", "grace"]);
    let log = activities(&app, &tenant, &survey).await;
    assert_eq!(log[0]["activity"], "response_deleted", "{log:?}");
    assert_eq!(log[0]["user"]["email"], tenant.email.as_str());
    assert_eq!(log[0]["detail"]["changes"][0]["before"], partial["uuid"]);
    // Gone is gone.
    let response = app
        .send_json(Method::DELETE, &one, &tenant.key, &json!({}))
        .await;
    assert_eq!(response.status(), 404);

    // Deleting the archived one keeps the archived count exact.
    let archived_one = format!("{responses}{}/", archived["uuid"].as_str().unwrap());
    assert_eq!(
        app.send_json(Method::DELETE, &archived_one, &tenant.key, &json!({}))
            .await
            .status(),
        204
    );
    assert_eq!(count(&app, &tenant, &survey, "").await, 1);
    assert_eq!(
        count(&app, &tenant, &survey, "exclude_archived=true").await,
        1
    );
}

#[tokio::test]
async fn a_reset_empties_one_survey_and_is_logged() {
    let app = spawn_app().await;
    let tenant = app.tenant("reset@example.com", &["*"]).await;
    let survey_a = survey(&app, &tenant, "Deletable", "Why?").await;
    let survey_b = survey(&app, &tenant, "Another", "Why not?").await;
    app.capture_batch(
        &tenant,
        vec![
            shown(&survey_a, "ada"),
            sent(&survey_a, "ada", "a-1", true, 1),
            sent(&survey_a, "alan", "a-2", true, 2),
            sent(&survey_b, "ada", "b-1", true, 3),
        ],
    )
    .await;
    let reset = format!(
        "/api/projects/{}/surveys/{}/responses/reset/",
        tenant.project_id, survey_a.id
    );
    let (status, deleted) = parts(
        app.send_json(Method::POST, &reset, &tenant.key, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(
        deleted,
        json!({"persons_deleted": 0, "events_deleted": 3, "responses_deleted": 2})
    );
    assert_eq!(count(&app, &tenant, &survey_a, "").await, Value::Null);
    assert_eq!(count(&app, &tenant, &survey_b, "").await, 1);
    assert_eq!(sent_stats(&app, &tenant, &survey_a).await, 0);
    assert_eq!(
        activities(&app, &tenant, &survey_a).await[0]["activity"],
        "responses_reset"
    );
}

#[tokio::test]
async fn a_data_subject_request_deletes_the_persons_properties_and_with_events_their_answers() {
    let app = spawn_app().await;
    let tenant = app.tenant("dsr@example.com", &["*"]).await;
    let survey = survey(&app, &tenant, "Deletable", "Why?").await;
    app.capture_batch(
        &tenant,
        vec![
            shown(&survey, "ada"),
            sent(&survey, "ada", "a-1", true, 1),
            sent(&survey, "alan", "b-1", true, 2),
            sent(&survey, "grace", "c-1", true, 3),
        ],
    )
    .await;
    let path = format!("/api/projects/{}/persons/bulk_delete/", tenant.project_id);
    assert_eq!(app.rows("person_properties").await, 3);

    // Properties only.
    let (status, deleted) = parts(
        app.send_json(
            Method::POST,
            &path,
            &tenant.key,
            &json!({"distinct_ids": ["grace"]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(
        deleted,
        json!({"persons_deleted": 1, "events_deleted": 0, "responses_deleted": 0})
    );
    assert_eq!(count(&app, &tenant, &survey, "").await, 3);

    // With their events.
    let (status, deleted) = parts(
        app.send_json(
            Method::POST,
            &path,
            &tenant.key,
            &json!({"distinct_ids": ["ada", "nobody"], "delete_events": true}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(
        deleted,
        json!({"persons_deleted": 1, "events_deleted": 2, "responses_deleted": 1})
    );
    assert_eq!(count(&app, &tenant, &survey, "").await, 2);
    assert_eq!(app.rows("person_properties").await, 1);

    // `person:write`, and a list of 1 to 1,000 ids.
    let surveyor = app
        .key(domain::admin::KeyRequest {
            email: tenant.email.clone(),
            scopes: vec!["survey:write".into()],
            ..domain::admin::KeyRequest::default()
        })
        .await;
    let (status, error) = parts(
        app.send_json(
            Method::POST,
            &path,
            &surveyor,
            &json!({"distinct_ids": ["alan"]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 403, "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("person:write"),
        "{error}"
    );
    let too_many: Vec<String> = (0..1001).map(|n| n.to_string()).collect();
    for body in [
        json!({}),
        json!({"distinct_ids": []}),
        json!({"distinct_ids": too_many}),
        json!({"distinct_ids": "alan"}),
        json!({"distinct_ids": [{"a": 1}]}),
    ] {
        let (status, error) =
            parts(app.send_json(Method::POST, &path, &tenant.key, &body).await).await;
        assert_eq!(status, 400, "{error}");
        assert_eq!(error["attr"], "distinct_ids", "{error}");
    }
}
