//! The error contract for actix's own rejections and malformed input.

use reqwest::Method;
use reqwest::header::CONTENT_TYPE;

use crate::helpers::{assert_error, parts, spawn_app, spawn_app_with};

#[tokio::test]
async fn an_unknown_route_is_404_in_the_error_shape() {
    let app = spawn_app().await;
    let (status, body) = parts(
        app.request(Method::GET, "/api/nothing/here/")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert_error(&body, "invalid_request", "not_found", "Not found.");
}

#[tokio::test]
async fn a_wrong_method_is_405_naming_the_method() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let response = app
        .request(Method::DELETE, "/api/projects/")
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    let (status, body) = parts(response).await;
    assert_eq!(status, 405);
    assert_error(
        &body,
        "invalid_request",
        "method_not_allowed",
        "Method \"DELETE\" not allowed.",
    );
}

#[tokio::test]
async fn malformed_json_is_400_parse_error() {
    let app = spawn_app().await;
    let response = app
        .request(Method::GET, "/api/projects/")
        .header(CONTENT_TYPE, "application/json")
        .body("{\"personal_api_key\": ")
        .send()
        .await
        .unwrap();
    let (status, body) = parts(response).await;
    assert_eq!(status, 400);
    assert_eq!(body["type"], "invalid_request");
    assert_eq!(body["code"], "parse_error");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .starts_with("JSON parse error")
    );
}

#[tokio::test]
async fn invalid_utf8_and_non_object_bodies_are_400() {
    let app = spawn_app().await;
    let bad_utf8 = app
        .request(Method::GET, "/api/projects/")
        .header(CONTENT_TYPE, "application/json")
        .body(b"{\"a\": \"\xff\"}".to_vec())
        .send()
        .await
        .unwrap();
    let (status, body) = parts(bad_utf8).await;
    assert_eq!(
        (status, body["code"].as_str().unwrap()),
        (400, "parse_error")
    );

    let list = app
        .request(Method::GET, "/api/projects/")
        .header(CONTENT_TYPE, "application/json")
        .body("[1, 2]")
        .send()
        .await
        .unwrap();
    let (status, body) = parts(list).await;
    assert_eq!(status, 400);
    assert_error(
        &body,
        "validation_error",
        "invalid_input",
        "Invalid data. Expected a dictionary, but got list.",
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let app = spawn_app_with(|args| args.max_body_bytes = 1024).await;
    let big = format!("{{\"padding\": \"{}\"}}", "x".repeat(4096));
    let response = app
        .request(Method::GET, "/api/projects/")
        .header(CONTENT_TYPE, "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    let (status, body) = parts(response).await;
    assert_eq!(status, 413);
    assert_eq!(body["type"], "invalid_request");
    assert_eq!(body["code"], "request_too_large");
}

#[tokio::test]
async fn health_and_readiness_answer() {
    let app = spawn_app().await;
    let (status, body) = parts(app.request(Method::GET, "/_health").send().await.unwrap()).await;
    assert_eq!((status, body["status"].as_str().unwrap()), (200, "ok"));
    let (status, body) = parts(app.request(Method::GET, "/_readyz/").send().await.unwrap()).await;
    assert_eq!((status, body["status"].as_str().unwrap()), (200, "ok"));
}

#[tokio::test]
async fn readiness_is_503_in_the_error_shape_when_the_database_is_unreachable() {
    let app = spawn_app_with(|args| {
        args.database.database_url = "postgres://postgres@127.0.0.1:1/nowhere".into();
    })
    .await;
    let (status, body) = parts(app.request(Method::GET, "/_readyz").send().await.unwrap()).await;
    assert_eq!(status, 503);
    assert_error(
        &body,
        "server_error",
        "service_unavailable",
        "Database is unreachable.",
    );
}

#[tokio::test]
async fn a_url_carrying_a_null_character_is_refused_on_any_route() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for path in [
        format!("/api/projects/{}/surveys/?search=a%00b", ada.project_id.0),
        format!(
            "/api/projects/{}/surveys/responses_count/?survey_ids=%00",
            ada.project_id.0
        ),
        "/api/surveys/?token=phc_%00".to_owned(),
        "/array/phc_%00/config".to_owned(),
    ] {
        let (status, body) = parts(app.get(&path, &ada.key).await).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_error(
            &body,
            "validation_error",
            "null_characters_not_allowed",
            "Null characters are not allowed.",
        );
    }
}
