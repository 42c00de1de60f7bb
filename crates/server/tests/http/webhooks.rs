//! Webhooks on survey responses, end to end: managed through the API, written with the
//! response, signed per Standard Webhooks and verified by a real receiver (`standardwebhooks`
//! from PyPI), retried through failures, refused toward private networks, sent once by two
//! nodes, and not lost when Burrow is killed.

use std::time::Duration;

use burrow_server::cli::{RetryDelays, ServeArgs};
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_error, parts, scraped, spawn_app_with, within};
use crate::process::{bootstrap, serve};
use crate::webhook_receiver::{Receiver, accepted, assert_all_verified};

/// A node that may call the loopback receiver (and the discard port 9, where nothing answers),
/// retries fast and looks at the queue often.
pub(crate) fn test_webhooks(args: &mut ServeArgs) {
    args.webhooks.allow_private = true;
    args.webhooks.allowed_ports = Some("1-65535".parse().unwrap());
    args.webhooks.retry_delays = Some(RetryDelays(vec![Duration::from_millis(200); 6]));
    args.webhooks.poll_ms = 50;
    args.webhooks.timeout_secs = 1;
}

pub(crate) async fn webhook_app() -> TestApp {
    spawn_app_with(test_webhooks).await
}

/// A launched `api` survey with two open questions: its id and question ids.
pub(crate) async fn survey(app: &TestApp, tenant: &Tenant) -> (String, [String; 2]) {
    let (status, survey) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/surveys/", tenant.project_id),
            &tenant.key,
            &json!({
                "name": "Checkout feedback",
                "type": "api",
                "questions": [
                    {"type": "open", "question": "What almost stopped you?"},
                    {"type": "open", "question": "Anything else?"},
                ],
                "start_date": "2026-01-01T00:00:00Z",
            }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let question = |index: usize| {
        survey["questions"][index]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    (
        survey["id"].as_str().unwrap().to_owned(),
        [question(0), question(1)],
    )
}

/// Creates a webhook; its JSON (with `secret`).
pub(crate) async fn create_webhook(app: &TestApp, tenant: &Tenant, body: &Value) -> Value {
    let (status, webhook) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/webhooks/", tenant.project_id),
            &tenant.key,
            body,
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{webhook}");
    webhook
}

/// A webhook on every response event to `receiver`, its secret handed to the receiver.
pub(crate) async fn subscribe(app: &TestApp, tenant: &Tenant, receiver: &Receiver) -> Value {
    let webhook = create_webhook(
        app,
        tenant,
        &json!({
            "url": receiver.url(),
            "events": ["survey_response.created", "survey_response.updated", "survey_response.completed"],
        }),
    )
    .await;
    receiver
        .control(&[webhook["secret"].as_str().unwrap()], &[])
        .await;
    webhook
}

/// `survey sent` as posthog-js sends a partial (or final) answer of a submission.
pub(crate) fn send(
    survey: &str,
    submission: &str,
    answers: &[(&str, &str)],
    completed: bool,
    second: u32,
) -> Value {
    let mut properties = json!({
        "distinct_id": "shopper-1",
        "$survey_id": survey,
        "$survey_submission_id": submission,
        "$survey_completed": completed,
    });
    for (question, answer) in answers {
        properties[format!("$survey_response_{question}")] = json!(answer);
    }
    json!({
        "event": "survey sent",
        "uuid": uuid::Uuid::now_v7(),
        "timestamp": format!("2026-11-24T10:00:{second:02}.000Z"),
        "properties": properties,
    })
}

/// Posts events to `/batch/` as an SDK does; asserts Burrow acknowledged them.
pub(crate) async fn capture(address: &str, token: &str, events: Vec<Value>) {
    let response = reqwest::Client::new()
        .post(format!("{address}/batch/"))
        .json(&json!({"api_key": token, "batch": events}))
        .send()
        .await
        .expect("capturing");
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
}

async fn deliveries(app: &TestApp, tenant: &Tenant, webhook: &str) -> Vec<Value> {
    let (status, page) = parts(
        app.get(
            &format!(
                "/api/projects/{}/webhooks/{webhook}/deliveries/",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["results"].as_array().unwrap().clone()
}

fn types(deliveries: &[Value]) -> Vec<&str> {
    deliveries
        .iter()
        .map(|delivery| delivery["payload"]["type"].as_str().unwrap_or("?"))
        .collect()
}

#[tokio::test]
async fn a_webhook_shows_its_secret_once_and_is_managed_like_other_resources() {
    let app = webhook_app().await;
    let tenant = app.tenant("hooks@example.com", &["*"]).await;
    let (survey_id, _) = survey(&app, &tenant).await;
    let path = format!("/api/projects/{}/webhooks/", tenant.project_id);
    let created = create_webhook(
        &app,
        &tenant,
        &json!({"url": "http://127.0.0.1:9/hook", "events": ["survey_response.completed"],
                "survey_ids": [survey_id], "description": "to the CRM"}),
    )
    .await;
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(created["format"], "standard");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["disabled_reason"], Value::Null);
    let id = created["id"].as_str().unwrap();
    let one = format!("{path}{id}/");

    let (status, shown) = parts(app.get(&one, &tenant.key).await).await;
    assert_eq!(status, 200);
    assert_eq!(shown.get("secret"), None, "GET must not show the secret");
    assert_eq!(shown["survey_ids"], json!([survey_id]));
    let (_, list) = parts(app.get(&path, &tenant.key).await).await;
    assert_eq!(list["count"], 1);
    assert_eq!(list["results"][0].get("secret"), None);

    let (status, changed) = parts(
        app.send_json(
            Method::PATCH,
            &one,
            &tenant.key,
            &json!({"survey_ids": null, "format": "slack", "enabled": false}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(
        (
            &changed["survey_ids"],
            &changed["format"],
            &changed["enabled"]
        ),
        (&Value::Null, &json!("slack"), &json!(false))
    );
    assert_eq!(changed["description"], "to the CRM");

    let (status, rotated) = parts(
        app.send_json(
            Method::POST,
            &format!("{one}rotate_secret/"),
            &tenant.key,
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    assert_ne!(rotated["secret"], created["secret"]);

    for (body, attr, code) in [
        (
            json!({"events": ["survey_response.created"]}),
            "url",
            "required",
        ),
        (json!({"url": "http://127.0.0.1:9/"}), "events", "required"),
        (
            json!({"url": "http://127.0.0.1:9/", "events": []}),
            "events",
            "invalid_input",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "events": ["response.sent"]}),
            "events",
            "invalid_choice",
        ),
        (
            json!({"url": "ftp://127.0.0.1/", "events": ["survey_response.created"]}),
            "url",
            "invalid_input",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "events": ["survey_response.created"],
                "survey_ids": [uuid::Uuid::now_v7()]}),
            "survey_ids",
            "invalid_input",
        ),
    ] {
        let (status, error) =
            parts(app.send_json(Method::POST, &path, &tenant.key, &body).await).await;
        assert_eq!(status, 400, "{body}: {error}");
        assert_eq!(
            (error["attr"].as_str(), error["code"].as_str()),
            (Some(attr), Some(code)),
            "{body}: {error}"
        );
    }

    // Scopes: `webhook:read` reads, cannot write; a survey key sees nothing.
    let reader = app
        .key(domain::admin::KeyRequest {
            email: tenant.email.clone(),
            label: "reader".into(),
            scopes: vec!["webhook:read".into()],
            ..domain::admin::KeyRequest::default()
        })
        .await;
    assert_eq!(app.get(&one, &reader).await.status(), 200);
    let (status, error) = parts(
        app.send_json(Method::DELETE, &one, &reader, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 403, "{error}");
    let surveyor = app
        .key(domain::admin::KeyRequest {
            email: tenant.email.clone(),
            label: "surveys".into(),
            scopes: vec!["survey:write".into()],
            ..domain::admin::KeyRequest::default()
        })
        .await;
    assert_eq!(app.get(&path, &surveyor).await.status(), 403);

    // Another tenant cannot see it, through its own project or this one.
    let other = app.tenant("other@example.com", &["*"]).await;
    let through_own = format!("/api/projects/{}/webhooks/{id}/", other.project_id);
    assert_eq!(app.get(&through_own, &other.key).await.status(), 404);
    assert_eq!(app.get(&one, &other.key).await.status(), 403);

    // Every change is in the project's activity, as surveys' are (`activity_log:read`).
    let (status, log) = parts(app.get(&format!("{one}activity/"), &tenant.key).await).await;
    assert_eq!(status, 200, "{log}");
    let activities: Vec<&str> = log["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["activity"].as_str().unwrap())
        .collect();
    assert_eq!(activities, ["secret_rotated", "updated", "created"]);
    assert_eq!(log["results"][1]["scope"], "Webhook");
    assert_eq!(log["results"][1]["user"]["email"], tenant.email.as_str());
    assert_eq!(
        log["results"][1]["detail"]["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|change| change["field"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["survey_ids", "format", "enabled"]
    );
    assert!(!log.to_string().contains("whsec_"), "{log}");

    let response = app
        .send_json(Method::DELETE, &one, &tenant.key, &json!({}))
        .await;
    assert_eq!(response.status(), 204);
    let (status, log) = parts(app.get(&format!("{path}activity/"), &tenant.key).await).await;
    assert_eq!(status, 200, "{log}");
    assert_eq!(log["results"][0]["activity"], "deleted");
    assert_eq!(log["total_count"], 4);
    let (status, error) = parts(app.get(&one, &tenant.key).await).await;
    assert_eq!(status, 404);
    assert_error(&error, "invalid_request", "not_found", "Not found.");
}

#[tokio::test]
async fn partial_then_completed_answers_arrive_signed_verified_and_in_order() {
    let app = webhook_app().await;
    let tenant = app.tenant("order@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [first, second]) = survey(&app, &tenant).await;
    let receiver = Receiver::start().await;
    let webhook = subscribe(&app, &tenant, &receiver).await;

    capture(
        &app.address,
        &token,
        vec![send(
            &survey_id,
            "sub-1",
            &[(&first, "Shipping cost")],
            false,
            1,
        )],
    )
    .await;
    receiver.wait_for_accepted(1, Duration::from_secs(10)).await;
    capture(
        &app.address,
        &token,
        vec![send(
            &survey_id,
            "sub-1",
            &[(&first, "Shipping cost"), (&second, "No")],
            true,
            2,
        )],
    )
    .await;
    let received = receiver.wait_for_accepted(3, Duration::from_secs(10)).await;
    assert_all_verified(&received);
    let got = accepted(&received);
    let payloads: Vec<Value> = got
        .iter()
        .map(|d| json!({"payload": d["payload"]}))
        .collect();
    assert_eq!(
        types(&payloads),
        [
            "survey_response.created",
            "survey_response.updated",
            "survey_response.completed"
        ]
    );
    let completed = &got[2]["payload"]["data"];
    assert_eq!(
        completed["survey"],
        json!({"id": survey_id, "name": "Checkout feedback"})
    );
    assert_eq!(completed["response"]["submission_id"], "sub-1");
    assert_eq!(completed["response"]["distinct_id"], "shopper-1");
    assert_eq!(completed["response"]["completed"], true);
    assert_eq!(
        completed["response"]["event_uuids"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        completed["answers"],
        json!([
            {"question_id": first, "question": "What almost stopped you?", "type": "open", "value": "Shipping cost"},
            {"question_id": second, "question": "Anything else?", "type": "open", "value": "No"},
        ])
    );
    // The deliveries list tells the same story, newest first, each delivered at the first try.
    let listed = deliveries(&app, &tenant, webhook["id"].as_str().unwrap()).await;
    assert_eq!(listed.len(), 3);
    for delivery in &listed {
        assert_eq!(delivery["state"], "delivered", "{delivery}");
        assert_eq!(delivery["attempts"][0]["status_code"], 200, "{delivery}");
        assert!(
            got.iter().any(|d| d["id"] == delivery["message_id"]),
            "{delivery}"
        );
    }
    assert_eq!(listed[0]["type"], "survey_response.completed");
}

#[tokio::test]
async fn a_failing_receiver_gets_everything_exactly_once_after_it_recovers() {
    let app = webhook_app().await;
    let tenant = app.tenant("flaky@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&app, &tenant).await;
    // Nothing listens on the port yet: connection refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let webhook = create_webhook(
        &app,
        &tenant,
        &json!({"url": format!("http://127.0.0.1:{port}/hook"), "events": ["survey_response.completed"]}),
    )
    .await;
    let id = webhook["id"].as_str().unwrap().to_owned();
    let sends: Vec<Value> = (0..5)
        .map(|n| {
            send(
                &survey_id,
                &format!("sub-{n}"),
                &[(&question, "ok")],
                true,
                n,
            )
        })
        .collect();
    capture(&app.address, &token, sends).await;
    within(
        Duration::from_secs(10),
        "a refused connection recorded",
        || async {
            deliveries(&app, &tenant, &id).await.iter().any(|d| {
                d["attempts"].as_array().unwrap().iter().any(|a| {
                    a["error"]
                        .as_str()
                        .is_some_and(|e| e.contains("could not connect"))
                })
            })
        },
    )
    .await;

    // The receiver comes up, answers 500, then takes longer than the timeout, then recovers.
    let receiver = Receiver::start_on(port).await;
    receiver
        .control(
            &[webhook["secret"].as_str().unwrap()],
            &["500", "sleep:2", "503"],
        )
        .await;
    let received = receiver.wait_for_accepted(5, Duration::from_secs(30)).await;
    assert_all_verified(&received);
    let ids: std::collections::BTreeSet<_> = received
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids.len(),
        5,
        "five messages, each under one id: {received:?}"
    );
    let listed = deliveries(&app, &tenant, &id).await;
    assert!(
        listed.iter().all(|d| d["state"] == "delivered"),
        "{listed:?}"
    );
    let attempts: Vec<&Value> = listed
        .iter()
        .flat_map(|d| d["attempts"].as_array().unwrap())
        .collect();
    for expected in ["could not connect", "timed out"] {
        assert!(
            attempts
                .iter()
                .any(|a| a["error"].as_str().is_some_and(|e| e.contains(expected))),
            "no attempt failed with {expected:?}: {attempts:?}"
        );
    }
    for code in [500, 503] {
        assert!(
            attempts.iter().any(|a| a["status_code"] == code),
            "{attempts:?}"
        );
    }
    // The node's metrics count the same attempts.
    let metric = |outcome: &str| format!("burrow_webhook_attempts_total{{outcome=\"{outcome}\"}}");
    assert_eq!(scraped(&app.address, &metric("delivered")).await, Some(5.0));
    let retried = scraped(&app.address, &metric("retried"))
        .await
        .unwrap_or_default();
    assert!(retried >= 4.0, "{retried} retried attempts");
    assert_eq!(scraped(&app.address, &metric("failed")).await, Some(0.0));
    // The receiver is ordered: the first message waited for its retries before the others went.
    let order: Vec<_> = accepted(&received)
        .iter()
        .map(|d| d["payload"]["data"]["response"]["submission_id"].clone())
        .collect();
    assert_eq!(
        order,
        (0..5)
            .map(|n| json!(format!("sub-{n}")))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn gone_disables_the_webhook_and_a_day_of_failures_does_too() {
    let app = webhook_app().await;
    let tenant = app.tenant("gone@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&app, &tenant).await;
    let receiver = Receiver::start().await;
    let webhook = subscribe(&app, &tenant, &receiver).await;
    let id = webhook["id"].as_str().unwrap().to_owned();
    let one = format!("/api/projects/{}/webhooks/{id}/", tenant.project_id);
    receiver
        .control(&[webhook["secret"].as_str().unwrap()], &["410"])
        .await;
    capture(
        &app.address,
        &token,
        vec![send(&survey_id, "s", &[(&question, "a")], true, 1)],
    )
    .await;
    within(
        Duration::from_secs(10),
        "the webhook disabled by 410",
        || async {
            let (_, shown) = parts(app.get(&one, &tenant.key).await).await;
            shown["enabled"] == false && shown["disabled_reason"] == "gone"
        },
    )
    .await;
    // The delivery waits for the webhook; a retry is refused while it is disabled.
    let listed = deliveries(&app, &tenant, &id).await;
    assert!(listed.iter().all(|d| d["state"] == "pending"), "{listed:?}");
    let retry = format!(
        "{one}deliveries/{}/retry/",
        listed[0]["id"].as_str().unwrap()
    );
    let (status, error) = parts(
        app.send_json(Method::POST, &retry, &tenant.key, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 400, "{error}");
    // Enabled again, everything waiting is delivered.
    let (status, _) = parts(
        app.send_json(Method::PATCH, &one, &tenant.key, &json!({"enabled": true}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    receiver.wait_for_accepted(2, Duration::from_secs(10)).await;

    // Failing every attempt of the schedule disables it with `failing`.
    receiver
        .control(&[webhook["secret"].as_str().unwrap()], &["500"; 7])
        .await;
    capture(
        &app.address,
        &token,
        vec![send(&survey_id, "t", &[(&question, "b")], true, 2)],
    )
    .await;
    within(
        Duration::from_secs(15),
        "the webhook disabled as failing",
        || async {
            let (_, shown) = parts(app.get(&one, &tenant.key).await).await;
            shown["enabled"] == false && shown["disabled_reason"] == "failing"
        },
    )
    .await;
    let failed: Vec<Value> = deliveries(&app, &tenant, &id)
        .await
        .into_iter()
        .filter(|d| d["state"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["attempts"].as_array().unwrap().len(), 7);
    // Enabled and retried by hand, it is delivered.
    parts(
        app.send_json(Method::PATCH, &one, &tenant.key, &json!({"enabled": true}))
            .await,
    )
    .await;
    let retry = format!(
        "{one}deliveries/{}/retry/",
        failed[0]["id"].as_str().unwrap()
    );
    let (status, retried) = parts(
        app.send_json(Method::POST, &retry, &tenant.key, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{retried}");
    assert_eq!(retried["state"], "pending");
    within(
        Duration::from_secs(10),
        "the retried delivery delivered",
        || async {
            deliveries(&app, &tenant, &id)
                .await
                .iter()
                .all(|d| d["state"] == "delivered")
        },
    )
    .await;
}

#[tokio::test]
async fn a_test_send_and_a_slack_message_are_signed_and_recorded() {
    let app = webhook_app().await;
    let tenant = app.tenant("test@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&app, &tenant).await;
    let receiver = Receiver::start().await;
    let webhook = create_webhook(
        &app,
        &tenant,
        &json!({"url": receiver.url(), "events": ["survey_response.completed"], "format": "slack"}),
    )
    .await;
    receiver
        .control(&[webhook["secret"].as_str().unwrap()], &[])
        .await;
    let id = webhook["id"].as_str().unwrap();
    let (status, tested) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/webhooks/{id}/test/", tenant.project_id),
            &tenant.key,
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{tested}");
    assert_eq!(
        (&tested["type"], &tested["state"]),
        (&json!("webhook.test"), &json!("delivered"))
    );
    capture(
        &app.address,
        &token,
        vec![send(&survey_id, "s", &[(&question, "Too <slow>")], true, 1)],
    )
    .await;
    let received = receiver.wait_for_accepted(2, Duration::from_secs(10)).await;
    assert_all_verified(&received);
    assert_eq!(received[0]["id"], tested["message_id"]);
    let text = received[1]["payload"]["text"].as_str().unwrap();
    assert!(
        text.contains("*Checkout feedback*") && text.contains("Too &lt;slow&gt;"),
        "{text}"
    );
}

#[tokio::test]
async fn redirects_are_failures_and_never_followed() {
    let app = webhook_app().await;
    let tenant = app.tenant("redirect@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&app, &tenant).await;
    let receiver = Receiver::start().await;
    let webhook = subscribe(&app, &tenant, &receiver).await;
    receiver
        .control(&[webhook["secret"].as_str().unwrap()], &["redirect"])
        .await;
    capture(
        &app.address,
        &token,
        vec![send(&survey_id, "s", &[(&question, "a")], true, 1)],
    )
    .await;
    let received = receiver.wait_for_accepted(2, Duration::from_secs(10)).await;
    assert!(
        received.iter().all(|d| d["path"] == "/hook"),
        "a redirect was followed: {received:?}"
    );
    let listed = deliveries(&app, &tenant, webhook["id"].as_str().unwrap()).await;
    let attempts: Vec<&Value> = listed
        .iter()
        .flat_map(|d| d["attempts"].as_array().unwrap())
        .collect();
    assert!(
        attempts.iter().any(|a| a["status_code"] == 307),
        "{attempts:?}"
    );
}

#[tokio::test]
async fn urls_into_private_networks_are_refused_when_saved_and_when_sent() {
    // A node with the default policy refuses them when saved…
    let strict = spawn_app_with(|_| {}).await;
    let tenant = strict.tenant("ssrf@example.com", &["*"]).await;
    let path = format!("/api/projects/{}/webhooks/", tenant.project_id);
    for url in [
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://[::1]/hook",
        "https://10.0.0.8/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::ffff:169.254.169.254]/",
        "https://0x7f000001/",
        "https://0.0.0.0/",
        "http://hooks.example.com/",
    ] {
        let (status, error) = parts(
            strict
                .send_json(
                    Method::POST,
                    &path,
                    &tenant.key,
                    &json!({"url": url, "events": ["survey_response.completed"]}),
                )
                .await,
        )
        .await;
        assert_eq!(status, 400, "{url} was accepted: {error}");
        assert_eq!(error["attr"], "url", "{url}: {error}");
    }

    // …and when sent: a webhook saved where private targets were allowed, to a name that
    // resolves to loopback, is not called by a node that does not allow them.
    let receiver = Receiver::start().await;
    let lenient = strict.another_node(|args| {
        test_webhooks(args);
        args.webhooks.dispatch = false;
    });
    let (status, webhook) = parts(
        reqwest::Client::new()
            .post(format!("{lenient}{path}"))
            .bearer_auth(&tenant.key)
            .json(&json!({"url": format!("https://localhost:{}/hook", receiver.port), "events": ["survey_response.completed"]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{webhook}");
    let token = strict.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&strict, &tenant).await;
    capture(
        &strict.address,
        &token,
        vec![send(&survey_id, "s", &[(&question, "a")], true, 1)],
    )
    .await;
    let id = webhook["id"].as_str().unwrap();
    within(Duration::from_secs(10), "a refused attempt", || async {
        deliveries(&strict, &tenant, id).await.iter().any(|d| {
            d["attempts"].as_array().unwrap().iter().any(|a| {
                a["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("loopback address"))
            })
        })
    })
    .await;
    assert!(
        receiver.received().await.is_empty(),
        "the receiver was called"
    );
}

#[tokio::test]
async fn special_purpose_addresses_and_service_ports_are_refused_when_saved() {
    let app = spawn_app_with(|_| {}).await;
    let tenant = app.tenant("probe@example.com", &["*"]).await;
    let path = format!("/api/projects/{}/webhooks/", tenant.project_id);
    for (url, detail) in [
        (
            "https://[64:ff9b:1::a00:1]/",
            "64:ff9b:1::a00:1 is a local-use NAT64 address carrying 10.0.0.1 (private), which webhooks may not call.",
        ),
        (
            "https://example.com:22/",
            "Webhooks may call port 443, 80 or 1024 to 65535, not 22.",
        ),
        (
            "https://example.com:6379/",
            "Webhooks may not call port 6379 (Redis).",
        ),
        (
            "https://[::ffff:0:a00:1]/",
            "::ffff:0:a00:1 is a SIIT (IPv4-translated) address carrying 10.0.0.1 (private), which webhooks may not call.",
        ),
        (
            "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/",
            "2001:0:4136:e378:8000:63bf:f5ff:fffe is a Teredo address carrying 10.0.0.1 (private), which webhooks may not call.",
        ),
        (
            "https://[fec0::1]/",
            "fec0::1 is a site-local address, which webhooks may not call.",
        ),
        (
            "https://[100::1]/",
            "100::1 is a discard-only address, which webhooks may not call.",
        ),
    ] {
        let (status, error) = parts(
            app.send_json(
                Method::POST,
                &path,
                &tenant.key,
                &json!({"url": url, "events": ["survey_response.completed"]}),
            )
            .await,
        )
        .await;
        assert_eq!(
            (status, error),
            (
                400,
                json!({"type": "validation_error", "code": "invalid_input", "detail": detail, "attr": "url"})
            ),
            "{url}"
        );
    }
    assert_eq!(app.rows("webhooks").await, 0);
}

#[tokio::test]
async fn a_stored_webhook_on_a_port_no_longer_allowed_is_not_called() {
    // A node whose operator allows only 443 sends; the webhook was saved through a node that
    // allows the receiver's port.
    let receiver = Receiver::start().await;
    let strict = spawn_app_with(|args| {
        test_webhooks(args);
        args.webhooks.allowed_ports = Some("443".parse().unwrap());
    })
    .await;
    let tenant = strict.tenant("ports@example.com", &["*"]).await;
    let lenient = strict.another_node(|args| {
        test_webhooks(args);
        args.webhooks.dispatch = false;
    });
    let path = format!("/api/projects/{}/webhooks/", tenant.project_id);
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    let (status, webhook) = parts(
        reqwest::Client::new()
            .post(format!("{lenient}{path}"))
            .bearer_auth(&tenant.key)
            .json(&json!({"url": url, "events": ["survey_response.completed"]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{webhook}");
    let (status, refused) = parts(
        strict
            .send_json(
                Method::POST,
                &path,
                &tenant.key,
                &json!({"url": url, "events": ["survey_response.completed"]}),
            )
            .await,
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    let refusal = format!("Webhooks may call ports 443 only, not {}.", receiver.port);
    assert_eq!(refused["detail"], refusal.as_str());

    let token = strict.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&strict, &tenant).await;
    capture(
        &strict.address,
        &token,
        vec![send(&survey_id, "s", &[(&question, "a")], true, 1)],
    )
    .await;
    let id = webhook["id"].as_str().unwrap();
    within(Duration::from_secs(10), "a refused attempt", || async {
        deliveries(&strict, &tenant, id).await.iter().any(|d| {
            d["attempts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["error"].as_str().is_some_and(|e| e.contains(&refusal)))
        })
    })
    .await;
    assert!(
        receiver.received().await.is_empty(),
        "the receiver was called"
    );
}

#[tokio::test]
async fn two_nodes_send_each_delivery_once() {
    let app = webhook_app().await;
    let _second = app.another_node(test_webhooks);
    let tenant = app.tenant("nodes@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&app, &tenant).await;
    let mut receivers = Vec::new();
    for _ in 0..3 {
        let receiver = Receiver::start().await;
        subscribe(&app, &tenant, &receiver).await;
        receivers.push(receiver);
    }
    for batch in 0..4 {
        let sends = (0..5)
            .map(|n| {
                send(
                    &survey_id,
                    &format!("sub-{batch}-{n}"),
                    &[(&question, "x")],
                    true,
                    n,
                )
            })
            .collect();
        capture(&app.address, &token, sends).await;
    }
    // Each of 20 new submissions is created and completed: 40 deliveries per webhook.
    for receiver in &receivers {
        let received = receiver
            .wait_for_accepted(40, Duration::from_secs(30))
            .await;
        assert_all_verified(&received);
        assert_eq!(
            received.len(),
            40,
            "a delivery was sent twice: {received:?}"
        );
    }
}

#[tokio::test]
async fn answers_acknowledged_before_a_kill_9_are_delivered_after_the_restart() {
    let database = adapters::testing::TestDatabase::create().await;
    let tenant = bootstrap(&database.url);
    let key = tenant["personal_api_key"].as_str().unwrap().to_owned();
    let token = tenant["project_api_token"].as_str().unwrap().to_owned();
    let project = tenant["project_id"].as_i64().unwrap();
    let receiver = Receiver::start().await;
    // The first process does not send, so every delivery is still in the outbox when it dies.
    let first = serve(&database.url, None, |command| {
        command
            .env("BURROW_WEBHOOKS_ALLOW_PRIVATE", "1")
            .env("BURROW_WEBHOOK_DISPATCH", "false");
    })
    .await;
    let client = reqwest::Client::new();
    let post = |path: String, body: Value| {
        client
            .post(first.url(&path))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    let survey: Value = post(
        format!("/api/projects/{project}/surveys/"),
        json!({"name": "Killed", "type": "api", "questions": [{"type": "open", "question": "Why?"}]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let survey_id = survey["id"].as_str().unwrap().to_owned();
    let question = survey["questions"][0]["id"].as_str().unwrap().to_owned();
    let webhook: Value = post(
        format!("/api/projects/{project}/webhooks/"),
        json!({"url": receiver.url(), "events": ["survey_response.completed"]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    receiver
        .control(&[webhook["secret"].as_str().unwrap()], &[])
        .await;
    for n in 0..10 {
        capture(
            &first.address,
            &token,
            vec![send(
                &survey_id,
                &format!("sub-{n}"),
                &[(&question, "x")],
                true,
                n,
            )],
        )
        .await;
    }
    first.signal("KILL");
    drop(first);

    let _second = serve(&database.url, None, |command| {
        command
            .env("BURROW_WEBHOOKS_ALLOW_PRIVATE", "1")
            .env("BURROW_WEBHOOK_POLL_MS", "50");
    })
    .await;
    let received = receiver
        .wait_for_accepted(10, Duration::from_secs(30))
        .await;
    assert_all_verified(&received);
    let mut submissions: Vec<String> = accepted(&received)
        .iter()
        .map(|d| {
            d["payload"]["data"]["response"]["submission_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    submissions.sort();
    let mut expected: Vec<String> = (0..10).map(|n| format!("sub-{n}")).collect();
    expected.sort();
    assert_eq!(submissions, expected);
}
