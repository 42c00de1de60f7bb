//! `POST /flags/?v=2`: what posthog-js (and posthog-python without local evaluation) asks on
//! every page load — the project's flags, and each survey's internal targeting flag, evaluated
//! for one person as PostHog evaluates them. Named by the project's public token; bodies come
//! packed as the SDKs pack them (gzip, base64 form, JSON).

use std::borrow::Cow;

use actix_web::http::header::ContentType;
use actix_web::{HttpRequest, HttpResponse, web};
use domain::ValidationError;
use domain::error::ValidationCode;
use domain::feature_flag::Evaluation;
use domain::sdk::SdkService;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;
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
    // Every field is a JSON value, so an object always reads; each is checked below, in
    // PostHog's order (the token before the distinct id).
    let body: FlagsBody = serde_json::from_value(Value::Object(body))
        .map_err(|error| ApiError::parse_error(format!("Malformed payload: {error}")))?;
    let token = [&body.token, &body.api_key]
        .into_iter()
        .find_map(|field| field.as_ref().and_then(Value::as_str));
    let snapshot = sdk.snapshot(token).await?;
    let distinct_id = distinct_id(body.distinct_id.as_ref())?;
    let person_properties = match body.person_properties {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(properties)) => properties,
        Some(_) => {
            return Err(invalid(
                "person_properties",
                ValidationCode::Invalid,
                "person_properties must be an object.",
            ));
        }
    };
    let wanted: Option<Vec<&str>> = body
        .flag_keys
        .as_ref()
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect());
    let evaluations: Vec<Evaluation> = sdk
        .evaluate_flags(&snapshot, &distinct_id, &person_properties)
        .await?
        .into_iter()
        .filter(|e| wanted.as_ref().is_none_or(|keys| keys.contains(&e.key)))
        .collect();
    let version: u32 = url::form_urlencoded::parse(request.query_string().as_bytes())
        .find(|(key, _)| key == "v")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(1);
    Ok(if version >= 2 {
        // Sized for the answer up front: grown by doubling from serde_json's default, the
        // buffer was copied several times for every request.
        let mut body = Vec::with_capacity(ANSWER_BYTES_PER_FLAG * (evaluations.len() + 1));
        serde_json::to_writer(&mut body, &V2Answer::new(&evaluations))
            .map_err(|error| ApiError::internal(&error))?;
        HttpResponse::Ok()
            .content_type(ContentType::json())
            .body(body)
    } else {
        HttpResponse::Ok().json(legacy(&evaluations))
    })
}

/// About what one flag's entry of a v2 answer takes (a key, its metadata and reason).
const ANSWER_BYTES_PER_FLAG: usize = 256;

/// What posthog-js and posthog-python send to `/flags`. Each field is read as the JSON value it
/// is and checked by the handler, so a value of the wrong type gets PostHog's error for that
/// field (a token of the wrong type counts as none).
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct FlagsBody {
    /// The project's public token.
    #[schema(value_type = Option<String>)]
    token: Option<Value>,
    /// The same, as older SDKs send it.
    #[schema(value_type = Option<String>)]
    api_key: Option<Value>,
    /// Who the flags are evaluated for: a non-empty string, or a number.
    #[schema(value_type = String, required = true)]
    distinct_id: Option<Value>,
    /// Properties of the person known to the SDK, over the stored ones.
    #[schema(value_type = Option<Object>)]
    person_properties: Option<Value>,
    /// Only these flags in the answer.
    #[schema(value_type = Option<Vec<String>>)]
    flag_keys: Option<Value>,
}

/// `distinct_id` as the SDKs send it: a string, or a number (as text).
fn distinct_id(sent: Option<&Value>) -> Result<String, ApiError> {
    match sent {
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

/// `{"flags": {key: {key, enabled, variant, reason, metadata}}, …}`, serialized straight from
/// the evaluations: building it as a JSON tree first cost most of a `/flags` request's time
/// (docs/benchmarks.md). Keys in alphabetical order, as a JSON map writes them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct V2Answer<'a> {
    errors_while_computing_flags: bool,
    flags: FlagsByKey<'a>,
    quota_limited: [(); 0],
    request_id: Uuid,
}

impl<'a> V2Answer<'a> {
    fn new(evaluations: &'a [Evaluation<'a>]) -> Self {
        let mut by_key: Vec<&Evaluation> = evaluations.iter().collect();
        // Sorted by key; of two flags with one key, the later answers, as a map keeps it.
        by_key.reverse();
        by_key.sort_by(|a, b| a.key.cmp(b.key));
        by_key.dedup_by(|later, kept| later.key == kept.key);
        Self {
            errors_while_computing_flags: false,
            flags: FlagsByKey(by_key),
            quota_limited: [],
            request_id: Uuid::now_v7(),
        }
    }
}

struct FlagsByKey<'a>(Vec<&'a Evaluation<'a>>);

impl Serialize for FlagsByKey<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|e| (e.key, FlagAnswer::from(*e))))
    }
}

/// One flag's answer; fields in alphabetical order, as before it was typed.
#[derive(Serialize)]
struct FlagAnswer<'a> {
    enabled: bool,
    key: &'a str,
    metadata: Metadata<'a>,
    reason: ReasonAnswer,
    variant: Option<&'a str>,
}

#[derive(Serialize)]
struct Metadata<'a> {
    description: Option<()>,
    id: i32,
    payload: Option<&'a Value>,
    version: u8,
}

#[derive(Serialize)]
struct ReasonAnswer {
    code: &'static str,
    condition_index: Option<usize>,
    description: Cow<'static, str>,
}

impl<'a> From<&Evaluation<'a>> for FlagAnswer<'a> {
    fn from(e: &Evaluation<'a>) -> Self {
        Self {
            enabled: e.enabled,
            key: e.key,
            metadata: Metadata {
                description: None,
                id: e.flag_id.0,
                payload: e.payload,
                version: 1,
            },
            reason: ReasonAnswer {
                code: e.reason.code.as_str(),
                condition_index: e.reason.condition_index,
                description: e.reason.description(),
            },
            variant: e.variant,
        }
    }
}

/// `{"featureFlags": {key: variant or bool}, "featureFlagPayloads": {key: payload}, …}`.
fn legacy(evaluations: &[Evaluation]) -> Value {
    let values: Map<String, Value> = evaluations
        .iter()
        .map(|e| {
            let value = match (e.variant, e.enabled) {
                (Some(variant), true) => Value::String(variant.to_owned()),
                (_, enabled) => Value::Bool(enabled),
            };
            (e.key.to_owned(), value)
        })
        .collect();
    let payloads: Map<String, Value> = evaluations
        .iter()
        .filter(|e| e.enabled)
        .filter_map(|e| Some((e.key.to_owned(), e.payload?.clone())))
        .collect();
    json!({
        "featureFlags": values,
        "featureFlagPayloads": payloads,
        "errorsWhileComputingFlags": false,
        "quotaLimited": [],
        "requestId": Uuid::now_v7(),
    })
}
