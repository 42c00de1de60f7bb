//! `/api/organizations/`: the organizations the caller belongs to.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::access::AccessService;
use domain::ports::Page;
use domain::tenancy::{MembershipLevel, Organization};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{Caller, OrganizationCaller, Organizations, Paginated, Pagination};

#[derive(Serialize, ToSchema)]
#[schema(as = Organization)]
pub(crate) struct OrganizationResponse {
    id: Uuid,
    name: String,
    created_at: DateTime<Utc>,
    /// 0 none, 3 config, 6 install, 9 root.
    plugins_access_level: i16,
    /// The caller's: 1 member, 8 admin, 15 owner.
    membership_level: i16,
}

impl OrganizationResponse {
    pub(crate) fn new(organization: Organization, level: MembershipLevel) -> Self {
        Self {
            id: organization.id.0,
            name: organization.name,
            created_at: organization.created_at,
            plugins_access_level: organization.plugins_access_level.as_i16(),
            membership_level: level.as_i16(),
        }
    }
}

/// Oldest first, ties by id.
pub(crate) async fn list(
    request: HttpRequest,
    access: web::Data<AccessService>,
    Caller(principal, _): Caller<Organizations>,
    pagination: Pagination,
) -> Result<Json<Paginated<OrganizationResponse>>, ApiError> {
    let memberships = access.visible_organizations(&principal).await?;
    let count = memberships.len() as u64;
    let items = memberships
        .into_iter()
        .skip(usize::try_from(pagination.offset).unwrap_or(usize::MAX))
        .take(pagination.limit as usize)
        .map(|m| OrganizationResponse::new(m.organization, m.level))
        .collect();
    Ok(Json(Paginated::new(
        &request,
        pagination,
        Page { count, items },
    )))
}

pub(crate) async fn retrieve(
    OrganizationCaller(access, _): OrganizationCaller<Organizations>,
) -> Json<OrganizationResponse> {
    Json(OrganizationResponse::new(access.organization, access.level))
}
