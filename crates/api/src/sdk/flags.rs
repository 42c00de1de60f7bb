//! `POST /flags/?v=2`: what posthog-js (and posthog-python without local evaluation) asks on
//! every page load — the project's flags, and each survey's internal targeting flag, evaluated
//! for one person as PostHog evaluates them. Named by the project's public token; bodies come
//! packed as the SDKs pack them (gzip, base64 form, JSON).

use std::fmt;
use std::io::{self, Write as _};

use actix_web::http::header::ContentType;
use actix_web::{HttpRequest, HttpResponse, web};
use domain::ValidationError;
use domain::feature_flag::{Evaluation, FeatureFlag};
use domain::sdk::{Evaluated, FlagsRequest, SdkService, SdkSnapshot, SentProperties};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::error::Category;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;
use uuid::Uuid;

use super::SnapshotRenderings;
use super::transport::SdkBody;
use crate::error::ApiError;
use crate::settings::ApiSettings;

/// Evaluates the flags for the body's `distinct_id`, `person_properties`, `groups` and
/// `group_properties` (and `$anon_distinct_id`, after identify); answers the v2
/// shape (`flags`) for `?v=2` and above, else the legacy one (`featureFlags`).
pub(crate) async fn flags(
    request: HttpRequest,
    payload: web::Payload,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
) -> Result<HttpResponse, ApiError> {
    let version: u32 = url::form_urlencoded::parse(request.query_string().as_bytes())
        .find(|(key, _)| key == "v")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(1);
    let max_bytes = request
        .app_data::<ApiSettings>()
        .map_or(ApiSettings::DEFAULT_MAX_BODY_BYTES, |s| s.max_body_bytes);
    let body = SdkBody::read(&request, payload.into_inner(), max_bytes).await?;
    // Each field is checked below, in PostHog's order (the token before the distinct id).
    let body = FlagsBody::read(body.json())?;
    let token = [&body.token, &body.api_key]
        .into_iter()
        .find_map(|field| field.as_ref().and_then(Value::as_str));
    let snapshot = sdk.snapshot(token).await?;
    let distinct_id = distinct_id(body.distinct_id.as_ref())?;
    let person_properties = object_field("person_properties", body.person_properties)?;
    let person_properties = SentProperties::parse("person_properties", person_properties)?;
    let groups = FlagsRequest::groups_of(&object_field("groups", body.groups)?);
    let group_properties = FlagsRequest::group_properties_of(object_field(
        "group_properties",
        body.group_properties,
    )?)?;
    let anon_distinct_id = match body.anon_distinct_id {
        Some(Value::String(id)) if !id.trim().is_empty() => Some(id),
        Some(Value::Number(id)) => Some(id.to_string()),
        _ => None,
    };
    let request = FlagsRequest {
        distinct_id,
        anon_distinct_id,
        person_properties,
        groups,
        group_properties,
    };
    let wanted: Option<Vec<String>> =
        body.flag_keys
            .as_ref()
            .and_then(Value::as_array)
            .map(|keys| {
                keys.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            });
    let answer = move |snapshot: &SdkSnapshot<SnapshotRenderings>, evaluated: Evaluated| {
        let wanted = |key: &str| {
            wanted
                .as_ref()
                .is_none_or(|keys| keys.iter().any(|k| k == key))
        };
        if version >= 2 {
            v2_answer(snapshot, &evaluated, wanted)
        } else {
            serde_json::to_vec(&legacy(
                evaluated.flags.iter().flatten().filter(|e| wanted(e.key)),
                evaluated.errors,
            ))
            .map_err(io::Error::from)
        }
    };
    let body = sdk
        .answer_flags(snapshot, request, answer)
        .await?
        .map_err(|error| ApiError::internal(&error))?;
    Ok(HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(body))
}

