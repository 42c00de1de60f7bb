//! `/api/projects/{id}/feature_flags/` over HTTP.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_error, parts, spawn_app};

fn flags_path(tenant: &Tenant) -> String {
    format!("/api/projects/{}/feature_flags/", tenant.project_id)
}

async fn create_flag(app: &TestApp, tenant: &Tenant, body: Value) -> (u16, Value) {
    parts(
        app.send_json(Method::POST, &flags_path(tenant), &tenant.key, &body)
            .await,
    )
    .await
}

#[tokio::test]
async fn a_flag_is_created_listed_retrieved_and_patched() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["feature_flag:write"]).await;
    let filters =
        json!({"groups": [{"properties": [], "rollout_percentage": 30, "variant": null}]});
    let (status, flag) = create_flag(
        &app,
        &ada,
        json!({"key": "beta-ui", "name": "Beta UI", "filters": filters}),
    )
    .await;
    assert_eq!(status, 201, "{flag}");
    assert_eq!(flag["key"], "beta-ui");
    assert_eq!(flag["team_id"], json!(ada.project_id.0));
    assert_eq!(flag["filters"], filters);
    assert_eq!(
        (flag["active"].clone(), flag["deleted"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(flag["ensure_experience_continuity"], false);
    assert_eq!(flag["created_by"]["email"], "ada@example.com");
    assert!(flag["created_at"].as_str().unwrap().ends_with('Z'));

    let path = format!("{}{}", flags_path(&ada), flag["id"]);
    let (status, fetched) = parts(app.get(&path, &ada.key).await).await;
    assert_eq!((status, fetched["id"].clone()), (200, flag["id"].clone()));

    let (status, patched) = parts(
        app.send_json(
            Method::PATCH,
            &path,
            &ada.key,
            &json!({"active": false, "name": "Renamed"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            patched["active"].clone(),
            patched["name"].clone(),
            patched["key"].clone()
        ),
        (json!(false), json!("Renamed"), json!("beta-ui"))
    );
    assert_eq!(patched["created_by"], flag["created_by"]);

    let (_, list) = parts(app.get(&flags_path(&ada), &ada.key).await).await;
    assert_eq!(list["count"], 1);
    assert_eq!(list["results"][0]["name"], "Renamed");
}

#[tokio::test]
async fn deleting_a_flag_is_soft_frees_its_key_and_answers_204_with_an_empty_body() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (_, flag) = create_flag(&app, &ada, json!({"key": "temp"})).await;
    let path = format!("{}{}/", flags_path(&ada), flag["id"]);
    let response = app
        .request(Method::DELETE, &path)
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert!(response.bytes().await.unwrap().is_empty());
    assert_eq!(app.get(&path, &ada.key).await.status(), 404);
    let (_, list) = parts(app.get(&flags_path(&ada), &ada.key).await).await;
    assert_eq!(list["count"], 0);
    assert_eq!(
        app.rows("feature_flags").await,
        1,
        "the row is kept, marked deleted"
    );
    let (status, _) = create_flag(&app, &ada, json!({"key": "temp"})).await;
    assert_eq!(status, 201, "the key is free again");

    let (_, other) = create_flag(&app, &ada, json!({"key": "patched-away"})).await;
    let other_path = format!("{}{}", flags_path(&ada), other["id"]);
    let (status, body) = parts(
        app.send_json(
            Method::PATCH,
            &other_path,
            &ada.key,
            &json!({"deleted": true}),
        )
        .await,
    )
    .await;
    assert_eq!((status, body["deleted"].clone()), (200, json!(true)));
    assert_eq!(app.get(&other_path, &ada.key).await.status(), 404);
}

#[tokio::test]
async fn flag_validation_uses_posthogs_messages() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    create_flag(&app, &ada, json!({"key": "taken"})).await;
    let (status, body) = create_flag(&app, &ada, json!({"key": "taken"})).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"type": "validation_error", "code": "unique", "detail": "There is already a feature flag with this key.", "attr": "key"})
    );

    let (_, body) = create_flag(&app, &ada, json!({"name": "no key"})).await;
    assert_eq!(
        body,
        json!({"type": "validation_error", "code": "required", "detail": "This field is required.", "attr": "key"})
    );
    let (_, body) = create_flag(&app, &ada, json!({"key": "bad key!"})).await;
    assert_eq!(
        (body["code"].clone(), body["attr"].clone()),
        (json!("invalid_key"), json!("key"))
    );

    let variants = json!({"groups": [], "multivariate": {"variants": [{"key": "a", "rollout_percentage": 60}, {"key": "b", "rollout_percentage": 60}]}});
    let (_, body) = create_flag(&app, &ada, json!({"key": "multi", "filters": variants})).await;
    assert_eq!(
        body["detail"],
        "Invalid variant definitions: Variant rollout percentages must sum to 100."
    );
    assert_eq!(body["attr"], "filters");
    let (_, body) = create_flag(
        &app,
        &ada,
        json!({"key": "too-much", "filters": {"groups": [{"rollout_percentage": 101}]}}),
    )
    .await;
    assert_eq!(
        (body["type"].clone(), body["attr"].clone()),
        (json!("validation_error"), json!("filters"))
    );
    let (_, body) = create_flag(&app, &ada, json!({"key": "typed", "active": "sometimes"})).await;
    assert_eq!(
        (body["attr"].clone(), body["detail"].clone()),
        (json!("active"), json!("Must be a valid boolean."))
    );
}

