//! The SDK endpoints served from each node's in-memory project snapshots: a write through one
//! node reaches another node's `/flags`, feed and config within the stated bound, whatever was
//! written; answers are the same with snapshots on and off; tagged answers are 304 when the
//! client holds them; local evaluation's definitions agree with `/flags`.

use std::time::Duration;

use reqwest::header::{CACHE_CONTROL, ETAG, IF_NONE_MATCH};
use reqwest::{Method, Response};
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, scraped, spawn_app, within};

/// How soon every node serves a committed change (docs/operations.md): the notification's
/// delivery, milliseconds in practice, with room for a busy test machine.
pub(crate) const CHANGE_REACHES_EVERY_NODE: Duration = Duration::from_secs(2);

/// A node serving the same database, waiting until it hears changes (and so keeps snapshots).
pub(crate) async fn listening_node(app: &TestApp, snapshots: bool) -> String {
    let node = app.another_node(|args| args.sdk.snapshot = snapshots);
    if snapshots {
        within(Duration::from_secs(10), "the change listener", || async {
            scraped(&node, "burrow_sdk_change_listener_up").await == Some(1.0)
        })
        .await;
    }
    node
}

async fn get(node: &str, path: &str) -> Response {
    reqwest::get(format!("{node}{path}"))
        .await
        .expect("GET sent")
}

async fn json_at(node: &str, path: &str) -> Value {
    let (status, body) = parts(get(node, path).await).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// `/flags?v=2`'s `flags` for one person, as `{key: enabled}`.
async fn flags_of(node: &str, token: &str, person: &str) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{node}/flags/?v=2"))
        .json(&json!({"token": token, "distinct_id": person}))
        .send()
        .await
        .expect("POST /flags sent");
    let (status, body) = parts(response).await;
    assert_eq!(status, 200, "{body}");
    let enabled = body["flags"]
        .as_object()
        .expect("flags")
        .iter()
        .map(|(key, flag)| (key.clone(), flag["enabled"].clone()))
        .collect();
    Value::Object(enabled)
}

/// The feed's surveys as `[name]`, newest first.
async fn feed_names(node: &str, token: &str) -> Vec<String> {
    json_at(node, &format!("/api/surveys/?token={token}")).await["surveys"]
        .as_array()
        .expect("surveys")
        .iter()
        .map(|survey| survey["name"].as_str().expect("name").to_owned())
        .collect()
}