/// What posthog-js and posthog-python send to `/flags`. Each field is read as the JSON value it
/// is and checked by the handler, so a value of the wrong type gets PostHog's error for that
/// field (a token of the wrong type counts as none).
#[derive(Debug, Default, ToSchema)]
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
    /// The person's groups: each group type's name with the group's key
    /// (`{"company": "acme"}`), for flags aggregated by group.
    #[schema(value_type = Option<Object>)]
    groups: Option<Value>,
    /// Properties of those groups known to the SDK, by group type, over the stored ones.
    #[schema(value_type = Option<Object>)]
    group_properties: Option<Value>,
    /// The id the person had before identify: their flags that ensure experience continuity
    /// keep hashing it.
    #[schema(rename = "$anon_distinct_id", value_type = Option<String>)]
    anon_distinct_id: Option<Value>,
}

impl FlagsBody {
    /// The body of the JSON text `json`.
    ///
    /// # Errors
    /// 400 `parse_error` for text that is not JSON; 400 `invalid` (`body`) for JSON that is not
    /// an object.
    fn read(json: &[u8]) -> Result<Self, ApiError> {
        let malformed = |error| ApiError::parse_error(format!("Malformed payload: {error}"));
        serde_json::from_slice(json).map_err(|error| {
            if error.classify() != Category::Data {
                return malformed(error);
            }
            // Not an object: unless the text is not JSON either, as its whole read tells.
            match serde_json::from_slice::<Value>(json) {
                Ok(_) => ValidationError::invalid("body", "The body must be a JSON object.").into(),
                Err(error) => malformed(error),
            }
        })
    }
}

/// The keys of [`FlagsBody`], read without copying them.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum FlagsField {
    Token,
    ApiKey,
    DistinctId,
    PersonProperties,
    FlagKeys,
    Groups,
    GroupProperties,
    #[serde(rename = "$anon_distinct_id")]
    AnonDistinctId,
    #[serde(other)]
    Other,
}

/// Read straight from the body's text in one pass, other keys skipped unread. Only an object
/// reads (a derived struct would read from an array too), and of a key sent twice the later
/// value counts, as a map keeps it.
impl<'de> Deserialize<'de> for FlagsBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FlagsBodyVisitor)
    }
}

struct FlagsBodyVisitor;

impl<'de> Visitor<'de> for FlagsBodyVisitor {
    type Value = FlagsBody;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FlagsBody, A::Error> {
        let mut body = FlagsBody::default();
        while let Some(key) = map.next_key()? {
            let field = match key {
                FlagsField::Token => &mut body.token,
                FlagsField::ApiKey => &mut body.api_key,
                FlagsField::DistinctId => &mut body.distinct_id,
                FlagsField::PersonProperties => &mut body.person_properties,
                FlagsField::FlagKeys => &mut body.flag_keys,
                FlagsField::Groups => &mut body.groups,
                FlagsField::GroupProperties => &mut body.group_properties,
                FlagsField::AnonDistinctId => &mut body.anon_distinct_id,
                FlagsField::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *field = Some(map.next_value()?);
        }
        Ok(body)
    }
}

/// An object field of the body: none (or `null`) reads as empty.
fn object_field(attr: &'static str, sent: Option<Value>) -> Result<Map<String, Value>, ApiError> {
    match sent {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(fields)) => Ok(fields),
        Some(_) => Err(ValidationError::invalid(attr, format!("{attr} must be an object.")).into()),
    }
}

/// `distinct_id` as the SDKs send it: a string, or a number (as text).
fn distinct_id(sent: Option<&Value>) -> Result<String, ApiError> {
    match sent {
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(id.clone()),
        Some(Value::Number(id)) => Ok(id.to_string()),
        None | Some(Value::Null) => Err(ValidationError::required("distinct_id").into()),
        Some(_) => {
            let detail = "distinct_id must be a non-empty string or a number.";
            Err(ValidationError::invalid("distinct_id", detail).into())
        }
    }
}

