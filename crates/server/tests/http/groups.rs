//! Groups over HTTP: `$groupidentify` captured as posthog-js and the server SDKs send it, then
//! PostHog's group types API (list, `update_metadata`, `set_default_columns`, delete) and
//! `groups/find/`, with PostHog's shapes and messages and the `group` scope.

use reqwest::Method;
use serde_json::{Value, json};

use crate::capture::{post_gzip_as_web_sdk, web_batch};
use crate::helpers::{Tenant, TestApp, assert_error, parts, send_to_project, spawn_app};

/// `posthog.group(type, key, properties)` as posthog-js 1.449 sends it: distinct_id, token and
/// `$groups` in the properties.
fn web_group_identify(token: &str, group_type: &str, key: &str, set: Value) -> Value {
    json!({
        "event": "$groupidentify",
        "timestamp": "2026-11-29T10:00:00.000Z",
        "properties": {
            "distinct_id": "person-1",
            "token": token,
            "$group_type": group_type,
            "$group_key": key,
            "$group_set": set,
            "$groups": {group_type: key},
            "$lib": "web",
        },
    })
}

/// Identifies groups as posthog-js does, through `/e/` gzipped; the capture is answered 200.
async fn identify_from_the_web(app: &TestApp, token: &str, events: Vec<Value>) {
    let response = post_gzip_as_web_sdk(app, "/e/?ver=1.449.2", &web_batch(token, events)).await;
    assert_eq!(parts(response).await, (200, json!({"status": 1})));
}

/// `group_identify` as posthog-python sends it: `/batch/`, a top-level distinct id.
async fn identify_from_a_server(app: &TestApp, token: &str, properties: Value) {
    let response = app
        .request(Method::POST, "/batch/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "$groupidentify",
            "distinct_id": "$server_group",
            "properties": properties,
        }]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

async fn get(app: &TestApp, tenant: &Tenant, path: &str) -> (u16, Value) {
    parts(
        app.get(
            &format!("/api/projects/{}/{path}", tenant.project_id.0),
            &tenant.key,
        )
        .await,
    )
    .await
}

