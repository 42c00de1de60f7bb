//! Rows of feature flags: read, insert and partial update shapes.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::feature_flag::{FeatureFlag, FlagChanges, FlagFilters, FlagId, NewFlag};
use domain::tenancy::{ProjectId, UserBasic, UserId};
use serde_json::Value;

use crate::postgres::schema::feature_flags;

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
    pub is_remote_configuration: bool,
    pub created_at: DateTime<Utc>,
}

impl FlagRow {
    /// The flag, with its creator as the caller has it (joined, given to a write, or none).
    pub fn into_flag(self, created_by: Option<UserBasic>) -> Result<FeatureFlag, Unexpected> {
        let filters = FlagFilters::read(self.filters).map_err(|error| {
            Unexpected::new(format!(
                "feature flag {} has filters no write could store: {}",
                self.id, error.detail
            ))
        })?;
        Ok(FeatureFlag {
            id: FlagId(self.id),
            project_id: ProjectId(self.project_id),
            name: self.name,
            key: self.key,
            filters,
            deleted: self.deleted,
            active: self.active,
            ensure_experience_continuity: self.ensure_experience_continuity,
            is_remote_configuration: self.is_remote_configuration,
            created_at: self.created_at,
            created_by,
        })
    }
}

/// A flag as inserted. A `None` creator is bound as `NULL` (the column's default), not written
/// as `DEFAULT`, so the `INSERT` is one SQL text and stays prepared.
#[derive(Insertable)]
#[diesel(
    table_name = feature_flags,
    check_for_backend(diesel::pg::Pg),
    treat_none_as_default_value = false
)]
pub(crate) struct NewFlagRow<'a> {
    pub project_id: i32,
    pub name: &'a str,
    pub key: &'a str,
    pub filters: Value,
    pub active: bool,
    pub ensure_experience_continuity: bool,
    pub is_remote_configuration: bool,
    pub created_by_id: Option<i32>,
}

impl<'a> NewFlagRow<'a> {
    pub fn new(project: ProjectId, creator: Option<UserId>, flag: &'a NewFlag) -> Self {
        NewFlagRow {
            project_id: project.0,
            name: &flag.name,
            key: flag.key.as_str(),
            filters: Value::Object(flag.filters.to_json()),
            active: flag.active,
            ensure_experience_continuity: flag.ensure_experience_continuity,
            is_remote_configuration: flag.is_remote_configuration,
            created_by_id: creator.map(|user| user.0),
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
    pub is_remote_configuration: Option<bool>,
    pub deleted: Option<bool>,
}

impl From<FlagChanges> for FlagChangeset {
    fn from(changes: FlagChanges) -> Self {
        FlagChangeset {
            name: changes.name,
            key: changes.key.map(|key| key.into_string()),
            filters: changes
                .filters
                .map(|filters| Value::Object(filters.to_json())),
            active: changes.active,
            ensure_experience_continuity: changes.ensure_experience_continuity,
            is_remote_configuration: changes.is_remote_configuration,
            deleted: changes.deleted,
        }
    }
}
