//! `GET /metrics`: Prometheus text an operator can scrape without a key.

use reqwest::Method;

use crate::helpers::{sample, spawn_app_with};

#[tokio::test]
async fn requests_latency_pool_and_throttling_are_exported() {
    let app = spawn_app_with(|args| args.rate_limit = "2/minute".parse().unwrap()).await;
    let alice = app.tenant("alice@example.com", &["*"]).await;
    let survey = format!("/api/projects/{}/surveys/", alice.project_id.0);
    for _ in 0..3 {
        app.get(&survey, &alice.key).await;
    }
    app.get("/no/such/path", &alice.key).await;
    // Inside a family's scopes (`/api/projects/{id}/…`), an unknown path is unmatched too.
    let unknown_in_project = format!("/api/projects/{}/no/such/path", alice.project_id.0);
    let response = app.get(&unknown_in_project, &alice.key).await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.json::<serde_json::Value>().await.unwrap()["code"],
        "not_found"
    );

    let response = app.request(Method::GET, "/metrics/").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let metrics = response.text().await.unwrap();

    let route = "/api/projects/{project_id}/surveys";
    assert_eq!(
        sample(
            &metrics,
            &format!(r#"burrow_http_requests_total{{method="GET",route="{route}",status="200"}}"#)
        ),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(
        sample(
            &metrics,
            &format!(r#"burrow_http_requests_total{{method="GET",route="{route}",status="429"}}"#)
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &metrics,
            r#"burrow_http_requests_total{method="GET",route="unmatched",status="404"}"#
        ),
        Some(2.0),
        "unknown paths share one label"
    );
    assert_eq!(
        sample(
            &metrics,
            &format!(
                r#"burrow_http_request_duration_seconds_count{{method="GET",route="{route}"}}"#
            )
        ),
        Some(3.0)
    );
    assert_eq!(
        sample(&metrics, "burrow_rate_limit_rejections_total"),
        Some(1.0)
    );
    assert_eq!(
        sample(&metrics, "burrow_db_pool_max_connections"),
        Some(5.0)
    );
    assert!(sample(&metrics, r#"burrow_db_pool_connections{state="open"}"#).unwrap() >= 1.0);
    assert_eq!(
        sample(
            &metrics,
            r#"burrow_database_errors_total{kind="unavailable"}"#
        ),
        Some(0.0)
    );
}
