//! The console at `/app/`: a few static files (`crates/api/assets/console/` and the vendored
//! Chart.js) that show surveys and their results to people, and launch or stop a survey for a
//! key that may write, calling the same API as every client with a personal key the person
//! types. The files are embedded in the binary, so
//! `burrow serve` serves the console with nothing fetched from elsewhere; the page routes with
//! its URL's fragment (`#/projects/1/surveys/…`), so the server knows only these files.
//!
//! Every file is sent under a strict Content-Security-Policy: scripts and styles from this
//! origin only, no inline code, nothing framed, requests to this origin only.

use actix_web::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use actix_web::{HttpRequest, HttpResponse};

use crate::error::ApiError;

/// The console's page.
pub(crate) const INDEX: &str = "/app";
/// Its other files, by name.
pub(crate) const FILE: &str = "/app/{file}";

const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                      img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
                      form-action 'none'; frame-ancestors 'none'";

const JS: &str = "text/javascript; charset=utf-8";

/// Every file the console has: its name under `/app/`, its type and its bytes. Closed: any
/// other name is a 404.
const FILES: [(&str, &str, &[u8]); 12] = [
    (
        "console.css",
        "text/css; charset=utf-8",
        include_bytes!("../../assets/console/console.css"),
    ),
    ("app.js", JS, include_bytes!("../../assets/console/app.js")),
    ("api.js", JS, include_bytes!("../../assets/console/api.js")),
    ("dom.js", JS, include_bytes!("../../assets/console/dom.js")),
    (
        "surveys.js",
        JS,
        include_bytes!("../../assets/console/surveys.js"),
    ),
    (
        "results.js",
        JS,
        include_bytes!("../../assets/console/results.js"),
    ),
    (
        "lifecycle.js",
        JS,
        include_bytes!("../../assets/console/lifecycle.js"),
    ),
    (
        "confirm.js",
        JS,
        include_bytes!("../../assets/console/confirm.js"),
    ),
    (
        "responses.js",
        JS,
        include_bytes!("../../assets/console/responses.js"),
    ),
    (
        "plugins.js",
        JS,
        include_bytes!("../../assets/console/plugins.js"),
    ),
    // The tab's icon, named by `index.html` so the browser does not ask for `/favicon.ico`.
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../../assets/console/favicon.svg"),
    ),
    (
        "chart.umd.js",
        JS,
        include_bytes!("../../assets/chartjs/chart.umd.js"),
    ),
];

/// `GET /app/`: the page.
pub(crate) async fn index() -> HttpResponse {
    file(
        "text/html; charset=utf-8",
        include_bytes!("../../assets/console/index.html"),
    )
}

/// `GET /app/{file}`: one of [`FILES`].
pub(crate) async fn asset(request: HttpRequest) -> Result<HttpResponse, ApiError> {
    let name = request.match_info().get("file").unwrap_or_default();
    FILES
        .iter()
        .find(|(file_name, _, _)| *file_name == name)
        .map(|(_, content_type, bytes)| file(content_type, bytes))
        .ok_or_else(ApiError::not_found)
}

/// A file of the console. `no-cache`: the browser asks again each time, so a page never runs
/// with scripts of an older Burrow (the files are small; Chart.js, the largest, is 210 kB).
fn file(content_type: &'static str, bytes: &'static [u8]) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, content_type))
        .insert_header((CACHE_CONTROL, "no-cache"))
        .insert_header((CONTENT_SECURITY_POLICY, POLICY))
        .insert_header((X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((REFERRER_POLICY, "no-referrer"))
        .insert_header((X_FRAME_OPTIONS, "DENY"))
        .body(bytes)
}
