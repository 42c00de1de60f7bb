//! The remote config posthog-js loads on every page: first `GET /array/{token}/config.js` as a
//! script, then (when that fails) `GET /array/{token}/config` as JSON. It turns on what Burrow
//! serves (surveys, feature flags, capture at PostHog's endpoint with gzip) and everything else
//! off, so the SDK loads no recorder or other lazy script Burrow lacks.

use actix_web::HttpResponse;
use actix_web::http::header::ContentType;
use actix_web::web::{self, Json};
use domain::access::{AccessError, AccessService};
use domain::tenancy::Project;
use serde_json::{Value, json};

use crate::error::ApiError;

/// `config`: the JSON.
pub(crate) async fn remote_config(
    token: web::Path<String>,
    access: web::Data<AccessService>,
) -> Result<Json<Value>, ApiError> {
    let project = project(&token, &access).await?;
    Ok(Json(config(&project)))
}

/// `config.js`: the same config, handed to the SDK the way PostHog's script does (it then skips
/// the JSON request).
pub(crate) async fn remote_config_script(
    token: web::Path<String>,
    access: web::Data<AccessService>,
) -> Result<HttpResponse, ApiError> {
    let project = project(&token, &access).await?;
    let entry = json!({"config": config(&project), "siteApps": []});
    // JSON is a JavaScript expression; `</` is escaped so the text can never close a tag.
    let literal = |value: &Value| value.to_string().replace("</", "<\\/");
    let script = format!(
        "(function(){{window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{{}};\
         window._POSTHOG_REMOTE_CONFIG[{}]={};}})();\n",
        literal(&Value::String(project.api_token.clone())),
        literal(&entry),
    );
    Ok(HttpResponse::Ok()
        .content_type(ContentType(mime_javascript()))
        .body(script))
}

fn mime_javascript() -> actix_web::mime::Mime {
    "application/javascript; charset=utf-8"
        .parse()
        .expect("static media type")
}

/// The project the token names; an unknown token is a 404 here, as on PostHog.
async fn project(token: &str, access: &AccessService) -> Result<Project, ApiError> {
    match access.project_by_token(Some(token)).await {
        Ok(project) => Ok(project),
        Err(AccessError::MissingProjectToken | AccessError::InvalidProjectToken) => {
            Err(ApiError::not_found())
        }
        Err(other) => Err(other.into()),
    }
}

/// PostHog's remote config shape for a project with surveys and flags, nothing else.
fn config(project: &Project) -> Value {
    json!({
        "token": project.api_token,
        "supportedCompression": ["gzip", "gzip-js"],
        "hasFeatureFlags": true,
        "analytics": {"endpoint": "/i/v0/e/"},
        "surveys": true,
        "sessionRecording": false,
        "heatmaps": false,
        "autocapture_opt_out": true,
        "capturePerformance": false,
        "autocaptureExceptions": false,
        "captureDeadClicks": false,
        "conversations": false,
        "productTours": false,
        "elementsChainAsString": true,
        "defaultIdentifiedOnly": true,
        "siteApps": [],
    })
}
