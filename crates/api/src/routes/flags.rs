//! `POST /flags/?v=2`: what posthog-js (and posthog-python without local evaluation) asks on
//! every page load — the project's flags, and each survey's internal targeting flag, evaluated
//! for one person as PostHog evaluates them. Named by the project's public token; bodies come
//! packed as the SDKs pack them (gzip, base64 form, JSON).

use actix_web::{HttpRequest, HttpResponse, web};
use domain::ValidationError;
use domain::error::ValidationCode;
use domain::feature_flag::Evaluation;
use domain::sdk::SdkService;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::error::ApiError;
use crate::sdk_transport::SdkBody;
use crate::settings::ApiSettings;

/// Evaluates the flags for the body's `distinct_id` and `person_properties`; answers the v2
/// shape (`flags`) for `?v=2` and above, else the legacy one (`featureFlags`).
pub(crate) async fn flags(
    request: HttpRequest,
    payload: web::Payload,
    sdk: web::Data<SdkService>,
) -> Result<HttpResponse, ApiError> {
    let max_bytes = request
        .app_data::<ApiSettings>()
        .map_or(ApiSettings::DEFAULT_MAX_BODY_BYTES, |s| s.max_body_bytes);
    let body = SdkBody::read(&request, payload.into_inner(), max_bytes).await?;
    let Value::Object(body) = body.value()? else {
        return Err(invalid(
            "body",
            ValidationCode::Invalid,
            "The body must be a JSON object.",
        ));
    };
    let token = ["token", "api_key"]
        .iter()
        .find_map(|field| body.get(*field).and_then(Value::as_str));
    let snapshot = sdk.snapshot(token).await?;
    let distinct_id = distinct_id(&body)?;
    let person_properties = match body.get("person_properties") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(properties)) => properties.clone(),
        Some(_) => {
            return Err(invalid(
                "person_properties",
                ValidationCode::Invalid,
                "person_properties must be an object.",
            ));
        }
    };
    let wanted: Option<Vec<&str>> = body
        .get("flag_keys")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect());
    let evaluations: Vec<Evaluation> = sdk
        .evaluate_flags(&snapshot, &distinct_id, &person_properties)
        .await?
        .into_iter()
        .filter(|e| {
            wanted
                .as_ref()
                .is_none_or(|keys| keys.contains(&e.key.as_str()))
        })
        .collect();
    let version: u32 = url::form_urlencoded::parse(request.query_string().as_bytes())
        .find(|(key, _)| key == "v")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(1);
    let answer = if version >= 2 {
        v2(&evaluations)
    } else {
        legacy(&evaluations)
    };
    Ok(HttpResponse::Ok().json(answer))
}

/// `distinct_id` as the SDKs send it: a string, or a number (as text).
fn distinct_id(body: &Map<String, Value>) -> Result<String, ApiError> {
    match body.get("distinct_id") {
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(id.clone()),
        Some(Value::Number(id)) => Ok(id.to_string()),
        None | Some(Value::Null) => Err(invalid(
            "distinct_id",
            ValidationCode::Required,
            "This field is required.",
        )),
        Some(_) => Err(invalid(
            "distinct_id",
            ValidationCode::Invalid,
            "distinct_id must be a non-empty string or a number.",
        )),
    }
}

fn invalid(attr: &str, code: ValidationCode, detail: &str) -> ApiError {
    ValidationError::field(attr, code, detail).into()
}

/// `{"flags": {key: {key, enabled, variant, reason, metadata}}, …}`.
fn v2(evaluations: &[Evaluation]) -> Value {
    let flags: Map<String, Value> = evaluations
        .iter()
        .map(|e| {
            let flag = json!({
                "key": e.key,
                "enabled": e.enabled,
                "variant": e.variant,
                "reason": {
                    "code": e.reason.code.as_str(),
                    "condition_index": e.reason.condition_index,
                    "description": e.reason.description,
                },
                "metadata": {"id": e.flag_id.0, "version": 1, "payload": e.payload, "description": null},
            });
            (e.key.clone(), flag)
        })
        .collect();
    json!({
        "flags": flags,
        "errorsWhileComputingFlags": false,
        "quotaLimited": [],
        "requestId": Uuid::now_v7(),
    })
}

/// `{"featureFlags": {key: variant or bool}, "featureFlagPayloads": {key: payload}, …}`.
fn legacy(evaluations: &[Evaluation]) -> Value {
    let values: Map<String, Value> = evaluations
        .iter()
        .map(|e| {
            let value = match (&e.variant, e.enabled) {
                (Some(variant), true) => Value::String(variant.clone()),
                (_, enabled) => Value::Bool(enabled),
            };
            (e.key.clone(), value)
        })
        .collect();
    let payloads: Map<String, Value> = evaluations
        .iter()
        .filter(|e| e.enabled)
        .filter_map(|e| Some((e.key.clone(), e.payload.clone()?)))
        .collect();
    json!({
        "featureFlags": values,
        "featureFlagPayloads": payloads,
        "errorsWhileComputingFlags": false,
        "quotaLimited": [],
        "requestId": Uuid::now_v7(),
    })
}
