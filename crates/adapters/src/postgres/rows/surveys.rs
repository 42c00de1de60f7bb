//! Rows of surveys: the read shape, the state written on insert and update, and the activity
//! log.

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::activity::NewActivity;
use domain::feature_flag::{FeatureFlag, FlagId};
use domain::survey::{
    Appearance, Conditions, FormContent, Iterations, LanguageCode, Questions, ResponseSampling,
    SamplingIntervalType, Schedule, Survey, SurveyId, SurveyState, SurveyTranslations, SurveyType,
};
use domain::tenancy::{ProjectId, UserBasic};
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::rows::TypedJson;
use crate::postgres::schema::{survey_activity, surveys};

#[derive(Queryable, Selectable)]
#[diesel(table_name = surveys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct SurveyRow {
    pub id: Uuid,
    pub project_id: i32,
    pub name: String,
    pub description: String,
    pub survey_type: String,
    pub linked_flag_id: Option<i32>,
    /// Read to tell a targeting flag that is not there from one the read could not see.
    pub targeting_flag_id: Option<i32>,
    pub owns_targeting_flag: bool,
    pub questions: Option<TypedJson<Option<Questions>>>,
    pub conditions: Option<TypedJson<Option<Conditions>>>,
    pub appearance: Option<TypedJson<Option<Appearance>>>,
    pub created_at: DateTime<Utc>,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub archived: bool,
    pub responses_limit: Option<i32>,
    pub schedule: String,
    pub iteration_count: Option<i32>,
    pub iteration_frequency_days: Option<i32>,
    pub iteration_start_dates: Option<Vec<DateTime<Utc>>>,
    pub current_iteration: Option<i32>,
    pub current_iteration_start_date: Option<DateTime<Utc>>,
    pub enable_partial_responses: bool,
    pub base_language: String,
    pub translations: Option<TypedJson<Option<SurveyTranslations>>>,
    pub enable_iframe_embedding: bool,
    pub response_sampling_start_date: Option<DateTime<Utc>>,
    pub response_sampling_interval_type: Option<String>,
    pub response_sampling_interval: Option<i32>,
    pub response_sampling_limit: Option<i32>,
    pub response_sampling_rollout: f64,
    pub response_sampling_checked_on: Option<NaiveDate>,
    pub form_content: Option<TypedJson<Option<FormContent>>>,
}

impl SurveyRow {
    /// The survey, given what it points at.
    pub fn into_whole_survey(
        self,
        created_by: Option<UserBasic>,
        linked_flag: Option<FeatureFlag>,
        targeting_flag: Option<FeatureFlag>,
    ) -> Result<Survey, Unexpected> {
        let survey_type = SurveyType::parse(&self.survey_type).ok_or_else(|| {
            Unexpected::new(format!(
                "survey {} has type {:?}",
                self.id, self.survey_type
            ))
        })?;
        let schedule = Schedule::parse(&self.schedule).ok_or_else(|| {
            Unexpected::new(format!(
                "survey {} has schedule {:?}",
                self.id, self.schedule
            ))
        })?;
        let interval_type = self
            .response_sampling_interval_type
            .as_deref()
            .map(|unit| {
                SamplingIntervalType::parse(unit).ok_or_else(|| {
                    Unexpected::new(format!(
                        "survey {} has response sampling interval type {unit:?}",
                        self.id
                    ))
                })
            })
            .transpose()?;
        let id = self.id;
        Ok(Survey {
            id: SurveyId(id),
            project_id: ProjectId(self.project_id),
            linked_flag,
            targeting_flag,
            owns_targeting_flag: self.owns_targeting_flag,
            created_at: self.created_at,
            created_by,
            state: SurveyState {
                name: self.name,
                description: self.description,
                survey_type,
                linked_flag_id: self.linked_flag_id.map(FlagId),
                questions: self.questions.and_then(|column| column.0),
                conditions: self.conditions.and_then(|column| column.0),
                appearance: self.appearance.and_then(|column| column.0),
                start_date: self.start_date,
                end_date: self.end_date,
                archived: self.archived,
                responses_limit: self.responses_limit,
                schedule,
                iteration_count: self.iteration_count,
                iteration_frequency_days: self.iteration_frequency_days,
                enable_partial_responses: self.enable_partial_responses,
                base_language: LanguageCode::stored(self.base_language),
                translations: self.translations.and_then(|column| column.0),
                enable_iframe_embedding: self.enable_iframe_embedding,
                response_sampling: ResponseSampling {
                    start_date: self.response_sampling_start_date,
                    interval_type,
                    interval: self.response_sampling_interval,
                    limit: self.response_sampling_limit,
                    rollout: self.response_sampling_rollout,
                    checked_on: self.response_sampling_checked_on,
                },
                form_content: self.form_content.and_then(|column| column.0),
                iterations: Iterations {
                    start_dates: self.iteration_start_dates,
                    current: self.current_iteration,
                    current_start_date: self.current_iteration_start_date,
                },
            },
        })
    }
}

