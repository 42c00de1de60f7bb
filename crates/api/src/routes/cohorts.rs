//! `/api/projects/{project_id}/cohorts/`: groups of persons, by person properties and other
//! cohorts (dynamic) or listed (static, from a CSV or by UUID), that flags (and surveys'
//! targeting) filter by.

mod list_query;
mod members;
mod request;

pub(crate) use members::{CohortPersonResponse, add_persons, persons, remove_person};
pub(crate) use request::{CohortWrite, form_schema};

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::cohort::{CohortId, CohortService, CountedCohort};
use domain::tenancy::UserBasic;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::dto::UserBasicResponse;
use crate::error::ApiError;
use crate::extract::{Cohorts, JsonOrForm, Paginated, Pagination, ProjectCaller, path_id};
use list_query::{ListQuery, list_query};

/// A cohort as PostHog's `CohortSerializer` shows one. Burrow evaluates a dynamic cohort for each
/// person when a flag asks, so it is never calculating and has no count; a static cohort's
/// `count` is how many distinct ids it lists, and it is never calculating either.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Cohort)]
pub(crate) struct CohortResponse {
    id: i32,
    name: String,
    description: String,
    /// Left out of a basic list (`basic=true`), as PostHog leaves it out.
    #[serde(flatten)]
    #[schema(value_type = CohortDefinition)]
    definition: Option<CohortDefinition>,
    deleted: bool,
    is_static: bool,
    /// `person_property` for a dynamic cohort, `static` for a static one.
    cohort_type: &'static str,
    is_calculating: bool,
    last_calculation: Option<DateTime<Utc>>,
    errors_calculating: u32,
    /// A static cohort's distinct ids, captured or not yet; `null` for a dynamic one.
    count: Option<u64>,
    #[schema(value_type = Vec<i32>)]
    experiment_set: Vec<i32>,
    created_by: Option<UserBasicResponse>,
    created_at: DateTime<Utc>,
}

/// What defines a cohort, the heavy part of its answer: shown but in a basic list, where
/// PostHog's `CohortSerializer` leaves these three fields out.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CohortDefinition {
    /// `{"properties": {"type": "AND"|"OR", "values": [...]}}`.
    #[schema(value_type = Object, required = false)]
    filters: Value,
    /// PostHog's legacy form, always empty (`filters` holds the definition).
    #[schema(value_type = Vec<Object>, required = false)]
    groups: Vec<Value>,
    #[schema(value_type = Option<Object>, required = false)]
    query: Option<Value>,
}

impl From<CountedCohort> for CohortResponse {
    fn from(counted: CountedCohort) -> Self {
        let definition = CohortDefinition {
            filters: serde_json::to_value(&counted.cohort.filters).unwrap_or(Value::Null),
            groups: Vec::new(),
            query: None,
        };
        Self::shown(counted, Some(definition))
    }
}

impl CohortResponse {
    /// PostHog's basic shape, for pickers that need no definition.
    fn basic(counted: CountedCohort) -> Self {
        Self::shown(counted, None)
    }

    fn shown(
        CountedCohort { cohort, count }: CountedCohort,
        definition: Option<CohortDefinition>,
    ) -> Self {
        Self {
            id: cohort.id.0,
            name: cohort.name,
            description: cohort.description,
            definition,
            deleted: cohort.deleted,
            is_static: cohort.is_static,
            cohort_type: if cohort.is_static {
                "static"
            } else {
                "person_property"
            },
            is_calculating: false,
            last_calculation: None,
            errors_calculating: 0,
            count,
            experiment_set: Vec::new(),
            created_by: cohort.created_by.map(Into::into),
            created_at: cohort.created_at,
        }
    }
}

/// Newest first, ties by id (descending); deleted cohorts are left out, and those PostHog's
/// query parameters leave out (`list_query.rs`). `next` and `previous` keep the parameters.
pub(crate) async fn list(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    pagination: Pagination,
) -> Result<Json<Paginated<CohortResponse>>, ApiError> {
    let ListQuery { filter, basic } = list_query(request.query_string())?;
    let page = cohorts
        .list(access.project.id, &filter, pagination.page_request())
        .await?;
    let shown = page.map(if basic {
        CohortResponse::basic
    } else {
        CohortResponse::from
    });
    Ok(Json(Paginated::new(&request, pagination, shown)))
}

/// A JSON body, or a form with a `csv` file of the persons a static cohort starts with.
pub(crate) async fn create(
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    body: JsonOrForm,
) -> Result<HttpResponse, ApiError> {
    let (cohort, persons) = request::new_cohort(body)?;
    let cohort = cohorts
        .create(
            access.project.id,
            &UserBasic::from(&access.principal.user),
            cohort,
            persons,
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
/// 405, as Burrow's). A form's `csv` file adds persons to a static cohort.
pub(crate) async fn update(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    body: JsonOrForm,
) -> Result<Json<CohortResponse>, ApiError> {
    let id = path_id::<CohortId>(&request)?;
    let (changes, persons) = request::cohort_changes(body)?;
    let cohort = cohorts
        .update(access.project.id, id, changes, persons)
        .await?;
    Ok(Json(cohort.into()))
}
