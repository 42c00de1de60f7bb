//! A project's PATCH body read into [`ProjectWrite`] — also its schema in the OpenAPI document —
//! and from there into the domain's changes. PostHog's project serializer takes dozens of
//! fields; Burrow writes one, `survey_config`, and refuses the others rather than ignore them.

use domain::ValidationError;
use domain::patch::Patch;
use domain::tenancy::{ProjectChanges, SurveyConfig};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::fields::Fields;

/// The fields of a project a PATCH may change.
const WRITABLE: [&str; 1] = ["survey_config"];

/// A change of a project: any subset of its writable fields.
#[derive(ToSchema)]
pub(crate) struct ProjectWrite {
    /// Settings every survey of the project shares, merged onto the stored ones (the keys sent
    /// replace the stored ones, the others stay); `null` clears them. PostHog's keys:
    /// `appearance` (any object) and `seenSurveyWaitPeriodInDays` (a whole number of days,
    /// 0–365: the project-wide wait between two surveys shown to one person). At most 65,536
    /// bytes as JSON, merged.
    #[schema(value_type = Option<Object>, nullable = true)]
    survey_config: Patch<SurveyConfig>,
}

impl ProjectWrite {
    /// Reads a body.
    ///
    /// # Errors
    /// A field Burrow does not write (the first in name order), then an invalid
    /// `survey_config`.
    fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        if let Some(field) = body.keys().find(|key| !WRITABLE.contains(&key.as_str())) {
            return Err(ValidationError::invalid(
                field.clone(),
                "Burrow does not change this field of a project: a PATCH takes survey_config \
                 only.",
            ));
        }
        Ok(Self {
            survey_config: Fields(body)
                .raw("survey_config")
                .try_map(|config| SurveyConfig::parse(config.clone()))?,
        })
    }
}

/// Reads a PATCH body into the changes it asks for.
///
/// # Errors
/// As [`ProjectWrite::read`].
pub(super) fn project_changes(
    body: &Map<String, Value>,
) -> Result<ProjectChanges, ValidationError> {
    let write = ProjectWrite::read(body)?;
    Ok(ProjectChanges {
        survey_config: write.survey_config,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(body: Value) -> Result<ProjectChanges, ValidationError> {
        project_changes(body.as_object().unwrap())
    }

    #[test]
    fn survey_config_is_absent_null_or_a_config() {
        assert_eq!(read(json!({})).unwrap(), ProjectChanges::default());
        assert_eq!(
            read(json!({"survey_config": null})).unwrap().survey_config,
            Patch::Null
        );
        assert_eq!(
            read(json!({"survey_config": {"appearance": {}}}))
                .unwrap()
                .survey_config,
            Patch::Value(SurveyConfig::parse(json!({"appearance": {}})).unwrap())
        );
        let refused = read(json!({"survey_config": []})).unwrap_err();
        assert_eq!(
            (refused.attr.as_deref(), refused.detail.as_str()),
            (Some("survey_config"), "Must be an object.")
        );
    }

    #[test]
    fn any_other_field_is_refused_by_name() {
        let refused = read(json!({"survey_config": null, "name": "Renamed"})).unwrap_err();
        assert_eq!(
            (refused.attr.as_deref(), refused.code.as_str()),
            (Some("name"), "invalid_input")
        );
        let refused = read(json!({"session_recording_opt_in": true})).unwrap_err();
        assert_eq!(refused.attr.as_deref(), Some("session_recording_opt_in"));
    }
}