#[tokio::test]
async fn an_operator_no_flag_evaluates_is_a_400_with_posthogs_code_and_min_is_stored_as_gte() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let filter = |operator: &str, value: Value| {
        json!({"key": "versioned", "filters": {"groups": [{"properties": [
            {"key": "app_version", "operator": operator, "value": value, "type": "person"}]}]}})
    };
    for (operator, value, code, detail) in [
        (
            "fuzzy",
            json!("1"),
            "invalid_operator",
            "Invalid operator: fuzzy",
        ),
        (
            "between",
            json!([1, 2]),
            "unsupported_operator",
            "Unsupported operator for feature flags: between",
        ),
        (
            "semver_gt",
            json!(2),
            "invalid_value",
            "Invalid value for operator semver_gt: expected a semver string",
        ),
        (
            "semver_caret",
            json!("1.x"),
            "invalid_value",
            "Invalid semver value for operator semver_caret: 1.x",
        ),
        (
            "is_date_before",
            json!("last week"),
            "invalid_date",
            "Invalid date value: last week",
        ),
    ] {
        let (status, body) = create_flag(&app, &ada, filter(operator, value)).await;
        assert_eq!(
            (status, body),
            (
                400,
                json!({"type": "validation_error", "code": code, "detail": detail, "attr": "filters"})
            ),
            "{operator}"
        );
    }
    let (status, flag) = create_flag(&app, &ada, filter("min", json!("3"))).await;
    assert_eq!(status, 201, "{flag}");
    assert_eq!(
        flag["filters"]["groups"][0]["properties"][0]["operator"],
        "gte"
    );
    let (status, flag) = create_flag(
        &app,
        &ada,
        json!({"key": "semver", "filters": {"groups": [{"properties": [
            {"key": "app_version", "operator": "semver_wildcard", "value": "1.2.*"}]}]}}),
    )
    .await;
    assert_eq!(status, 201, "{flag}");
}

#[tokio::test]
async fn a_known_filters_key_of_another_shape_is_a_400_and_unknown_keys_round_trip() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let wrong = [
        (json!({"groups": {}}), "Filter groups must be a list."),
        (
            json!({"groups": [{"rollout_percentage": "x"}]}),
            "Rollout percentage must be a number between 0 and 100.",
        ),
        (
            json!({"groups": [{"properties": 3}]}),
            "Group properties must be a list.",
        ),
        (
            json!({"groups": [{"properties": [{"key": "email", "operator": 7}]}]}),
            "Invalid operator: 7",
        ),
        (
            json!({"multivariate": {"variants": {"a": 100}}}),
            "Invalid variant definitions: Variants must be a list of objects with a key and a rollout_percentage.",
        ),
    ];
    for (filters, detail) in wrong {
        let sent = json!({"key": "shaped", "filters": filters});
        let (status, body) = create_flag(&app, &ada, sent).await;
        assert_eq!(
            (status, body),
            (
                400,
                json!({"type": "validation_error", "code": "invalid_input", "detail": detail, "attr": "filters"})
            ),
            "{filters}"
        );
    }

    let filters = json!({
        "groups": [{"properties": [{"key": "email", "operator": null, "custom": [1]}], "variant": null}],
        "super_groups": null,
        "holdout_groups": [{"id": 1}]
    });
    let (status, flag) = create_flag(
        &app,
        &ada,
        json!({"key": "kept", "filters": filters.clone()}),
    )
    .await;
    assert_eq!((status, flag["filters"].clone()), (201, filters));
}

