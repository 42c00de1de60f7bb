//! Rows of organizations, projects, users, memberships and personal API keys.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::api_key::ApiKey;
use domain::scope::ScopeGrants;
use domain::tenancy::{
    MembershipLevel, Organization, OrganizationId, PluginsAccessLevel, Project, ProjectId,
    SurveyConfig, User, UserBasic, UserId,
};
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::schema::{organizations, personal_api_keys, projects, users};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(
    table_name = organizations,
    check_for_backend(diesel::pg::Pg),
    treat_none_as_default_value = false
)]
pub(crate) struct OrganizationRow {
    pub id: Uuid,
    pub name: String,
    pub plugins_access_level: i16,
    pub created_at: DateTime<Utc>,
}

impl TryFrom<OrganizationRow> for Organization {
    type Error = Unexpected;

    fn try_from(row: OrganizationRow) -> Result<Self, Unexpected> {
        let level = PluginsAccessLevel::from_i16(row.plugins_access_level).ok_or_else(|| {
            Unexpected::new(format!(
                "organization {} has plugins_access_level {}",
                row.id, row.plugins_access_level
            ))
        })?;
        Ok(Organization {
            id: OrganizationId(row.id),
            name: row.name,
            plugins_access_level: level,
            created_at: row.created_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = projects, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ProjectRow {
    pub id: i32,
    pub organization_id: Uuid,
    pub name: String,
    pub api_token: String,
    pub created_at: DateTime<Utc>,
    pub survey_config: Option<Value>,
}

impl From<ProjectRow> for Project {
    fn from(row: ProjectRow) -> Self {
        Project {
            id: ProjectId(row.id),
            organization_id: OrganizationId(row.organization_id),
            name: row.name,
            api_token: row.api_token,
            created_at: row.created_at,
            survey_config: row.survey_config.and_then(SurveyConfig::stored),
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub(crate) struct UserRow {
    pub id: i32,
    pub uuid: Uuid,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub distinct_id: String,
    pub is_active: bool,
    pub is_email_verified: bool,
    pub current_organization_id: Option<Uuid>,
    pub current_project_id: Option<i32>,
    pub created_at: DateTime<Utc>,
}

impl From<UserRow> for User {
    fn from(row: UserRow) -> Self {
        User {
            id: UserId(row.id),
            uuid: row.uuid,
            email: row.email,
            first_name: row.first_name,
            last_name: row.last_name,
            distinct_id: row.distinct_id,
            is_active: row.is_active,
            is_email_verified: row.is_email_verified,
            current_organization_id: row.current_organization_id.map(OrganizationId),
            current_project_id: row.current_project_id.map(ProjectId),
            created_at: row.created_at,
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = personal_api_keys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ApiKeyRow {
    pub id: Uuid,
    pub user_id: i32,
    pub label: String,
    pub mask: String,
    pub scopes: Vec<String>,
    pub scoped_teams: Option<Vec<i32>>,
    pub scoped_organizations: Option<Vec<String>>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl From<ApiKeyRow> for ApiKey {
    fn from(row: ApiKeyRow) -> Self {
        ApiKey {
            id: row.id,
            user_id: UserId(row.user_id),
            label: row.label,
            mask: row.mask,
            scopes: ScopeGrants::from_stored(row.scopes),
            scoped_teams: row
                .scoped_teams
                .map(|teams| teams.into_iter().map(ProjectId).collect()),
            // An entry that is not a UUID matches no organization; it becomes the nil UUID
            // (never issued) rather than vanishing, which could widen the key to every org.
            scoped_organizations: row.scoped_organizations.map(|orgs| {
                orgs.into_iter()
                    .map(|org| OrganizationId(Uuid::parse_str(&org).unwrap_or(Uuid::nil())))
                    .collect()
            }),
            created_at: row.created_at,
            last_used_at: row.last_used_at,
        }
    }
}

pub(crate) fn membership_level(raw: i16) -> Result<MembershipLevel, Unexpected> {
    MembershipLevel::from_i16(raw)
        .ok_or_else(|| Unexpected::new(format!("membership level {raw} is not a known level")))
}

/// The columns of a user that `created_by` shows.
#[derive(Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub(crate) struct UserBasicRow {
    pub id: i32,
    pub uuid: Uuid,
    pub distinct_id: String,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub is_email_verified: bool,
}

impl From<UserBasicRow> for UserBasic {
    fn from(row: UserBasicRow) -> Self {
        UserBasic {
            id: UserId(row.id),
            uuid: row.uuid,
            distinct_id: row.distinct_id,
            first_name: row.first_name,
            last_name: row.last_name,
            email: row.email,
            is_email_verified: row.is_email_verified,
        }
    }
}
