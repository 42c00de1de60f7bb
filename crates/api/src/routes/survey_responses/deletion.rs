//! Deletions: one response, a survey's responses, and persons' data (a data-subject request).

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use domain::ValidationError;
use domain::patch::Patch;
use domain::survey::SurveyId;
use domain::survey_response::{Forgotten, SurveyResponseService};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::extract::{JsonObject, Persons, ProjectCaller, ResponseUuid, Surveys, path_id};
use crate::fields::Fields;

/// Deletes a response and the sends behind it.
pub(crate) async fn delete(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<HttpResponse, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let ResponseUuid(response) = path_id(&request)?;
    responses
        .delete_response(
            access.project.id,
            access.principal.user.id,
            survey,
            response,
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// What a deletion removed.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeletedBody {
    /// Persons whose stored properties were deleted.
    persons_deleted: u64,
    events_deleted: u64,
    responses_deleted: u64,
}

impl From<Forgotten> for DeletedBody {
    fn from(forgotten: Forgotten) -> Self {
        Self {
            persons_deleted: forgotten.persons,
            events_deleted: forgotten.events,
            responses_deleted: forgotten.responses,
        }
    }
}

/// Deletes every response and event of the survey (test data, a draft's answers).
pub(crate) async fn reset(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<DeletedBody>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let forgotten = responses
        .reset(access.project.id, access.principal.user.id, survey)
        .await?;
    Ok(Json(forgotten.into()))
}

/// The body of `persons/bulk_delete/`.
#[derive(ToSchema)]
pub(crate) struct BulkDeleteWrite {
    /// The persons' distinct ids, 1 to 1,000.
    #[schema(max_items = 1000)]
    distinct_ids: Vec<String>,
    /// Also delete every survey event and response of theirs.
    #[schema(required = false)]
    delete_events: bool,
}

impl BulkDeleteWrite {
    /// Reads `distinct_ids` (strings, or numbers as SDKs send ids) and `delete_events`.
    fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        let invalid = |detail: &str| ValidationError::invalid("distinct_ids", detail);
        let distinct_ids = match fields.raw("distinct_ids") {
            Patch::Value(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(id) => Ok(id.clone()),
                    Value::Number(id) => Ok(id.to_string()),
                    _ => Err(invalid("Each distinct id must be a string.")),
                })
                .collect::<Result<Vec<_>, _>>()?,
            Patch::Absent | Patch::Null => Vec::new(),
            Patch::Value(_) => return Err(invalid("Expected a list of distinct ids.")),
        };
        Ok(Self {
            distinct_ids,
            delete_events: fields.boolean("delete_events")?.value().unwrap_or(false),
        })
    }
}

/// A data-subject request: the persons' stored properties and, with `delete_events`, their
/// survey events and responses.
pub(crate) async fn delete_persons(
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Persons>,
    JsonObject(body): JsonObject,
) -> Result<Json<DeletedBody>, ApiError> {
    let write = BulkDeleteWrite::read(&body)?;
    let forgotten = responses
        .delete_persons(access.project.id, &write.distinct_ids, write.delete_events)
        .await?;
    Ok(Json(forgotten.into()))
}