/// The columns a `SurveyState` is written to, on insert and on update alike. `None` is
/// written as `NULL` by both (a cleared field; every such column's default is `NULL`), never
/// left out or as `DEFAULT`: each statement writing it is one SQL text, which stays prepared
/// (see `prepared`).
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = surveys,
    check_for_backend(diesel::pg::Pg),
    treat_none_as_null = true,
    treat_none_as_default_value = false
)]
pub(crate) struct SurveyStateRow<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub survey_type: &'static str,
    pub linked_flag_id: Option<i32>,
    pub questions: Option<TypedJson<&'a Questions>>,
    pub conditions: Option<TypedJson<&'a Conditions>>,
    pub appearance: Option<TypedJson<&'a Appearance>>,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub archived: bool,
    pub responses_limit: Option<i32>,
    pub schedule: &'static str,
    pub iteration_count: Option<i32>,
    pub iteration_frequency_days: Option<i32>,
    pub iteration_start_dates: Option<&'a [DateTime<Utc>]>,
    pub current_iteration: Option<i32>,
    pub current_iteration_start_date: Option<DateTime<Utc>>,
    pub enable_partial_responses: bool,
    pub base_language: &'a str,
    pub translations: Option<TypedJson<&'a SurveyTranslations>>,
    pub enable_iframe_embedding: bool,
    pub response_sampling_start_date: Option<DateTime<Utc>>,
    pub response_sampling_interval_type: Option<&'static str>,
    pub response_sampling_interval: Option<i32>,
    pub response_sampling_limit: Option<i32>,
    pub response_sampling_rollout: f64,
    pub response_sampling_checked_on: Option<NaiveDate>,
    pub form_content: Option<TypedJson<&'a FormContent>>,
}

impl<'a> From<&'a SurveyState> for SurveyStateRow<'a> {
    fn from(state: &'a SurveyState) -> Self {
        let sampling = &state.response_sampling;
        SurveyStateRow {
            name: &state.name,
            description: &state.description,
            survey_type: state.survey_type.as_str(),
            linked_flag_id: state.linked_flag_id.map(|flag| flag.0),
            questions: state.questions.as_ref().map(TypedJson),
            conditions: state.conditions.as_ref().map(TypedJson),
            appearance: state.appearance.as_ref().map(TypedJson),
            start_date: state.start_date,
            end_date: state.end_date,
            archived: state.archived,
            responses_limit: state.responses_limit,
            schedule: state.schedule.as_str(),
            iteration_count: state.iteration_count,
            iteration_frequency_days: state.iteration_frequency_days,
            iteration_start_dates: state.iterations.start_dates.as_deref(),
            current_iteration: state.iterations.current,
            current_iteration_start_date: state.iterations.current_start_date,
            enable_partial_responses: state.enable_partial_responses,
            base_language: state.base_language.as_str(),
            translations: state.translations.as_ref().map(TypedJson),
            enable_iframe_embedding: state.enable_iframe_embedding,
            response_sampling_start_date: sampling.start_date,
            response_sampling_interval_type: sampling.interval_type.map(|unit| unit.as_str()),
            response_sampling_interval: sampling.interval,
            response_sampling_limit: sampling.limit,
            response_sampling_rollout: sampling.rollout,
            response_sampling_checked_on: sampling.checked_on,
            form_content: state.form_content.as_ref().map(TypedJson),
        }
    }
}

/// A survey activity entry as inserted.
#[derive(Insertable)]
#[diesel(table_name = survey_activity, treat_none_as_default_value = false)]
pub(crate) struct NewSurveyActivityRow<'a> {
    id: Uuid,
    project_id: i32,
    survey_id: Uuid,
    user_id: i32,
    activity: &'static str,
    detail: &'a Value,
}

impl<'a> NewSurveyActivityRow<'a> {
    pub fn new(project: ProjectId, survey: SurveyId, activity: &'a NewActivity) -> Self {
        Self {
            id: Uuid::now_v7(),
            project_id: project.0,
            survey_id: survey.0,
            user_id: activity.user.0,
            activity: activity.activity,
            detail: &activity.detail,
        }
    }
}
