//! The SDKs' capture endpoints (`/batch/`, `/capture/`, `/e/`, `/i/v0/e/`): PostHog's ingestion
//! wire format in, survey events stored, exactly `200 {"status":1}` out (the web SDK re-sends
//! on any other 2xx).

mod decode;

use actix_web::{HttpRequest, HttpResponse, web};
use domain::sdk::SdkService;
use domain::survey_response::SurveyResponseService;
use serde_json::json;

use super::SnapshotRenderings;
use super::transport::SdkBody;
use crate::error::ApiError;
use crate::settings::ApiSettings;
pub(crate) use decode::{CapturePayload, decode};

/// Accepts one event or a batch; stores its survey events, drops the rest.
pub(crate) async fn capture(
    request: HttpRequest,
    payload: web::Payload,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
    responses: web::Data<SurveyResponseService>,
) -> Result<HttpResponse, ApiError> {
    let (max_bytes, max_events) = limits(&request);
    let body = SdkBody::read(&request, payload.into_inner(), max_bytes).await?;
    let captured = decode(body.json(), max_events)?;
    let project = sdk.project_id(captured.token.as_deref()).await?;
    responses.capture(project, captured.into_batch()?).await?;
    Ok(HttpResponse::Ok().json(json!({"status": 1})))
}

/// The node's capture bounds: most bytes a body may hold (inflated), most events it may carry.
pub(crate) fn limits(request: &HttpRequest) -> (usize, usize) {
    request.app_data::<ApiSettings>().map_or(
        (
            ApiSettings::DEFAULT_CAPTURE_MAX_BODY_BYTES,
            ApiSettings::DEFAULT_CAPTURE_MAX_EVENTS,
        ),
        |settings| (settings.capture_max_body_bytes, settings.capture_max_events),
    )
}
