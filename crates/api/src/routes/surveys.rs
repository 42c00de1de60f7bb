//! `/api/projects/{project_id}/surveys/`: the survey resource, its launch and stop, its
//! activity log, and copies into other projects.

mod list_query;
mod question_labels;
mod request;

pub(crate) use question_labels::{QuestionLabels, question_labels};
pub(crate) use request::{DuplicateToProjects, SurveyWrite};

use std::sync::{Arc, OnceLock};

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::Unexpected;
use domain::access::{AccessError, AccessService, ObjectAccessLevel, ProjectAccess};
use domain::feature_flag::FlagFilters;
use domain::ports::Page;
use domain::survey::{
    Appearance, Conditions, FormContent, NewSurvey, Questions, RenderedSurveys, Rendering,
    SearchMatch, Survey, SurveyId, SurveyService, SurveyTranslations, Switch,
};
use domain::tenancy::{UserBasic, UserId};
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::contract::schemas::{SurveySchedule, SurveySearchMatch, SurveyType};
use crate::contract::survey_shapes;
use crate::dto::{ActivityResponse, FlagSummary, UserBasicResponse};
use crate::error::ApiError;
use crate::extract::{
    ActivityLogs, JsonObject, NumberedPage, PageNumber, Paginated, Pagination, ProjectCaller,
    Surveys, path_id,
};

/// PostHog's refusal when a copy's target is missing or out of the key's reach; one message for
/// both, so a key cannot probe which projects exist.
const TARGETS_UNREACHABLE: &str =
    "One or more target teams not found or you don't have access to them";

/// Every survey field PostHog clients round-trip.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Survey)]
pub(crate) struct SurveyResponse {
    id: Uuid,
    name: String,
    description: String,
    #[serde(rename = "type")]
    #[schema(value_type = SurveyType)]
    survey_type: &'static str,
    #[schema(value_type = SurveySchedule)]
    schedule: &'static str,
    linked_flag: Option<FlagSummary>,
    linked_flag_id: Option<i32>,
    targeting_flag: Option<FlagSummary>,
    targeting_flag_id: Option<i32>,
    #[schema(value_type = Option<crate::contract::flag_filter_shapes::FlagFiltersShape>)]
    targeting_flag_filters: Option<FlagFilters>,
    /// Echoes the request on writes; `null` on reads.
    remove_targeting_flag: Option<bool>,
    #[schema(value_type = Option<Vec<survey_shapes::SurveyQuestion>>)]
    questions: Option<Questions>,
    #[schema(value_type = Option<survey_shapes::SurveyConditions>)]
    conditions: Option<Conditions>,
    #[schema(value_type = Option<survey_shapes::SurveyAppearance>)]
    appearance: Option<Appearance>,
    created_at: DateTime<Utc>,
    created_by: Option<UserBasicResponse>,
    start_date: Option<DateTime<Utc>>,
    end_date: Option<DateTime<Utc>>,
    archived: bool,
    responses_limit: Option<i32>,
    iteration_count: Option<i32>,
    iteration_frequency_days: Option<i32>,
    iteration_start_dates: Option<Vec<DateTime<Utc>>>,
    current_iteration: Option<i32>,
    current_iteration_start_date: Option<DateTime<Utc>>,
    response_sampling_start_date: Option<DateTime<Utc>>,
    #[schema(value_type = Option<String>)]
    response_sampling_interval_type: Option<&'static str>,
    response_sampling_interval: Option<i32>,
    response_sampling_limit: Option<i32>,
    /// The daily schedule, computed: PostHog's string of JSON,
    /// `[{"date", "daily_response_limit", "rollout_percentage"}, …]`; `null` without sampling.
    response_sampling_daily_limits: Option<String>,
    enable_partial_responses: bool,
    enable_iframe_embedding: bool,
    /// The keys of the flags the survey shows by, as PostHog lists them.
    feature_flag_keys: [FlagKeyEntry; 4],
    /// The language of the survey's own texts, normalised (`en` unless set).
    #[schema(max_length = 20)]
    base_language: String,
    #[schema(value_type = Option<survey_shapes::SurveyTranslations>)]
    translations: Option<SurveyTranslations>,
    /// The form builder's layout, as its client wrote it.
    #[schema(value_type = Option<Object>)]
    form_content: Option<FormContent>,
    /// What the caller may do with the survey: `manager` (its creator, the organization's
    /// admins and owners) or `editor`.
    #[schema(value_type = String)]
    user_access_level: Option<&'static str>,
    /// How the survey matched a searched list (`exact`, `similar`); `null` everywhere else.
    /// Last, so a rendering ends with the caller's fields ([`SurveyJson::answered`]).
    #[schema(value_type = Option<SurveySearchMatch>)]
    search_match_type: Option<&'static str>,
}

