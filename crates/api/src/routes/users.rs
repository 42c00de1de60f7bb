//! `/api/users/@me/`: who the key belongs to, and the body that switches their current project
//! or organization ([`SwitchCurrent`], also its schema in the OpenAPI document).

use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::ValidationError;
use domain::access::{AccessService, OrganizationAccess, Principal, ProjectAccess};
use domain::tenancy::{OrganizationId, OrganizationMembership, ProjectId, User, UserBasic};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::ObjectBuilder;
use uuid::Uuid;

use crate::contract::schemas::integer_within;
use crate::dto::UserBasicResponse;
use crate::error::ApiError;
use crate::extract::{Caller, JsonObject, Users};
use crate::fields::{Fields, non_null};
use crate::routes::organizations::OrganizationResponse;

#[derive(Serialize, ToSchema)]
#[schema(as = Me)]
pub(crate) struct MeResponse {
    #[serde(flatten)]
    user: UserBasicResponse,
    date_joined: DateTime<Utc>,
    organizations: Vec<OrganizationSummary>,
    /// The current project, as PostHog's user serializer shows it.
    team: Option<TeamSummary>,
    /// The current organization, shaped as `/api/organizations/{id}/`.
    organization: Option<OrganizationResponse>,
}

#[derive(Serialize, ToSchema)]
struct TeamSummary {
    id: i32,
    organization: Uuid,
    project_id: i32,
    name: String,
    api_token: String,
}

#[derive(Serialize, ToSchema)]
struct OrganizationSummary {
    id: Uuid,
    name: String,
    membership_level: i16,
}

impl MeResponse {
    fn new(
        user: User,
        memberships: Vec<OrganizationMembership>,
        (project, organization): (Option<ProjectAccess>, Option<OrganizationAccess>),
    ) -> Self {
        Self {
            team: project.map(|access| TeamSummary {
                id: access.project.id.0,
                organization: access.project.organization_id.0,
                project_id: access.project.id.0,
                name: access.project.name,
                api_token: access.project.api_token,
            }),
            organization: organization
                .map(|access| OrganizationResponse::new(access.organization, access.level)),
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
    respond(&access, principal).await
}

/// `PATCH /api/users/@me/`: switch the current project or organization.
#[derive(ToSchema)]
pub(crate) struct SwitchCurrent {
    #[schema(schema_with = team_schema, required = false)]
    set_current_team: Option<ProjectId>,
    /// An organization id; its first project the key sees becomes current.
    #[schema(value_type = Option<String>, nullable = false, format = Uuid)]
    set_current_organization: Option<OrganizationId>,
}

/// Project ids are positive `i32`s.
fn team_schema() -> ObjectBuilder {
    integer_within(1, i32::MAX.into(), false)
        .description(Some("A project id; its organization becomes current too."))
}

impl SwitchCurrent {
    /// Reads the body: the organization, then the project.
    ///
    /// # Errors
    /// The first invalid field.
    fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        Ok(Self {
            set_current_organization: non_null(
                fields.string("set_current_organization")?,
                "set_current_organization",
            )?
            .map(|raw| {
                Uuid::parse_str(&raw).map(OrganizationId).map_err(|_| {
                    ValidationError::invalid("set_current_organization", "Must be a valid UUID.")
                })
            })
            .transpose()?,
            set_current_team: non_null(
                fields.bounded_integer("set_current_team", 1, i32::MAX.into())?,
                "set_current_team",
            )?
            .map(ProjectId),
        })
    }
}

/// `set_current_organization` (UUID) or `set_current_team` (project id) switch the user's
/// current organization and project.
pub(crate) async fn switch_current(
    access: web::Data<AccessService>,
    Caller(mut principal, _): Caller<Users>,
    JsonObject(body): JsonObject,
) -> Result<Json<MeResponse>, ApiError> {
    let switch = SwitchCurrent::read(&body)?;
    principal.user = access
        .switch_current(
            &principal,
            switch.set_current_organization,
            switch.set_current_team,
        )
        .await?;
    respond(&access, principal).await
}

async fn respond(
    access: &AccessService,
    principal: Principal,
) -> Result<Json<MeResponse>, ApiError> {
    let memberships = access.visible_organizations(&principal).await?;
    let current = access.current(&principal).await?;
    Ok(Json(MeResponse::new(principal.user, memberships, current)))
}
