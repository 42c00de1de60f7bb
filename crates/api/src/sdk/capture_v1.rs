//! Capture v1 (`POST /i/v1/analytics/events`), which posthog-python (`capture_mode="v1"`) and
//! posthog-node (`POSTHOG_CAPTURE_MODE=v1`) send to: the project token as a Bearer credential,
//! `{"created_at","batch":[…]}` in (gzip or plain), and a verdict per event out,
//! `{"results":{uuid:{"result":"ok"}}}`, as PostHog's capture answers it. Survey events are
//! stored as on the other capture paths, the rest accepted and dropped.
//!
//! Refusals are the usual `{type, code, detail, attr}` body, which both SDKs read (`detail`),
//! with the statuses they act on: 400, 401, 413 and 415 end the batch, 429 and 503 retry it.

use actix_web::http::header::{AUTHORIZATION, CONTENT_ENCODING};
use actix_web::{HttpRequest, HttpResponse, web};
use domain::ValidationError;
use domain::sdk::SdkService;
use domain::survey_response::SurveyResponseService;
use serde::Serialize;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use super::SnapshotRenderings;
use super::capture::{decode, limits};
use super::transport::SdkBody;
use crate::error::ApiError;
use crate::extract::bearer_of;

/// A capture v1 request, as the OpenAPI document describes it (read by capture's decoder).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CaptureV1Body)]
pub(crate) struct CaptureV1Body {
    /// When the SDK made the batch (RFC 3339).
    created_at: Option<String>,
    /// The events: `event`, `uuid` (required), `distinct_id`, `timestamp`, `properties`,
    /// `options`, `session_id`, `window_id`.
    #[schema(value_type = Vec<Object>)]
    batch: Vec<Value>,
    historical_migration: Option<bool>,
}

/// The answer: a verdict per event uuid (`ok` for every event of a batch Burrow took).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CaptureV1Results)]
pub(crate) struct CaptureV1Results {
    #[schema(value_type = Object)]
    results: Map<String, Value>,
}

/// Takes a batch: every event needs a uuid, once, since the verdicts are keyed by it.
pub(crate) async fn capture(
    request: HttpRequest,
    payload: web::Payload,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
    responses: web::Data<SurveyResponseService>,
) -> Result<HttpResponse, ApiError> {
    let token = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|header| header.to_str().ok())
        .and_then(bearer_of)
        .map(str::to_owned);
    if let Some(encoding) = request.headers().get(CONTENT_ENCODING) {
        let encoding = encoding.to_str().unwrap_or_default().trim();
        if !(encoding.eq_ignore_ascii_case("gzip") || encoding.eq_ignore_ascii_case("identity")) {
            return Err(ApiError::unsupported_encoding(encoding));
        }
    }
    let (max_bytes, max_events) = limits(&request);
    let body = SdkBody::read(&request, payload.into_inner(), max_bytes).await?;
    let captured = decode(body.json(), max_events)?;
    let mut results = Map::new();
    for uuid in captured.uuids() {
        let uuid = uuid.ok_or_else(|| {
            ValidationError::invalid(
                "uuid",
                "Every event needs a uuid: the results are keyed by it.",
            )
        })?;
        let verdict = results.insert(uuid.hyphenated().to_string(), json!({"result": "ok"}));
        if verdict.is_some() {
            return Err(
                ValidationError::invalid("uuid", format!("Duplicate event uuid: {uuid}")).into(),
            );
        }
    }
    if results.is_empty() {
        return Err(ValidationError::invalid("batch", "The batch is empty.").into());
    }
    let project = sdk.project_id(token.as_deref()).await?;
    responses.capture(project, captured.into_batch()?).await?;
    Ok(HttpResponse::Ok().json(CaptureV1Results { results }))
}
