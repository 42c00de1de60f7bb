//! A survey request body read into [`SurveyWrite`], field by field in the serializer's order so
//! the first error reported is the one PostHog would report, and from there into the domain's
//! command. `SurveyWrite` is also the body's schema in the OpenAPI document, its limits read
//! from the same domain constants the reader enforces.

use chrono::{DateTime, Utc};
use domain::ValidationError;
use domain::feature_flag::{FlagFiltersPatch, FlagId};
use domain::patch::Patch;
use domain::survey::{
    Appearance, Conditions, FormContent, MAX_FREQUENCY_DAYS, MAX_ITERATIONS, MAX_LANGUAGE_CHARS,
    MAX_NAME_CHARS, Questions, SamplingChanges, SamplingIntervalType, Schedule, SentBaseLanguage,
    SurveyChanges, SurveyName, SurveyTranslations, SurveyType,
};
use domain::tenancy::ProjectId;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::ObjectBuilder;

use crate::contract::schemas::{self, integer_within, text};
use crate::contract::survey_shapes;
use crate::fields::{Fields, non_null, not_a_choice, not_null};

/// A survey to create (POST: `name` and `type` required), replace (PUT: likewise) or change
/// (PATCH: any subset).
#[derive(ToSchema)]
pub(crate) struct SurveyWrite {
    #[schema(schema_with = name_schema, required = false)]
    name: Patch<SurveyName>,
    #[schema(value_type = Option<String>, nullable = false)]
    description: Patch<String>,
    #[schema(rename = "type", value_type = schemas::SurveyType, required = false)]
    survey_type: Patch<SurveyType>,
    /// `null` means `once`.
    #[schema(value_type = Option<schemas::SurveySchedule>)]
    schedule: Patch<Schedule>,
    /// A live flag of the same project; `null` unlinks.
    #[schema(value_type = Option<i32>)]
    linked_flag_id: Patch<FlagId>,
    /// Adopts a live flag of the same project as targeting flag; `null` lets go of it.
    #[schema(value_type = Option<i32>)]
    targeting_flag_id: Patch<FlagId>,
    /// Filters for the survey's own targeting flag (`{}` or `null`: none).
    #[schema(value_type = Option<crate::contract::flag_filter_shapes::FlagFiltersShape>)]
    targeting_flag_filters: Option<FlagFiltersPatch>,
    /// Deletes the survey's own targeting flag (an adopted one is only detached).
    remove_targeting_flag: Option<bool>,
    #[schema(value_type = Option<Vec<survey_shapes::SurveyQuestion>>)]
    questions: Patch<Questions>,
    #[schema(value_type = Option<survey_shapes::SurveyConditions>)]
    conditions: Patch<Conditions>,
    #[schema(value_type = Option<survey_shapes::SurveyAppearance>)]
    appearance: Patch<Appearance>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    start_date: Patch<DateTime<Utc>>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    end_date: Patch<DateTime<Utc>>,
    #[schema(nullable = false)]
    archived: Option<bool>,
    #[schema(schema_with = responses_limit_schema, required = false)]
    responses_limit: Patch<i32>,
    #[schema(schema_with = iteration_count_schema, required = false)]
    iteration_count: Patch<i32>,
    #[schema(schema_with = iteration_frequency_schema, required = false)]
    iteration_frequency_days: Patch<i32>,
    /// Today (UTC) or later.
    #[schema(value_type = Option<DateTime<Utc>>)]
    response_sampling_start_date: Patch<DateTime<Utc>>,
    /// `day`, `week` (the default) or `month`; `""` and `null` turn sampling off.
    #[schema(value_type = Option<String>)]
    response_sampling_interval_type: Patch<SamplingIntervalType>,
    /// The period's length in units of `response_sampling_interval_type`, at most
    /// 365 days in all.
    #[schema(schema_with = sampling_count_schema, required = false)]
    response_sampling_interval: Patch<i32>,
    /// The responses wanted over the period.
    #[schema(schema_with = sampling_count_schema, required = false)]
    response_sampling_limit: Patch<i32>,
    #[schema(value_type = Option<bool>)]
    enable_partial_responses: Patch<bool>,
    /// Lets other sites frame the survey's hosted page (`external_survey`).
    #[schema(value_type = Option<bool>)]
    enable_iframe_embedding: Patch<bool>,
    /// PostHog links a survey to one of its insights; Burrow has none, so only `null` (or
    /// leaving it out) is accepted.
    #[schema(value_type = Option<i64>)]
    #[expect(
        dead_code,
        reason = "described for the OpenAPI document; read only to refuse a value"
    )]
    linked_insight_id: Option<()>,
    /// A BCP-47 code (`en`, `es-MX`), stored normalised (`es-mx`); blank is `en`.
    #[schema(value_type = Option<String>, nullable = false, max_length = 20)]
    base_language: Option<SentBaseLanguage>,
    #[schema(value_type = Option<survey_shapes::SurveyTranslations>)]
    translations: Patch<SurveyTranslations>,
    /// The form builder's layout: any JSON, kept as sent.
    #[schema(value_type = Option<Object>)]
    form_content: Patch<FormContent>,
}

