//! `/api/projects/{project_id}/groups_types/` and `/groups/find/`: the group types captures
//! created (PostHog's `GroupsTypesViewSet`: listed, renamed, given default columns, deleted) and
//! one group found by key (`GroupsViewSet.find`).

mod request;

pub(crate) use request::{DefaultColumnsWrite, GroupTypesMetadataWrite, find_parameters};

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::DomainError;
use domain::group::{Group, GroupService, GroupType, GroupTypeIndex};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::extract::{Groups, JsonList, JsonObject, ProjectCaller};

/// PostHog's 404 for a group type the project does not have.
const TYPE_NOT_FOUND: &str = "Group type not found";

/// A group type as PostHog's `GroupTypeSerializer` shows one.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = GroupType)]
pub(crate) struct GroupTypeResponse {
    /// The name events and SDKs use (`company`).
    group_type: String,
    /// 0–4, what flags and group property filters name.
    group_type_index: u8,
    name_singular: Option<String>,
    name_plural: Option<String>,
    /// Always `null`: Burrow has no dashboards.
    #[schema(value_type = Option<i64>)]
    detail_dashboard: Option<()>,
    default_columns: Option<Vec<String>>,
    created_at: DateTime<Utc>,
}

impl From<GroupType> for GroupTypeResponse {
    fn from(group_type: GroupType) -> Self {
        Self {
            group_type: group_type.group_type,
            group_type_index: group_type.index.get(),
            name_singular: group_type.name_singular,
            name_plural: group_type.name_plural,
            detail_dashboard: None,
            default_columns: group_type.default_columns,
            created_at: group_type.created_at,
        }
    }
}

/// A group as PostHog's `FindGroupSerializer` shows one.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Group)]
pub(crate) struct GroupResponse {
    group_type_index: u8,
    group_key: String,
    /// What its `$groupidentify` captures set, merged.
    #[schema(value_type = Object)]
    group_properties: Map<String, Value>,
    created_at: DateTime<Utc>,
    /// Always `null`: Burrow has no notebooks.
    #[schema(value_type = Option<String>)]
    notebook: Option<()>,
}

impl From<Group> for GroupResponse {
    fn from(group: Group) -> Self {
        Self {
            group_type_index: group.index.get(),
            group_key: group.group_key,
            group_properties: group.properties,
            created_at: group.created_at,
            notebook: None,
        }
    }
}

fn listed(types: Vec<GroupType>) -> Json<Vec<GroupTypeResponse>> {
    Json(types.into_iter().map(Into::into).collect())
}

/// A missing type as PostHog words it; other errors as they are.
fn type_not_found(error: DomainError) -> ApiError {
    match error {
        DomainError::NotFound => ApiError::not_found_with(TYPE_NOT_FOUND),
        other => other.into(),
    }
}

/// The project's group types by index; not paginated (there are at most five).
pub(crate) async fn list_types(
    groups: web::Data<GroupService>,
    ProjectCaller(access, _): ProjectCaller<Groups>,
) -> Result<Json<Vec<GroupTypeResponse>>, ApiError> {
    Ok(listed(groups.types(access.project.id).await?))
}

/// Renames the types listed (all or none) and answers every type.
pub(crate) async fn update_metadata(
    groups: web::Data<GroupService>,
    ProjectCaller(access, _): ProjectCaller<Groups>,
    body: JsonList,
) -> Result<Json<Vec<GroupTypeResponse>>, ApiError> {
    let names = GroupTypesMetadataWrite::read(body.items()?)?.into_names();
    Ok(listed(
        groups.update_metadata(access.project.id, names).await?,
    ))
}

pub(crate) async fn set_default_columns(
    groups: web::Data<GroupService>,
    ProjectCaller(access, _): ProjectCaller<Groups>,
    JsonObject(body): JsonObject,
) -> Result<Json<GroupTypeResponse>, ApiError> {
    let write = DefaultColumnsWrite::read(&body)?;
    let index = write
        .group_type_index
        .ok_or_else(|| ApiError::not_found_with(TYPE_NOT_FOUND))?;
    let group_type = groups
        .set_default_columns(access.project.id, index, write.default_columns)
        .await
        .map_err(type_not_found)?;
    Ok(Json(group_type.into()))
}

/// Deletes a type and its groups.
pub(crate) async fn delete_type(
    request: HttpRequest,
    groups: web::Data<GroupService>,
    ProjectCaller(access, _): ProjectCaller<Groups>,
) -> Result<HttpResponse, ApiError> {
    let index = request
        .match_info()
        .get("group_type_index")
        .and_then(|raw| raw.parse().ok())
        .and_then(GroupTypeIndex::new)
        .ok_or_else(|| ApiError::not_found_with(TYPE_NOT_FOUND))?;
    groups
        .delete_type(access.project.id, index)
        .await
        .map_err(type_not_found)?;
    Ok(HttpResponse::NoContent().finish())
}

/// One group, by `group_type_index` and `group_key` (both required).
pub(crate) async fn find(
    request: HttpRequest,
    groups: web::Data<GroupService>,
    ProjectCaller(access, _): ProjectCaller<Groups>,
) -> Result<Json<GroupResponse>, ApiError> {
    let (index, key) = request::find_query(request.query_string())?;
    let index = index.ok_or_else(ApiError::not_found)?;
    Ok(Json(
        groups.find(access.project.id, index, &key).await?.into(),
    ))
}
