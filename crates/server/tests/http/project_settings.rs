//! A project's `survey_config` over HTTP (`PATCH /api/projects/{id}/`, and under
//! `/api/environments/`): PostHog's errors, merge and clearing, the scope, the activity entry;
//! and the wait period it sets enforced across a person's devices: capture stores when the
//! person last saw a survey, and `/flags` holds every survey's internal targeting flag off
//! within the wait, whatever the device asking.

use chrono::{Duration, SecondsFormat, Utc};
use domain::tenancy::MAX_SURVEY_CONFIG_BYTES;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, scraped, spawn_app, within};
use crate::sdk_snapshot::{CHANGE_REACHES_EVERY_NODE, listening_node};

fn project_path(tenant: &Tenant) -> String {
    format!("/api/projects/{}/", tenant.project_id.0)
}

async fn patch(app: &TestApp, tenant: &Tenant, path: &str, body: Value) -> (u16, Value) {
    parts(app.send_json(Method::PATCH, path, &tenant.key, &body).await).await
}

async fn stored_config(app: &TestApp, tenant: &Tenant) -> Value {
    let (status, project) = parts(app.get(&project_path(tenant), &tenant.key).await).await;
    assert_eq!(status, 200, "{project}");
    project["survey_config"].clone()
}

/// Asserts a 400 with PostHog's body naming `attr`.
fn assert_invalid(status: u16, body: &Value, code: &str, attr: &str, detail: &str) {
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body,
        &json!({"type": "validation_error", "code": code, "detail": detail, "attr": attr})
    );
}

#[tokio::test]
async fn survey_config_is_merged_cleared_and_returned_by_the_project_under_both_prefixes() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let path = project_path(&ada);
    assert_eq!(stored_config(&app, &ada).await, Value::Null);

    let (status, project) = patch(
        &app,
        &ada,
        &path,
        json!({"survey_config": {"appearance": {"backgroundColor": "#eee"}}}),
    )
    .await;
    assert_eq!(status, 200, "{project}");
    assert_eq!(project["id"], ada.project_id.0);
    assert!(project["api_token"].as_str().unwrap().starts_with("phc_"));
    assert_eq!(
        project["survey_config"],
        json!({"appearance": {"backgroundColor": "#eee"}})
    );

    let environment = format!("/api/environments/{}/", ada.project_id.0);
    let (status, project) = patch(
        &app,
        &ada,
        &environment,
        json!({"survey_config": {"seenSurveyWaitPeriodInDays": 14}}),
    )
    .await;
    assert_eq!(status, 200, "{project}");
    let merged =
        json!({"appearance": {"backgroundColor": "#eee"}, "seenSurveyWaitPeriodInDays": 14});
    assert_eq!(project["survey_config"], merged, "a shallow merge");
    assert_eq!(stored_config(&app, &ada).await, merged);
    let (status, by_environment) = parts(app.get(&environment, &ada.key).await).await;
    assert_eq!((status, &by_environment["survey_config"]), (200, &merged));
    let (_, current) = parts(app.get("/api/projects/@current/", &ada.key).await).await;
    assert_eq!(current["survey_config"], merged);
    let (_, in_organization) = parts(
        app.get(
            &format!(
                "/api/organizations/{}/projects/{}/",
                ada.organization_id.0, ada.project_id.0
            ),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(in_organization["survey_config"], merged);
    let (_, list) = parts(app.get("/api/projects/", &ada.key).await).await;
    assert!(
        list["results"][0].get("survey_config").is_none(),
        "lists show projects as PostHog's basic serializer: {list}"
    );

    let (status, unchanged) = patch(&app, &ada, &path, json!({})).await;
    assert_eq!((status, &unchanged["survey_config"]), (200, &merged));
    let (status, cleared) = patch(&app, &ada, &path, json!({"survey_config": null})).await;
    assert_eq!((status, &cleared["survey_config"]), (200, &Value::Null));
    assert_eq!(stored_config(&app, &ada).await, Value::Null);
}

#[tokio::test]
async fn a_refused_patch_answers_posthogs_errors_and_changes_nothing() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let path = project_path(&ada);
    let (status, _) = patch(
        &app,
        &ada,
        &path,
        json!({"survey_config": {"seenSurveyWaitPeriodInDays": 7}}),
    )
    .await;
    assert_eq!(status, 200);

    for sent in [json!("dark"), json!([1]), json!(3), json!(true)] {
        let (status, body) = patch(&app, &ada, &path, json!({"survey_config": sent})).await;
        assert_invalid(
            status,
            &body,
            "invalid_input",
            "survey_config",
            "Must be an object.",
        );
    }
    for days in [
        json!(-1),
        json!(366),
        json!(1.5),
        json!(7.0),
        json!(false),
        json!("7"),
    ] {
        let (status, body) = patch(
            &app,
            &ada,
            &path,
            json!({"survey_config": {"seenSurveyWaitPeriodInDays": days}}),
        )
        .await;
        assert_invalid(
            status,
            &body,
            "invalid_input",
            "survey_config__seenSurveyWaitPeriodInDays",
            "Must be a whole number from 0 to 365.",
        );
    }
    let (status, body) = patch(
        &app,
        &ada,
        &path,
        json!({"survey_config": {"appearance": "x".repeat(MAX_SURVEY_CONFIG_BYTES)}}),
    )
    .await;
    assert_invalid(
        status,
        &body,
        "max_length",
        "survey_config",
        &format!("Ensure survey_config has no more than {MAX_SURVEY_CONFIG_BYTES} bytes."),
    );
    // Two halves, each within the bound, merged past it.
    let half = "x".repeat(MAX_SURVEY_CONFIG_BYTES / 2);
    let (status, _) = patch(&app, &ada, &path, json!({"survey_config": {"a": half}})).await;
    assert_eq!(status, 200);
    let (status, body) = patch(&app, &ada, &path, json!({"survey_config": {"b": half}})).await;
    assert_eq!(
        (status, body["attr"].clone()),
        (400, json!("survey_config"))
    );
    let (status, body) = patch(
        &app,
        &ada,
        &path,
        json!({"survey_config": null, "name": "Renamed"}),
    )
    .await;
    assert_invalid(
        status,
        &body,
        "invalid_input",
        "name",
        "Burrow does not change this field of a project: a PATCH takes survey_config only.",
    );
    let (status, body) = parts(
        app.request(Method::PATCH, &path)
            .bearer_auth(&ada.key)
            .header("content-type", "application/json")
            .body("[]")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, body["type"].clone()),
        (400, json!("validation_error"))
    );

    assert_eq!(
        stored_config(&app, &ada).await,
        json!({"seenSurveyWaitPeriodInDays": 7, "a": half})
    );
    let (_, project) = parts(app.get(&path, &ada.key).await).await;
    assert_eq!(project["name"], "Default project");
}

