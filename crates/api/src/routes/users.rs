//! `/api/users/@me/`: who the key belongs to.

use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::access::AccessService;
use domain::tenancy::{OrganizationMembership, User, UserBasic};
use serde::Serialize;
use uuid::Uuid;

use crate::dto::UserBasicResponse;
use crate::error::ApiError;
use crate::extract::{Caller, Users};

#[derive(Serialize)]
pub(crate) struct MeResponse {
    #[serde(flatten)]
    user: UserBasicResponse,
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
            user: UserBasic::from(&user).into(),
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
    Caller(principal, _): Caller<Users>,
) -> Result<Json<MeResponse>, ApiError> {
    let memberships = access.visible_organizations(&principal).await?;
    Ok(Json(MeResponse::new(principal.user, memberships)))
}
