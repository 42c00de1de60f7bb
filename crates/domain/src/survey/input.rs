//! A survey request body read into typed, validated fields, in the serializer's field order
//! so the first error reported is the one PostHog would report.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::iterations::MAX_FREQUENCY_DAYS;
use super::questions::parse_questions;
use super::settings::{parse_appearance, parse_conditions};
use super::{Schedule, SurveyType};
use crate::error::{ValidationCode, ValidationError};
use crate::feature_flag::FlagId;
use crate::input::{Fields, Patch, not_null};

/// Longest survey name.
pub const MAX_NAME_CHARS: usize = 400;

/// The fields of a create/update body, each validated on its own. Cross-field rules run later,
/// against the stored survey.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SurveyInput {
    pub name: Patch<String>,
    pub description: Patch<String>,
    pub survey_type: Patch<SurveyType>,
    pub schedule: Patch<Schedule>,
    pub linked_flag_id: Patch<FlagId>,
    pub targeting_flag_id: Patch<FlagId>,
    /// `None` for absent, null or `{}`: no targeting change.
    pub targeting_flag_filters: Option<Map<String, Value>>,
    pub remove_targeting_flag: bool,
    pub questions: Patch<Value>,
    pub conditions: Patch<Map<String, Value>>,
    pub appearance: Patch<Map<String, Value>>,
    pub start_date: Patch<DateTime<Utc>>,
    pub end_date: Patch<DateTime<Utc>>,
    pub archived: Option<bool>,
    pub responses_limit: Patch<i32>,
    pub iteration_count: Patch<i32>,
    pub iteration_frequency_days: Patch<i32>,
    pub enable_partial_responses: Patch<bool>,
}

impl SurveyInput {
    /// Reads a body.
    ///
    /// # Errors
    /// The first invalid field.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        Ok(Self {
            name: parse_name(&fields)?,
            description: match fields.string("description")? {
                Patch::Null => return Err(not_null("description")),
                other => other,
            },
            survey_type: parse_type(&fields)?,
            schedule: parse_schedule(&fields)?,
            linked_flag_id: fields.integer("linked_flag_id")?.map(to_flag_id),
            targeting_flag_id: fields.integer("targeting_flag_id")?.map(to_flag_id),
            targeting_flag_filters: parse_targeting_filters(&fields)?,
            remove_targeting_flag: fields
                .boolean("remove_targeting_flag")?
                .value()
                .unwrap_or(false),
            questions: match fields.raw("questions") {
                Patch::Value(value) => Patch::Value(parse_questions(value)?),
                Patch::Null => Patch::Null,
                Patch::Absent => Patch::Absent,
            },
            conditions: match fields.raw("conditions") {
                Patch::Value(value) => Patch::Value(parse_conditions(value)?),
                Patch::Null => Patch::Null,
                Patch::Absent => Patch::Absent,
            },
            appearance: match fields.raw("appearance") {
                Patch::Value(value) => Patch::Value(parse_appearance(value)?),
                Patch::Null => Patch::Null,
                Patch::Absent => Patch::Absent,
            },
            start_date: fields.datetime("start_date")?,
            end_date: fields.datetime("end_date")?,
            archived: match fields.boolean("archived")? {
                Patch::Null => return Err(not_null("archived")),
                other => other.value(),
            },
            responses_limit: fields.bounded_integer("responses_limit", 0, i64::from(i32::MAX))?,
            iteration_count: fields.bounded_integer("iteration_count", 0, 500)?,
            iteration_frequency_days: fields.bounded_integer(
                "iteration_frequency_days",
                0,
                i64::from(MAX_FREQUENCY_DAYS),
            )?,
            enable_partial_responses: fields.boolean("enable_partial_responses")?,
        })
    }
}

fn to_flag_id(id: i64) -> FlagId {
    // Ids outside i32 cannot exist; -1 finds nothing and reports "does not exist".
    FlagId(i32::try_from(id).unwrap_or(-1))
}

fn parse_name(fields: &Fields<'_>) -> Result<Patch<String>, ValidationError> {
    match fields.string("name")? {
        Patch::Value(name) => {
            let name = name.trim().to_owned();
            if name.is_empty() {
                return Err(ValidationError::field(
                    "name",
                    ValidationCode::Blank,
                    "This field may not be blank.",
                ));
            }
            if name.chars().count() > MAX_NAME_CHARS {
                return Err(ValidationError::field(
                    "name",
                    ValidationCode::MaxLength,
                    format!("Ensure this field has no more than {MAX_NAME_CHARS} characters."),
                ));
            }
            Ok(Patch::Value(name))
        }
        Patch::Null => Err(not_null("name")),
        Patch::Absent => Ok(Patch::Absent),
    }
}