/// One of [`SurveyResponse::feature_flag_keys`]: which flag, and its key if the survey has one.
#[derive(Debug, Serialize, ToSchema)]
struct FlagKeyEntry {
    key: &'static str,
    value: Option<String>,
}

impl FlagKeyEntry {
    /// PostHog's list: linked, targeting, internal targeting, internal response sampling.
    fn of(survey: &Survey) -> [Self; 4] {
        let key = |flag: &Option<domain::feature_flag::FeatureFlag>| {
            flag.as_ref().map(|flag| flag.key.as_str().to_owned())
        };
        [
            Self {
                key: "linked_flag_key",
                value: key(&survey.linked_flag),
            },
            Self {
                key: "targeting_flag_key",
                value: key(&survey.targeting_flag),
            },
            Self {
                key: "internal_targeting_flag_key",
                value: Some(survey.internal_targeting_flag_key()),
            },
            Self {
                key: "internal_response_sampling_flag_key",
                value: survey.internal_response_sampling_flag_key(),
            },
        ]
    }
}

impl SurveyResponse {
    /// `survey` as answered to a caller of `level`.
    fn new(
        survey: Survey,
        remove_targeting_flag: Option<bool>,
        level: Option<ObjectAccessLevel>,
    ) -> Self {
        let feature_flag_keys = FlagKeyEntry::of(&survey);
        let user_access_level = level.map(ObjectAccessLevel::as_str);
        let response_sampling_daily_limits = survey.state.response_sampling.daily_limits_text();
        let state = survey.state;
        let sampling = state.response_sampling;
        Self {
            id: survey.id.0,
            name: state.name,
            description: state.description,
            survey_type: state.survey_type.as_str(),
            schedule: state.schedule.as_str(),
            linked_flag_id: state.linked_flag_id.map(|id| id.0),
            linked_flag: survey.linked_flag.map(Into::into),
            targeting_flag_id: survey.targeting_flag.as_ref().map(|f| f.id.0),
            targeting_flag_filters: survey.targeting_flag.as_ref().map(|f| f.filters.clone()),
            targeting_flag: survey.targeting_flag.map(Into::into),
            remove_targeting_flag,
            questions: state.questions,
            conditions: state.conditions,
            appearance: state.appearance,
            created_at: survey.created_at,
            created_by: survey.created_by.map(Into::into),
            start_date: state.start_date,
            end_date: state.end_date,
            archived: state.archived,
            responses_limit: state.responses_limit,
            iteration_count: state.iteration_count,
            iteration_frequency_days: state.iteration_frequency_days,
            iteration_start_dates: state.iterations.start_dates,
            current_iteration: state.iterations.current,
            current_iteration_start_date: state.iterations.current_start_date,
            response_sampling_start_date: sampling.start_date,
            response_sampling_interval_type: sampling.interval_type.map(|unit| unit.as_str()),
            response_sampling_interval: sampling.interval,
            response_sampling_limit: sampling.limit,
            response_sampling_daily_limits,
            enable_partial_responses: state.enable_partial_responses,
            enable_iframe_embedding: state.enable_iframe_embedding,
            feature_flag_keys,
            base_language: state.base_language.as_str().to_owned(),
            translations: state.translations,
            form_content: state.form_content,
            user_access_level,
            search_match_type: None,
        }
    }
}