/// A list's types as `(index, name)`.
fn listed(types: &Value) -> Vec<(i64, String)> {
    types
        .as_array()
        .expect("a list, not a page")
        .iter()
        .map(|t| {
            (
                t["group_type_index"].as_i64().unwrap(),
                t["group_type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn identified_groups_are_listed_found_renamed_given_columns_and_deleted() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    identify_from_the_web(
        &app,
        &token,
        vec![
            web_group_identify(
                &token,
                "company",
                "acme",
                json!({"name": "Acme", "plan": "free"}),
            ),
            web_group_identify(&token, "company", "acme", json!({"plan": "pro"})),
        ],
    )
    .await;
    identify_from_a_server(
        &app,
        &token,
        json!({"$group_type": "team", "$group_key": 7, "$group_set": {"size": 3}}),
    )
    .await;

    let (status, types) = get(&app, &ada, "groups_types/").await;
    assert_eq!(status, 200, "{types}");
    let created_at = types[0]["created_at"].as_str().unwrap().to_owned();
    assert_eq!(
        types[0],
        json!({"group_type": "company", "group_type_index": 0, "name_singular": null,
               "name_plural": null, "detail_dashboard": null, "default_columns": null,
               "created_at": created_at})
    );
    assert_eq!(listed(&types), [(0, "company".into()), (1, "team".into())]);

    let (status, acme) = get(&app, &ada, "groups/find/?group_type_index=0&group_key=acme").await;
    assert_eq!(status, 200, "{acme}");
    assert!(acme["created_at"].is_string());
    assert_eq!(
        (
            &acme["group_type_index"],
            &acme["group_key"],
            &acme["group_properties"],
            &acme["notebook"]
        ),
        (
            &json!(0),
            &json!("acme"),
            &json!({"name": "Acme", "plan": "pro"}),
            &Value::Null
        )
    );
    let (status, team) = get(&app, &ada, "groups/find?group_type_index=1&group_key=7").await;
    assert_eq!(
        (status, team["group_properties"].clone()),
        (200, json!({"size": 3}))
    );

    let (status, renamed) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        "groups_types/update_metadata/",
        json!([{"group_type_index": 0, "name_singular": "Company", "name_plural": "Companies"},
               {"group_type_index": 1, "name_plural": "Teams"}]),
    )
    .await;
    assert_eq!(status, 200, "{renamed}");
    assert_eq!(
        renamed
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name_singular"].clone(), t["name_plural"].clone()))
            .collect::<Vec<_>>(),
        [
            (json!("Company"), json!("Companies")),
            (Value::Null, json!("Teams"))
        ]
    );

    let (status, team) = send_to_project(
        &app,
        &ada,
        Method::PUT,
        "groups_types/set_default_columns",
        json!({"group_type_index": 1, "default_columns": ["size", "name"]}),
    )
    .await;
    assert_eq!(status, 200, "{team}");
    assert_eq!(
        (team["group_type"].clone(), team["default_columns"].clone()),
        (json!("team"), json!(["size", "name"]))
    );

    let deleted = app
        .request(
            Method::DELETE,
            &format!("/api/projects/{}/groups_types/1/", ada.project_id.0),
        )
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let (_, types) = get(&app, &ada, "groups_types").await;
    assert_eq!(listed(&types), [(0, "company".into())]);
    let (status, gone) = get(&app, &ada, "groups/find/?group_type_index=1&group_key=7").await;
    assert_eq!(status, 404);
    assert_error(&gone, "invalid_request", "not_found", "Not found.");
    let (status, again) =
        send_to_project(&app, &ada, Method::DELETE, "groups_types/1/", json!({})).await;
    assert_eq!(status, 404);
    assert_error(
        &again,
        "invalid_request",
        "not_found",
        "Group type not found",
    );
}

#[tokio::test]
async fn a_sixth_type_and_overlong_names_are_dropped_without_refusing_the_capture() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let mut events: Vec<Value> = (0..6)
        .map(|n| web_group_identify(&token, &format!("type-{n}"), "k", json!({"n": n})))
        .collect();
    events.push(web_group_identify(&token, &"t".repeat(401), "k", json!({})));
    events.push(web_group_identify(
        &token,
        "type-0",
        &"k".repeat(401),
        json!({}),
    ));
    identify_from_the_web(&app, &token, events).await;

    let (_, types) = get(&app, &ada, "groups_types/").await;
    assert_eq!(
        listed(&types),
        (0..5).map(|n| (n, format!("type-{n}"))).collect::<Vec<_>>()
    );
    let (status, last) = get(&app, &ada, "groups/find/?group_type_index=4&group_key=k").await;
    assert_eq!(
        (status, last["group_properties"].clone()),
        (200, json!({"n": 4}))
    );
}

#[tokio::test]
async fn a_groups_properties_stop_at_their_bound_in_their_project_only() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let (ada_token, bob_token) = (app.project_token(&ada).await, app.project_token(&bob).await);
    // Each set weighs 300 KiB: two fit in 640 KiB, a third would not.
    for n in 0..3 {
        let set = json!({format!("k{n}"): "x".repeat(300 * 1024)});
        let identify = web_group_identify(&ada_token, "company", "acme", set);
        identify_from_the_web(&app, &ada_token, vec![identify]).await;
    }
    let identify = web_group_identify(&bob_token, "company", "acme", json!({"plan": "pro"}));
    identify_from_the_web(&app, &bob_token, vec![identify]).await;

    let find = "groups/find/?group_type_index=0&group_key=acme";
    let (status, found) = get(&app, &ada, find).await;
    assert_eq!(status, 200);
    let keys: Vec<&String> = found["group_properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["k0", "k1"],
        "the set that would pass the bound is dropped"
    );
    let (status, found) = get(&app, &bob, find).await;
    assert_eq!(
        (status, found["group_properties"].clone()),
        (200, json!({"plan": "pro"}))
    );
}

