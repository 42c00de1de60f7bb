//! `/api/projects/`: the projects the caller's key can reach.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::access::AccessService;
use domain::tenancy::{OrganizationId, Project, TenantRef};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{Caller, OrganizationCaller, Paginated, Pagination, ProjectCaller, Projects};

#[derive(Serialize, ToSchema)]
#[schema(as = Project)]
pub(crate) struct ProjectResponse {
    id: i32,
    organization: Uuid,
    name: String,
    api_token: String,
    created_at: DateTime<Utc>,
}

impl From<Project> for ProjectResponse {
    fn from(project: Project) -> Self {
        Self {
            id: project.id.0,
            organization: project.organization_id.0,
            name: project.name,
            api_token: project.api_token,
            created_at: project.created_at,
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

pub(crate) async fn retrieve(
    ProjectCaller(access, _): ProjectCaller<Projects>,
) -> Json<ProjectResponse> {
    Json(access.project.into())
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

/// `/api/organizations/{id}/projects/{project_id}/`: a project of that organization.
pub(crate) async fn retrieve_in_organization(
    request: HttpRequest,
    tenancy: web::Data<AccessService>,
    ProjectCaller(access, _): ProjectCaller<Projects>,
) -> Result<Json<ProjectResponse>, ApiError> {
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
    Ok(Json(access.project.into()))
}