/// The most responses a survey may be limited to: what the column holds.
const MAX_RESPONSES_LIMIT: i32 = i32::MAX;

fn name_schema() -> ObjectBuilder {
    text(MAX_NAME_CHARS, false)
        .min_length(Some(1))
        .description(Some(format!(
            "Unique in the project; trimmed; at most {MAX_NAME_CHARS} characters."
        )))
}

fn responses_limit_schema() -> ObjectBuilder {
    integer_within(0, MAX_RESPONSES_LIMIT.into(), true)
}

fn iteration_count_schema() -> ObjectBuilder {
    integer_within(0, MAX_ITERATIONS.into(), true)
}

fn iteration_frequency_schema() -> ObjectBuilder {
    integer_within(0, MAX_FREQUENCY_DAYS.into(), true)
}

fn sampling_count_schema() -> ObjectBuilder {
    integer_within(0, i32::MAX.into(), true)
}

impl SurveyWrite {
    /// Reads a create or update body; its JSON objects are moved into their types, not copied.
    ///
    /// # Errors
    /// The first invalid field.
    pub(super) fn read(mut body: Map<String, Value>) -> Result<Self, ValidationError> {
        let questions = take_json(&mut body, "questions");
        let conditions = take_json(&mut body, "conditions");
        let appearance = take_json(&mut body, "appearance");
        let translations = take_json(&mut body, "translations");
        let form_content = take_json(&mut body, "form_content");
        let fields = Fields(&body);
        Ok(Self {
            name: match fields.string("name")? {
                Patch::Null => return Err(not_null("name")),
                name => name.try_map(|name| SurveyName::parse(&name))?,
            },
            description: match fields.string("description")? {
                Patch::Null => return Err(not_null("description")),
                other => other,
            },
            survey_type: parse_type(&fields)?,
            schedule: parse_schedule(&fields)?,
            linked_flag_id: fields.integer("linked_flag_id")?.map(to_flag_id),
            targeting_flag_id: fields.integer("targeting_flag_id")?.map(to_flag_id),
            targeting_flag_filters: parse_targeting_filters(&fields)?,
            remove_targeting_flag: fields.boolean("remove_targeting_flag")?.value(),
            questions: questions.try_map(Questions::parse)?,
            conditions: conditions.try_map(Conditions::parse)?,
            appearance: appearance.try_map(Appearance::parse)?,
            start_date: fields.datetime("start_date")?,
            end_date: fields.datetime("end_date")?,
            archived: non_null(fields.boolean("archived")?, "archived")?,
            responses_limit: fields.bounded_integer(
                "responses_limit",
                0,
                MAX_RESPONSES_LIMIT.into(),
            )?,
            iteration_count: fields.bounded_integer("iteration_count", 0, MAX_ITERATIONS.into())?,
            iteration_frequency_days: fields.bounded_integer(
                "iteration_frequency_days",
                0,
                MAX_FREQUENCY_DAYS.into(),
            )?,
            response_sampling_start_date: fields.datetime("response_sampling_start_date")?,
            response_sampling_interval_type: parse_interval_type(&fields)?,
            response_sampling_interval: fields.bounded_integer(
                "response_sampling_interval",
                0,
                i32::MAX.into(),
            )?,
            response_sampling_limit: fields.bounded_integer(
                "response_sampling_limit",
                0,
                i32::MAX.into(),
            )?,
            enable_partial_responses: fields.boolean("enable_partial_responses")?,
            enable_iframe_embedding: fields.boolean("enable_iframe_embedding")?,
            linked_insight_id: no_insight(&fields)?,
            base_language: non_null(
                fields.bounded_string("base_language", MAX_LANGUAGE_CHARS)?,
                "base_language",
            )?
            .map(SentBaseLanguage::parse)
            .transpose()?,
            translations: translations.try_map(SurveyTranslations::parse)?,
            form_content: form_content.try_map(FormContent::parse)?,
        })
    }

    /// `remove_targeting_flag` as sent (`None` when absent): responses echo it.
    pub(super) fn remove_targeting_flag(&self) -> Option<bool> {
        self.remove_targeting_flag
    }