#[tokio::test]
async fn patching_a_project_needs_project_write_and_its_own_project() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["project:read"]).await;
    let path = project_path(&ada);
    let (status, body) = patch(&app, &ada, &path, json!({"survey_config": {}})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["detail"],
        "API key missing required scope 'project:write'"
    );
    let (status, _) = parts(app.get(&path, &ada.key).await).await;
    assert_eq!(status, 200, "reading needs project:read only");

    let writer = app.tenant("wes@example.com", &["project:write"]).await;
    let (status, project) = patch(
        &app,
        &writer,
        &project_path(&writer),
        json!({"survey_config": {"appearance": {}}}),
    )
    .await;
    assert_eq!(
        (status, project["survey_config"].clone()),
        (200, json!({"appearance": {}}))
    );

    // Another organization's key, on Ada's project: as if there were none.
    for path in [
        path.clone(),
        format!("/api/environments/{}/", ada.project_id.0),
    ] {
        let (status, body) = patch(&app, &writer, &path, json!({"survey_config": {"x": 1}})).await;
        assert!(matches!(status, 403 | 404), "{status}: {body}");
    }
    let (status, project) = parts(app.get(&path, &ada.key).await).await;
    assert_eq!(
        (status, project["survey_config"].clone()),
        (200, Value::Null)
    );
}