/// `{"errorsWhileComputingFlags":false,"flags":{key: {key, metadata, enabled, variant,
/// reason}},"quotaLimited":[],"requestId":…}`, the flags in the snapshot's answer order (by key);
/// `errorsWhileComputingFlags` is true, and the flags not computed are left out, when the
/// evaluation budget ran out or the project's flags were withheld.
///
/// Written as bytes: what a flag's entry holds for whoever asks (its key, twice, and its id) is
/// rendered once per snapshot by [`fixed_part`], and a request writes only what it evaluated.
/// Serializing whole entries for a site's dozens of flags was the largest part of a `/flags`
/// request's own time (docs/benchmarks.md).
fn v2_answer(
    snapshot: &SdkSnapshot<SnapshotRenderings>,
    evaluated: &Evaluated,
    wanted: impl Fn(&str) -> bool,
) -> io::Result<Vec<u8>> {
    let evaluations = &evaluated.flags;
    let fixed_parts = snapshot.renderings.flag_entries.get_or_init(|| {
        snapshot
            .flags
            .iter()
            .map(|flag| fixed_part(flag).into())
            .collect()
    });
    // Sized for the answer up front: grown by doubling, the buffer was copied for every
    // request.
    let fixed_bytes: usize = fixed_parts.iter().map(|part| part.len()).sum();
    let mut answer =
        Vec::with_capacity(fixed_bytes + EVALUATED_BYTES_PER_FLAG * (fixed_parts.len() + 1));
    answer.extend_from_slice(if evaluated.errors {
        br#"{"errorsWhileComputingFlags":true,"flags":{"#
    } else {
        br#"{"errorsWhileComputingFlags":false,"flags":{"#
    });
    let mut first = true;
    for &index in snapshot.answer_order() {
        let (Some(Some(evaluation)), Some(fixed_part)) =
            (evaluations.get(index), fixed_parts.get(index))
        else {
            continue;
        };
        if !wanted(evaluation.key) {
            continue;
        }
        if !std::mem::take(&mut first) {
            answer.push(b',');
        }
        answer.extend_from_slice(fixed_part);
        evaluated_part(&mut answer, evaluation)?;
    }
    let request_id = Uuid::now_v7();
    write!(
        answer,
        r#"}},"quotaLimited":[],"requestId":"{}"}}"#,
        request_id.hyphenated()
    )?;
    Ok(answer)
}

/// The most a flag's evaluated part takes without a payload or variant (`out_of_rollout_bound`
/// with its description), and the answer's own fields.
const EVALUATED_BYTES_PER_FLAG: usize = 160;

/// A flag's entry up to its first evaluated field:
/// `"key":{"key":"key","metadata":{"description":null,"id":1,"version":1,"payload":`.
fn fixed_part(flag: &FeatureFlag) -> Vec<u8> {
    let key = Value::from(flag.key.as_str());
    format!(
        r#"{key}:{{"key":{key},"metadata":{{"description":null,"id":{},"version":1,"payload":"#,
        flag.id.0
    )
    .into_bytes()
}