#[tokio::test]
async fn bad_group_requests_are_refused_with_posthogs_messages() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    identify_from_the_web(
        &app,
        &token,
        vec![web_group_identify(&token, "company", "acme", json!({}))],
    )
    .await;

    for (query, attr, detail) in [
        ("", "group_type_index", "This query parameter is required."),
        (
            "?group_key=acme",
            "group_type_index",
            "This query parameter is required.",
        ),
        (
            "?group_type_index=0",
            "group_key",
            "This query parameter is required.",
        ),
        (
            "?group_type_index=0&group_key=",
            "group_key",
            "This query parameter is required.",
        ),
        (
            "?group_type_index=first&group_key=acme",
            "group_type_index",
            "A valid integer is required.",
        ),
    ] {
        let (status, body) = get(&app, &ada, &format!("groups/find/{query}")).await;
        assert_eq!(
            (status, &body["attr"], &body["detail"]),
            (400, &json!(attr), &json!(detail)),
            "{query}"
        );
        assert_eq!(body["type"], "validation_error");
    }
    for query in [
        "?group_type_index=0&group_key=globex",
        "?group_type_index=9&group_key=acme",
    ] {
        let (status, body) = get(&app, &ada, &format!("groups/find/{query}")).await;
        assert_eq!(status, 404, "{query}");
        assert_error(&body, "invalid_request", "not_found", "Not found.");
    }

    let update = |body: Value| {
        send_to_project(
            &app,
            &ada,
            Method::PATCH,
            "groups_types/update_metadata/",
            body,
        )
    };
    let (status, body) = update(json!([{"group_type_index": 3, "name_singular": "x"}])).await;
    assert_eq!(status, 404);
    assert_error(&body, "invalid_request", "not_found", "Not found.");
    let (status, body) =
        update(json!([{"group_type_index": 0, "name_singular": "x".repeat(401)}])).await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"type": "validation_error", "code": "max_length",
                     "detail": "Ensure this field has no more than 400 characters.",
                     "attr": "name_singular"})
        )
    );
    let (status, body) = update(json!([{"name_singular": "x"}])).await;
    assert_eq!(
        (status, body["attr"].clone(), body["code"].clone()),
        (400, json!("group_type_index"), json!("required"))
    );
    let (status, body) = update(json!({"group_type_index": 0})).await;
    assert_eq!(
        (status, body["detail"].clone()),
        (
            400,
            json!("Expected a list of items but got type \"dict\".")
        )
    );
    let (_, types) = get(&app, &ada, "groups_types/").await;
    assert_eq!(
        types[0]["name_singular"],
        Value::Null,
        "nothing was renamed"
    );

    let columns = |body: Value| {
        send_to_project(
            &app,
            &ada,
            Method::PUT,
            "groups_types/set_default_columns/",
            body,
        )
    };
    for index in [1, 7] {
        let (status, body) =
            columns(json!({"group_type_index": index, "default_columns": []})).await;
        assert_eq!(status, 404);
        assert_error(
            &body,
            "invalid_request",
            "not_found",
            "Group type not found",
        );
    }
    let (status, body) =
        columns(json!({"group_type_index": 0, "default_columns": vec!["c"; 101]})).await;
    assert_eq!(
        (status, body["attr"].clone(), body["detail"].clone()),
        (
            400,
            json!("default_columns"),
            json!("Ensure this field has no more than 100 elements.")
        )
    );
    let (status, body) = columns(json!({"group_type_index": 0, "default_columns": "name"})).await;
    assert_eq!(
        (status, body["attr"].clone()),
        (400, json!("default_columns"))
    );

    for index in ["4", "99999999999999999999"] {
        let (status, body) = send_to_project(
            &app,
            &ada,
            Method::DELETE,
            &format!("groups_types/{index}/"),
            json!({}),
        )
        .await;
        assert_eq!(status, 404, "{index}");
        assert_error(
            &body,
            "invalid_request",
            "not_found",
            "Group type not found",
        );
    }
}

#[tokio::test]
async fn group_routes_need_the_group_scope() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    identify_from_the_web(
        &app,
        &token,
        vec![web_group_identify(&token, "company", "acme", json!({}))],
    )
    .await;
    let reader = Tenant {
        key: app
            .key(domain::admin::KeyRequest {
                email: ada.email.clone(),
                label: "reader".into(),
                scopes: vec!["group:read".into()],
                scoped_teams: None,
                scoped_organizations: None,
            })
            .await,
        ..ada.clone()
    };
    assert_eq!(get(&app, &reader, "groups_types/").await.0, 200);
    assert_eq!(
        get(
            &app,
            &reader,
            "groups/find/?group_type_index=0&group_key=acme"
        )
        .await
        .0,
        200
    );
    for (method, path, body) in [
        (Method::PATCH, "groups_types/update_metadata/", json!([])),
        (
            Method::PUT,
            "groups_types/set_default_columns/",
            json!({"group_type_index": 0, "default_columns": []}),
        ),
        (Method::DELETE, "groups_types/0/", json!({})),
    ] {
        let (status, refused) = send_to_project(&app, &reader, method, path, body).await;
        assert_eq!(status, 403, "{path}");
        assert_error(
            &refused,
            "authentication_error",
            "permission_denied",
            "API key missing required scope 'group:write'",
        );
    }
    let surveys_only = app.tenant("bob@example.com", &["survey:read"]).await;
    let (status, refused) = get(&app, &surveys_only, "groups_types/").await;
    assert_eq!(status, 403);
    assert_eq!(
        refused["detail"],
        "API key missing required scope 'group:read'"
    );
    let (_, types) = get(&app, &ada, "groups_types/").await;
    assert_eq!(
        listed(&types),
        [(0, "company".into())],
        "nothing was deleted"
    );
}
