//! Flag dependencies over HTTP: stored as PostHog stores them (the id as key), refused with
//! PostHog's answers when they would break, served in the definitions with the key and
//! `dependency_chain` the SDKs read, and evaluated by `/flags` in dependency order.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, send_to_project, spawn_app};

async fn send(
    app: &TestApp,
    tenant: &Tenant,
    method: Method,
    path: &str,
    body: Value,
) -> (u16, Value) {
    send_to_project(app, tenant, method, &format!("feature_flags/{path}"), body).await
}

fn on(id: &Value, value: Value) -> Value {
    json!({"groups": [{"properties": [{"key": id.to_string(), "type": "flag",
        "operator": "flag_evaluates_to", "value": value}], "rollout_percentage": 100}]})
}

fn refused(answer: (u16, Value), attr: Value, detail: &str) {
    let (status, body) = answer;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body,
        json!({"type": "validation_error", "code": "invalid_input", "detail": detail, "attr": attr})
    );
}

#[tokio::test]
async fn dependencies_are_checked_served_and_evaluated_as_posthog_does() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let (status, pro) = send(
        &app,
        &ada,
        Method::POST,
        "",
        json!({"key": "pro", "filters": {"groups": [{"properties": [
            {"key": "plan", "type": "person", "value": "pro"}]}]}}),
    )
    .await;
    assert_eq!(status, 201, "{pro}");
    let pro_id = &pro["id"];
    let (status, gated) = send(
        &app,
        &ada,
        Method::POST,
        "",
        json!({"key": "gated", "filters": on(pro_id, json!(true))}),
    )
    .await;
    assert_eq!(status, 201, "{gated}");
    assert_eq!(
        gated["filters"]["groups"][0]["properties"][0]["key"],
        pro_id.to_string(),
        "stored as sent: by id"
    );
    let (_, chained) = send(
        &app,
        &ada,
        Method::POST,
        "",
        json!({"key": "chained", "filters": on(&gated["id"], json!(false))}),
    )
    .await;

    // The definitions name the flag depended on by key, with what to evaluate first.
    let definitions = app
        .request(Method::GET, &format!("/flags/definitions?token={token}"))
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    let (_, definitions) = parts(definitions).await;
    let served = |key: &str| {
        definitions["flags"]
            .as_array()
            .unwrap()
            .iter()
            .find(|flag| flag["key"] == key)
            .unwrap()["filters"]["groups"][0]["properties"][0]
            .clone()
    };
    assert_eq!(
        served("gated"),
        json!({"key": "pro", "type": "flag", "operator": "flag_evaluates_to", "value": true,
               "dependency_chain": ["pro"]})
    );
    assert_eq!(served("chained")["key"], "gated");
    assert_eq!(
        served("chained")["dependency_chain"],
        json!(["pro", "gated"])
    );

    // `/flags` evaluates each after what it depends on.
    for (plan, expected) in [("pro", [true, true, false]), ("free", [false, false, true])] {
        let (status, answer) = app
            .flags(&json!({"token": token, "distinct_id": "someone",
                              "person_properties": {"plan": plan}}))
            .await;
        assert_eq!(status, 200, "{answer}");
        let enabled: Vec<&Value> = ["pro", "gated", "chained"]
            .iter()
            .map(|key| &answer["flags"][key]["enabled"])
            .collect();
        assert_eq!(
            enabled,
            expected.map(Value::Bool).iter().collect::<Vec<_>>(),
            "{plan}"
        );
    }

    // Refused as PostHog refuses them.
    refused(
        send(&app, &ada, Method::POST, "", json!({"key": "by-key", "filters": {"groups": [
            {"properties": [{"key": "pro", "type": "flag", "operator": "flag_evaluates_to", "value": true}]}]}}))
        .await,
        json!("filters"),
        "Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: 'pro'",
    );
    refused(
        send(
            &app,
            &ada,
            Method::POST,
            "",
            json!({"key": "ghost", "filters": on(&json!(987654), json!(true))}),
        )
        .await,
        json!("filters"),
        "Flag dependency references non-existent flag with ID 987654",
    );
    let pro_path = format!("{pro_id}/");
    refused(
        send(
            &app,
            &ada,
            Method::PATCH,
            &pro_path,
            json!({"filters": on(&chained["id"], json!(true))}),
        )
        .await,
        json!("filters"),
        "Circular dependency detected: pro → chained → gated → pro",
    );
    refused(
        send(
            &app,
            &ada,
            Method::PATCH,
            &pro_path,
            json!({"active": false}),
        )
        .await,
        Value::Null,
        &format!(
            "Cannot disable this feature flag because other flags depend on it: gated (ID: {}). \
             Please update or disable the dependent flags first.",
            gated["id"]
        ),
    );
    let (status, body) = parts(
        app.send_json(
            Method::DELETE,
            &format!("/api/projects/{}/feature_flags/{pro_id}/", ada.project_id.0),
            &ada.key,
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .starts_with("Cannot delete this feature flag because other flags depend on it"),
        "{body}"
    );
    // Another project's flag is not one this project's flags may depend on.
    let eve = app.tenant("eve@example.com", &["*"]).await;
    refused(
        send(
            &app,
            &eve,
            Method::POST,
            "",
            json!({"key": "theirs", "filters": on(pro_id, json!(true))}),
        )
        .await,
        json!("filters"),
        &format!("Flag dependency references non-existent flag with ID {pro_id}"),
    );
}
