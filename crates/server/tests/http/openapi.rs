//! `/api/schema/`: the OpenAPI document, served without a key, and the vendored assets of the
//! pages that render it.

use reqwest::Method;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE};
use serde_json::Value;

use crate::helpers::{parts, spawn_app};

#[tokio::test]
async fn the_schema_is_served_without_a_key_with_or_without_the_trailing_slash() {
    let app = spawn_app().await;
    for path in ["/api/schema/", "/api/schema"] {
        let response = app.request(Method::GET, path).send().await.unwrap();
        assert_eq!(
            response.headers()[CONTENT_TYPE],
            "application/json",
            "{path}"
        );
        let (status, document) = parts(response).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(document["openapi"], "3.1.0");
        let expected: Value = serde_json::from_str(api::openapi::document_json()).unwrap();
        assert_eq!(document, expected);
        let create = &document["paths"]["/api/projects/{project_id}/surveys"]["post"];
        assert_eq!(create["x-required-scope"], "survey:write");
        assert_eq!(
            create["responses"]["201"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Survey"
        );
        let install = &document["paths"]["/api/organizations/{organization_id}/plugins"]["post"];
        assert_eq!(install["x-required-scope"], "plugin:write");
    }
}

#[tokio::test]
async fn the_pages_assets_are_served_with_their_types_and_cached_for_a_year() {
    let app = spawn_app().await;
    for (path, content_type, starts_with) in [
        (
            "/api/schema/swagger-ui/5.35.0/swagger-ui-bundle.js",
            "text/javascript; charset=utf-8",
            "/*! For license information",
        ),
        (
            "/api/schema/swagger-ui/5.35.0/swagger-ui.css",
            "text/css; charset=utf-8",
            ".swagger-ui",
        ),
        (
            "/api/schema/redoc/2.5.4/redoc.standalone.js",
            "text/javascript; charset=utf-8",
            "/*! For license information",
        ),
    ] {
        let response = app.request(Method::GET, path).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()[CONTENT_TYPE], content_type, "{path}");
        assert_eq!(
            response.headers()[CACHE_CONTROL],
            "public, max-age=31536000, immutable",
            "{path}"
        );
        let body = response.text().await.unwrap();
        assert!(body.len() > 100_000, "{path}: {} bytes", body.len());
        assert!(body.starts_with(starts_with), "{path}: {}", &body[..80]);
    }
    for (page, asset) in [
        (
            "/api/schema/swagger-ui/",
            "/api/schema/swagger-ui/5.35.0/swagger-ui-bundle.js",
        ),
        (
            "/api/schema/redoc/",
            "/api/schema/redoc/2.5.4/redoc.standalone.js",
        ),
    ] {
        let response = app.request(Method::GET, page).send().await.unwrap();
        assert_eq!(response.status(), 200, "{page}");
        assert_eq!(
            response.headers()[CONTENT_TYPE],
            "text/html; charset=utf-8",
            "{page}"
        );
        let html = response.text().await.unwrap();
        assert!(html.contains(&format!("src=\"{asset}\"")), "{page}: {html}");
        assert!(
            !html.contains("://"),
            "{page} loads nothing from elsewhere: {html}"
        );
    }
}
