//! `/api/projects/{project_id}/feature_flags/`: flags that surveys link to and target with.

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use domain::feature_flag::{FeatureFlagService, FlagId};

use crate::dto::FlagResponse;
use crate::error::ApiError;
use crate::extract::{JsonObject, Paginated, Pagination, ProjectCaller};

/// Newest first, ties by id (descending); deleted flags are left out.
pub(crate) async fn list(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access): ProjectCaller,
    pagination: Pagination,
) -> Result<Json<Paginated<FlagResponse>>, ApiError> {
    let page = flags
        .list(access.project.id, pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(
        &request,
        pagination,
        page.map(FlagResponse::from),
    )))
}

pub(crate) async fn create(
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access): ProjectCaller,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let flag = flags
        .create(access.project.id, access.principal.user.id, &body)
        .await?;
    Ok(HttpResponse::Created().json(FlagResponse::from(flag)))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access): ProjectCaller,
) -> Result<Json<FlagResponse>, ApiError> {
    let flag = flags.get(access.project.id, flag_id(&request)?).await?;
    Ok(Json(flag.into()))
}

pub(crate) async fn update(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access): ProjectCaller,
    JsonObject(body): JsonObject,
) -> Result<Json<FlagResponse>, ApiError> {
    let flag = flags
        .update(access.project.id, flag_id(&request)?, &body)
        .await?;
    Ok(Json(flag.into()))
}

/// Soft delete (PostHog answers 405 here; clients that call it get what they meant).
pub(crate) async fn delete(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access): ProjectCaller,
) -> Result<HttpResponse, ApiError> {
    flags.delete(access.project.id, flag_id(&request)?).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The `{flag_id}` path segment; anything but an integer finds nothing.
fn flag_id(request: &HttpRequest) -> Result<FlagId, ApiError> {
    request
        .match_info()
        .get("flag_id")
        .and_then(|raw| raw.parse().ok())
        .map(FlagId)
        .ok_or_else(ApiError::not_found)
}
