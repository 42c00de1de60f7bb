//! A static cohort's members: `add_persons_to_static_cohort` and
//! `remove_person_from_static_cohort` (persons named by UUID, PostHog's checks and answers), and
//! `persons`, the captured members as PostHog's `CohortPersonResultSerializer` shows them.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::cohort::{CohortId, CohortPerson, CohortService, Removal};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{Cohorts, JsonObject, Paginated, Pagination, Persons, ProjectCaller, path_id};

/// PostHog's 404 for a person the project does not have.
const NO_SUCH_PERSON: &str = "Person with this UUID does not exist in the cohort's team";

/// A captured member of a static cohort, as PostHog shows a cohort's person. Burrow keeps one
/// distinct id per person and no person times, so `distinct_ids` has one and the times are
/// `null`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CohortPerson)]
pub(crate) struct CohortPersonResponse {
    /// The person's UUID, as text.
    id: String,
    uuid: Uuid,
    /// `person`.
    #[serde(rename = "type")]
    kind: &'static str,
    /// The first of `email`, `name`, `username` (and their spellings) set, else the distinct
    /// id.
    name: String,
    distinct_ids: Vec<String>,
    #[schema(value_type = Object)]
    properties: Map<String, Value>,
    created_at: Option<DateTime<Utc>>,
    last_seen_at: Option<DateTime<Utc>>,
    is_identified: Option<bool>,
    #[schema(value_type = Vec<Object>)]
    matched_recordings: Vec<Value>,
    value_at_data_point: Option<f64>,
}

impl From<CohortPerson> for CohortPersonResponse {
    fn from(person: CohortPerson) -> Self {
        Self {
            id: person.uuid.to_string(),
            uuid: person.uuid,
            kind: "person",
            name: person.display_name(),
            distinct_ids: vec![person.distinct_id],
            properties: person.properties,
            created_at: None,
            last_seen_at: None,
            is_identified: None,
            matched_recordings: Vec::new(),
            value_at_data_point: None,
        }
    }
}

/// `{"person_ids": [uuid, …]}`: lists the project's persons named (others skipped).
pub(crate) async fn add_persons(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    JsonObject(body): JsonObject,
) -> Result<Json<Value>, ApiError> {
    let id = path_id::<CohortId>(&request)?;
    cohorts
        .add_persons(access.project.id, id, body.get("person_ids"))
        .await?;
    Ok(Json(serde_json::json!({"success": true})))
}

/// `{"person_id": uuid}`: stops listing the person (idempotent, as PostHog's).
pub(crate) async fn remove_person(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Cohorts>,
    JsonObject(body): JsonObject,
) -> Result<Json<Value>, ApiError> {
    let id = path_id::<CohortId>(&request)?;
    match cohorts
        .remove_person(access.project.id, id, body.get("person_id"))
        .await?
    {
        Removal::Removed => Ok(Json(serde_json::json!({"success": true}))),
        Removal::NoSuchPerson => Err(ApiError::not_found_with(NO_SUCH_PERSON)),
    }
}

/// The captured members of a static cohort, by distinct id, paginated (a page ending early past
/// `PAGE_PERSON_BYTES` of properties, `next` continuing after it). The scope is PostHog's
/// `person:read` (it asks for `cohort:read` too; Burrow's routes name one scope, and this one
/// answers persons' properties).
pub(crate) async fn persons(
    request: HttpRequest,
    cohorts: web::Data<CohortService>,
    ProjectCaller(access, _): ProjectCaller<Persons>,
    pagination: Pagination,
) -> Result<Json<Paginated<CohortPersonResponse>>, ApiError> {
    let id = path_id::<CohortId>(&request)?;
    let page = cohorts
        .persons(access.project.id, id, pagination.page_request())
        .await?;
    Ok(Json(Paginated::ending_early(&request, pagination, page)))
}
