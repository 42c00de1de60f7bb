//! `/api/projects/`: the projects the caller's key can reach.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::access::AccessService;
use domain::tenancy::Project;
use serde::Serialize;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{Caller, Paginated, Pagination, ProjectCaller, Projects};

#[derive(Serialize)]
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
    Ok(Json(Paginated::new(
        &request,
        pagination,
        page.map(ProjectResponse::from),
    )))
}

pub(crate) async fn retrieve(
    ProjectCaller(access, _): ProjectCaller<Projects>,
) -> Json<ProjectResponse> {
    Json(access.project.into())
}
