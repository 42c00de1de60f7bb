//! `/api/projects/{id}/cohorts/` over HTTP: PostHog's shape and messages, soft deletion, the
//! `cohort` scope, and a flag filtering by a cohort answered by `/flags` and served with its
//! cohorts by the definitions.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{parts, send_to_project, spawn_app};

fn plan_is(plan: &str) -> Value {
    json!({"properties": {"type": "OR", "values": [{"type": "AND", "values": [
        {"key": "plan", "type": "person", "operator": "exact", "value": [plan]}]}]}})
}

#[tokio::test]
async fn cohorts_are_created_read_changed_and_deleted_as_posthog_shows_them() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, created) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "cohorts/",
        json!({"name": "Pro", "description": "Paying", "filters": plan_is("pro")}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().unwrap();
    for field in ["created_at", "created_by"] {
        assert!(
            created[field].is_string() || created[field].is_object(),
            "{field}"
        );
    }
    let mut shown = created.clone();
    for field in ["id", "created_at", "created_by"] {
        shown.as_object_mut().unwrap().remove(field);
    }
    assert_eq!(
        shown,
        json!({"name": "Pro", "description": "Paying", "filters": {"properties": {"type": "OR",
               "values": [{"type": "AND", "values": [{"key": "plan", "type": "person",
               "operator": "exact", "value": ["pro"], "negation": false}]}]}},
               "groups": [], "query": null, "deleted": false, "is_static": false,
               "cohort_type": "person_property", "is_calculating": false,
               "last_calculation": null, "errors_calculating": 0, "count": null,
               "experiment_set": []})
    );
    let (status, list) = send_to_project(&app, &ada, Method::GET, "cohorts/", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        (list["count"].clone(), list["results"][0]["id"].clone()),
        (json!(1), json!(id))
    );

    let (status, changed) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &format!("cohorts/{id}/"),
        json!({"name": "Team", "filters": plan_is("team")}),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["name"], "Team");
    assert_eq!(changed["created_by"], created["created_by"]);

    // Refused with PostHog's messages, or Burrow's where PostHog would store what Burrow cannot
    // evaluate.
    for (body, attr, detail) in [
        (json!({"name": "x"}), "filters", "This field is required."),
        (
            json!({"filters": {"groups": []}}),
            "filters",
            "Must contain a 'properties' key with type and values",
        ),
        (
            json!({"filters": {"properties": {"type": "AND", "values": [{"type": "person", "key": "plan", "value": "pro"}]}}}),
            "filters",
            "Missing required keys for person filter: operator",
        ),
        (
            json!({"is_static": true, "filters": plan_is("pro")}),
            "is_static",
            "Burrow evaluates cohorts of person properties only: static cohorts (lists of persons) are not supported.",
        ),
    ] {
        let (status, error) = send_to_project(&app, &ada, Method::POST, "cohorts/", body).await;
        assert_eq!(status, 400, "{error}");
        assert_eq!(
            (error["attr"].as_str(), error["detail"].as_str()),
            (Some(attr), Some(detail))
        );
    }
    let (status, error) = send_to_project(&app,
        &ada,
        Method::POST,
        "cohorts/",
        json!({"filters": {"properties": {"type": "AND", "values": [{"key": "id", "type": "cohort", "value": 999_999}]}}}),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (400, Some("cohort_does_not_exist")),
        "{error}"
    );

    // DELETE is PostHog's 405; PATCH `deleted` deletes.
    let (status, _) = send_to_project(
        &app,
        &ada,
        Method::DELETE,
        &format!("cohorts/{id}/"),
        json!({}),
    )
    .await;
    assert_eq!(status, 405);
    let (status, _) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &format!("cohorts/{id}/"),
        json!({"deleted": true}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("cohorts/{id}/"),
        json!({}),
    )
    .await;
    assert_eq!(status, 404);

    // The scope is `cohort`.
    let flags_only = app.tenant("bob@example.com", &["feature_flag:write"]).await;
    let (status, body) =
        send_to_project(&app, &flags_only, Method::GET, "cohorts/", json!({})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("permission_denied")),
        "{body}"
    );
}

#[tokio::test]
async fn a_flag_filtering_by_a_cohort_is_answered_and_its_cohort_served_to_the_sdks() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let (_, cohort) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "cohorts/",
        json!({"name": "Pro", "filters": plan_is("pro")}),
    )
    .await;
    let id = cohort["id"].as_i64().unwrap();
    let (status, flag) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "feature_flags/",
        json!({"key": "pro-feature", "filters": {"groups": [{"properties": [
            {"key": "id", "type": "cohort", "value": id, "operator": "in"}]}]}}),
    )
    .await;
    assert_eq!(status, 201, "{flag}");

    for (plan, enabled) in [("pro", true), ("free", false)] {
        let (status, answer) = parts(
            app.request(Method::POST, "/flags/?v=2")
                .json(&json!({"token": token, "distinct_id": "someone",
                              "person_properties": {"plan": plan}}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["flags"]["pro-feature"]["enabled"], enabled, "{plan}");
    }

    let definitions = |query: &'static str| {
        app.request(
            Method::GET,
            &format!("/flags/definitions?token={token}{query}"),
        )
        .bearer_auth(&ada.key)
        .send()
    };
    let (_, with_cohorts) = parts(definitions("&send_cohorts").await.unwrap()).await;
    assert_eq!(
        with_cohorts["cohorts"],
        json!({id.to_string(): cohort["filters"]["properties"]})
    );
    let (_, without) = parts(definitions("").await.unwrap()).await;
    assert_eq!(without["cohorts"], json!({}));

    // In use by an active flag, the cohort stays.
    let (status, error) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &format!("cohorts/{id}/"),
        json!({"deleted": true}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        error["detail"],
        "This cohort is used in 1 active feature flag(s): pro-feature. Please remove the cohort \
         from these feature flags before deleting it."
    );
}
