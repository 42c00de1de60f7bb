//! `POST /flags/?v=2`: the project's flags evaluated for one person, however the SDK packed the
//! body, and each survey's internal targeting flag turning off once that person answers; flags
//! aggregated by group, and experience continuity across identify.

use std::io::Write as _;

use base64::Engine as _;
use flate2::Compression;
use flate2::write::GzEncoder;
use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_error, parts, spawn_app};

async fn flag(app: &TestApp, tenant: &Tenant, body: Value) -> Value {
    let (status, flag) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/feature_flags/", tenant.project_id.0),
            &tenant.key,
            &body,
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{flag}");
    flag
}

async fn ask(app: &TestApp, query: &str, body: &Value) -> (u16, Value) {
    parts(
        app.request(Method::POST, &format!("/flags/{query}"))
            .header("Origin", "https://shop.example")
            .json(body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn flags_are_evaluated_for_the_person_in_v2_and_legacy_shapes() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let pro = flag(
        &app,
        &ada,
        json!({"key": "pro-only", "filters": {
            "groups": [{"properties": [{"key": "plan", "type": "person", "operator": "exact", "value": ["pro"]}], "rollout_percentage": 100}],
            "payloads": {"true": "{\"limit\": 10}"}}}),
    )
    .await;
    flag(
        &app,
        &ada,
        json!({"key": "checkout", "filters": {
            "groups": [{"properties": [], "rollout_percentage": 100}],
            "multivariate": {"variants": [
                {"key": "control", "rollout_percentage": 0},
                {"key": "test", "rollout_percentage": 100}]}}}),
    )
    .await;
    let off = flag(&app, &ada, json!({"key": "switched-off", "active": false})).await;
    assert_eq!(off["active"], false);

    let body =
        json!({"token": token, "distinct_id": "person-1", "person_properties": {"plan": "pro"}});
    let (status, answer) = ask(&app, "?v=2", &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["flags"]["pro-only"],
        json!({"key": "pro-only", "enabled": true, "variant": null,
               "reason": {"code": "condition_match", "condition_index": 0, "description": "Matched condition set 1"},
               "metadata": {"id": pro["id"], "version": 1, "payload": "{\"limit\": 10}", "description": null}})
    );
    assert_eq!(answer["flags"]["checkout"]["variant"], "test");
    assert!(
        answer["flags"].get("switched-off").is_none(),
        "inactive flags are not served"
    );
    assert_eq!(answer["errorsWhileComputingFlags"], false);

    let free =
        json!({"token": token, "distinct_id": "person-2", "person_properties": {"plan": "free"}});
    let (_, answer) = ask(&app, "?v=2", &free).await;
    assert_eq!(answer["flags"]["pro-only"]["enabled"], false);
    assert_eq!(
        answer["flags"]["pro-only"]["reason"]["code"],
        "no_condition_match"
    );

    let (_, legacy) = ask(&app, "", &body).await;
    assert_eq!(legacy["featureFlags"]["pro-only"], true);
    assert_eq!(legacy["featureFlags"]["checkout"], "test");
    assert_eq!(legacy["featureFlagPayloads"]["pro-only"], "{\"limit\": 10}");

    let (_, only) = ask(
        &app,
        "?v=2",
        &json!({"token": token, "distinct_id": "p", "flag_keys": ["checkout"]}),
    )
    .await;
    assert_eq!(only["flags"].as_object().unwrap().len(), 1);
}

#[tokio::test]
async fn gzip_base64_and_json_bodies_get_the_same_answer() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    flag(
        &app,
        &ada,
        json!({"key": "half", "filters": {"groups": [{"properties": [], "rollout_percentage": 50}]}}),
    )
    .await;
    let body = json!({"token": token, "distinct_id": "distinct_id_1", "$device_id": "d",
                      "groups": {}, "person_properties": {"$lib": "web"}, "timezone": "UTC"});
    let (_, plain) = ask(&app, "?v=2", &body).await;

    let mut gzip = GzEncoder::new(Vec::new(), Compression::default());
    gzip.write_all(body.to_string().as_bytes()).unwrap();
    let (status, gzipped) = parts(
        app.request(Method::POST, "/flags/?v=2")
            .header(CONTENT_TYPE, "text/plain")
            .body(gzip.finish().unwrap())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{gzipped}");

    let encoded = base64::engine::general_purpose::STANDARD.encode(body.to_string());
    let form: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("data", &encoded)
        .finish();
    let (status, base64) = parts(
        app.request(Method::POST, "/flags/?v=2&compression=base64")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{base64}");
    for answer in [&gzipped, &base64] {
        assert_eq!(answer["flags"]["half"], plain["flags"]["half"]);
    }
}

#[tokio::test]
async fn a_bad_request_answers_the_error_shape_with_cors() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;

    let response = app
        .request(Method::POST, "/flags/?v=2")
        .header("Origin", "https://shop.example")
        .json(&json!({"token": "phc_unknown", "distinct_id": "p"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    let (status, body) = parts(response).await;
    assert_eq!(status, 401);
    assert_eq!(body["code"], "invalid_api_key");

    let (status, body) = ask(&app, "?v=2", &json!({"token": token})).await;
    assert_eq!(status, 400);
    assert_eq!(body["attr"], "distinct_id");

    let preflight = app
        .request(Method::OPTIONS, "/flags/?v=2")
        .header("Origin", "https://shop.example")
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type")
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success());
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    let (status, body) = ask(&app, "?v=2", &json!([1, 2])).await;
    assert_eq!(status, 400);
    assert_eq!(body["type"], "validation_error");
}

#[tokio::test]
async fn a_survey_is_hidden_from_a_person_once_they_answered_it() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let (status, survey) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/surveys/", ada.project_id.0),
            &ada.key,
            &json!({"name": "NPS", "type": "popover", "start_date": "2026-11-01T00:00:00Z",
                    "questions": [{"type": "open", "question": "Why?"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let id = survey["id"].as_str().unwrap();
    let feed = app.survey_feed(&token).await;
    let key = feed["surveys"][0]["internal_targeting_flag_key"]
        .as_str()
        .expect("the feed names the internal flag")
        .to_owned();
    let shown_to = async |person: &str| {
        let (_, answer) = ask(
            &app,
            "?v=2",
            &json!({"token": token, "distinct_id": person}),
        )
        .await;
        answer["flags"][&key]["enabled"]
            .as_bool()
            .expect("the internal flag is answered")
    };
    assert!(shown_to("person-1").await);

    // As posthog-js sends the answer: distinct id and `$set` inside properties.
    let captured = app
        .request(Method::POST, "/i/v0/e/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "survey sent", "uuid": "0192f5a4-0000-7000-8000-0000000000b1",
            "properties": {"distinct_id": "person-1", "$survey_id": id, "$survey_response": "Fast",
                           "$set": {format!("$survey_responded/{id}"): true}}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(captured.status(), 200);
    assert!(!shown_to("person-1").await, "answered: hidden");
    assert!(shown_to("person-2").await, "someone else still sees it");

    let dismissed = app
        .request(Method::POST, "/e/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "survey dismissed", "uuid": "0192f5a4-0000-7000-8000-0000000000b2",
            "properties": {"distinct_id": "person-2", "$survey_id": id,
                           "$set": {format!("$survey_dismissed/{id}"): true}}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(dismissed.status(), 200);
    assert!(!shown_to("person-2").await, "dismissed: hidden");

    // A distinct id or token holding U+0000 (which PostgreSQL cannot store): the person is
    // stored and found under the same id, and the token is simply unknown.
    let nul_person = "person-\u{0}3";
    let captured = app
        .request(Method::POST, "/i/v0/e/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "survey sent", "uuid": "0192f5a4-0000-7000-8000-0000000000b3",
            "properties": {"distinct_id": nul_person, "$survey_id": id, "$survey_response": "Yes",
                           "$set": {format!("$survey_responded/{id}"): true}}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(captured.status(), 200);
    assert!(!shown_to(nul_person).await, "answered: hidden");
    let (status, body) = ask(
        &app,
        "?v=2",
        &json!({"token": format!("{token}\u{0}"), "distinct_id": "p"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("invalid_api_key"))
    );
    assert_error(
        &parts(
            app.request(Method::POST, "/flags/")
                .json(&json!({"distinct_id": "p"}))
                .send()
                .await
                .unwrap(),
        )
        .await
        .1,
        "authentication_error",
        "missing_api_key",
        "API key not provided. You can find your project API key in your PostHog project settings.",
    );
}

/// Versions a client sends are read as the SDKs read them whatever their size (within the 64 KiB
/// of person properties a request may send): a part of sixty thousand digits orders above every
/// other, only dots are no version, parts past the third are ignored; the answer is a 200.
#[tokio::test]
async fn huge_versions_a_client_sends_are_read_as_the_sdks_read_them() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let filters = [
        ("gte", "semver_gte", "1.0.0"),
        ("neq", "semver_neq", "1.0.0"),
        ("caret", "semver_caret", "1.2.3"),
        ("wildcard", "semver_wildcard", "1.*"),
    ];
    for (key, operator, value) in filters {
        flag(
            &app,
            &ada,
            json!({"key": key, "filters": {"groups": [{"properties": [
                {"key": "app_version", "type": "person", "operator": operator, "value": value}]}]}}),
        )
        .await;
    }
    for (version, expected) in [
        (
            format!("1.{}", "9".repeat(60_000)),
            [true, true, true, true],
        ),
        (".".repeat(60_000), [false, false, false, false]),
        (
            format!("v{}", "1.".repeat(30_000)),
            [true, true, false, true],
        ),
        ("1.2.9".to_owned(), [true, true, true, true]),
    ] {
        let body = json!({"token": token, "distinct_id": "person-1",
                          "person_properties": {"app_version": version}});
        let (status, answer) = ask(&app, "?v=2", &body).await;
        assert_eq!(status, 200, "{answer}");
        for ((key, _, _), enabled) in filters.iter().zip(expected) {
            assert_eq!(answer["flags"][key]["enabled"], enabled, "{key}");
        }
    }
}

/// Captures one `$groupidentify`, as posthog-js's `posthog.group(type, key, properties)` sends it.
pub async fn identify_group(app: &TestApp, token: &str, group_type: &str, key: &str, set: Value) {
    let response = app
        .request(Method::POST, "/batch/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "$groupidentify", "distinct_id": "someone",
            "properties": {"$group_type": group_type, "$group_key": key, "$group_set": set}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_group_flag_is_evaluated_for_the_group_the_request_names() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    identify_group(
        &app,
        &token,
        "company",
        "acme",
        json!({"tier": "enterprise"}),
    )
    .await;
    identify_group(&app, &token, "company", "bolt", json!({"tier": "free"})).await;
    flag(
        &app,
        &ada,
        json!({"key": "enterprise", "filters": {"aggregation_group_type_index": 0, "groups": [
            {"properties": [{"key": "tier", "type": "group", "group_type_index": 0,
                             "operator": "exact", "value": ["enterprise"]}],
             "rollout_percentage": 100}]}}),
    )
    .await;
    flag(
        &app,
        &ada,
        json!({"key": "half-of-companies", "filters": {"aggregation_group_type_index": 0,
            "groups": [{"rollout_percentage": 50}]}}),
    )
    .await;
    let answer = async |body: Value| {
        let mut body = body;
        body["token"] = json!(token);
        let (status, answer) = ask(&app, "?v=2", &body).await;
        assert_eq!(status, 200, "{answer}");
        answer["flags"].clone()
    };

    let acme = answer(json!({"distinct_id": "p1", "groups": {"company": "acme"}})).await;
    assert_eq!(
        acme["enterprise"]["enabled"], true,
        "stored group properties"
    );
    let sent_wins = answer(json!({"distinct_id": "p1", "groups": {"company": "acme"},
        "group_properties": {"company": {"tier": "free"}}}))
    .await;
    assert_eq!(sent_wins["enterprise"]["enabled"], false, "sent ones win");
    let bolt = answer(json!({"distinct_id": "p1", "groups": {"company": "bolt"}})).await;
    assert_eq!(bolt["enterprise"]["enabled"], false);
    for no_group in [json!({}), json!({"team": "acme"})] {
        let alone = answer(json!({"distinct_id": "p1", "groups": no_group})).await;
        assert_eq!(alone["enterprise"]["enabled"], false);
        assert_eq!(alone["enterprise"]["reason"]["code"], "no_group_type");
    }
    // A rollout by group: every person of a company gets the company's answer.
    for company in ["acme", "bolt", "cray", "dyno"] {
        let mut seen = Vec::new();
        for person in ["p1", "p2", "p3"] {
            let flags =
                answer(json!({"distinct_id": person, "groups": {"company": company}})).await;
            seen.push(flags["half-of-companies"]["enabled"].clone());
        }
        assert!(seen.iter().all(|v| v == &seen[0]), "{company}: {seen:?}");
    }

    let (status, definitions) = parts(
        app.get(&format!("/flags/definitions?token={token}"), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(definitions["group_type_mapping"], json!({"0": "company"}));

    let (status, error) = ask(
        &app,
        "?v=2",
        &json!({"token": token, "distinct_id": "p1", "groups": ["acme"]}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        error,
        json!({"type": "validation_error", "code": "invalid_input",
               "detail": "groups must be an object.", "attr": "groups"})
    );
}

#[tokio::test]
async fn experience_continuity_keeps_the_anonymous_variant_after_identify() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    flag(
        &app,
        &ada,
        json!({"key": "checkout", "ensure_experience_continuity": true, "filters": {
            "groups": [{"rollout_percentage": 100}],
            "multivariate": {"variants": [
                {"key": "one", "rollout_percentage": 50},
                {"key": "two", "rollout_percentage": 50}]}}}),
    )
    .await;
    let variant = async |body: Value| {
        let mut body = body;
        body["token"] = json!(token);
        let (status, answer) = ask(&app, "?v=2", &body).await;
        assert_eq!(status, 200, "{answer}");
        answer["flags"]["checkout"]["variant"].clone()
    };
    let anonymous = variant(json!({"distinct_id": "anon-1"})).await;
    // Someone whose own id lands in the other variant.
    let mut identified = None;
    for candidate in (0..50).map(|i| format!("user-{i}")) {
        if variant(json!({"distinct_id": candidate})).await != anonymous {
            identified = Some(candidate);
            break;
        }
    }
    let identified = identified.expect("one of 50 ids lands in the other variant");

    let after_identify =
        variant(json!({"distinct_id": identified, "$anon_distinct_id": "anon-1"})).await;
    assert_eq!(after_identify, anonymous, "the anonymous variant is kept");
    let later = variant(json!({"distinct_id": identified})).await;
    assert_eq!(later, anonymous, "and remembered");
    let another_anonymous =
        variant(json!({"distinct_id": identified, "$anon_distinct_id": "anon-2"})).await;
    assert_eq!(
        another_anonymous, anonymous,
        "the first override is never replaced"
    );
    assert_eq!(app.rows("hash_key_overrides").await, 1);
}