#[tokio::test]
async fn a_change_is_logged_in_the_survey_activity_as_posthog_logs_it() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let path = project_path(&ada);
    for body in [
        json!({"survey_config": {"appearance": {"a": 1}}}),
        json!({"survey_config": {"appearance": {"a": 2}, "seenSurveyWaitPeriodInDays": 3}}),
        // Nothing changes; then a clear, which PostHog does not log either.
        json!({"survey_config": {"seenSurveyWaitPeriodInDays": 3}}),
        json!({"survey_config": null}),
    ] {
        let (status, answer) = patch(&app, &ada, &path, body).await;
        assert_eq!(status, 200, "{answer}");
    }
    let (status, log) = parts(
        app.get(
            &format!("/api/projects/{}/surveys/activity/", ada.project_id.0),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{log}");
    assert_eq!(log["total_count"], 2, "{log}");
    let newest = &log["results"][0];
    assert_eq!(
        (
            &newest["scope"],
            &newest["item_id"],
            &newest["activity"],
            &newest["user"]["email"]
        ),
        (
            &json!("Survey"),
            &json!(""),
            &json!("updated"),
            &json!("ada@example.com")
        )
    );
    assert_eq!(newest["detail"]["name"], "global survey appearance");
    assert_eq!(
        newest["detail"]["changes"],
        json!([
            {"type": "Survey", "action": "changed", "field": "appearance",
             "before": {"a": 1}, "after": {"a": 2}},
            {"type": "Survey", "action": "created", "field": "seenSurveyWaitPeriodInDays",
             "before": null, "after": 3},
        ])
    );
    assert_eq!(
        log["results"][1]["detail"]["changes"],
        json!([{"type": "Survey", "action": "created", "field": "appearance",
                "before": null, "after": {"a": 1}}])
    );
}

/// A running popover survey with `conditions`; its id and internal targeting flag's key.
async fn running_survey(
    app: &TestApp,
    tenant: &Tenant,
    name: &str,
    conditions: Value,
) -> (String, String) {
    let (status, survey) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/surveys/", tenant.project_id.0),
            &tenant.key,
            &json!({"name": name, "type": "popover", "conditions": conditions,
                    "start_date": "2026-01-01T00:00:00Z",
                    "questions": [{"type": "open", "question": "Why?"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let id = survey["id"].as_str().unwrap().to_owned();
    let key = format!("survey-targeting-{}-custom", id.replace('-', ""));
    (id, key)
}

/// `survey shown` for `survey`, captured from `person`'s first device `days_ago`, as
/// posthog-js sends it (its own `$survey_last_seen_date` included).
async fn shown(app: &TestApp, token: &str, person: &str, survey: &str, days_ago: i64) {
    let at = (Utc::now() - Duration::days(days_ago)).to_rfc3339_opts(SecondsFormat::Millis, true);
    let response = app
        .request(Method::POST, "/batch/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "survey shown", "distinct_id": person, "timestamp": at,
            "properties": {"$survey_id": survey, "$lib": "web",
                           "$set": {"$survey_last_seen_date": at}}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// `/flags` for `person` from another device: no person property sent.
async fn flags(node: &str, token: &str, person: &str) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{node}/flags/?v=2"))
        .json(&json!({"token": token, "distinct_id": person}))
        .send()
        .await
        .unwrap();
    let (status, body) = parts(response).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn enabled(flags: &Value, key: &str) -> bool {
    flags["flags"][key]["enabled"]
        .as_bool()
        .unwrap_or_else(|| panic!("{key} is answered: {flags}"))
}

#[tokio::test]
async fn a_survey_seen_on_one_device_keeps_the_others_hidden_on_another_for_the_wait() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let (seen, _) = running_survey(&app, &ada, "Seen first", json!(null)).await;
    let (_, fortnight) = running_survey(
        &app,
        &ada,
        "Waits 14 days",
        json!({"seenSurveyWaitPeriodInDays": 14}),
    )
    .await;
    let (_, week) = running_survey(
        &app,
        &ada,
        "Waits 7 days",
        json!({"seenSurveyWaitPeriodInDays": 7}),
    )
    .await;
    let (_, unbounded) = running_survey(&app, &ada, "No wait", json!(null)).await;
    // A flag on what posthog-js sets itself: kept as sent.
    let (status, flag) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/feature_flags/", ada.project_id.0),
            &ada.key,
            &json!({"key": "saw-a-survey", "filters": {"groups": [{"rollout_percentage": 100,
                    "properties": [{"key": "$survey_last_seen_date", "type": "person",
                                    "operator": "is_set", "value": "is_set"}]}]}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{flag}");

    let before = flags(&app.address, &token, "p").await;
    assert!(enabled(&before, &fortnight) && enabled(&before, &week));
    assert!(!enabled(&before, "saw-a-survey"));

    // Device 1 showed a survey 10 days ago.
    shown(&app, &token, "p", &seen, 10).await;
    let after = flags(&app.address, &token, "p").await;
    assert!(!enabled(&after, &fortnight), "within its 14 days: {after}");
    assert!(enabled(&after, &week), "its 7 days are over: {after}");
    assert!(enabled(&after, &unbounded), "no wait: {after}");
    assert!(
        enabled(&after, "saw-a-survey"),
        "posthog-js's own date is kept"
    );
    // An older showing captured later does not move the date back.
    shown(&app, &token, "p", &seen, 30).await;
    assert!(!enabled(
        &flags(&app.address, &token, "p").await,
        &fortnight
    ));

    // The project's wait is a floor under every survey's own; its change reaches every node.
    let other = listening_node(&app, true).await;
    assert!(enabled(&flags(&other, &token, "p").await, &unbounded));
    let (status, _) = patch(
        &app,
        &ada,
        &project_path(&ada),
        json!({"survey_config": {"seenSurveyWaitPeriodInDays": 12}}),
    )
    .await;
    assert_eq!(status, 200);
    within(CHANGE_REACHES_EVERY_NODE, "the project's wait", || async {
        let answer = flags(&other, &token, "p").await;
        !enabled(&answer, &unbounded) && !enabled(&answer, &week)
    })
    .await;
    let answer = flags(&other, &token, "p").await;
    assert!(!enabled(&answer, &fortnight));
    assert!(
        enabled(&flags(&other, &token, "q").await, &unbounded),
        "never saw one"
    );
    assert!(
        scraped(&other, "burrow_sdk_change_listener_up").await == Some(1.0),
        "served from a kept snapshot"
    );

    let (status, _) = patch(
        &app,
        &ada,
        &project_path(&ada),
        json!({"survey_config": {"seenSurveyWaitPeriodInDays": 9}}),
    )
    .await;
    assert_eq!(status, 200);
    within(CHANGE_REACHES_EVERY_NODE, "a shorter wait", || async {
        let answer = flags(&other, &token, "p").await;
        enabled(&answer, &unbounded) && enabled(&answer, &week) && !enabled(&answer, &fortnight)
    })
    .await;
}
