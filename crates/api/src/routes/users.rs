//! `/api/users/@me/`: who the key belongs to.

use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::access::AccessService;
use domain::tenancy::{OrganizationMembership, User};
use serde::Serialize;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::Caller;

#[derive(Serialize)]
pub(crate) struct MeResponse {
    id: i32,
    uuid: Uuid,
    distinct_id: String,
    first_name: String,
    last_name: String,
    email: String,
    is_email_verified: bool,
    date_joined: DateTime<Utc>,
    organizations: Vec<OrganizationSummary>,
}

#[derive(Serialize)]
struct OrganizationSummary {
    id: Uuid,
    name: String,
    membership_level: i16,
}

impl MeResponse {
    fn new(user: User, memberships: Vec<OrganizationMembership>) -> Self {
        Self {
            id: user.id.0,
            uuid: user.uuid,
            distinct_id: user.distinct_id,
            first_name: user.first_name,
            last_name: user.last_name,
            email: user.email,
            is_email_verified: user.is_email_verified,
            date_joined: user.created_at,
            organizations: memberships
                .into_iter()
                .map(|m| OrganizationSummary {
                    id: m.organization.id.0,
                    name: m.organization.name,
                    membership_level: m.level.as_i16(),
                })
                .collect(),
        }
    }
}

pub(crate) async fn me(
    access: web::Data<AccessService>,
    Caller(principal): Caller,
) -> Result<Json<MeResponse>, ApiError> {
    let memberships = access.visible_organizations(&principal).await?;
    Ok(Json(MeResponse::new(principal.user, memberships)))
}
