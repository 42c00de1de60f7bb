//! `/api/projects/{project_id}/plugin_configs/`: which plugins a project uses, and how.

mod request;

pub(crate) use request::PluginConfigWrite;

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::access::{AccessService, ProjectAccess};
use domain::plugin::PluginAccess;
use domain::plugin_config::{PluginConfig, PluginConfigId, PluginConfigService};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::extract::{JsonObject, Paginated, Pagination, Plugins, ProjectCaller, path_id};

/// PostHog's plugin config fields.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PluginConfig)]
pub(crate) struct PluginConfigResponse {
    id: i32,
    plugin: i32,
    enabled: bool,
    order: i32,
    #[schema(value_type = Object)]
    config: Map<String, Value>,
    team_id: i32,
    name: Option<String>,
    description: Option<String>,
    deleted: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<PluginConfig> for PluginConfigResponse {
    fn from(config: PluginConfig) -> Self {
        Self {
            id: config.id.0,
            plugin: config.plugin_id.0,
            enabled: config.state.enabled,
            order: config.state.order,
            config: config.state.config,
            team_id: config.project_id.0,
            name: config.state.name,
            description: config.state.description,
            deleted: config.deleted,
            created_at: config.created_at,
            updated_at: config.updated_at,
        }
    }
}

/// The plugin access of a caller cleared for the path's project: its organization's level.
async fn plugin_access(
    tenancy: &AccessService,
    access: &ProjectAccess,
) -> Result<PluginAccess, ApiError> {
    let organization = tenancy.organization_of(access).await?;
    Ok(PluginAccess {
        organization: organization.id,
        organization_name: organization.name.clone(),
        level: organization.plugins_access_level,
        user: access.principal.user.id,
    })
}

/// By `order`, then id.
pub(crate) async fn list(
    request: HttpRequest,
    configs: web::Data<PluginConfigService>,
    tenancy: web::Data<AccessService>,
    ProjectCaller(access, _): ProjectCaller<Plugins>,
    pagination: Pagination,
) -> Result<Json<Paginated<PluginConfigResponse>>, ApiError> {
    let plugin_access = plugin_access(&tenancy, &access).await?;
    let page = configs
        .list(&plugin_access, access.project.id, pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn create(
    configs: web::Data<PluginConfigService>,
    tenancy: web::Data<AccessService>,
    ProjectCaller(access, _): ProjectCaller<Plugins>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let plugin_access = plugin_access(&tenancy, &access).await?;
    let config = configs
        .create(
            &plugin_access,
            access.project.id,
            request::new_config(&body)?,
        )
        .await?;
    Ok(HttpResponse::Created().json(PluginConfigResponse::from(config)))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    configs: web::Data<PluginConfigService>,
    tenancy: web::Data<AccessService>,
    ProjectCaller(access, _): ProjectCaller<Plugins>,
) -> Result<Json<PluginConfigResponse>, ApiError> {
    let plugin_access = plugin_access(&tenancy, &access).await?;
    let config = configs
        .get(
            &plugin_access,
            access.project.id,
            path_id::<PluginConfigId>(&request)?,
        )
        .await?;
    Ok(Json(config.into()))
}

pub(crate) async fn update(
    request: HttpRequest,
    configs: web::Data<PluginConfigService>,
    tenancy: web::Data<AccessService>,
    ProjectCaller(access, _): ProjectCaller<Plugins>,
    JsonObject(body): JsonObject,
) -> Result<Json<PluginConfigResponse>, ApiError> {
    let id = path_id::<PluginConfigId>(&request)?;
    let plugin_access = plugin_access(&tenancy, &access).await?;
    let config = configs
        .update(
            &plugin_access,
            access.project.id,
            id,
            request::config_changes(&body)?,
        )
        .await?;
    Ok(Json(config.into()))
}

/// Soft delete: the config is disabled and disappears from the API.
pub(crate) async fn delete(
    request: HttpRequest,
    configs: web::Data<PluginConfigService>,
    tenancy: web::Data<AccessService>,
    ProjectCaller(access, _): ProjectCaller<Plugins>,
) -> Result<HttpResponse, ApiError> {
    let id = path_id::<PluginConfigId>(&request)?;
    let plugin_access = plugin_access(&tenancy, &access).await?;
    configs
        .delete(&plugin_access, access.project.id, id)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