fn parse_type(fields: &Fields<'_>) -> Result<Patch<SurveyType>, ValidationError> {
    match fields.raw("type") {
        Patch::Absent => Ok(Patch::Absent),
        Patch::Null => Err(not_null("type")),
        Patch::Value(value) => {
            let raw = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            SurveyType::parse(&raw).map(Patch::Value).ok_or_else(|| {
                ValidationError::field(
                    "type",
                    ValidationCode::InvalidChoice,
                    format!("\"{raw}\" is not a valid choice."),
                )
            })
        }
    }
}

fn parse_schedule(fields: &Fields<'_>) -> Result<Patch<Schedule>, ValidationError> {
    match fields.raw("schedule") {
        Patch::Absent => Ok(Patch::Absent),
        Patch::Null => Ok(Patch::Value(Schedule::Once)),
        Patch::Value(value) => value
            .as_str()
            .and_then(Schedule::parse)
            .map(Patch::Value)
            .ok_or_else(|| {
                ValidationError::field(
                    "schedule",
                    ValidationCode::Invalid,
                    "Schedule must be one of: once, recurring, always",
                )
            }),
    }
}

fn parse_targeting_filters(
    fields: &Fields<'_>,
) -> Result<Option<Map<String, Value>>, ValidationError> {
    match fields.raw("targeting_flag_filters") {
        Patch::Absent | Patch::Null => Ok(None),
        Patch::Value(Value::Object(filters)) if filters.is_empty() => Ok(None),
        Patch::Value(Value::Object(filters)) => Ok(Some(filters.clone())),
        Patch::Value(_) => Err(ValidationError::field(
            "targeting_flag_filters",
            ValidationCode::Invalid,
            "Targeting flag filters must be an object",
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: Value) -> Result<SurveyInput, ValidationError> {
        SurveyInput::parse(value.as_object().unwrap())
    }

    #[test]
    fn names_are_trimmed_and_must_not_be_blank_or_too_long() {
        assert_eq!(
            parse(json!({"name": "  Hi  "})).unwrap().name,
            Patch::Value("Hi".into())
        );
        let blank = parse(json!({"name": "   "})).unwrap_err();
        assert_eq!(
            (blank.code, blank.detail.as_str()),
            (ValidationCode::Blank, "This field may not be blank.")
        );
        let long = parse(json!({"name": "x".repeat(401)})).unwrap_err();
        assert_eq!(
            long.detail,
            "Ensure this field has no more than 400 characters."
        );
        assert!(parse(json!({"name": "x".repeat(400)})).is_ok());
    }

    #[test]
    fn types_are_a_closed_list() {
        let error = parse(json!({"type": "bogus"})).unwrap_err();
        assert_eq!(
            (error.code, error.detail.as_str()),
            (
                ValidationCode::InvalidChoice,
                "\"bogus\" is not a valid choice."
            )
        );
        for kind in [
            "popover",
            "widget",
            "button",
            "email",
            "full_screen",
            "api",
            "external_survey",
        ] {
            assert!(parse(json!({"type": kind})).is_ok(), "{kind}");
        }
    }

    #[test]
    fn the_first_invalid_field_in_serializer_order_is_reported() {
        let error = parse(json!({"type": "bogus", "name": ""})).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("name"));
    }

    #[test]
    fn schedule_and_iteration_count_are_bounded() {
        assert_eq!(
            parse(json!({"schedule": "weekly"})).unwrap_err().detail,
            "Schedule must be one of: once, recurring, always"
        );
        assert_eq!(
            parse(json!({"iteration_count": 501})).unwrap_err().detail,
            "Ensure this value is less than or equal to 500."
        );
        assert_eq!(
            parse(json!({"responses_limit": -1})).unwrap_err().detail,
            "Ensure this value is greater than or equal to 0."
        );
    }

    #[test]
    fn empty_targeting_filters_mean_no_targeting() {
        assert_eq!(
            parse(json!({"targeting_flag_filters": {}}))
                .unwrap()
                .targeting_flag_filters,
            None
        );
        assert_eq!(
            parse(json!({"targeting_flag_filters": null}))
                .unwrap()
                .targeting_flag_filters,
            None
        );
        assert!(parse(json!({"targeting_flag_filters": []})).is_err());
    }

    #[test]
    fn bad_dates_use_drfs_message() {
        let error = parse(json!({"start_date": "garbage"})).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("start_date"));
        assert!(error.detail.starts_with("Datetime has wrong format."));
    }
}
