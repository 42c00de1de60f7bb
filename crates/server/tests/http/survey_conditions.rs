//! A survey's display `conditions` and its questions' `skipSubmitButton` over HTTP: what is
//! refused (with PostHog's body), what round-trips, what a copy leaves out, and hostile sizes
//! answered with a 400, never a 500.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app};
use crate::survey_requests::{create, created, patch, survey_id, survey_path};

/// A survey named `name` of `kind` with `fields` added.
fn survey(name: &str, kind: &str, fields: Value) -> Value {
    let mut body = json!({"name": name, "type": kind});
    body.as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    body
}

fn invalid(attr: &str, detail: &str) -> Value {
    json!({"type": "validation_error", "code": "invalid_input", "detail": detail, "attr": attr})
}

/// A multivariate flag (variants `control` and `test`) of the tenant's project: its id.
async fn flag_with_variants(app: &TestApp, tenant: &Tenant) -> Value {
    let (status, flag) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/feature_flags/", tenant.project_id.0),
            &tenant.key,
            &json!({"key": "checkout", "filters": {
                "groups": [{"properties": [], "rollout_percentage": 100}],
                "multivariate": {"variants": [
                    {"key": "control", "rollout_percentage": 50},
                    {"key": "test", "rollout_percentage": 50}]}}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{flag}");
    flag["id"].clone()
}

#[tokio::test]
async fn each_conditions_and_skip_submit_refusal_answers_posthogs_body() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let operators = "regex, not_regex, exact, is_not, icontains, not_icontains, gt, lt";
    let cases = [
        (
            "popover",
            json!({"conditions": {"cancelEvents": ["left"]}}),
            invalid("conditions", "cancelEvents must be an object"),
        ),
        (
            "popover",
            json!({"conditions": {"cancelEvents": {"values": "left"}}}),
            invalid("conditions", "cancelEvents values must be a list"),
        ),
        (
            "popover",
            json!({"conditions": {"cancelEvents": {"values": [{"event": "left"}]}}}),
            invalid(
                "conditions",
                "cancelEvents values must be objects with a name",
            ),
        ),
        (
            "popover",
            json!({"conditions": {"events": {"values": ["$pageview"]}}}),
            invalid("conditions", "events values must be objects with a name"),
        ),
        (
            "popover",
            json!({"conditions": {"events": {"values": [{"name": "bought", "propertyFilters": [1]}]}}}),
            invalid("conditions", "events propertyFilters must be an object"),
        ),
        (
            "popover",
            json!({"conditions": {"events": {"values": [{"name": "bought",
                "propertyFilters": {"plan": {"values": ["pro"], "operator": "is_set"}}}]}}}),
            invalid(
                "conditions",
                &format!("events propertyFilters operator must be one of: {operators}"),
            ),
        ),
        (
            "popover",
            json!({"conditions": {"cancelEvents": {"values": [{"name": "left",
                "propertyFilters": {"plan": {"values": "pro", "operator": "exact"}}}]}}}),
            invalid(
                "conditions",
                "cancelEvents propertyFilters values must be a list of strings",
            ),
        ),
        (
            "popover",
            json!({"conditions": {"actions": {"values": [5]}}}),
            invalid("conditions", "actions values must be objects"),
        ),
        (
            "popover",
            json!({"conditions": {"actions": {"values": [{"id": "signed up", "name": "Signed up"}]}}}),
            invalid("conditions", "actions value id must be an integer"),
        ),
        (
            "external_survey",
            json!({"conditions": {"cancelEvents": {"values": [{"name": "left"}]}}}),
            invalid(
                "conditions",
                "The following condition fields are not allowed for external surveys: cancelEvents",
            ),
        ),
        (
            "popover",
            json!({"questions": [{"type": "rating", "question": "Q", "skipSubmitButton": 1}]}),
            invalid("questions", "Question skipSubmitButton must be a boolean"),
        ),
        (
            "popover",
            json!({"questions": [{"type": "open", "question": "Q"},
                                 {"type": "multiple_choice", "question": "Q", "choices": ["a", "b"],
                                  "skipSubmitButton": true}]}),
            invalid(
                "questions",
                "Question 2: skipSubmitButton is only available for rating and single_choice questions",
            ),
        ),
        (
            "popover",
            json!({"questions": [{"type": "single_choice", "question": "Q", "choices": ["a", "Other"],
                                  "hasOpenChoice": true, "skipSubmitButton": true}]}),
            invalid(
                "questions",
                "Question 1: skipSubmitButton cannot be used with hasOpenChoice",
            ),
        ),
    ];
    for (kind, fields, expected) in cases {
        let (status, body) = create(&app, &ada, survey("Refused", kind, fields.clone())).await;
        assert_eq!((status, &body), (400, &expected), "{fields}");
    }
    let draft = created(&app, &ada, survey("Draft", "popover", json!({}))).await;
    let (status, body) = patch(
        &app,
        &ada,
        &draft,
        json!({"conditions": {"cancelEvents": {"values": [{"name": ""}]}}}),
    )
    .await;
    assert_eq!(
        (status, body),
        (
            400,
            invalid(
                "conditions",
                "cancelEvents values must be objects with a name"
            )
        )
    );
}

#[tokio::test]
async fn a_full_conditions_object_and_skip_submit_buttons_round_trip_on_get() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let flag = flag_with_variants(&app, &ada).await;
    let conditions = json!({
        "url": "^https://shop\\.example\\.com/(cart|checkout)$",
        "urlMatchType": "regex",
        "selector": "#buy",
        "seenSurveyWaitPeriodInDays": 14,
        "linkedFlagVariant": "test",
        "deviceTypes": ["Desktop", "Tablet"],
        "deviceTypesMatchType": "exact",
        "events": {"repeatedActivation": true, "values": [
            {"name": "added to cart", "propertyFilters": {
                "total": {"values": ["100"], "operator": "gt"},
                "plan": {"values": ["pro", "team"], "operator": "icontains"}}},
            {"name": "$pageview", "propertyFilters": null}]},
        "cancelEvents": {"values": [
            {"name": "checkout completed"},
            {"name": "$pageleave", "propertyFilters": {
                "$current_url": {"values": ["/thanks"], "operator": "not_regex"}}}]},
        "actions": {"values": [{"id": 7, "name": "Signed up"}]},
        "position": {"kept": [1, 2.5]}
    });
    let questions = json!([
        {"type": "rating", "id": "r", "question": "How likely?", "display": "number", "scale": 10,
         "skipSubmitButton": true},
        {"type": "single_choice", "id": "s", "question": "Which?", "choices": ["a", "b"],
         "skipSubmitButton": true},
        {"type": "open", "id": "o", "question": "Why?", "skipSubmitButton": false}
    ]);
    let made = created(
        &app,
        &ada,
        survey(
            "Everything",
            "popover",
            json!({"linked_flag_id": flag, "conditions": conditions, "questions": questions}),
        ),
    )
    .await;
    let (status, read) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&made)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{read}");
    for answer in [&made, &read] {
        assert_eq!(answer["conditions"], conditions);
        assert_eq!(answer["questions"], questions);
    }
}

