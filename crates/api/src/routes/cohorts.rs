//! `/api/projects/{project_id}/cohorts/`: groups of persons, by person properties and other
//! cohorts, that flags (and surveys' targeting) filter by.

mod request;

pub(crate) use request::CohortWrite;

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::cohort::{Cohort, CohortId, CohortService};
use domain::tenancy::UserBasic;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::dto::UserBasicResponse;
use crate::error::ApiError;
use crate::extract::{Cohorts, JsonObject, Paginated, Pagination, ProjectCaller, path_id};

/// A cohort as PostHog's `CohortSerializer` shows one. Burrow evaluates a dynamic cohort for each
/// person when a flag asks, so it is never calculating and has no count.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Cohort)]
pub(crate) struct CohortResponse {
    id: i32,
    name: String,
    description: String,
    /// `{"properties": {"type": "AND"|"OR", "values": [...]}}`.
    #[schema(value_type = Object)]
    filters: Value,
    /// PostHog's legacy form, always empty (`filters` holds the definition).
    #[schema(value_type = Vec<Object>)]
    groups: Vec<Value>,
    #[schema(value_type = Option<Object>)]
    query: Option<Value>,
    deleted: bool,
    is_static: bool,
    /// `person_property`: what Burrow's cohorts filter by.
    cohort_type: &'static str,
    is_calculating: bool,
    last_calculation: Option<DateTime<Utc>>,
    errors_calculating: u32,
    count: Option<u64>,
    #[schema(value_type = Vec<i32>)]
    experiment_set: Vec<i32>,
    created_by: Option<UserBasicResponse>,
    created_at: DateTime<Utc>,
}

impl From<Cohort> for CohortResponse {
    fn from(cohort: Cohort) -> Self {
        Self {
            id: cohort.id.0,
            name: cohort.name,
            description: cohort.description,
            filters: serde_json::to_value(&cohort.filters).unwrap_or(Value::Null),
            groups: Vec::new(),
            query: None,
            deleted: cohort.deleted,
            is_static: false,
            cohort_type: "person_property",
            is_calculating: false,
            last_calculation: None,
            errors_calculating: 0,
            count: None,
            experiment_set: Vec::new(),
            created_by: cohort.created_by.map(Into::into),
            created_at: cohort.created_at,
        }
    }
}

/// Newest first, ties by id (descending); deleted cohorts are left out.
pub(crate) async fn list(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    pagination: Pagination,
) -> Result<Json<Paginated<CohortResponse>>, ApiError> {
    let page = cohorts
        .list(access.project.id, pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn create(
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let cohort = cohorts
        .create(
            access.project.id,
            &UserBasic::from(&access.principal.user),
            request::new_cohort(body)?,
        )
        .await?;
    Ok(HttpResponse::Created().json(CohortResponse::from(cohort)))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
) -> Result<Json<CohortResponse>, ApiError> {
    let cohort = cohorts
        .get(access.project.id, path_id::<CohortId>(&request)?)
        .await?;
    Ok(Json(cohort.into()))
}

/// Partial update; `deleted: true` deletes the cohort (soft), as PostHog does (its DELETE is
/// 405, as Burrow's).
pub(crate) async fn update(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    JsonObject(body): JsonObject,
) -> Result<Json<CohortResponse>, ApiError> {
    let id = path_id::<CohortId>(&request)?;
    let cohort = cohorts
        .update(access.project.id, id, request::cohort_changes(body)?)
        .await?;
    Ok(Json(cohort.into()))
}