/// A survey as reads answer it ([`SurveyResponse`]), rendered once and kept by
/// [`RenderedSurveys`] while the survey's revision stays the stored one. The caller's level
/// differs between requests, so the kept rendering says `user_access_level: "manager"` (what
/// admins, owners and the creator read) and keeps beside it, made on first need, the one that
/// says `editor`; neither is copied per request. A searched list writes how each survey matched
/// over a copy of it ([`Self::answered`]).
#[derive(Debug, Clone)]
pub struct SurveyJson {
    json: Arc<RawValue>,
    /// Who created the survey: what the caller's level depends on.
    creator: Option<UserId>,
    /// The rendering for editors, shared by every clone of the kept one.
    for_editors: Arc<OnceLock<Arc<RawValue>>>,
}

impl SurveyJson {
    /// Renders `survey` as reads answer it.
    ///
    /// # Errors
    /// When serde_json cannot write it (it always can: the response holds no map with
    /// non-string keys).
    pub fn render(survey: Survey) -> Result<Self, Unexpected> {
        let creator = survey.created_by.as_ref().map(|user| user.id);
        let json = serde_json::value::to_raw_value(&SurveyResponse::new(
            survey,
            None,
            Some(ObjectAccessLevel::Manager),
        ))
        .map_err(Unexpected::new)?;
        Ok(Self {
            json: Arc::from(json),
            creator,
            for_editors: Arc::default(),
        })
    }

    /// This rendering as answered to `access`, with how the survey `matched` a search: the kept
    /// rendering of the caller's level, and a copy with the match when there is one.
    ///
    /// # Errors
    /// When the rendering does not end with the caller's fields (it always does).
    fn answered(
        &self,
        access: &ProjectAccess,
        matched: Option<SearchMatch>,
    ) -> Result<Self, Unexpected> {
        let level = ObjectAccessLevel::of(access, self.creator);
        let json = match level {
            ObjectAccessLevel::Manager => self.json.clone(),
            ObjectAccessLevel::Editor => match self.for_editors.get() {
                Some(json) => json.clone(),
                None => {
                    let json = self.ending(ObjectAccessLevel::Editor, None)?;
                    self.for_editors.get_or_init(|| json).clone()
                }
            },
        };
        let answered = Self {
            json,
            ..self.clone()
        };
        Ok(match matched {
            None => answered,
            Some(matched) => Self {
                json: answered.ending(level, Some(matched))?,
                ..answered
            },
        })
    }