#[tokio::test]
async fn a_copy_leaves_out_the_events_that_call_a_survey_off() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let other = app
        .admin
        .create_project(ada.organization_id, "Other")
        .await
        .unwrap()
        .id;
    let source = created(
        &app,
        &ada,
        survey(
            "Copied",
            "popover",
            json!({"conditions": {"url": "/pricing",
                "events": {"values": [{"name": "opened"}]},
                "cancelEvents": {"values": [{"name": "closed"}]}}}),
        ),
    )
    .await;
    let (status, copies) = parts(
        app.send_json(
            Method::POST,
            &format!(
                "{}duplicate_to_projects/",
                survey_path(ada.project_id, survey_id(&source))
            ),
            &ada.key,
            &json!({"target_team_ids": [other.0]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{copies}");
    let copy = copies["created_surveys"][0]["survey_id"].as_str().unwrap();
    let (status, read) = parts(app.get(&survey_path(other, copy), &ada.key).await).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["conditions"], json!({"url": "/pricing"}));
}

#[tokio::test]
async fn hostile_conditions_are_refused_with_a_400_never_a_500() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let too_large = json!({"type": "validation_error", "code": "max_length",
        "detail": "Conditions may hold at most 65536 bytes as JSON.", "attr": "conditions"});
    let cancel_events: Vec<Value> = (0..10_000)
        .map(|i| json!({"name": format!("left {i}")}))
        .collect();
    let huge_regex = "(a+)+".repeat(20_000);
    for (what, conditions) in [
        (
            "10,000 cancel events",
            json!({"cancelEvents": {"values": cancel_events}}),
        ),
        (
            "a huge regex url",
            json!({"url": huge_regex, "urlMatchType": "regex"}),
        ),
    ] {
        let (status, body) = create(
            &app,
            &ada,
            survey("Hostile", "popover", json!({"conditions": conditions})),
        )
        .await;
        assert_eq!((status, &body), (400, &too_large), "{what}");
    }
    // A pathological pattern within the bound is stored as sent: Burrow never runs it, the SDK
    // does (in the browser that loads the survey).
    let catastrophic = json!({"url": "^(a+)+$", "urlMatchType": "regex",
        "events": {"values": [{"name": "x", "propertyFilters": {
            "q": {"values": ["(x+x+)+y", "["], "operator": "regex"}}}]}});
    let kept = created(
        &app,
        &ada,
        survey("Pattern", "popover", json!({"conditions": catastrophic})),
    )
    .await;
    assert_eq!(kept["conditions"], catastrophic);
}
