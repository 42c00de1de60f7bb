//! Survey answers as the SDKs send them (gzip sniffed from its bytes, base64 forms, plain JSON,
//! tokens in every place SDKs put them), counted by `responses_count`, read back, archived and
//! summed up in stats; the public survey feed the web SDK reads.

use std::io::Write as _;

use base64::Engine as _;
use domain::admin::KeyRequest;
use flate2::Compression;
use flate2::write::GzEncoder;
use reqwest::Method;
use reqwest::header::{CONTENT_ENCODING, CONTENT_TYPE, ORIGIN};
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_error, parts, spawn_app, spawn_app_with};

/// A launched popover survey with one open question; its id and question id.
async fn launched_survey(app: &TestApp, tenant: &Tenant, name: &str) -> (String, String) {
    let (status, survey) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/surveys/", tenant.project_id),
            &tenant.key,
            &json!({
                "name": name,
                "description": "internal notes",
                "type": "popover",
                "questions": [{"type": "open", "question": "Why?"}],
                "start_date": "2026-01-01T00:00:00Z",
            }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    (
        survey["id"].as_str().unwrap().to_owned(),
        survey["questions"][0]["id"].as_str().unwrap().to_owned(),
    )
}

/// `survey sent` as posthog-js 1.449 builds it: distinct_id and token only in properties.
fn web_answer(token: &str, survey: &str, question: &str, submission: &str, uuid: &str) -> Value {
    json!({
        "uuid": uuid,
        "event": "survey sent",
        "timestamp": "2026-11-23T10:00:00.000Z",
        "properties": {
            "distinct_id": "person-1",
            "token": token,
            "$survey_id": survey,
            "$survey_name": "NPS",
            "$survey_submission_id": submission,
            "$survey_completed": true,
            "$survey_questions": [{"id": question, "question": "Why?", "response": "Fast"}],
            format!("$survey_response_{question}"): "Fast",
            "$set": {format!("$survey_responded/{survey}"): true},
            "$current_url": "https://site.example/",
        },
        "$set": {format!("$survey_responded/{survey}"): true},
    })
}

pub(crate) fn web_batch(token: &str, events: Vec<Value>) -> Value {
    json!({"api_key": token, "batch": events, "sent_at": "2026-11-23T10:00:01.000Z"})
}

fn gzip(body: &Value) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(body.to_string().as_bytes()).unwrap();
    encoder.finish().unwrap()
}

/// Posts like the web SDK with gzip-js: text/plain, no query flag, from another origin.
pub(crate) async fn post_gzip_as_web_sdk(
    app: &TestApp,
    path: &str,
    body: &Value,
) -> reqwest::Response {
    app.request(Method::POST, path)
        .header(CONTENT_TYPE, "text/plain")
        .header(ORIGIN, "https://site.example")
        .body(gzip(body))
        .send()
        .await
        .unwrap()
}