/// The rest of a flag's entry, what the person's evaluation decided:
/// `payload},"enabled":true,"variant":null,"reason":{"code":…,"condition_index":…,"description":…}}`.
fn evaluated_part(answer: &mut Vec<u8>, evaluation: &Evaluation) -> io::Result<()> {
    match evaluation.payload {
        None => answer.extend_from_slice(b"null"),
        Some(payload) => serde_json::to_writer(&mut *answer, payload)?,
    }
    answer.extend_from_slice(if evaluation.enabled {
        br#"},"enabled":true,"variant":"#
    } else {
        br#"},"enabled":false,"variant":"#
    });
    match evaluation.variant {
        None => answer.extend_from_slice(b"null"),
        Some(variant) => serde_json::to_writer(&mut *answer, variant)?,
    }
    let reason = evaluation.reason;
    // The code and description are PostHog's fixed words: nothing in them needs escaping.
    answer.extend_from_slice(br#","reason":{"code":""#);
    answer.extend_from_slice(reason.code.as_str().as_bytes());
    answer.extend_from_slice(br#"","condition_index":"#);
    match reason.condition_index {
        None => answer.extend_from_slice(b"null"),
        Some(index) => write!(answer, "{index}")?,
    }
    write!(answer, r#","description":"{}"}}}}"#, reason.description())
}

/// `{"featureFlags": {key: variant or bool}, "featureFlagPayloads": {key: payload}, …}`.
fn legacy<'a>(
    evaluations: impl Iterator<Item = &'a Evaluation<'a>> + Clone,
    errors: bool,
) -> Value {
    let values: Map<String, Value> = evaluations
        .clone()
        .map(|e| {
            let value = match (e.variant, e.enabled) {
                (Some(variant), true) => Value::String(variant.to_owned()),
                (_, enabled) => Value::Bool(enabled),
            };
            (e.key.to_owned(), value)
        })
        .collect();
    let payloads: Map<String, Value> = evaluations
        .filter(|e| e.enabled)
        .filter_map(|e| Some((e.key.to_owned(), e.payload?.clone())))
        .collect();
    json!({
        "featureFlags": values,
        "featureFlagPayloads": payloads,
        "errorsWhileComputingFlags": errors,
        "quotaLimited": [],
        "requestId": Uuid::now_v7(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::Utc;
    use domain::feature_flag::pattern::Patterns;
    use domain::feature_flag::{FlagFilters, FlagId, Reason, ReasonCode, ServingFlags};
    use domain::tenancy::{OrganizationId, Project, ProjectId};
    use regex::Regex;

    use super::*;

    struct NoPatterns;

    impl Patterns for NoPatterns {
        fn compiled(&self, _: &str) -> Option<Arc<Regex>> {
            None
        }
    }

    fn flag(id: i32, key: &str) -> FeatureFlag {
        FeatureFlag {
            id: FlagId(id),
            project_id: ProjectId(1),
            name: String::new(),
            key: key.to_owned(),
            filters: FlagFilters::default(),
            deleted: false,
            active: true,
            ensure_experience_continuity: false,
            is_remote_configuration: false,
            created_at: Utc::now(),
            created_by: None,
        }
    }

    fn snapshot(flags: Vec<FeatureFlag>) -> SdkSnapshot<SnapshotRenderings> {
        let project = Project {
            id: ProjectId(1),
            organization_id: OrganizationId(Uuid::nil()),
            name: String::new(),
            api_token: "phc_test".into(),
            created_at: Utc::now(),
            survey_config: None,
        };
        SdkSnapshot::new(
            project,
            ServingFlags::Loaded(flags),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            &NoPatterns,
        )
    }

    fn evaluation<'a>(flag: &'a FeatureFlag, reason: Reason) -> Evaluation<'a> {
        Evaluation {
            flag_id: flag.id,
            key: &flag.key,
            enabled: reason.code == ReasonCode::ConditionMatch,
            variant: None,
            reason,
            payload: None,
        }
    }

    /// The answer written as bytes is the JSON the typed answer was: every field, escaped where
    /// a key, variant or payload needs it, by key, of two flags with one key the later.
    #[test]
    fn the_v2_answer_holds_every_flag_by_key_with_its_evaluation() {
        let snapshot = snapshot(vec![
            flag(2, "b-flag"),
            flag(1, "a \"quoted\" \\ flag é"),
            flag(3, "b-flag"),
        ]);
        let payload = json!({"limit": [10, "ten"]});
        let mut evaluations: Vec<Evaluation> = snapshot
            .flags
            .iter()
            .map(|flag| evaluation(flag, Reason::new(ReasonCode::Disabled, None)))
            .collect();
        evaluations[1] = Evaluation {
            variant: Some("te\"st"),
            payload: Some(&payload),
            ..evaluation(
                &snapshot.flags[1],
                Reason::new(ReasonCode::ConditionMatch, Some(1)),
            )
        };

        let evaluated = Evaluated {
            flags: evaluations.into_iter().map(Some).collect(),
            errors: false,
        };
        let answer = v2_answer(&snapshot, &evaluated, |_| true).unwrap();
        let mut answer: Value = serde_json::from_slice(&answer).unwrap();

        let request_id = answer["requestId"].take();
        assert!(Uuid::parse_str(request_id.as_str().unwrap()).is_ok());
        assert_eq!(
            answer,
            json!({
                "errorsWhileComputingFlags": false,
                "flags": {
                    "a \"quoted\" \\ flag é": {
                        "key": "a \"quoted\" \\ flag é",
                        "enabled": true,
                        "variant": "te\"st",
                        "reason": {"code": "condition_match", "condition_index": 1,
                                   "description": "Matched condition set 2"},
                        "metadata": {"id": 1, "version": 1, "payload": {"limit": [10, "ten"]},
                                     "description": null},
                    },
                    "b-flag": {
                        "key": "b-flag",
                        "enabled": false,
                        "variant": null,
                        "reason": {"code": "flag_disabled", "condition_index": null,
                                   "description": "Feature flag is disabled"},
                        "metadata": {"id": 3, "version": 1, "payload": null, "description": null},
                    },
                },
                "quotaLimited": [],
                "requestId": null,
            })
        );
    }

    #[test]
    fn a_flags_body_is_an_object_whose_later_key_counts_and_other_keys_go_unread() {
        let body = FlagsBody::read(
            br#"{"token":"a","$groups":{"deep":[1,{"x":null}]},"token":"b","distinct_id":7,"$anon_distinct_id":"anon"}"#,
        )
        .unwrap();
        assert_eq!(body.token, Some(json!("b")));
        assert_eq!(body.distinct_id, Some(json!(7)));
        assert_eq!(body.api_key, None);
        assert_eq!(body.anon_distinct_id, Some(json!("anon")));

        for not_an_object in [
            &br#"["phc_token", null, "id", null, null]"#[..],
            b"7",
            b"null",
        ] {
            let error = FlagsBody::read(not_an_object).unwrap_err();
            let error = error.body();
            assert_eq!(
                (
                    error.code.as_ref(),
                    error.detail.as_str(),
                    error.attr.as_deref()
                ),
                (
                    "invalid_input",
                    "The body must be a JSON object.",
                    Some("body")
                ),
            );
        }
        for malformed in [&b"7 x"[..], b"[1,", br#"{"token":}"#] {
            let error = FlagsBody::read(malformed).unwrap_err();
            let error = error.body();
            let whole = serde_json::from_slice::<Value>(malformed).unwrap_err();
            assert_eq!(error.code, "parse_error");
            assert_eq!(error.detail, format!("Malformed payload: {whole}"));
        }
    }

    #[test]
    fn a_v2_answer_names_only_the_flags_asked_for() {
        let snapshot = snapshot(vec![flag(1, "one"), flag(2, "two"), flag(3, "three")]);
        let evaluations: Vec<Evaluation> = snapshot
            .flags
            .iter()
            .map(|flag| evaluation(flag, Reason::new(ReasonCode::NoConditionMatch, Some(0))))
            .collect();

        let evaluated = Evaluated {
            flags: evaluations.into_iter().map(Some).collect(),
            errors: false,
        };
        let written = v2_answer(&snapshot, &evaluated, |key| key != "two").unwrap();
        let text = String::from_utf8(written).unwrap();
        assert!(
            text.find(r#""one":"#) < text.find(r#""three":"#),
            "by key: {text}"
        );
        let answer: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = answer["flags"].as_object().unwrap().keys().collect();

        assert_eq!(keys, ["one", "three"]);
        assert_eq!(
            answer["flags"]["one"]["reason"]["description"],
            "No matching condition set"
        );
        let nothing = v2_answer(&snapshot, &evaluated, |_| false).unwrap();
        let nothing: Value = serde_json::from_slice(&nothing).unwrap();
        assert_eq!(nothing["flags"], json!({}));
    }
}
