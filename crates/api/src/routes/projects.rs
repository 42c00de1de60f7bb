//! `/api/projects/`: the projects the caller's key can reach, and the one setting of a project
//! Burrow writes (`survey_config`, [`ProjectWrite`]).

mod request;

pub(crate) use request::ProjectWrite;

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::access::AccessService;
use domain::tenancy::{OrganizationId, Project, ProjectService, TenantRef};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{
    Caller, JsonObject, OrganizationCaller, Paginated, Pagination, ProjectCaller, Projects,
};

/// A project as lists show it (PostHog's basic serializer).
#[derive(Serialize, ToSchema)]
#[schema(as = Project)]
pub(crate) struct ProjectResponse {
    id: i32,
    organization: Uuid,
    name: String,
    api_token: String,
    created_at: DateTime<Utc>,
}

impl From<&Project> for ProjectResponse {
    fn from(project: &Project) -> Self {
        Self {
            id: project.id.0,
            organization: project.organization_id.0,
            name: project.name.clone(),
            api_token: project.api_token.clone(),
            created_at: project.created_at,
        }
    }
}

impl From<Project> for ProjectResponse {
    fn from(project: Project) -> Self {
        Self::from(&project)
    }
}

/// One project, as its own URL shows it: with its settings.
#[derive(Serialize, ToSchema)]
#[schema(as = ProjectDetail)]
pub(crate) struct ProjectDetailResponse {
    #[serde(flatten)]
    project: ProjectResponse,
    /// Settings every survey of the project shares (`null` when never set, or cleared).
    #[schema(value_type = Option<Object>)]
    survey_config: Option<Map<String, Value>>,
}

impl From<Project> for ProjectDetailResponse {
    fn from(project: Project) -> Self {
        Self {
            project: ProjectResponse::from(&project),
            survey_config: project.survey_config.map(|config| config.into_map()),
        }
    }
}

/// Ordered by id.
pub(crate) async fn list(
    request: HttpRequest,
    access: web::Data<AccessService>,
    Caller(principal, _): Caller<Projects>,
    pagination: Pagination,
) -> Result<Json<Paginated<ProjectResponse>>, ApiError> {
    let page = access
        .visible_projects(&principal, pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

/// The project as stored now (its settings may have changed since the key's access was
/// remembered).
pub(crate) async fn retrieve(
    projects: web::Data<ProjectService>,
    ProjectCaller(access, _): ProjectCaller<Projects>,
) -> Result<Json<ProjectDetailResponse>, ApiError> {
    Ok(Json(projects.project(access.project.id).await?.into()))
}

/// `PATCH`: changes `survey_config` (merged onto the stored one; `null` clears it), any other
/// field refused.
pub(crate) async fn update(
    projects: web::Data<ProjectService>,
    ProjectCaller(access, _): ProjectCaller<Projects>,
    JsonObject(body): JsonObject,
) -> Result<Json<ProjectDetailResponse>, ApiError> {
    let changes = request::project_changes(&body)?;
    let project = projects
        .update(access.project.id, access.principal.user.id, changes)
        .await?;
    Ok(Json(project.into()))
}

/// `/api/organizations/{id}/projects/`: the organization's projects this key can see.
pub(crate) async fn list_in_organization(
    request: HttpRequest,
    access: web::Data<AccessService>,
    OrganizationCaller(organization, _): OrganizationCaller<Projects>,
    pagination: Pagination,
) -> Result<Json<Paginated<ProjectResponse>>, ApiError> {
    let page = access
        .organization_projects(&organization, pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

/// `/api/organizations/{id}/projects/{project_id}/`: a project of that organization, as stored
/// now.
pub(crate) async fn retrieve_in_organization(
    request: HttpRequest,
    tenancy: web::Data<AccessService>,
    projects: web::Data<ProjectService>,
    ProjectCaller(access, _): ProjectCaller<Projects>,
) -> Result<Json<ProjectDetailResponse>, ApiError> {
    let organization = match request.match_info().get("organization_id") {
        Some("@current") => TenantRef::Current,
        raw => TenantRef::Id(OrganizationId(
            raw.and_then(|raw| Uuid::parse_str(raw).ok())
                .ok_or_else(|| ApiError::not_found_with("Organization not found."))?,
        )),
    };
    let organization = tenancy
        .organization(access.principal.clone(), organization)
        .await?;
    if organization.organization.id != access.project.organization_id {
        return Err(ApiError::not_found_with("Project not found."));
    }
    Ok(Json(projects.project(access.project.id).await?.into()))
}
