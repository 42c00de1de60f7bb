//! Per-key rate limits, as PostHog throttles personal API keys: counted whatever carried the
//! key, refused with DRF's 429, shared by every node through Redis, and never an outage when
//! Redis is.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, parts, scraped, spawn_app_with};

/// The Redis the tests share (`cargo xtask test` makes sure one answers).
fn redis_url() -> String {
    std::env::var("BURROW_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

fn limit(rate: &str) -> domain::rate_limit::RateLimit {
    rate.parse().expect("a valid rate")
}

#[tokio::test]
async fn a_key_over_its_limit_is_throttled_whatever_carried_it() {
    let app = spawn_app_with(|args| args.rate_limit = limit("3/minute,100/hour")).await;
    let alice = app.tenant("alice@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;

    let header = app.get("/api/projects/", &alice.key).await;
    assert_eq!(header.status(), 200);
    let query = app
        .request(
            Method::GET,
            &format!("/api/users/@me/?personal_api_key={}", alice.key),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(query.status(), 200);
    let body = app
        .request(
            Method::POST,
            &format!("/api/projects/{}/surveys/", alice.project_id.0),
        )
        .json(&json!({"personal_api_key": alice.key, "name": "Counted", "type": "popover"}))
        .send()
        .await
        .unwrap();
    assert_eq!(body.status(), 201);

    let throttled = app.get("/api/projects/", &alice.key).await;
    let retry_after: u64 = throttled
        .headers()
        .get("retry-after")
        .expect("a 429 says when to come back")
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=60).contains(&retry_after),
        "Retry-After: {retry_after}"
    );
    let (status, body) = parts(throttled).await;
    assert_eq!(status, 429);
    assert_error(
        &body,
        "throttled_error",
        "throttled",
        &format!("Request was throttled. Expected available in {retry_after} seconds."),
    );

    let in_body = app
        .request(
            Method::POST,
            &format!("/api/projects/{}/surveys/", alice.project_id.0),
        )
        .json(&json!({"personal_api_key": alice.key, "name": "Refused", "type": "popover"}))
        .send()
        .await
        .unwrap();
    assert_eq!(in_body.status(), 429, "the body's key is the same key");
    assert_eq!(
        app.rows("surveys").await,
        1,
        "a throttled write writes nothing"
    );

    assert_eq!(
        app.get("/api/projects/", &bob.key).await.status(),
        200,
        "another key has its own count"
    );
}

#[tokio::test]
async fn off_never_throttles() {
    let app = spawn_app_with(|args| args.rate_limit = limit("off")).await;
    let alice = app.tenant("alice@example.com", &["*"]).await;
    for _ in 0..600 {
        assert_eq!(app.get("/api/users/@me/", &alice.key).await.status(), 200);
    }
}

#[tokio::test]
async fn nodes_sharing_redis_share_one_limit() {
    let app = spawn_app_with(|args| {
        args.rate_limit = limit("10/hour");
        args.redis_url = Some(redis_url());
    })
    .await;
    let second = app.another_node(|args| {
        args.rate_limit = limit("10/hour");
        args.redis_url = Some(redis_url());
    });
    let alice = app.tenant("alice@example.com", &["*"]).await;

    let mut admitted = 0;
    for i in 0..30 {
        let node = if i % 2 == 0 {
            app.address.clone()
        } else {
            second.clone()
        };
        let response = app
            .client
            .get(format!("{node}/api/users/@me/"))
            .bearer_auth(&alice.key)
            .send()
            .await
            .unwrap();
        match response.status().as_u16() {
            200 => admitted += 1,
            429 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(
        admitted, 10,
        "two nodes admitted the key's 10 requests in total"
    );
}

#[tokio::test]
async fn without_redis_requests_are_served_and_the_outage_is_counted() {
    // Nothing listens on port 1: every attempt to reach Redis fails.
    let app = spawn_app_with(|args| {
        args.rate_limit = limit("2/hour");
        args.redis_url = Some("redis://127.0.0.1:1".into());
    })
    .await;
    let alice = app.tenant("alice@example.com", &["*"]).await;
    for _ in 0..5 {
        assert_eq!(app.get("/api/users/@me/", &alice.key).await.status(), 200);
    }
    assert_eq!(
        scraped(&app.address, "burrow_rate_limit_store_errors_total").await,
        Some(5.0)
    );
}
