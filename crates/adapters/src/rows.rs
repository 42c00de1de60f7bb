//! Diesel row types: the column shapes of each table, converted to domain entities here and
//! nowhere else.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::api_key::ApiKey;
use domain::feature_flag::{FeatureFlag, FlagChanges, FlagId, NewFlag};
use domain::scope::ScopeGrants;
use domain::survey::{Iterations, Schedule, Survey, SurveyState, SurveyType};
use domain::tenancy::{
    MembershipLevel, Organization, OrganizationId, PluginsAccessLevel, Project, ProjectId, User,
    UserBasic, UserId,
};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::schema::{feature_flags, organizations, personal_api_keys, projects, surveys, users};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = organizations, check_for_backend(diesel::pg::Pg))]
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
}

impl From<ProjectRow> for Project {
    fn from(row: ProjectRow) -> Self {
        Project {
            id: ProjectId(row.id),
            organization_id: OrganizationId(row.organization_id),
            name: row.name,
            api_token: row.api_token,
            created_at: row.created_at,
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

#[derive(Queryable, Selectable)]
#[diesel(table_name = feature_flags, check_for_backend(diesel::pg::Pg))]
pub(crate) struct FlagRow {
    pub id: i32,
    pub project_id: i32,
    pub name: String,
    pub key: String,
    pub filters: Value,
    pub deleted: bool,
    pub active: bool,
    pub ensure_experience_continuity: bool,
    pub created_by_id: Option<i32>,
    pub created_at: DateTime<Utc>,
}

impl FlagRow {
    /// The flag, with its creator loaded separately (by a join or a batch query).
    pub fn into_flag(self, created_by: Option<UserBasic>) -> Result<FeatureFlag, Unexpected> {
        let Value::Object(filters) = self.filters else {
            return Err(Unexpected::new(format!(
                "feature flag {} has filters that are not an object",
                self.id
            )));
        };
        Ok(FeatureFlag {
            id: FlagId(self.id),
            project_id: ProjectId(self.project_id),
            name: self.name,
            key: self.key,
            filters,
            deleted: self.deleted,
            active: self.active,
            ensure_experience_continuity: self.ensure_experience_continuity,
            created_at: self.created_at,
            created_by,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = feature_flags, check_for_backend(diesel::pg::Pg))]
pub(crate) struct NewFlagRow<'a> {
    pub project_id: i32,
    pub name: &'a str,
    pub key: &'a str,
    pub filters: Value,
    pub active: bool,
    pub ensure_experience_continuity: bool,
    pub created_by_id: Option<i32>,
}

impl<'a> From<&'a NewFlag> for NewFlagRow<'a> {
    fn from(flag: &'a NewFlag) -> Self {
        NewFlagRow {
            project_id: flag.project_id.0,
            name: &flag.name,
            key: &flag.key,
            filters: Value::Object(flag.filters.clone()),
            active: flag.active,
            ensure_experience_continuity: flag.ensure_experience_continuity,
            created_by_id: flag.created_by.map(|user| user.0),
        }
    }
}

/// A flag's changed columns; `None` fields are left out of the `UPDATE`.
#[derive(AsChangeset)]
#[diesel(table_name = feature_flags, check_for_backend(diesel::pg::Pg))]
pub(crate) struct FlagChangeset {
    pub name: Option<String>,
    pub key: Option<String>,
    pub filters: Option<Value>,
    pub active: Option<bool>,
    pub ensure_experience_continuity: Option<bool>,
    pub deleted: Option<bool>,
}

impl FlagChangeset {
    /// Whether nothing would change (diesel refuses an `UPDATE` without columns).
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.key.is_none()
            && self.filters.is_none()
            && self.active.is_none()
            && self.ensure_experience_continuity.is_none()
            && self.deleted.is_none()
    }
}

impl From<FlagChanges> for FlagChangeset {
    fn from(changes: FlagChanges) -> Self {
        // A deleted flag is never active.
        let active = if changes.deleted == Some(true) {
            Some(false)
        } else {
            changes.active
        };
        FlagChangeset {
            name: changes.name,
            key: changes.key,
            filters: changes.filters.map(Value::Object),
            active,
            ensure_experience_continuity: changes.ensure_experience_continuity,
            deleted: changes.deleted,
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = surveys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct SurveyRow {
    pub id: Uuid,
    pub project_id: i32,
    pub name: String,
    pub description: String,
    pub survey_type: String,
    pub linked_flag_id: Option<i32>,
    pub targeting_flag_id: Option<i32>,
    pub owns_targeting_flag: bool,
    pub questions: Option<Value>,
    pub conditions: Option<Value>,
    pub appearance: Option<Value>,
    pub created_at: DateTime<Utc>,
    pub created_by_id: Option<i32>,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub archived: bool,
    pub responses_limit: Option<i32>,
    pub schedule: String,
    pub iteration_count: Option<i32>,
    pub iteration_frequency_days: Option<i32>,
    pub iteration_start_dates: Option<Vec<DateTime<Utc>>>,
    pub current_iteration: Option<i32>,
    pub current_iteration_start_date: Option<DateTime<Utc>>,
    pub enable_partial_responses: bool,
}

impl SurveyRow {
    /// The survey, picking its flags and creator out of what was loaded for a whole page.
    /// A flag missing from `flags` (another project's) is shown as absent.
    pub fn into_survey(
        self,
        flags: &HashMap<i32, FeatureFlag>,
        users: &HashMap<i32, UserBasic>,
    ) -> Result<Survey, Unexpected> {
        let survey_type = SurveyType::parse(&self.survey_type).ok_or_else(|| {
            Unexpected::new(format!(
                "survey {} has type {:?}",
                self.id, self.survey_type
            ))
        })?;
        let schedule = Schedule::parse(&self.schedule).ok_or_else(|| {
            Unexpected::new(format!(
                "survey {} has schedule {:?}",
                self.id, self.schedule
            ))
        })?;
        let id = self.id;
        let object = |column: &str, value: Option<Value>| match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(map)) => Ok(Some(map)),
            Some(_) => Err(Unexpected::new(format!(
                "survey {id} has {column} that are not an object"
            ))),
        };
        let flag = |flag_id: Option<i32>| flag_id.and_then(|flag_id| flags.get(&flag_id).cloned());
        Ok(Survey {
            id,
            project_id: ProjectId(self.project_id),
            linked_flag: flag(self.linked_flag_id),
            targeting_flag: flag(self.targeting_flag_id),
            owns_targeting_flag: self.owns_targeting_flag,
            created_at: self.created_at,
            created_by: self
                .created_by_id
                .and_then(|user| users.get(&user).cloned()),
            state: SurveyState {
                name: self.name,
                description: self.description,
                survey_type,
                linked_flag_id: self.linked_flag_id.map(FlagId),
                questions: self.questions,
                conditions: object("conditions", self.conditions)?,
                appearance: object("appearance", self.appearance)?,
                start_date: self.start_date,
                end_date: self.end_date,
                archived: self.archived,
                responses_limit: self.responses_limit,
                schedule,
                iteration_count: self.iteration_count,
                iteration_frequency_days: self.iteration_frequency_days,
                enable_partial_responses: self.enable_partial_responses,
                iterations: Iterations {
                    start_dates: self.iteration_start_dates,
                    current: self.current_iteration,
                    current_start_date: self.current_iteration_start_date,
                },
            },
        })
    }
}

/// The columns a `SurveyState` is written to, on insert and on update alike. `None` is
/// written as `NULL` by an update (a cleared field), and as the column default (`NULL`) by an
/// insert.
#[derive(Insertable, AsChangeset)]
#[diesel(table_name = surveys, check_for_backend(diesel::pg::Pg), treat_none_as_null = true)]
pub(crate) struct SurveyStateRow<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub survey_type: &'static str,
    pub linked_flag_id: Option<i32>,
    pub questions: Option<&'a Value>,
    pub conditions: Option<Value>,
    pub appearance: Option<Value>,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub archived: bool,
    pub responses_limit: Option<i32>,
    pub schedule: &'static str,
    pub iteration_count: Option<i32>,
    pub iteration_frequency_days: Option<i32>,
    pub iteration_start_dates: Option<&'a [DateTime<Utc>]>,
    pub current_iteration: Option<i32>,
    pub current_iteration_start_date: Option<DateTime<Utc>>,
    pub enable_partial_responses: bool,
}

impl<'a> From<&'a SurveyState> for SurveyStateRow<'a> {
    fn from(state: &'a SurveyState) -> Self {
        let object = |map: &Option<Map<String, Value>>| map.clone().map(Value::Object);
        SurveyStateRow {
            name: &state.name,
            description: &state.description,
            survey_type: state.survey_type.as_str(),
            linked_flag_id: state.linked_flag_id.map(|flag| flag.0),
            questions: state.questions.as_ref(),
            conditions: object(&state.conditions),
            appearance: object(&state.appearance),
            start_date: state.start_date,
            end_date: state.end_date,
            archived: state.archived,
            responses_limit: state.responses_limit,
            schedule: state.schedule.as_str(),
            iteration_count: state.iteration_count,
            iteration_frequency_days: state.iteration_frequency_days,
            iteration_start_dates: state.iterations.start_dates.as_deref(),
            current_iteration: state.iterations.current,
            current_iteration_start_date: state.iterations.current_start_date,
            enable_partial_responses: state.enable_partial_responses,
        }
    }
}
