//! Webhooks under one tenant's flood (issue 40): another tenant's answer is still delivered
//! promptly, capture writes one outbox entry per answer whatever the webhooks (so its cost does
//! not grow with them), a backlog past its bound loses its oldest
//! deliveries (counted in `/metrics`), and deleting a flooded webhook answers at once while its
//! deliveries go later.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, scraped, spawn_app_with, within};
use crate::webhook_receiver::{Receiver, assert_all_verified};
use crate::webhooks::{capture, create_webhook, send, subscribe, survey, test_webhooks};

/// Answers a capture request may carry (`BURROW_CAPTURE_MAX_EVENTS`).
const MOST_A_REQUEST: usize = 10_000;

/// `count` completed answers to `survey`, each its own submission (`tag` keeps captures apart).
fn answers(survey: &str, question: &str, tag: &str, count: usize) -> Vec<Value> {
    (0..count)
        .map(|n| {
            let second = u32::try_from(n % 60).unwrap();
            send(
                survey,
                &format!("{tag}-{n}"),
                &[(question, "x")],
                true,
                second,
            )
        })
        .collect()
}

/// Captures `count` answers, at most a request's worth at a time.
async fn flood(app: &TestApp, token: &str, survey: &str, question: &str, count: usize) {
    let mut left = count;
    let mut part = 0;
    while left > 0 {
        let size = left.min(MOST_A_REQUEST);
        let tag = format!("flood-{part}");
        capture(&app.address, token, answers(survey, question, &tag, size)).await;
        left -= size;
        part += 1;
    }
}

#[tokio::test]
async fn another_tenants_answer_is_delivered_within_15_s_behind_a_20000_answer_backlog() {
    let app = spawn_app_with(test_webhooks).await;
    let flooding = app.tenant("flood@example.com", &["*"]).await;
    let flooding_token = app.project_token(&flooding).await;
    let (flooded_survey, [question, _]) = survey(&app, &flooding).await;
    let busy = Receiver::start().await;
    for _ in 0..3 {
        subscribe(&app, &flooding, &busy).await;
    }
    flood(&app, &flooding_token, &flooded_survey, &question, 20_000).await;

    let other = app.tenant("other@example.com", &["*"]).await;
    let other_token = app.project_token(&other).await;
    let (other_survey, [other_question, _]) = survey(&app, &other).await;
    let receiver = Receiver::start().await;
    subscribe(&app, &other, &receiver).await;
    let started = Instant::now();
    capture(
        &app.address,
        &other_token,
        answers(&other_survey, &other_question, "mine", 1),
    )
    .await;
    // Created and completed.
    let received = receiver.wait_for_accepted(2, Duration::from_secs(15)).await;
    assert_all_verified(&received);
    assert_eq!(received.len(), 2, "{received:?}");
    eprintln!(
        "the other tenant's answer arrived after {:?}",
        started.elapsed()
    );

    // Three webhooks of 40,000 deliveries each outgrow their share of the project's bound.
    let dropped = r#"burrow_webhook_backlog_dropped_total{what="delivery"}"#;
    within(Duration::from_secs(60), "dropped deliveries", || async {
        scraped(&app.address, dropped)
            .await
            .is_some_and(|n| n > 0.0)
    })
    .await;
}

/// Subscribes `count` webhooks that are never called (dispatch is off in the test using it).
async fn idle_webhooks(app: &TestApp, tenant: &Tenant, from: usize, count: usize) {
    for n in from..from + count {
        create_webhook(
            app,
            tenant,
            &json!({
                "url": format!("http://127.0.0.1:9/hook-{n}"),
                "events": ["survey_response.created", "survey_response.updated", "survey_response.completed"],
            }),
        )
        .await;
    }
}

/// What capture writes for a batch does not grow with the webhooks: one outbox entry per answer,
/// no delivery rows. Its time is therefore the same with one webhook or ten; speed itself is
/// measured by `cargo xtask bench`, never timed here.
#[tokio::test]
async fn capture_writes_one_outbox_entry_per_answer_whatever_the_number_of_webhooks() {
    let app = spawn_app_with(|args| {
        test_webhooks(args);
        args.webhooks.dispatch = false;
    })
    .await;
    let tenant = app.tenant("capture@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&app, &tenant).await;
    capture(
        &app.address,
        &token,
        answers(&survey_id, &question, "none", 2_000),
    )
    .await;
    assert_eq!(app.rows("webhook_outbox").await, 0, "no webhook, no outbox");
    idle_webhooks(&app, &tenant, 0, 1).await;
    capture(
        &app.address,
        &token,
        answers(&survey_id, &question, "one", 2_000),
    )
    .await;
    assert_eq!(app.rows("webhook_outbox").await, 2_000);
    idle_webhooks(&app, &tenant, 1, 9).await;
    capture(
        &app.address,
        &token,
        answers(&survey_id, &question, "ten", 2_000),
    )
    .await;
    assert_eq!(
        app.rows("webhook_outbox").await,
        2 * 2_000,
        "ten webhooks, one entry an answer"
    );
    assert_eq!(app.rows("webhook_deliveries").await, 0);
}

async fn delete_webhook(app: &TestApp, tenant: &Tenant, id: &str) -> u16 {
    app.request(
        Method::DELETE,
        &format!("/api/projects/{}/webhooks/{id}/", tenant.project_id),
    )
    .bearer_auth(&tenant.key)
    .send()
    .await
    .expect("deleting a webhook")
    .status()
    .as_u16()
}

#[tokio::test]
async fn deleting_a_webhook_with_a_large_backlog_answers_at_once_and_its_deliveries_go_later() {
    let app = spawn_app_with(test_webhooks).await;
    let tenant = app.tenant("delete@example.com", &["*"]).await;
    let token = app.project_token(&tenant).await;
    let (survey_id, [question, _]) = survey(&app, &tenant).await;
    // Made far faster than they are sent: the backlog stays.
    let receiver = Receiver::start().await;
    let webhook = subscribe(&app, &tenant, &receiver).await;
    flood(&app, &token, &survey_id, &question, MOST_A_REQUEST).await;
    within(
        Duration::from_secs(30),
        "a backlog of deliveries",
        || async { app.rows("webhook_deliveries").await > 10_000 },
    )
    .await;

    let started = Instant::now();
    let status = delete_webhook(&app, &tenant, webhook["id"].as_str().unwrap()).await;
    let took = started.elapsed();
    assert_eq!(status, 204);
    assert!(took < Duration::from_secs(2), "the deletion took {took:?}");
    within(Duration::from_secs(60), "the deliveries purged", || async {
        app.rows("webhook_deliveries").await == 0
    })
    .await;
}
