//! `/api/projects/{id}/cohorts/` over HTTP: PostHog's shape and messages, soft deletion, the
//! list's filters, the `cohort` scope, and a flag filtering by a cohort answered by `/flags` and
//! served with its cohorts by the definitions.

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
            "filters",
            "Burrow fills a static cohort from a CSV or person ids, not from filters: create it without filters.",
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
        let (status, answer) = app
            .flags(&json!({"token": token, "distinct_id": "someone",
                              "person_properties": {"plan": plan}}))
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

#[tokio::test]
async fn the_list_takes_posthogs_filters_keeps_them_in_its_links_and_refuses_what_it_cannot_apply()
{
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let mut ada_id = Value::Null;
    for body in [
        json!({"name": "Pro users", "filters": plan_is("pro")}),
        json!({"name": "Beta 50% list", "is_static": true}),
        json!({"name": "pro trial", "filters": plan_is("trial")}),
    ] {
        let (status, created) = send_to_project(&app, &ada, Method::POST, "cohorts/", body).await;
        assert_eq!(status, 201, "{created}");
        ada_id = created["created_by"]["id"].clone();
    }
    let list = async |query: &str| {
        send_to_project(
            &app,
            &ada,
            Method::GET,
            &format!("cohorts/?{query}"),
            json!({}),
        )
        .await
    };
    let names = |body: &Value| -> Vec<String> {
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cohort| cohort["name"].as_str().unwrap().to_owned())
            .collect()
    };

    for (query, kept) in [
        ("type=static", vec!["Beta 50% list"]),
        ("type=dynamic", vec!["pro trial", "Pro users"]),
        ("search=50%25", vec!["Beta 50% list"]),
        ("search=PRO&type=dynamic", vec!["pro trial", "Pro users"]),
        (
            &format!("created_by_id={ada_id}"),
            vec!["pro trial", "Beta 50% list", "Pro users"],
        ),
        (
            &format!("created_by_id={}", ada_id.as_i64().unwrap() + 1000),
            vec![],
        ),
        // Burrow stores no behavioral cohort, so hiding them hides none.
        (
            "hide_behavioral_cohorts=true",
            vec!["pro trial", "Beta 50% list", "Pro users"],
        ),
    ] {
        let (status, body) = list(query).await;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(
            (body["count"].as_u64(), names(&body)),
            (
                Some(kept.len() as u64),
                kept.iter().map(|n| n.to_string()).collect()
            ),
            "{query}"
        );
    }

    // Paging keeps the filters: the next page is the rest of what they keep.
    let (_, first) = list("search=pro&type=dynamic&limit=1").await;
    assert_eq!(
        (first["count"].as_u64(), names(&first)),
        (Some(2), vec!["pro trial".into()])
    );
    let next = first["next"].as_str().unwrap();
    assert!(
        next.ends_with("/cohorts/?limit=1&offset=1&search=pro&type=dynamic"),
        "{next}"
    );
    let next_query = next.split_once('?').unwrap().1;
    let (_, second) = list(next_query).await;
    assert_eq!(names(&second), ["Pro users"]);
    assert!(
        second["previous"]
            .as_str()
            .unwrap()
            .ends_with("/cohorts/?limit=1&search=pro&type=dynamic"),
        "{second}"
    );

    // `basic=true` leaves each cohort's definition out, as PostHog's basic list does.
    let (status, basic) = list("basic=true&type=static").await;
    assert_eq!(status, 200, "{basic}");
    let cohort = basic["results"][0].as_object().unwrap();
    for field in ["filters", "query", "groups"] {
        assert!(!cohort.contains_key(field), "{field}: {basic}");
    }
    assert_eq!(
        (cohort["name"].as_str(), cohort["count"].as_u64()),
        (Some("Beta 50% list"), Some(0))
    );
    let (_, full) = list("basic=false&type=static").await;
    assert_eq!(full["results"][0]["groups"], json!([]));

    for (query, attr, detail) in [
        (
            "type=behavioral".to_owned(),
            "type",
            "\"behavioral\" is not a valid choice: use \"static\" or \"dynamic\".",
        ),
        (
            "created_by_id=ada".to_owned(),
            "created_by_id",
            "A valid integer is required.",
        ),
        (
            format!("search={}", "x".repeat(201)),
            "search",
            "Search query must be 200 characters or fewer.",
        ),
        (
            "hide_behavioral_cohorts=maybe".to_owned(),
            "hide_behavioral_cohorts",
            "Must be a valid boolean.",
        ),
        (
            "basic=maybe".to_owned(),
            "basic",
            "Must be a valid boolean.",
        ),
    ] {
        let (status, error) = list(&query).await;
        assert_eq!(status, 400, "{query}: {error}");
        assert_eq!(
            (
                error["type"].as_str(),
                error["code"].as_str(),
                error["attr"].as_str(),
                error["detail"].as_str()
            ),
            (
                Some("validation_error"),
                Some("invalid_input"),
                Some(attr),
                Some(detail)
            ),
            "{query}"
        );
    }
}
