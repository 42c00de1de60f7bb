//! The remote config posthog-js loads on every page: first `GET /array/{token}/config.js` as a
//! script, then (when that fails) `GET /array/{token}/config` as JSON. It turns on what Burrow
//! serves (surveys, feature flags, capture at PostHog's endpoint with gzip) and everything else
//! off, so the SDK loads no recorder or other lazy script Burrow lacks. Both are rendered once
//! per project snapshot and may be kept by browsers and CDNs (`rendered`).

use std::sync::Arc;

use actix_web::web;
use actix_web::{HttpRequest, HttpResponse};
use domain::access::AccessError;
use domain::sdk::{SdkService, SdkSnapshot};
use domain::tenancy::Project;
use serde_json::{Value, json};

use super::SnapshotRenderings;
use super::rendered::{Rendered, public};
use crate::error::ApiError;

/// `config`: the JSON.
pub(crate) async fn remote_config(
    request: HttpRequest,
    token: web::Path<String>,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
) -> Result<HttpResponse, ApiError> {
    let snapshot = snapshot(&token, &sdk).await?;
    let rendered = snapshot
        .renderings
        .remote_config
        .get_or_init(|| Rendered::new(config(&snapshot.project).to_string().into_bytes()));
    Ok(public(&request, rendered, "application/json"))
}

/// `config.js`: the same config, handed to the SDK the way PostHog's script does (it then skips
/// the JSON request).
pub(crate) async fn remote_config_script(
    request: HttpRequest,
    token: web::Path<String>,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
) -> Result<HttpResponse, ApiError> {
    let snapshot = snapshot(&token, &sdk).await?;
    let rendered = snapshot
        .renderings
        .remote_config_script
        .get_or_init(|| Rendered::new(script(&snapshot.project).into_bytes()));
    Ok(public(
        &request,
        rendered,
        "application/javascript; charset=utf-8",
    ))
}

fn script(project: &Project) -> String {
    let entry = json!({"config": config(project), "siteApps": []});
    // JSON is a JavaScript expression; `</` is escaped so the text can never close a tag.
    let literal = |value: &Value| value.to_string().replace("</", "<\\/");
    format!(
        "(function(){{window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{{}};\
         window._POSTHOG_REMOTE_CONFIG[{}]={};}})();\n",
        literal(&Value::String(project.api_token.clone())),
        literal(&entry),
    )
}

/// The snapshot of the project the token names; an unknown token is a 404 here, as on PostHog.
async fn snapshot(
    token: &str,
    sdk: &SdkService<SnapshotRenderings>,
) -> Result<Arc<SdkSnapshot<SnapshotRenderings>>, ApiError> {
    match sdk.snapshot(Some(token)).await {
        Ok(snapshot) => Ok(snapshot),
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
