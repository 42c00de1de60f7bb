//! Archiving a response, restoring it, and the uuids of a survey's archived responses.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use domain::survey::SurveyId;
use domain::survey_response::SurveyResponseService;
use serde_json::Value;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{ProjectCaller, ResponseUuid, Surveys, path_id};

pub(crate) async fn archive(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    caller: ProjectCaller<Surveys>,
) -> Result<Json<Value>, ApiError> {
    set_archived(&request, &responses, caller, true).await
}

pub(crate) async fn unarchive(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    caller: ProjectCaller<Surveys>,
) -> Result<Json<Value>, ApiError> {
    set_archived(&request, &responses, caller, false).await
}

async fn set_archived(
    request: &HttpRequest,
    responses: &SurveyResponseService,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    archived: bool,
) -> Result<Json<Value>, ApiError> {
    let survey = path_id::<SurveyId>(request)?;
    let ResponseUuid(response) = path_id(request)?;
    responses
        .set_archived(access.project.id, survey, response, archived)
        .await?;
    Ok(Json(serde_json::json!({"success": true})))
}

/// The uuids of the survey's archived responses, newest first.
pub(crate) async fn archived_uuids(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<Vec<Uuid>>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    Ok(Json(
        responses.archived_uuids(access.project.id, survey).await?,
    ))
}