    /// The domain's command.
    pub(super) fn into_changes(self) -> SurveyChanges {
        SurveyChanges {
            name: self.name,
            description: self.description,
            survey_type: self.survey_type,
            schedule: self.schedule,
            linked_flag_id: self.linked_flag_id,
            targeting_flag_id: self.targeting_flag_id,
            targeting_flag_filters: self.targeting_flag_filters,
            remove_targeting_flag: self.remove_targeting_flag.unwrap_or(false),
            questions: self.questions,
            conditions: self.conditions,
            appearance: self.appearance,
            start_date: self.start_date,
            end_date: self.end_date,
            archived: self.archived,
            responses_limit: self.responses_limit,
            iteration_count: self.iteration_count,
            iteration_frequency_days: self.iteration_frequency_days,
            enable_partial_responses: self.enable_partial_responses,
            enable_iframe_embedding: self.enable_iframe_embedding,
            response_sampling: SamplingChanges {
                start_date: self.response_sampling_start_date,
                interval_type: self.response_sampling_interval_type,
                interval: self.response_sampling_interval,
                limit: self.response_sampling_limit,
            },
            form_content: self.form_content,
            base_language: self.base_language,
            translations: self.translations,
        }
    }
}

/// The field `name` moved out of `body`: absent, null, or its value.
fn take_json(body: &mut Map<String, Value>, name: &str) -> Patch<Value> {
    match body.remove(name) {
        None => Patch::Absent,
        Some(Value::Null) => Patch::Null,
        Some(value) => Patch::Value(value),
    }
}

/// `linked_insight_id`: a valid integer, as PostHog reads it, naming an insight of the project,
/// which Burrow never has (PostHog's message for an unknown one).
fn no_insight(fields: &Fields<'_>) -> Result<Option<()>, ValidationError> {
    match fields.integer("linked_insight_id")? {
        Patch::Value(_) => Err(ValidationError::invalid_input(
            "Insight with this ID does not exist",
        )),
        Patch::Absent | Patch::Null => Ok(None),
    }
}

fn to_flag_id(id: i64) -> FlagId {
    // Ids outside i32 cannot exist; -1 finds nothing and reports "does not exist".
    FlagId(i32::try_from(id).unwrap_or(-1))
}

fn parse_type(fields: &Fields<'_>) -> Result<Patch<SurveyType>, ValidationError> {
    match fields.raw("type") {
        Patch::Absent => Ok(Patch::Absent),
        Patch::Null => Err(not_null("type")),
        Patch::Value(value) => value
            .as_str()
            .and_then(SurveyType::parse)
            .map(Patch::Value)
            .ok_or_else(|| not_a_choice("type", value)),
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
                ValidationError::invalid(
                    "schedule",
                    "Schedule must be one of: once, recurring, always",
                )
            }),
    }
}

/// `response_sampling_interval_type`: one of PostHog's choices; blank, as PostHog's column
/// allows, is no unit, as null is.
fn parse_interval_type(
    fields: &Fields<'_>,
) -> Result<Patch<SamplingIntervalType>, ValidationError> {
    const ATTR: &str = "response_sampling_interval_type";
    match fields.raw(ATTR) {
        Patch::Absent => Ok(Patch::Absent),
        Patch::Null => Ok(Patch::Null),
        Patch::Value(Value::String(blank)) if blank.is_empty() => Ok(Patch::Null),
        Patch::Value(value) => value
            .as_str()
            .and_then(SamplingIntervalType::parse)
            .map(Patch::Value)
            .ok_or_else(|| not_a_choice(ATTR, value)),
    }
}

fn parse_targeting_filters(
    fields: &Fields<'_>,
) -> Result<Option<FlagFiltersPatch>, ValidationError> {
    match fields.raw("targeting_flag_filters") {
        Patch::Absent | Patch::Null => Ok(None),
        Patch::Value(Value::Object(filters)) if filters.is_empty() => Ok(None),
        Patch::Value(Value::Object(filters)) => FlagFiltersPatch::parse(filters).map(Some),
        Patch::Value(_) => Err(ValidationError::invalid(
            "targeting_flag_filters",
            "Targeting flag filters must be an object",
        )),
    }
}

/// PostHog's message for every malformed `target_team_ids`.
const TARGETS_INVALID: &str = "target_team_ids must be a non-empty list of team IDs";

/// `duplicate_to_projects`: the projects to copy the survey into.
#[derive(ToSchema)]
pub(crate) struct DuplicateToProjects {
    // In the body's order.
    #[schema(value_type = Vec<i64>, min_items = 1)]
    pub target_team_ids: Vec<ProjectId>,
}

