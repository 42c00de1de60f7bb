//! Rows of cohorts: read, insert and partial update shapes.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::cohort::{Cohort, CohortChanges, CohortFilters, CohortId, NewCohort};
use domain::tenancy::{ProjectId, UserBasic, UserId};
use serde_json::Value;

use crate::postgres::schema::cohorts;

#[derive(Queryable, Selectable)]
#[diesel(table_name = cohorts, check_for_backend(diesel::pg::Pg))]
pub(crate) struct CohortRow {
    pub id: i32,
    pub project_id: i32,
    pub name: String,
    pub description: String,
    pub filters: Value,
    pub is_static: bool,
    pub deleted: bool,
    pub created_at: DateTime<Utc>,
}

impl CohortRow {
    /// The cohort, with its creator as the caller has it (joined, given to a write, or none).
    /// Filters are parsed again, as a client's would be: only checked filters are written, so
    /// a row that fails is corrupt, and is reported rather than served as matching no one.
    pub fn into_cohort(self, created_by: Option<UserBasic>) -> Result<Cohort, Unexpected> {
        let filters = CohortFilters::parse(&self.filters).map_err(|error| {
            Unexpected::new(format!(
                "cohort {} has filters no write could store: {}",
                self.id, error.detail
            ))
        })?;
        Ok(Cohort {
            id: CohortId(self.id),
            project_id: ProjectId(self.project_id),
            name: self.name,
            description: self.description,
            filters,
            is_static: self.is_static,
            deleted: self.deleted,
            created_at: self.created_at,
            created_by,
        })
    }
}

/// Filters as stored: the JSON PostHog's clients send and its definitions serve, so what is
/// read back parses to the same filters.
pub(crate) fn filters_json(filters: &CohortFilters) -> Result<Value, Unexpected> {
    serde_json::to_value(filters).map_err(Unexpected::new)
}

/// A cohort as inserted. A `None` creator is bound as `NULL` (the column's default), not
/// written as `DEFAULT`, so the `INSERT` is one SQL text whoever creates it.
#[derive(Insertable)]
#[diesel(
    table_name = cohorts,
    check_for_backend(diesel::pg::Pg),
    treat_none_as_default_value = false
)]
pub(crate) struct NewCohortRow<'a> {
    pub project_id: i32,
    pub name: &'a str,
    pub description: &'a str,
    pub filters: Value,
    pub is_static: bool,
    pub created_by_id: Option<i32>,
}

impl<'a> NewCohortRow<'a> {
    pub fn new(
        project: ProjectId,
        creator: Option<UserId>,
        cohort: &'a NewCohort,
    ) -> Result<Self, Unexpected> {
        Ok(NewCohortRow {
            project_id: project.0,
            name: &cohort.name,
            description: &cohort.description,
            filters: filters_json(&cohort.filters)?,
            is_static: cohort.is_static,
            created_by_id: creator.map(|user| user.0),
        })
    }
}

/// A cohort's changed columns; `None` fields are left out of the `UPDATE`.
#[derive(AsChangeset)]
#[diesel(table_name = cohorts, check_for_backend(diesel::pg::Pg))]
pub(crate) struct CohortChangeset {
    pub name: Option<String>,
    pub description: Option<String>,
    pub filters: Option<Value>,
    pub deleted: Option<bool>,
}

impl CohortChangeset {
    pub fn new(changes: CohortChanges) -> Result<Self, Unexpected> {
        Ok(CohortChangeset {
            name: changes.name,
            description: changes.description,
            filters: changes.filters.as_ref().map(filters_json).transpose()?,
            deleted: changes.deleted,
        })
    }

    /// Whether no column changes: diesel refuses an `UPDATE` without columns.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.description.is_none()
            && self.filters.is_none()
            && self.deleted.is_none()
    }
}