async fn write(app: &TestApp, tenant: &Tenant, method: Method, path: &str, body: Value) -> Value {
    let path = format!("/api/projects/{}/{path}", tenant.project_id.0);
    let response = app.send_json(method, &path, &tenant.key, &body).await;
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    assert!((200..300).contains(&status), "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

#[tokio::test]
async fn every_kind_of_write_through_one_node_reaches_another_nodes_snapshot() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let other = listening_node(&app, true).await;

    // The other node keeps what it built: asked again, it answers from memory.
    let from_memory = async || {
        scraped(&other, r#"burrow_sdk_snapshots_total{source="memory"}"#)
            .await
            .unwrap_or_default()
    };
    assert_eq!(flags_of(&other, &token, "p").await, json!({}));
    let before = from_memory().await;
    assert_eq!(flags_of(&other, &token, "p").await, json!({}));
    assert!(
        from_memory().await > before,
        "the second ask was served from memory"
    );

    let reaches = async |what: &str, check: &dyn Fn(Value, Vec<String>) -> bool| {
        within(CHANGE_REACHES_EVERY_NODE, what, || async {
            check(
                flags_of(&other, &token, "p").await,
                feed_names(&other, &token).await,
            )
        })
        .await;
    };

    let flag = write(
        &app,
        &ada,
        Method::POST,
        "feature_flags/",
        json!({"key": "beta", "filters": {"groups": [{"rollout_percentage": 100}]}}),
    )
    .await;
    reaches("a new flag", &|flags, _| flags["beta"] == json!(true)).await;

    let flag_path = format!("feature_flags/{}/", flag["id"]);
    write(
        &app,
        &ada,
        Method::PATCH,
        &flag_path,
        json!({"filters": {"groups": [{"rollout_percentage": 0}]}}),
    )
    .await;
    reaches("a flag's new filters", &|flags, _| {
        flags["beta"] == json!(false)
    })
    .await;

    let survey = write(
        &app,
        &ada,
        Method::POST,
        "surveys/",
        json!({"name": "NPS", "type": "popover", "questions": [{"type": "open", "question": "Why?"}]}),
    )
    .await;
    let internal = format!(
        "survey-targeting-{}-custom",
        survey["id"].as_str().unwrap().replace('-', "")
    );
    reaches("a new survey", &|flags, feed| {
        feed == ["NPS"] && flags[&internal] == json!(true)
    })
    .await;

    let survey_path = format!("surveys/{}/", survey["id"].as_str().unwrap());
    write(
        &app,
        &ada,
        Method::PATCH,
        &survey_path,
        json!({"name": "NPS 2"}),
    )
    .await;
    reaches("a renamed survey", &|_, feed| feed == ["NPS 2"]).await;

    write(
        &app,
        &ada,
        Method::PATCH,
        &survey_path,
        json!({"archived": true}),
    )
    .await;
    reaches("an archived survey", &|flags, feed| {
        feed.is_empty() && flags.get(&internal).is_none()
    })
    .await;

    write(
        &app,
        &ada,
        Method::PATCH,
        &survey_path,
        json!({"archived": false}),
    )
    .await;
    reaches("a restored survey", &|_, feed| feed == ["NPS 2"]).await;

    let deleted = app
        .request(
            Method::DELETE,
            &format!("/api/projects/{}/{survey_path}", ada.project_id.0),
        )
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    reaches("a deleted survey", &|_, feed| feed.is_empty()).await;

    let deleted = app
        .request(
            Method::DELETE,
            &format!("/api/projects/{}/{flag_path}", ada.project_id.0),
        )
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    reaches("a deleted flag", &|flags, _| flags == json!({})).await;
}

#[tokio::test]
async fn answers_are_the_same_with_snapshots_on_and_off() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let with = listening_node(&app, true).await;
    let without = listening_node(&app, false).await;
    for (key, filters) in [
        (
            "pro",
            json!({"groups": [{"properties": [{"key": "plan", "value": "pro", "type": "person"}]}]}),
        ),
        (
            "staff",
            json!({"groups": [{"properties": [{"key": "email", "operator": "regex", "value": "@example\\.com$", "type": "person"}], "rollout_percentage": 60}]}),
        ),
        (
            "split",
            json!({"groups": [{"rollout_percentage": 80}], "multivariate": {"variants": [
                {"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 50}]},
                "payloads": {"a": "{\"x\": 1}"}}),
        ),
    ] {
        write(
            &app,
            &ada,
            Method::POST,
            "feature_flags/",
            json!({"key": key, "filters": filters}),
        )
        .await;
    }
    write(
        &app,
        &ada,
        Method::POST,
        "surveys/",
        json!({"name": "NPS", "type": "popover", "start_date": "2026-11-01T00:00:00Z",
               "questions": [{"type": "rating", "question": "How likely?", "scale": 10}],
               "targeting_flag_filters": {"groups": [{"properties": [{"key": "plan", "value": "pro", "type": "person"}]}]}}),
    )
    .await;

    let client = reqwest::Client::new();
    for round in 0..2 {
        for person in ["p-1", "p-2", "p-3", "p-4"] {
            let body = json!({"token": token, "distinct_id": person,
                              "person_properties": {"plan": "pro", "email": format!("{person}@example.com")}});
            let mut answers = Vec::new();
            for node in [&with, &without] {
                let (status, mut answer) = parts(
                    client
                        .post(format!("{node}/flags/?v=2"))
                        .json(&body)
                        .send()
                        .await
                        .unwrap(),
                )
                .await;
                assert_eq!(status, 200, "{answer}");
                answer["requestId"] = Value::Null;
                answers.push(answer);
            }
            assert_eq!(answers[0], answers[1], "round {round}, {person}");
        }
        for path in [
            format!("/api/surveys/?token={token}"),
            format!("/array/{token}/config"),
            format!("/array/{token}/config.js"),
        ] {
            let with = get(&with, &path).await;
            let without = get(&without, &path).await;
            assert_eq!(
                with.headers().get(ETAG),
                without.headers().get(ETAG),
                "{path}"
            );
            assert_eq!(with.bytes().await.unwrap(), without.bytes().await.unwrap());
        }
    }
}

#[tokio::test]
async fn a_client_holding_the_current_answer_gets_a_304() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let node = listening_node(&app, true).await;
    let client = reqwest::Client::new();
    for path in [
        format!("/api/surveys/?token={token}"),
        format!("/array/{token}/config"),
        format!("/array/{token}/config.js"),
    ] {
        let first = get(&node, &path).await;
        assert_eq!(first.status(), 200);
        assert_eq!(first.headers()[CACHE_CONTROL], "public, max-age=30");
        let etag = first.headers()[ETAG].to_str().unwrap().to_owned();
        assert!(etag.starts_with("W/\"") && etag.len() == 20, "{etag}");

        let held = client
            .get(format!("{node}{path}"))
            .header(IF_NONE_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(held.status(), 304, "{path}");
        assert_eq!(held.headers()[ETAG].to_str().unwrap(), etag);
        assert!(held.bytes().await.unwrap().is_empty());

        let stale = client
            .get(format!("{node}{path}"))
            .header(IF_NONE_MATCH, "W/\"0000000000000000\"")
            .send()
            .await
            .unwrap();
        assert_eq!(stale.status(), 200);
    }

    // A change makes a new answer with a new tag.
    let feed = format!("/api/surveys/?token={token}");
    let before = get(&node, &feed).await.headers()[ETAG].clone();
    write(
        &app,
        &ada,
        Method::POST,
        "surveys/",
        json!({"name": "New", "type": "popover", "questions": [{"type": "open", "question": "?"}]}),
    )
    .await;
    within(CHANGE_REACHES_EVERY_NODE, "the new feed's tag", || async {
        let response = client
            .get(format!("{node}{feed}"))
            .header(IF_NONE_MATCH, before.clone())
            .send()
            .await
            .unwrap();
        response.status() == 200 && response.headers()[ETAG] != before
    })
    .await;

    let missing = get(&node, "/array/phc_unknown/config").await;
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn local_evaluation_serves_definitions_to_keys_that_read_flags_of_the_project() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    write(
        &app,
        &ada,
        Method::POST,
        "feature_flags/",
        json!({"key": "beta", "filters": {"groups": [{"rollout_percentage": 30}]}}),
    )
    .await;
    let client = reqwest::Client::new();
    let definitions = async |path: &str, key: Option<&str>| {
        let mut request = app.request(Method::GET, &format!("{path}?token={token}&send_cohorts"));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        request.send().await.unwrap()
    };

    let (status, body) =
        parts(definitions("/api/feature_flag/local_evaluation/", Some(&ada.key)).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["flags"][0]["key"], "beta");
    assert_eq!(
        body["flags"][0]["filters"]["groups"][0]["rollout_percentage"],
        30
    );
    assert_eq!(body["flags"][0]["team_id"], ada.project_id.0);
    assert_eq!(
        (&body["group_type_mapping"], &body["cohorts"]),
        (&json!({}), &json!({}))
    );

    let newer = definitions("/flags/definitions", Some(&ada.key)).await;
    assert_eq!(newer.headers()[CACHE_CONTROL], "private, must-revalidate");
    let etag = newer.headers()[ETAG].clone();
    let (_, newer) = parts(newer).await;
    assert_eq!(newer, body, "both paths answer alike");
    let held = client
        .get(format!("{}/flags/definitions?token={token}", app.address))
        .bearer_auth(&ada.key)
        .header(IF_NONE_MATCH, etag)
        .send()
        .await
        .unwrap();
    assert_eq!(held.status(), 304);

    let (status, _) = parts(definitions("/flags/definitions", None).await).await;
    assert_eq!(status, 401);
    let surveys_only = app.tenant("bob@example.com", &["survey:read"]).await;
    let (status, body) =
        parts(definitions("/flags/definitions", Some(&surveys_only.key)).await).await;
    assert_eq!(
        (status, &body["code"]),
        (403, &json!("permission_denied")),
        "{body}"
    );
    let outsider = app.tenant("eve@example.com", &["feature_flag:read"]).await;
    let (status, body) = parts(definitions("/flags/definitions", Some(&outsider.key)).await).await;
    assert_eq!(status, 403, "another organization's project: {body}");
    let (status, body) = parts(
        app.request(Method::GET, "/flags/definitions")
            .bearer_auth(&ada.key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, &body["code"]),
        (401, &json!("missing_api_key")),
        "{body}"
    );
}

/// What one hostile SDK request with `token` answers: 401 or 404, with PostHog's error body.
async fn refused(client: &reqwest::Client, node: &str, token: &str, route: usize) -> (u16, Value) {
    let request = match route % 4 {
        0 => client
            .post(format!("{node}/flags/?v=2"))
            .json(&json!({"token": token, "distinct_id": "p"})),
        1 => client.get(format!("{node}/api/surveys/?token={token}")),
        2 => client.get(format!("{node}/array/{token}/config")),
        _ => client
            .post(format!("{node}/batch/"))
            .json(&json!({"api_key": token, "batch": [{"event": "e", "distinct_id": "p"}]})),
    };
    parts(request.send().await.expect("request sent")).await
}

/// Clients sending ever new tokens (guessing, or a broken SDK) make a node keep nothing of
/// them: each is refused, no snapshot is built, and the node's memories still hold the one
/// valid token and its project's snapshot, not the thousands tried.
#[tokio::test]
async fn a_flood_of_unknown_tokens_is_refused_and_nothing_of_it_is_kept() {
    const WORKERS: usize = 16;
    const REQUESTS_EACH: usize = 150;
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let node = listening_node(&app, true).await;
    flags_of(&node, &token, "p").await;
    flags_of(&node, &token, "p").await;
    let kept = async |memory: &str| {
        scraped(
            &node,
            &format!(r#"burrow_sdk_kept_entries{{memory="{memory}"}}"#),
        )
        .await
    };
    assert_eq!(kept("tokens").await, Some(1.0));
    assert_eq!(kept("snapshots").await, Some(1.0));
    let built = r#"burrow_sdk_snapshots_total{source="storage"}"#;
    let built_before = scraped(&node, built).await;

    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..WORKERS {
        let node = node.clone();
        workers.spawn(async move {
            let client = reqwest::Client::new();
            let mut answers = Vec::new();
            for request in 0..REQUESTS_EACH {
                let token = format!("phc_flood{worker}x{request}");
                answers.push(refused(&client, &node, &token, request).await);
            }
            answers
        });
    }
    let answers: Vec<(u16, Value)> = workers.join_all().await.into_iter().flatten().collect();
    assert_eq!(answers.len(), WORKERS * REQUESTS_EACH);
    for (status, body) in &answers {
        assert!(matches!(status, 401 | 404), "{status}: {body}");
        assert!(
            body["type"].is_string() && body["code"].is_string(),
            "{body}"
        );
    }

    assert_eq!(
        kept("tokens").await,
        Some(1.0),
        "only the valid token is kept"
    );
    assert_eq!(kept("snapshots").await, Some(1.0));
    assert_eq!(
        scraped(&node, built).await,
        built_before,
        "no snapshot built"
    );
    // The valid token is still served from memory.
    assert_eq!(flags_of(&node, &token, "p").await, json!({}));
}
