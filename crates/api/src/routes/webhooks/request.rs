//! A webhook request body read into [`WebhookWrite`] — also its schema in the OpenAPI document —
//! and from there into the domain's settings or changes.

use domain::ValidationError;
use domain::patch::Patch;
use domain::survey::SurveyId;
use domain::webhook::{WebhookChanges, WebhookEvent, WebhookFormat, WebhookSettings};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::fields::{Fields, non_null, not_a_choice};

/// Longest description kept.
const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// Most event names one body may list (there are three; repeats are allowed and dropped).
const MAX_EVENTS: usize = 10;

/// Most surveys one webhook may filter on.
const MAX_SURVEYS: usize = 100;

/// A webhook to create (`url` and `events` required) or change (any subset).
#[derive(ToSchema)]
pub(crate) struct WebhookWrite {
    /// `https` (plain `http` and non-public addresses only where the operator allows them), on
    /// port 443, 80 or 1024–65535 but well-known services' (or the operator's list).
    #[schema(value_type = Option<String>, nullable = false, max_length = 2000)]
    url: Option<String>,
    /// Any of `survey_response.created`, `survey_response.updated`, `survey_response.completed`.
    #[schema(value_type = Option<Vec<String>>, nullable = false)]
    events: Option<Vec<WebhookEvent>>,
    /// Only responses to these surveys of the project; `null` or absent: every survey.
    #[schema(value_type = Option<Vec<uuid::Uuid>>, nullable = true, max_items = 100)]
    survey_ids: Patch<Vec<SurveyId>>,
    /// `standard` (Standard Webhooks JSON, the default) or `slack` (an incoming-webhook message).
    #[schema(value_type = Option<String>, nullable = false)]
    format: Option<WebhookFormat>,
    /// Enabling a webhook Burrow disabled also clears `disabled_reason`.
    #[schema(nullable = false)]
    enabled: Option<bool>,
    #[schema(nullable = false, max_length = 1000)]
    description: Option<String>,
}

impl WebhookWrite {
    /// Reads a body; `required` names the fields a create must have.
    fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        Ok(Self {
            url: non_null(fields.string("url")?, "url")?,
            events: non_null(fields.raw("events"), "events")?
                .map(events)
                .transpose()?,
            survey_ids: fields.raw("survey_ids").try_map(surveys)?,
            format: non_null(fields.raw("format"), "format")?
                .map(format)
                .transpose()?,
            enabled: non_null(fields.boolean("enabled")?, "enabled")?,
            description: non_null(
                fields.bounded_string("description", MAX_DESCRIPTION_CHARS)?,
                "description",
            )?,
        })
    }
}

fn events(value: &Value) -> Result<Vec<WebhookEvent>, ValidationError> {
    let items = value
        .as_array()
        .ok_or_else(|| ValidationError::invalid("events", "Expected a list of event names."))?;
    if items.len() > MAX_EVENTS {
        return Err(ValidationError::invalid(
            "events",
            format!("Ensure this field has no more than {MAX_EVENTS} elements."),
        ));
    }
    items
        .iter()
        .map(|item| {
            item.as_str()
                .and_then(WebhookEvent::parse)
                .ok_or_else(|| not_a_choice("events", item))
        })
        .collect()
}

fn surveys(value: &Value) -> Result<Vec<SurveyId>, ValidationError> {
    let invalid = |detail: &str| ValidationError::invalid("survey_ids", detail);
    let items = value
        .as_array()
        .ok_or_else(|| invalid("Expected a list of survey ids."))?;
    if items.len() > MAX_SURVEYS {
        return Err(invalid(&format!(
            "Ensure this field has no more than {MAX_SURVEYS} elements."
        )));
    }
    items
        .iter()
        .map(|item| {
            item.as_str()
                .and_then(|text| Uuid::parse_str(text).ok())
                .map(SurveyId)
                .ok_or_else(|| invalid("Must be a valid UUID."))
        })
        .collect()
}

fn format(value: &Value) -> Result<WebhookFormat, ValidationError> {
    value
        .as_str()
        .and_then(WebhookFormat::parse)
        .ok_or_else(|| not_a_choice("format", value))
}

/// Reads a create body: `url` and `events` required; enabled, standard, every survey by default.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_webhook(body: &Map<String, Value>) -> Result<WebhookSettings, ValidationError> {
    let write = WebhookWrite::read(body)?;
    Ok(WebhookSettings {
        url: write.url.ok_or_else(|| ValidationError::required("url"))?,
        events: write
            .events
            .ok_or_else(|| ValidationError::required("events"))?,
        survey_ids: write.survey_ids.value(),
        format: write.format.unwrap_or_default(),
        enabled: write.enabled.unwrap_or(true),
        description: write.description.unwrap_or_default(),
    })
}

/// Reads a PATCH body: only the fields sent change; `survey_ids: null` means every survey.
///
/// # Errors
/// The first invalid field.
pub(super) fn webhook_changes(
    body: &Map<String, Value>,
) -> Result<WebhookChanges, ValidationError> {
    let write = WebhookWrite::read(body)?;
    Ok(WebhookChanges {
        url: write.url,
        events: write.events,
        survey_ids: match write.survey_ids {
            Patch::Absent => None,
            Patch::Null => Some(None),
            Patch::Value(ids) => Some(Some(ids)),
        },
        format: write.format,
        enabled: write.enabled,
        description: write.description,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use domain::error::ValidationCode;

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_webhook_needs_a_url_and_events_and_gets_defaults() {
        assert_eq!(
            new_webhook(&body(json!({"events": ["survey_response.created"]})))
                .unwrap_err()
                .attr
                .as_deref(),
            Some("url")
        );
        let settings = new_webhook(&body(
            json!({"url": "https://x.example", "events": ["survey_response.completed"]}),
        ))
        .unwrap();
        assert_eq!(settings.format, WebhookFormat::Standard);
        assert!(settings.enabled);
        assert_eq!(settings.survey_ids, None);
    }

    #[test]
    fn unknown_events_formats_and_malformed_survey_ids_are_refused() {
        for (value, attr, code) in [
            (
                json!({"events": ["survey_response.deleted"]}),
                "events",
                ValidationCode::InvalidChoice,
            ),
            (
                json!({"events": "survey_response.created"}),
                "events",
                ValidationCode::Invalid,
            ),
            (
                json!({"format": "xml"}),
                "format",
                ValidationCode::InvalidChoice,
            ),
            (
                json!({"survey_ids": ["nope"]}),
                "survey_ids",
                ValidationCode::Invalid,
            ),
            (
                json!({"survey_ids": vec![Uuid::nil(); 101]}),
                "survey_ids",
                ValidationCode::Invalid,
            ),
            (json!({"url": null}), "url", ValidationCode::Null),
        ] {
            let error = webhook_changes(&body(value.clone())).unwrap_err();
            assert_eq!(
                (error.attr.as_deref(), error.code),
                (Some(attr), code),
                "{value}"
            );
        }
    }

    #[test]
    fn a_null_survey_filter_means_every_survey_again() {
        let changes = webhook_changes(&body(json!({"survey_ids": null}))).unwrap();
        assert_eq!(changes.survey_ids, Some(None));
        assert_eq!(
            webhook_changes(&body(json!({}))).unwrap(),
            WebhookChanges::default()
        );
    }
}
