//! `/api/projects/{project_id}/feature_flags/`: flags that surveys link to and target with.

mod request;

pub(crate) use request::FeatureFlagWrite;

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use domain::feature_flag::{FeatureFlagService, FlagId, FlagRef};
use domain::tenancy::UserBasic;
use serde_json::Value;

use crate::dto::FlagResponse;
use crate::error::ApiError;
use crate::extract::{FeatureFlags, JsonObject, Paginated, Pagination, ProjectCaller, path_id};

/// Newest first, ties by id (descending); deleted flags are left out.
pub(crate) async fn list(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<FeatureFlags>,
    pagination: Pagination,
) -> Result<Json<Paginated<FlagResponse>>, ApiError> {
    let page = flags
        .list(access.project.id, pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn create(
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<FeatureFlags>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let flag = flags
        .create(
            access.project.id,
            &UserBasic::from(&access.principal.user),
            request::new_flag(body)?,
        )
        .await?;
    Ok(HttpResponse::Created().json(FlagResponse::from(flag)))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<FeatureFlags>,
) -> Result<Json<FlagResponse>, ApiError> {
    let flag = flags
        .get(access.project.id, path_id::<FlagId>(&request)?)
        .await?;
    Ok(Json(flag.into()))
}

pub(crate) async fn update(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<FeatureFlags>,
    JsonObject(body): JsonObject,
) -> Result<Json<FlagResponse>, ApiError> {
    let id = path_id::<FlagId>(&request)?;
    let flag = flags
        .update(access.project.id, id, request::flag_changes(body)?)
        .await?;
    Ok(Json(flag.into()))
}

/// A remote configuration flag's payload, the flag named by id or key (posthog-node's
/// `getRemoteConfigPayload`): the payload of `true` as stored, `null` without one; 404 for a
/// flag that is not a remote configuration, as PostHog answers.
pub(crate) async fn remote_config(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<FeatureFlags>,
) -> Result<Json<Value>, ApiError> {
    let flag = FlagRef::parse(request.match_info().get("flag").unwrap_or_default());
    Ok(Json(
        flags
            .remote_config_payload(access.project.id, &flag)
            .await?,
    ))
}

/// Soft delete (PostHog answers 405 here; clients that call it get what they meant).
pub(crate) async fn delete(
    request: HttpRequest,
    flags: web::Data<FeatureFlagService>,
    ProjectCaller(access, _): ProjectCaller<FeatureFlags>,
) -> Result<HttpResponse, ApiError> {
    flags
        .delete(access.project.id, path_id::<FlagId>(&request)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