async fn responses_count(app: &TestApp, tenant: &Tenant, query: &str) -> Value {
    let (status, counts) = parts(
        app.get(
            &format!(
                "/api/projects/{}/surveys/responses_count/{query}",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{counts}");
    counts
}

fn allow_origin(response: &reqwest::Response) -> Option<&str> {
    response
        .headers()
        .get("access-control-allow-origin")
        .and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn web_sdk_answers_are_counted_once_however_often_they_are_sent() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let (survey, question) = launched_survey(&app, &tenant, "NPS").await;
    let token = app.project_token(&tenant).await;
    assert_eq!(responses_count(&app, &tenant, "").await, json!({}));

    let answer = web_answer(
        &token,
        &survey,
        &question,
        "sub-1",
        "0192f5a4-0000-7000-8000-000000000001",
    );
    let shown = json!({
        "uuid": "0192f5a4-0000-7000-8000-000000000002",
        "event": "survey shown",
        "properties": {"distinct_id": "person-1", "token": token, "$survey_id": survey},
    });
    let pageview = json!({"event": "$pageview", "properties": {"distinct_id": "person-1"}});
    let batch = web_batch(&token, vec![shown, answer.clone(), pageview]);
    for path in ["/i/v0/e/?ip=0&_=1&ver=1.449.2", "/e/?retry_count=1"] {
        let response = post_gzip_as_web_sdk(&app, path, &batch).await;
        assert_eq!(allow_origin(&response), Some("*"));
        let (status, body) = parts(response).await;
        assert_eq!((status, body), (200, json!({"status": 1})));
    }
    // A partial send of the same submission, then a second submission.
    let mut later = answer.clone();
    later["uuid"] = json!("0192f5a4-0000-7000-8000-000000000003");
    let mut second = answer;
    second["uuid"] = json!("0192f5a4-0000-7000-8000-000000000004");
    second["properties"]["$survey_submission_id"] = json!("sub-2");
    let response =
        post_gzip_as_web_sdk(&app, "/i/v0/e/", &web_batch(&token, vec![later, second])).await;
    assert_eq!(response.status(), 200);

    assert_eq!(
        responses_count(&app, &tenant, "").await,
        json!({ survey.clone(): 2 })
    );
    assert_eq!(app.rows("survey_events").await, 4);
}

#[tokio::test]
async fn base64_forms_plain_json_and_server_sdk_batches_are_all_accepted() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let (survey, question) = launched_survey(&app, &tenant, "NPS").await;
    let token = app.project_token(&tenant).await;
    let answer =
        |uuid: &str, submission: &str| web_answer(&token, &survey, &question, submission, uuid);

    // The web SDK's base64 form, `+` and all.
    let batch = web_batch(
        &token,
        vec![answer("0192f5a4-0000-7000-8000-0000000000a1", "a")],
    );
    let data = base64::engine::general_purpose::STANDARD.encode(batch.to_string());
    let form: String = url_encoded(&[("data", &data)]);
    let response = app
        .request(Method::POST, "/e/?compression=base64&ver=1.449.2")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(parts(response).await, (200, json!({"status": 1})));

    // Plain JSON, one event with the token at the top (the web SDK without compression).
    let mut single = answer("0192f5a4-0000-7000-8000-0000000000a2", "b");
    single["api_key"] = json!(token);
    let response = app
        .request(Method::POST, "/capture/")
        .json(&single)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // posthog-python: /batch/ with Content-Encoding gzip and a top-level distinct_id.
    let server_event = json!({
        "event": "survey sent",
        "distinct_id": "server-person",
        "uuid": "0192f5a4-0000-7000-8000-0000000000a3",
        "properties": {"$survey_id": survey, format!("$survey_response_{question}"): "ok"},
    });
    let response = app
        .request(Method::POST, "/batch/")
        .header(CONTENT_TYPE, "application/json")
        .header(CONTENT_ENCODING, "gzip")
        .body(gzip(&web_batch(&token, vec![server_event])))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    assert_eq!(
        responses_count(&app, &tenant, "").await,
        json!({ survey.clone(): 3 })
    );
}

fn url_encoded(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(key, value)| format!("{key}={}", percent_encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn refused_captures_store_nothing_and_still_carry_cors_headers() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let (survey, question) = launched_survey(&app, &tenant, "NPS").await;
    let token = app.project_token(&tenant).await;
    let answer = web_answer(
        &token,
        &survey,
        &question,
        "s",
        "0192f5a4-0000-7000-8000-0000000000b1",
    );

    let mut anonymous = answer.clone();
    anonymous["properties"]
        .as_object_mut()
        .unwrap()
        .remove("token");
    let response = post_gzip_as_web_sdk(&app, "/e/", &json!({"batch": [anonymous.clone()]})).await;
    assert_eq!(allow_origin(&response), Some("*"));
    let (status, body) = parts(response).await;
    assert_eq!(status, 401, "{body}");
    assert_error(
        &body,
        "authentication_error",
        "missing_api_key",
        "API key not provided. You can find your project API key in your PostHog project settings.",
    );

    let response =
        post_gzip_as_web_sdk(&app, "/e/", &web_batch("phc_unknown", vec![anonymous])).await;
    let (status, body) = parts(response).await;
    assert_eq!(status, 401);
    assert_error(
        &body,
        "authentication_error",
        "invalid_api_key",
        "Project API key invalid. You can find your project API key in your PostHog project settings.",
    );

    // One bad event refuses the whole batch.
    let nameless = json!({"event": "survey shown", "properties": {"$survey_id": survey}});
    let response =
        post_gzip_as_web_sdk(&app, "/e/", &web_batch(&token, vec![answer, nameless])).await;
    let (status, body) = parts(response).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["attr"], "distinct_id");

    for garbage in [&b"{not json"[..], &[0x1f, 0x8b, 0x08, 0x00]] {
        let response = app
            .request(Method::POST, "/i/v0/e/")
            .header(ORIGIN, "https://site.example")
            .body(garbage.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(allow_origin(&response), Some("*"));
        let (status, body) = parts(response).await;
        assert_eq!(
            (status, body["type"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
    }
    assert_eq!(app.rows("survey_events").await, 0);
}

#[tokio::test]
async fn browsers_preflights_are_answered() {
    let app = spawn_app().await;
    for path in ["/e/", "/i/v0/e/", "/batch/", "/api/surveys/"] {
        let response = app
            .request(Method::OPTIONS, path)
            .header(ORIGIN, "https://site.example")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        assert_eq!(allow_origin(&response), Some("*"), "{path}");
        let methods = response.headers()["access-control-allow-methods"]
            .to_str()
            .unwrap();
        assert!(methods.contains("POST"), "{path}: {methods}");
        let headers = response.headers()["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase();
        assert!(headers.contains("content-type"), "{path}: {headers}");
    }
}

#[tokio::test]
async fn oversized_captures_are_refused_with_the_error_shape() {
    let app = spawn_app_with(|args| {
        args.capture_max_body_bytes = 4096;
        args.capture_max_events = 2;
    })
    .await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let event = json!({"event": "$pageview", "properties": {"distinct_id": "p"}});

    let three = web_batch(&token, vec![event.clone(), event.clone(), event.clone()]);
    let (status, body) = parts(post_gzip_as_web_sdk(&app, "/e/", &three).await).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("request_too_large")),
        "{body}"
    );

    let padded =
        json!({"event": "$pageview", "properties": {"distinct_id": "p", "pad": "x".repeat(8192)}});
    let response = app
        .request(Method::POST, "/e/")
        .json(&web_batch(&token, vec![padded.clone()]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    // Compressed small, inflated too large.
    let (status, _) =
        parts(post_gzip_as_web_sdk(&app, "/e/", &web_batch(&token, vec![padded])).await).await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn responses_are_listed_archived_and_left_out_when_asked() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let (survey, question) = launched_survey(&app, &tenant, "NPS").await;
    let (other, _) = launched_survey(&app, &tenant, "Other").await;
    let token = app.project_token(&tenant).await;
    let first = web_answer(
        &token,
        &survey,
        &question,
        "s1",
        "0192f5a4-0000-7000-8000-0000000000c1",
    );
    let mut second = web_answer(
        &token,
        &survey,
        &question,
        "s2",
        "0192f5a4-0000-7000-8000-0000000000c2",
    );
    second["timestamp"] = json!("2026-11-23T10:00:00.500Z");
    second["properties"]["distinct_id"] = json!("person-2");
    let elsewhere = web_answer(
        &token,
        &other,
        &question,
        "s3",
        "0192f5a4-0000-7000-8000-0000000000c3",
    );
    let response = post_gzip_as_web_sdk(
        &app,
        "/e/",
        &web_batch(&token, vec![first, second, elsewhere]),
    )
    .await;
    assert_eq!(response.status(), 200);

    let base = format!("/api/projects/{}/surveys/{survey}", tenant.project_id);
    let (status, listed) = parts(
        app.get(&format!("{base}/responses/browse/?limit=1"), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["count"], 2);
    let newest = &listed["results"][0];
    assert_eq!(newest["uuid"], "0192f5a4-0000-7000-8000-0000000000c2");
    assert_eq!(newest["distinct_id"], "person-2");
    assert_eq!(newest["submission_id"], "s2");
    assert_eq!(newest["answers"], json!({ question.clone(): "Fast" }));
    assert_eq!(newest["archived"], false);
    assert!(listed["next"].as_str().unwrap().contains("offset=1"));

    let archive = format!("{base}/responses/0192f5a4-0000-7000-8000-0000000000c2/archive");
    let (status, _) = parts(
        app.send_json(Method::POST, &archive, &tenant.key, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let (_, archived) = parts(
        app.get(&format!("{base}/archived-response-uuids"), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(archived, json!(["0192f5a4-0000-7000-8000-0000000000c2"]));
    assert_eq!(
        responses_count(&app, &tenant, "?exclude_archived=true").await,
        json!({ survey.clone(): 1, other.clone(): 1 })
    );
    assert_eq!(
        responses_count(&app, &tenant, &format!("?survey_ids=%20{survey}%20,")).await,
        json!({ survey.clone(): 2 })
    );
    let unarchive = archive.replace("/archive", "/unarchive");
    let (status, _) = parts(
        app.send_json(Method::POST, &unarchive, &tenant.key, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        responses_count(&app, &tenant, "?exclude_archived=true").await,
        json!({ survey.clone(): 2, other: 1 })
    );

    // Unknown responses, and responses of another survey, are 404s.
    for uuid in [
        "0192f5a4-0000-7000-8000-0000000000c3",
        "0192f5a4-0000-7000-8000-00000000ffff",
        "nope",
    ] {
        let path = format!("{base}/responses/{uuid}/archive");
        let (status, body) = parts(
            app.send_json(Method::POST, &path, &tenant.key, &json!({}))
                .await,
        )
        .await;
        assert_eq!(status, 404, "{uuid}: {body}");
    }
    // Reading needs survey:read, archiving survey:write.
    let reader = app
        .key(KeyRequest {
            email: tenant.email.clone(),
            label: "reader".into(),
            scopes: vec!["survey:read".into()],
            scoped_teams: None,
            scoped_organizations: None,
        })
        .await;
    let (status, _) = parts(app.get(&format!("{base}/responses/browse/"), &reader).await).await;
    assert_eq!(status, 200);
    let (status, body) = parts(
        app.send_json(Method::POST, &archive, &reader, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test]
async fn stats_add_up_shown_dismissed_and_sent() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let (survey, question) = launched_survey(&app, &tenant, "NPS").await;
    let token = app.project_token(&tenant).await;
    let event = |name: &str, person: &str, uuid: &str| {
        json!({"event": name, "uuid": uuid, "timestamp": "2026-11-23T10:00:00Z",
               "properties": {"distinct_id": person, "$survey_id": survey}})
    };
    let batch = web_batch(
        &token,
        vec![
            event("survey shown", "a", "0192f5a4-0000-7000-8000-0000000000d1"),
            event("survey shown", "b", "0192f5a4-0000-7000-8000-0000000000d2"),
            event("survey shown", "c", "0192f5a4-0000-7000-8000-0000000000d3"),
            event(
                "survey dismissed",
                "b",
                "0192f5a4-0000-7000-8000-0000000000d4",
            ),
            web_answer(
                &token,
                &survey,
                &question,
                "s",
                "0192f5a4-0000-7000-8000-0000000000d5",
            ),
        ],
    );
    let response = app
        .request(Method::POST, "/batch/")
        .json(&batch)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    let path = format!(
        "/api/projects/{}/surveys/{survey}/stats/",
        tenant.project_id
    );
    let (status, stats) = parts(app.get(&path, &tenant.key).await).await;
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["survey_id"], survey);
    assert_eq!(stats["start_date"], "2026-01-01T00:00:00Z");
    assert_eq!(stats["stats"]["survey shown"]["total_count"], 3);
    assert_eq!(
        stats["stats"]["survey shown"]["unique_persons_only_seen"],
        1
    );
    assert_eq!(stats["stats"]["survey dismissed"]["unique_persons"], 1);
    assert_eq!(stats["stats"]["survey sent"]["total_count"], 1);
    assert_eq!(
        stats["rates"],
        json!({"response_rate": 33.33, "dismissal_rate": 33.33,
               "unique_users_response_rate": 33.33, "unique_users_dismissal_rate": 33.33})
    );

    let project = format!("/api/projects/{}/surveys/stats/", tenant.project_id);
    let (_, all) = parts(app.get(&project, &tenant.key).await).await;
    assert_eq!(all["stats"], stats["stats"]);
    assert!(all.get("survey_id").is_none());

    // Dates before the survey's launch narrow to nothing; bad and inverted dates are refused.
    let (_, early) = parts(
        app.get(&format!("{path}?date_to=2025-01-01T00:00:00Z"), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(early["stats"]["survey shown"]["total_count"], 0);
    let (status, body) = parts(
        app.get(&format!("{path}?date_from=yesterday"), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .starts_with("Invalid date format."),
        "{body}"
    );
    let inverted = format!("{path}?date_from=2026-02-01T00:00:00Z&date_to=2026-01-01T00:00:00Z");
    let (status, body) = parts(app.get(&inverted, &tenant.key).await).await;
    assert_eq!(
        (status, body["detail"].as_str()),
        (400, Some("date_from must be before date_to"))
    );

    // Archived surveys leave project stats; with none left, stats are empty.
    let survey_path = format!("/api/projects/{}/surveys/{survey}/", tenant.project_id);
    app.send_json(
        Method::PATCH,
        &survey_path,
        &tenant.key,
        &json!({"archived": true}),
    )
    .await;
    let (_, none) = parts(app.get(&project, &tenant.key).await).await;
    assert_eq!(
        none,
        json!({"stats": {}, "rates": {"response_rate": 0.0, "dismissal_rate": 0.0,
               "unique_users_response_rate": 0.0, "unique_users_dismissal_rate": 0.0}})
    );
}

#[tokio::test]
async fn the_public_feed_shows_unarchived_surveys_to_any_origin() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let (survey, question) = launched_survey(&app, &tenant, "NPS").await;
    let (archived, _) = launched_survey(&app, &tenant, "Old").await;
    app.send_json(
        Method::PATCH,
        &format!("/api/projects/{}/surveys/{archived}/", tenant.project_id),
        &tenant.key,
        &json!({"archived": true}),
    )
    .await;
    let token = app.project_token(&tenant).await;

    let response = app
        .request(
            Method::GET,
            &format!("/api/surveys/?token={token}&_=1700000000000"),
        )
        .header(ORIGIN, "https://site.example")
        .send()
        .await
        .unwrap();
    assert_eq!(allow_origin(&response), Some("*"));
    let (status, feed) = parts(response).await;
    assert_eq!(status, 200, "{feed}");
    assert_eq!(
        feed.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["surveys"],
        "PostHog's current feed: no survey_config"
    );
    let surveys = feed["surveys"].as_array().unwrap();
    assert_eq!(surveys.len(), 1);
    let shown = &surveys[0];
    assert_eq!(shown["id"], survey);
    assert_eq!(shown["type"], "popover");
    assert_eq!(shown["questions"][0]["id"], question);
    assert_eq!(shown["start_date"], "2026-01-01T00:00:00Z");
    assert_eq!(shown["end_date"], Value::Null);
    for absent in ["description", "linked_flag_key", "targeting_flag_key"] {
        assert!(shown.get(absent).is_none(), "{absent} in {shown}");
    }

    for (query, code) in [
        ("", "missing_api_key"),
        ("?token=phc_nope", "invalid_api_key"),
    ] {
        let response = app
            .request(Method::GET, &format!("/api/surveys/{query}"))
            .send()
            .await
            .unwrap();
        let (status, body) = parts(response).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (401, Some(code)),
            "{query}"
        );
    }
}

/// Posts `body` to capture v1 with these headers.
async fn capture_v1(app: &TestApp, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, Value) {
    let mut request = app
        .request(Method::POST, "/i/v1/analytics/events")
        .header(CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    parts(request.send().await.unwrap()).await
}

#[tokio::test]
async fn capture_v1_answers_a_verdict_per_event_and_refuses_what_it_cannot_key() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let (survey, question) = launched_survey(&app, &ada, "NPS").await;
    let bearer = format!("Bearer {token}");
    let answer = |uuid: &str| {
        json!({"event": "survey sent", "uuid": uuid, "distinct_id": "person-1",
               "timestamp": "2026-11-23T10:00:00Z", "options": {},
               "properties": {"$survey_id": survey, "$survey_submission_id": uuid,
                              format!("$survey_response_{question}"): "Fast"}})
    };
    let first = "0192f5a4-0000-7000-8000-000000000001";
    let pageview = json!({"event": "$pageview", "uuid": "0192f5a4-0000-7000-8000-000000000002",
                          "distinct_id": "person-1", "timestamp": "2026-11-23T10:00:00Z",
                          "options": {}, "properties": {}});
    let batch = |events: Vec<Value>| {
        serde_json::to_vec(&json!({"created_at": "2026-11-23T10:00:01Z", "batch": events})).unwrap()
    };

    // Gzipped, as posthog-node sends it.
    let mut gzip = GzEncoder::new(Vec::new(), Compression::default());
    gzip.write_all(&batch(vec![answer(first), pageview.clone()]))
        .unwrap();
    let (status, body) = capture_v1(
        &app,
        &[("Authorization", &bearer), ("Content-Encoding", "gzip")],
        gzip.finish().unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"results": {first: {"result": "ok"},
                           "0192f5a4-0000-7000-8000-000000000002": {"result": "ok"}}})
    );
    let (_, counts) = parts(
        app.get(
            &format!("/api/projects/{}/surveys/responses_count/", ada.project_id),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(counts, json!({survey.as_str(): 1}));

    refused(
        capture_v1(&app, &[], batch(vec![pageview.clone()])).await,
        401,
        "missing_api_key",
        Value::Null,
    );
    let mut no_uuid = pageview.clone();
    no_uuid.as_object_mut().unwrap().remove("uuid");
    refused(
        capture_v1(&app, &[("Authorization", &bearer)], batch(vec![no_uuid])).await,
        400,
        "invalid_input",
        json!("uuid"),
    );
    refused(
        capture_v1(
            &app,
            &[("Authorization", &bearer)],
            batch(vec![pageview.clone(), pageview.clone()]),
        )
        .await,
        400,
        "invalid_input",
        json!("uuid"),
    );
    refused(
        capture_v1(&app, &[("Authorization", &bearer)], batch(vec![])).await,
        400,
        "invalid_input",
        json!("batch"),
    );
    refused(
        capture_v1(
            &app,
            &[("Authorization", &bearer), ("Content-Encoding", "zstd")],
            batch(vec![pageview]),
        )
        .await,
        415,
        "unsupported_encoding",
        Value::Null,
    );
}

/// Asserts a refusal's status, `code` and `attr`.
fn refused((status, body): (u16, Value), expected: u16, code: &str, attr: Value) {
    assert_eq!(
        (status, &body["code"], &body["attr"]),
        (expected, &json!(code), &attr),
        "{body}"
    );
}
