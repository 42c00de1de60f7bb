//! The OpenAPI document's route (`/api/schema/`) and the pages that render it for people, at
//! PostHog's paths: `/api/schema/swagger-ui/` (Swagger UI) and `/api/schema/redoc/` (Redoc).
//! Their scripts and styles are vendored from the npm registry (`crates/api/assets/`) and served
//! from Burrow itself, under URLs that name the version, so they are cached for a year and no
//! page needs a CDN.

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::{HttpResponse, web};

pub(crate) const SWAGGER_UI: &str = "/api/schema/swagger-ui";
pub(crate) const REDOC: &str = "/api/schema/redoc";
pub(crate) const SWAGGER_UI_JS: &str = "/api/schema/swagger-ui/5.35.0/swagger-ui-bundle.js";
pub(crate) const SWAGGER_UI_CSS: &str = "/api/schema/swagger-ui/5.35.0/swagger-ui.css";
pub(crate) const REDOC_JS: &str = "/api/schema/redoc/2.5.4/redoc.standalone.js";

/// Where the pages load the document from.
const DOCUMENT: &str = "/api/schema/";

/// What makes the OpenAPI document as served, called by the first request for it: built at
/// start-up, the document and its text held about 3 MB on every node, most of which never
/// serve it. `crate::app` hands it over: the document is built from the route table, so the
/// table cannot name its builder without the two depending on each other.
pub(crate) struct ApiDocument(pub fn() -> &'static str);

/// `GET /api/schema/`: the document, without a key.
pub(crate) async fn schema(document: web::Data<ApiDocument>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, "application/json"))
        .insert_header((CACHE_CONTROL, "no-cache"))
        .body((document.0)())
}

pub(crate) async fn swagger_ui() -> HttpResponse {
    page(&format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Burrow API — Swagger UI</title>
<link rel="stylesheet" href="{SWAGGER_UI_CSS}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{SWAGGER_UI_JS}"></script>
<script>
window.ui = SwaggerUIBundle({{ url: "{DOCUMENT}", dom_id: "#swagger-ui", deepLinking: true }});
</script>
</body>
</html>
"##
    ))
}

pub(crate) async fn redoc() -> HttpResponse {
    page(&format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Burrow API — Redoc</title>
</head>
<body>
<redoc spec-url="{DOCUMENT}"></redoc>
<script src="{REDOC_JS}"></script>
</body>
</html>
"##
    ))
}

pub(crate) async fn swagger_ui_js() -> HttpResponse {
    asset(
        "text/javascript; charset=utf-8",
        include_bytes!("../../assets/swagger-ui/swagger-ui-bundle.js"),
    )
}

pub(crate) async fn swagger_ui_css() -> HttpResponse {
    asset(
        "text/css; charset=utf-8",
        include_bytes!("../../assets/swagger-ui/swagger-ui.css"),
    )
}

pub(crate) async fn redoc_js() -> HttpResponse {
    asset(
        "text/javascript; charset=utf-8",
        include_bytes!("../../assets/redoc/redoc.standalone.js"),
    )
}

fn page(html: &str) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((CACHE_CONTROL, "no-cache"))
        .body(html.to_owned())
}

/// A vendored file: its URL names its version, so it never changes and may be kept a year.
fn asset(content_type: &'static str, bytes: &'static [u8]) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, content_type))
        .insert_header((CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .body(bytes)
}