    /// A copy of this rendering ending with `level` and `matched`.
    fn ending(
        &self,
        level: ObjectAccessLevel,
        matched: Option<SearchMatch>,
    ) -> Result<Arc<RawValue>, Unexpected> {
        let rendered = self.json.get();
        let fields = rendered
            .strip_suffix(r#","search_match_type":null}"#)
            .and_then(|rest| rest.rsplit_once(r#","user_access_level":"#))
            .map(|(fields, _)| fields)
            .ok_or_else(|| {
                Unexpected::new("a survey's rendering does not end with the caller's fields")
            })?;
        let matched = matched.map_or("null".to_owned(), |matched| format!(r#""{matched}""#));
        let json = format!(
            r#"{fields},"user_access_level":"{level}","search_match_type":{matched}}}"#,
            level = level.as_str()
        );
        Ok(Arc::from(
            RawValue::from_string(json).map_err(Unexpected::new)?,
        ))
    }
}

/// What `access`'s user may do with `survey`.
fn caller_level(access: &ProjectAccess, survey: &Survey) -> ObjectAccessLevel {
    ObjectAccessLevel::of(access, survey.created_by.as_ref().map(|user| user.id))
}

impl Serialize for SurveyJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl Rendering for SurveyJson {
    /// Twice the rendering's: it may keep the editors' beside it.
    fn bytes(&self) -> u32 {
        u32::try_from(self.json.get().len().saturating_mul(2)).unwrap_or(u32::MAX)
    }
}

/// Newest first, narrowed by PostHog's filters (`list_query`); a `search` answers its most
/// relevant surveys first, each with how it matched.
pub(crate) async fn list(
    request: HttpRequest,
    surveys: web::Data<RenderedSurveys<SurveyJson>>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    pagination: Pagination,
) -> Result<Json<Paginated<SurveyJson>>, ApiError> {
    let query = list_query::list_query(request.query_string())?;
    let listed = surveys
        .list(
            access.project.id,
            query.filter,
            query.search,
            pagination.page_request(),
        )
        .await?;
    let items = listed
        .page
        .items
        .into_iter()
        .map(|survey| survey.answered(&access, listed.matched))
        .collect::<Result<_, _>>()?;
    let page = Page {
        count: listed.page.count,
        items,
    };
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn create(
    surveys: web::Data<SurveyService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let request = SurveyWrite::read(body)?;
    let echo = request.remove_targeting_flag();
    let survey = surveys
        .create(
            access.project.id,
            &UserBasic::from(&access.principal.user),
            NewSurvey::new(request.into_changes())?,
        )
        .await?;
    let level = caller_level(&access, &survey);
    Ok(HttpResponse::Created().json(SurveyResponse::new(survey, echo, Some(level))))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    surveys: web::Data<RenderedSurveys<SurveyJson>>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<SurveyJson>, ApiError> {
    let survey = surveys
        .get(access.project.id, path_id::<SurveyId>(&request)?)
        .await?;
    Ok(Json(survey.answered(&access, None)?))
}

/// PATCH changes the fields sent.
pub(crate) async fn partial_update(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    caller: ProjectCaller<Surveys>,
    body: JsonObject,
) -> Result<Json<SurveyResponse>, ApiError> {
    update(&request, &surveys, caller, body, Replace::No).await
}

/// PUT also requires `name` and `type` (absent fields are kept, as DRF does), with the same
/// validation.
pub(crate) async fn full_update(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    caller: ProjectCaller<Surveys>,
    body: JsonObject,
) -> Result<Json<SurveyResponse>, ApiError> {
    update(&request, &surveys, caller, body, Replace::Yes).await
}

/// Whether an update replaces the whole survey (PUT) or patches it.
#[derive(PartialEq)]
enum Replace {
    Yes,
    No,
}

async fn update(
    request: &HttpRequest,
    surveys: &SurveyService,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    JsonObject(body): JsonObject,
    replace: Replace,
) -> Result<Json<SurveyResponse>, ApiError> {
    let id = path_id::<SurveyId>(request)?;
    let request = SurveyWrite::read(body)?;
    let echo = request.remove_targeting_flag();
    let changes = request.into_changes();
    if replace == Replace::Yes {
        changes.require_name_and_type()?;
    }
    let survey = surveys
        .update(access.project.id, id, access.principal.user.id, changes)
        .await?;
    let level = caller_level(&access, &survey);
    Ok(Json(SurveyResponse::new(survey, echo, Some(level))))
}

/// `launch/`: `start_date` becomes now, as PostHog's dedicated endpoint sets it (`Switch`).
pub(crate) async fn launch(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    caller: ProjectCaller<Surveys>,
) -> Result<Json<SurveyResponse>, ApiError> {
    switch(&request, &surveys, caller, Switch::Launch).await
}

/// `stop/`: `end_date` becomes now.
pub(crate) async fn stop(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    caller: ProjectCaller<Surveys>,
) -> Result<Json<SurveyResponse>, ApiError> {
    switch(&request, &surveys, caller, Switch::Stop).await
}

/// Launches or stops the survey of the path (no body), answering it as reads do.
async fn switch(
    request: &HttpRequest,
    surveys: &SurveyService,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    switch: Switch,
) -> Result<Json<SurveyResponse>, ApiError> {
    let id = path_id::<SurveyId>(request)?;
    let survey = surveys
        .switch(access.project.id, id, access.principal.user.id, switch)
        .await?;
    let level = caller_level(&access, &survey);
    Ok(Json(SurveyResponse::new(survey, None, Some(level))))
}

pub(crate) async fn delete(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<HttpResponse, ApiError> {
    surveys
        .delete(
            access.project.id,
            path_id::<SurveyId>(&request)?,
            access.principal.user.id,
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The activity of every survey of the project, deleted ones included.
pub(crate) async fn project_activity(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    ProjectCaller(access, _): ProjectCaller<ActivityLogs>,
    numbered: PageNumber,
) -> Result<Json<NumberedPage<ActivityResponse>>, ApiError> {
    activity(&request, &surveys, &access, None, numbered).await
}

/// One survey's activity; 404 for a survey the project does not have (any more).
pub(crate) async fn survey_activity(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    ProjectCaller(access, _): ProjectCaller<ActivityLogs>,
    numbered: PageNumber,
) -> Result<Json<NumberedPage<ActivityResponse>>, ApiError> {
    let id = path_id::<SurveyId>(&request)?;
    activity(&request, &surveys, &access, Some(id), numbered).await
}

async fn activity(
    request: &HttpRequest,
    surveys: &SurveyService,
    access: &ProjectAccess,
    survey: Option<SurveyId>,
    numbered: PageNumber,
) -> Result<Json<NumberedPage<ActivityResponse>>, ApiError> {
    let page = surveys
        .activity(access.project.id, survey, numbered.page_request())
        .await?;
    Ok(ActivityResponse::page(request, numbered, page))
}

/// One copy in a `duplicate_to_projects` answer.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CreatedSurvey {
    team_id: i32,
    survey_id: Uuid,
    name: String,
}

/// `{"created_surveys": [...], "count": n}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DuplicatedResponse {
    created_surveys: Vec<CreatedSurvey>,
    count: usize,
}

/// Copies the survey, as a draft, into every project of `target_team_ids` the key could reach
/// through that project's own URL: all of them in one transaction, or none. Checked in
/// PostHog's order: the survey (404), the body (400), the targets (403).
pub(crate) async fn duplicate_to_projects(
    request: HttpRequest,
    surveys: web::Data<SurveyService>,
    access_service: web::Data<AccessService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let source = surveys
        .get(access.project.id, path_id::<SurveyId>(&request)?)
        .await?;
    let ids = DuplicateToProjects::read(&body)?.target_team_ids;
    let targets = access_service
        .projects(&access.principal, &ids)
        .await
        .map_err(|error| match error {
            AccessError::Unexpected(cause) => ApiError::from(cause),
            _ => ApiError::permission_denied(TARGETS_UNREACHABLE),
        })?;
    let copies = surveys
        .duplicate_to_projects(&source, &UserBasic::from(&access.principal.user), &targets)
        .await?;
    let created_surveys: Vec<CreatedSurvey> = copies
        .into_iter()
        .map(|copy| CreatedSurvey {
            team_id: copy.project_id.0,
            survey_id: copy.id.0,
            name: copy.state.name,
        })
        .collect();
    Ok(HttpResponse::Created().json(DuplicatedResponse {
        count: created_surveys.len(),
        created_surveys,
    }))
}

#[cfg(test)]
mod tests {
    use domain::survey::{SurveyState, SurveyType};
    use domain::tenancy::{MembershipLevel, ProjectId};
    use domain::testing::caller_in_project;
    use serde_json::{Value, json};

    use super::*;

    fn rendered() -> SurveyJson {
        SurveyJson::render(Survey {
            id: SurveyId::generate(),
            project_id: ProjectId(1),
            state: SurveyState::draft("NPS".into(), SurveyType::Popover),
            linked_flag: None,
            targeting_flag: None,
            owns_targeting_flag: false,
            created_at: Utc::now(),
            created_by: None,
        })
        .unwrap()
    }

    fn json(survey: &SurveyJson) -> Value {
        serde_json::to_value(survey).unwrap()
    }

    #[test]
    fn each_answer_is_the_kept_rendering_of_the_callers_level_copied_only_with_a_match() {
        let kept = rendered();
        assert_eq!(json(&kept)["user_access_level"], "manager");
        let owner = caller_in_project(UserId(2), MembershipLevel::Owner);
        let managed = kept.answered(&owner, None).unwrap();
        assert!(
            Arc::ptr_eq(&managed.json, &kept.json),
            "no copy for a manager"
        );
        let member = caller_in_project(UserId(2), MembershipLevel::Member);
        let edited = kept.answered(&member, None).unwrap();
        let mut expected = json(&kept);
        expected["user_access_level"] = json!("editor");
        assert_eq!(json(&edited), expected);
        let again = kept.answered(&member, None).unwrap();
        assert!(
            Arc::ptr_eq(&edited.json, &again.json),
            "the editors' rendering is made once"
        );
        let similar = kept.answered(&member, Some(SearchMatch::Similar)).unwrap();
        expected["search_match_type"] = json!("similar");
        assert_eq!(json(&similar), expected);
        assert_eq!(
            json(&kept)["search_match_type"],
            Value::Null,
            "the kept one is unchanged"
        );
    }
}