#[tokio::test]
async fn flags_need_feature_flag_scopes_and_stay_inside_their_project() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["feature_flag:read"]).await;
    let (status, body) = create_flag(&app, &ada, json!({"key": "nope"})).await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'feature_flag:write'",
    );
    assert_eq!(app.get(&flags_path(&ada), &ada.key).await.status(), 200);

    let bob = app.tenant("bob@example.com", &["*"]).await;
    let (_, bobs) = create_flag(&app, &bob, json!({"key": "bobs"})).await;
    let (_, admin) = (0, app.tenant("ada2@example.com", &["*"]).await);
    let foreign = format!("{}{}", flags_path(&admin), bobs["id"]);
    let (status, body) = parts(app.get(&foreign, &admin.key).await).await;
    assert_eq!(status, 404);
    assert_error(&body, "invalid_request", "not_found", "Not found.");
    let (status, _) = parts(
        app.get(&format!("{}abc/", flags_path(&admin)), &admin.key)
            .await,
    )
    .await;
    assert_eq!(status, 404);
}

/// Found by `cargo xtask fuzz`: PostgreSQL prints a jsonb number in full, and `f64::MAX` then
/// read back as out of range, so the flag could be written but never listed again (500).
#[tokio::test]
async fn extreme_numbers_in_filters_read_back_as_sent() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["feature_flag:write"]).await;
    let filters = json!({"groups": [], "F": f64::MAX, "tiny": 5e-324});
    let (status, flag) =
        create_flag(&app, &ada, json!({"key": "extreme", "filters": filters})).await;
    assert_eq!(status, 201, "{flag}");
    let (status, list) = parts(app.get(&flags_path(&ada), &ada.key).await).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["results"][0]["filters"], filters);
}

#[tokio::test]
async fn a_remote_configuration_flags_payload_is_answered_by_id_or_key_and_other_flags_are_404() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["feature_flag:write"]).await;
    let (status, remote) = create_flag(
        &app,
        &ada,
        json!({"key": "checkout-config", "is_remote_configuration": true,
               "filters": {"groups": [], "payloads": {"true": "{\"color\": \"blue\"}"}}}),
    )
    .await;
    assert_eq!(status, 201, "{remote}");
    assert_eq!(remote["is_remote_configuration"], true);
    let (_, plain) = create_flag(&app, &ada, json!({"key": "plain"})).await;
    assert_eq!(plain["is_remote_configuration"], false);

    let payload = |flag: String| {
        let path = format!("/api/projects/@current/feature_flags/{flag}/remote_config");
        let app = &app;
        let key = ada.key.clone();
        async move { parts(app.get(&path, &key).await).await }
    };
    let answered = (200, json!("{\"color\": \"blue\"}"));
    assert_eq!(payload("checkout-config".into()).await, answered);
    assert_eq!(payload(remote["id"].to_string()).await, answered);
    for missing in [
        "plain".to_owned(),
        plain["id"].to_string(),
        "nothing".into(),
    ] {
        let (status, body) = payload(missing.clone()).await;
        assert_eq!(status, 404, "{missing}");
        assert_error(&body, "invalid_request", "not_found", "Not found.");
    }

    let (status, _) = parts(
        app.send_json(
            Method::PATCH,
            &format!("{}{}/", flags_path(&ada), remote["id"]),
            &ada.key,
            &json!({"is_remote_configuration": false}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(payload("checkout-config".into()).await.0, 404);
}