impl DuplicateToProjects {
    /// Reads a `duplicate_to_projects` body.
    ///
    /// # Errors
    /// `target_team_ids` absent, not a list, empty, or holding anything but integers.
    pub(super) fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let invalid = || ValidationError::invalid("target_team_ids", TARGETS_INVALID);
        let ids = body
            .get("target_team_ids")
            .and_then(Value::as_array)
            .filter(|ids| !ids.is_empty())
            .ok_or_else(invalid)?;
        let target_team_ids = ids
            .iter()
            .map(|id| {
                // Ids outside i32 cannot exist; -1 names no project and is refused as
                // unreachable.
                id.as_i64()
                    .map(|id| ProjectId(i32::try_from(id).unwrap_or(-1)))
                    .ok_or_else(invalid)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { target_team_ids })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use domain::error::ValidationCode;

    fn parse(value: Value) -> Result<SurveyChanges, ValidationError> {
        SurveyWrite::read(value.as_object().unwrap().clone()).map(SurveyWrite::into_changes)
    }

    #[test]
    fn target_team_ids_must_be_a_non_empty_list_of_integers() {
        let ids = |body: Value| {
            DuplicateToProjects::read(body.as_object().unwrap()).map(|read| read.target_team_ids)
        };
        assert_eq!(
            ids(json!({"target_team_ids": [3, 1, 99999999999_i64]})).unwrap(),
            [ProjectId(3), ProjectId(1), ProjectId(-1)]
        );
        for body in [
            json!({}),
            json!({"target_team_ids": null}),
            json!({"target_team_ids": []}),
            json!({"target_team_ids": 3}),
            json!({"target_team_ids": "3"}),
            json!({"target_team_ids": [1, "2"]}),
            json!({"target_team_ids": [1.5]}),
            json!({"target_team_ids": [true]}),
        ] {
            let error = ids(body.clone()).unwrap_err();
            assert_eq!(
                (error.attr.as_deref(), error.detail.as_str(), error.code),
                (
                    Some("target_team_ids"),
                    "target_team_ids must be a non-empty list of team IDs",
                    ValidationCode::Invalid
                ),
                "{body}"
            );
        }
    }

    #[test]
    fn names_are_trimmed_and_must_not_be_null_blank_or_too_long() {
        assert_eq!(
            parse(json!({"name": "  Hi  "})).unwrap().name,
            Patch::Value(SurveyName::parse("Hi").unwrap())
        );
        assert_eq!(
            parse(json!({"name": null})).unwrap_err().detail,
            "This field may not be null."
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
        for kind in SurveyType::ALL {
            assert!(parse(json!({"type": kind.as_str()})).is_ok(), "{kind}");
        }
    }

    #[test]
    fn the_first_invalid_field_in_serializer_order_is_reported() {
        let error = parse(json!({"type": "bogus", "name": ""})).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("name"));
        let error = parse(json!({"start_date": "x", "questions": "not a list"})).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("questions"));
    }

    #[test]
    fn schedule_iteration_count_and_frequency_are_bounded() {
        assert_eq!(
            parse(json!({"schedule": "weekly"})).unwrap_err().detail,
            "Schedule must be one of: once, recurring, always"
        );
        assert_eq!(
            parse(json!({"iteration_count": 501})).unwrap_err().detail,
            "Ensure this value is less than or equal to 500."
        );
        assert_eq!(
            parse(json!({"iteration_frequency_days": 2_147_483_647}))
                .unwrap_err()
                .detail,
            "Ensure this value is less than or equal to 3650."
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

    #[test]
    fn absent_null_and_values_stay_apart() {
        let changes = parse(json!({"end_date": null, "linked_flag_id": 3})).unwrap();
        assert_eq!(changes.end_date, Patch::Null);
        assert_eq!(changes.start_date, Patch::Absent);
        assert_eq!(changes.linked_flag_id, Patch::Value(FlagId(3)));
        assert_eq!(
            parse(json!({"archived": null})).unwrap_err().detail,
            "This field may not be null."
        );
    }

    #[test]
    fn remove_targeting_flag_is_kept_as_sent_for_the_echo() {
        let echo = |value: Value| {
            SurveyWrite::read(value.as_object().unwrap().clone())
                .unwrap()
                .remove_targeting_flag()
        };
        assert_eq!(echo(json!({})), None);
        assert_eq!(echo(json!({"remove_targeting_flag": false})), Some(false));
        assert_eq!(echo(json!({"remove_targeting_flag": "true"})), Some(true));
    }
}
