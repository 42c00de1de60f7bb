//! `/api/organizations/{organization_id}/plugins/`: installing, changing and inspecting an
//! organization's plugins.

mod request;

pub(crate) use request::{PluginUpgrade, PluginWrite};

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use domain::access::OrganizationAccess;
use domain::plugin::{
    Plugin, PluginAccess, PluginCapabilities, PluginFiles, PluginId, PluginService,
};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::contract::schemas::PluginType;
use crate::dto::ActivityResponse;
use crate::error::ApiError;
use crate::extract::{
    JsonObject, NumberedPage, OrganizationCaller, PageNumber, Paginated, Pagination, Plugins,
    path_id,
};

/// PostHog's plugin fields; `url` without its query string (it may hold a token).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Plugin)]
pub(crate) struct PluginResponse {
    id: i32,
    #[schema(value_type = PluginType)]
    plugin_type: &'static str,
    name: Option<String>,
    description: Option<String>,
    url: Option<String>,
    icon: Option<String>,
    /// plugin.json's `config`: a list or an object.
    config_schema: Value,
    tag: Option<String>,
    latest_tag: Option<String>,
    is_global: bool,
    organization_id: Uuid,
    organization_name: String,
    /// `{"methods","jobs","scheduled_tasks"}`, `{}` until known.
    #[schema(value_type = Object)]
    capabilities: PluginCapabilities,
    metrics: Value,
    public_jobs: Value,
}

impl From<Plugin> for PluginResponse {
    fn from(plugin: Plugin) -> Self {
        let url = plugin.state.display_url().map(str::to_owned);
        let state = plugin.state;
        Self {
            id: plugin.id.0,
            plugin_type: state.plugin_type.as_str(),
            name: state.name,
            description: state.description,
            url,
            icon: state.icon,
            config_schema: state.config_schema.to_json(),
            tag: state.tag,
            latest_tag: state.latest_tag,
            is_global: state.is_global,
            organization_id: plugin.organization_id.0,
            organization_name: plugin.organization_name,
            capabilities: state.capabilities,
            metrics: state.metrics,
            public_jobs: state.public_jobs,
        }
    }
}

/// The plugin access of a caller cleared for the path's organization.
fn plugin_access(access: &OrganizationAccess) -> PluginAccess {
    PluginAccess {
        organization: access.organization.id,
        organization_name: access.organization.name.clone(),
        level: access.organization.plugins_access_level,
        user: access.principal.user.id,
    }
}

/// Ordered by id.
pub(crate) async fn list(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
    pagination: Pagination,
) -> Result<Json<Paginated<PluginResponse>>, ApiError> {
    let page = plugins
        .list(&plugin_access(&access), pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn create(
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let plugin = plugins
        .install(&plugin_access(&access), request::new_plugin(&body)?)
        .await?;
    Ok(HttpResponse::Created().json(PluginResponse::from(plugin)))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
) -> Result<Json<PluginResponse>, ApiError> {
    let plugin = plugins
        .get(&plugin_access(&access), path_id::<PluginId>(&request)?)
        .await?;
    Ok(Json(plugin.into()))
}

/// PATCH and PUT alike change the fields sent.
pub(crate) async fn update(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
    JsonObject(body): JsonObject,
) -> Result<Json<PluginResponse>, ApiError> {
    let id = path_id::<PluginId>(&request)?;
    let plugin = plugins
        .update(&plugin_access(&access), id, request::plugin_fields(&body)?)
        .await?;
    Ok(Json(plugin.into()))
}

pub(crate) async fn delete(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
) -> Result<HttpResponse, ApiError> {
    plugins
        .uninstall(&plugin_access(&access), path_id::<PluginId>(&request)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `{"plugin": {...}}` with the newest tag recorded.
pub(crate) async fn check_for_updates(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
) -> Result<Json<Value>, ApiError> {
    let plugin = plugins
        .check_for_updates(&plugin_access(&access), path_id::<PluginId>(&request)?)
        .await?;
    Ok(Json(json!({"plugin": PluginResponse::from(plugin)})))
}

/// `{filename: content}`.
pub(crate) async fn source(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
) -> Result<Json<PluginFiles>, ApiError> {
    let files = plugins
        .source(&plugin_access(&access), path_id::<PluginId>(&request)?)
        .await?;
    Ok(Json(files))
}

/// `{filename: content | null}` in, every file out.
pub(crate) async fn update_source(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
    JsonObject(body): JsonObject,
) -> Result<Json<PluginFiles>, ApiError> {
    let id = path_id::<PluginId>(&request)?;
    let files = plugins
        .update_source(&plugin_access(&access), id, request::source_changes(&body)?)
        .await?;
    Ok(Json(files))
}

/// Optional body `{"tag": "…"}` pins the version to install.
pub(crate) async fn upgrade(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
    JsonObject(body): JsonObject,
) -> Result<Json<PluginResponse>, ApiError> {
    let id = path_id::<PluginId>(&request)?;
    let plugin = plugins
        .upgrade(&plugin_access(&access), id, PluginUpgrade::read(&body)?.tag)
        .await?;
    Ok(Json(plugin.into()))
}

/// The configured repository listing, verbatim.
pub(crate) async fn repository(
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(plugins.repository(&plugin_access(&access)).await?))
}

/// Ids of this organization's plugins no project has enabled, ascending.
pub(crate) async fn unused(
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
) -> Result<Json<Vec<i32>>, ApiError> {
    let ids = plugins.unused(&plugin_access(&access)).await?;
    Ok(Json(ids.into_iter().map(|id| id.0).collect()))
}

/// Newest first, paged with `page` and `limit`.
pub(crate) async fn activity(
    request: HttpRequest,
    plugins: web::Data<PluginService>,
    OrganizationCaller(access, _): OrganizationCaller<Plugins>,
    numbered: PageNumber,
) -> Result<Json<NumberedPage<ActivityResponse>>, ApiError> {
    let page = plugins
        .activity(&plugin_access(&access), numbered.page_request())
        .await?;
    Ok(ActivityResponse::page(&request, numbered, page))
}
