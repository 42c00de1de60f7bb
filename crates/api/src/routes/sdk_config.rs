//! `GET /array/{token}/config`: the remote config posthog-js fetches on every page load. It
//! turns on what Burrow serves (surveys, feature flags, capture at PostHog's endpoint with gzip)
//! and everything else off, so the SDK loads no recorder or other lazy script Burrow lacks.

use actix_web::web::{self, Json};
use domain::access::{AccessError, AccessService};
use serde_json::{Value, json};

use crate::error::ApiError;

/// PostHog's remote config shape for a project with surveys and flags, nothing else.
pub(crate) async fn remote_config(
    token: web::Path<String>,
    access: web::Data<AccessService>,
) -> Result<Json<Value>, ApiError> {
    let project = match access.project_by_token(Some(token.as_str())).await {
        Ok(project) => project,
        Err(AccessError::MissingProjectToken | AccessError::InvalidProjectToken) => {
            return Err(ApiError::not_found());
        }
        Err(other) => return Err(other.into()),
    };
    Ok(Json(json!({
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
    })))
}
