//! HTTP semantics clients and proxies rely on: `HEAD` wherever `GET` is answered, `OPTIONS`
//! naming the allowed methods, and 405s carrying `Allow`.

use std::collections::BTreeMap;

use reqwest::Method;
use reqwest::header::{ALLOW, CONTENT_LENGTH, CONTENT_TYPE};
use serde_json::json;

use crate::helpers::{concrete_path, parts, spawn_app};

/// Each path of the route table with the methods it lists.
fn resources() -> BTreeMap<String, Vec<String>> {
    let mut resources: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for route in api::route_table() {
        resources
            .entry(route.path)
            .or_default()
            .push(route.method.to_string());
    }
    resources
}

/// What `Allow` should say for a resource answering `methods`.
fn allowed(methods: &[String]) -> Vec<String> {
    let mut allowed = methods.to_vec();
    if methods.iter().any(|method| method == "GET") {
        allowed.push("HEAD".into());
    }
    allowed.push("OPTIONS".into());
    allowed.sort();
    allowed
}

fn allow_header(response: &reqwest::Response) -> Vec<String> {
    let allow = response
        .headers()
        .get(ALLOW)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let mut methods: Vec<String> = allow.split(", ").map(str::to_owned).collect();
    methods.sort();
    methods
}

#[tokio::test]
async fn every_get_route_answers_head_with_gets_status_and_headers_and_no_body() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for route in api::route_table()
        .into_iter()
        .filter(|route| route.method.as_str() == "GET")
    {
        let path = concrete_path(&route.path);
        let get = app.get(&path, &ada.key).await;
        let head = app
            .request(Method::HEAD, &path)
            .bearer_auth(&ada.key)
            .send()
            .await
            .expect("request sent");
        assert_eq!(head.status(), get.status(), "HEAD {path}");
        assert_eq!(
            head.headers().get(CONTENT_TYPE),
            get.headers().get(CONTENT_TYPE),
            "HEAD {path}"
        );
        // `/metrics` counts the GET itself, so its length moves between the two requests.
        if get.headers().contains_key(CONTENT_LENGTH) && route.path != "/metrics" {
            assert_eq!(
                head.headers().get(CONTENT_LENGTH),
                get.headers().get(CONTENT_LENGTH),
                "HEAD {path}"
            );
        }
        assert!(head.bytes().await.unwrap().is_empty(), "HEAD {path}");
    }
}

#[tokio::test]
async fn head_needs_the_read_scope_like_get() {
    let app = spawn_app().await;
    let writer = app.tenant("ada@example.com", &["survey:read"]).await;
    let head = |path: &'static str| {
        app.request(Method::HEAD, path)
            .bearer_auth(&writer.key)
            .send()
    };
    assert_eq!(head("/api/projects/").await.unwrap().status(), 403);
    assert_eq!(
        head("/api/projects/@current/surveys/")
            .await
            .unwrap()
            .status(),
        200
    );
}

#[tokio::test]
async fn options_names_every_method_a_resource_answers() {
    let app = spawn_app().await;
    for (pattern, methods) in resources() {
        let path = concrete_path(&pattern);
        let response = app
            .request(Method::OPTIONS, &path)
            .send()
            .await
            .expect("request sent");
        assert_eq!(response.status(), 200, "OPTIONS {path}");
        assert_eq!(allow_header(&response), allowed(&methods), "OPTIONS {path}");
        let (_, body) = parts(response).await;
        assert_eq!(body["renders"], json!(["application/json"]), "{path}");
    }
}

#[tokio::test]
async fn a_method_a_resource_does_not_answer_is_405_naming_the_ones_it_does() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for (pattern, methods) in resources() {
        if methods.iter().any(|method| method == "PUT") {
            continue;
        }
        let path = concrete_path(&pattern);
        let response = app
            .send_json(Method::PUT, &path, &ada.key, &json!({}))
            .await;
        assert_eq!(response.status(), 405, "PUT {path}");
        assert_eq!(allow_header(&response), allowed(&methods), "PUT {path}");
        let (_, body) = parts(response).await;
        assert_eq!(body["code"], "method_not_allowed", "PUT {path}");
    }
}
