//! Rows of early access features: read, insert and partial update shapes.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::early_access::{
    EarlyAccessChanges, EarlyAccessFeature, EarlyAccessId, NewEarlyAccessFeature, Stage,
};
use domain::feature_flag::FlagId;
use domain::tenancy::ProjectId;
use uuid::Uuid;

use crate::postgres::schema::early_access_features;

#[derive(Queryable, Selectable)]
#[diesel(table_name = early_access_features, check_for_backend(diesel::pg::Pg))]
pub(crate) struct EarlyAccessRow {
    pub id: Uuid,
    pub project_id: i32,
    pub name: String,
    pub description: String,
    pub stage: String,
    pub documentation_url: String,
    pub feature_flag_id: i32,
    pub created_at: DateTime<Utc>,
}

impl EarlyAccessRow {
    /// The feature, with its flag's key as read beside it. A stage this build does not know
    /// (the table's check names every one it writes) is reported, naming the feature.
    pub fn into_feature(self, flag_key: String) -> Result<EarlyAccessFeature, Unexpected> {
        let stage = Stage::parse(&self.stage).ok_or_else(|| {
            Unexpected::new(format!(
                "early access feature {} has stage {:?}",
                self.id, self.stage
            ))
        })?;
        Ok(EarlyAccessFeature {
            id: EarlyAccessId(self.id),
            project_id: ProjectId(self.project_id),
            name: self.name,
            description: self.description,
            stage,
            documentation_url: self.documentation_url,
            flag_id: FlagId(self.feature_flag_id),
            flag_key,
            created_at: self.created_at,
        })
    }
}

/// A feature as inserted; its id is made here (UUID v7, so ids grow with time as PostHog's
/// do), its `created_at` by the database.
#[derive(Insertable)]
#[diesel(table_name = early_access_features, check_for_backend(diesel::pg::Pg))]
pub(crate) struct NewEarlyAccessRow<'a> {
    pub id: Uuid,
    pub project_id: i32,
    pub name: &'a str,
    pub description: &'a str,
    pub stage: &'static str,
    pub documentation_url: &'a str,
    pub feature_flag_id: i32,
}

impl<'a> NewEarlyAccessRow<'a> {
    pub fn new(project: ProjectId, feature: &'a NewEarlyAccessFeature) -> Self {
        NewEarlyAccessRow {
            id: Uuid::now_v7(),
            project_id: project.0,
            name: &feature.name,
            description: &feature.description,
            stage: feature.stage.as_str(),
            documentation_url: &feature.documentation_url,
            feature_flag_id: feature.flag_id.0,
        }
    }
}

/// A feature's changed columns; `None` fields are left out of the `UPDATE`.
#[derive(AsChangeset)]
#[diesel(table_name = early_access_features, check_for_backend(diesel::pg::Pg))]
pub(crate) struct EarlyAccessChangeset {
    pub name: Option<String>,
    pub description: Option<String>,
    pub stage: Option<&'static str>,
    pub documentation_url: Option<String>,
}

impl From<EarlyAccessChanges> for EarlyAccessChangeset {
    fn from(changes: EarlyAccessChanges) -> Self {
        EarlyAccessChangeset {
            name: changes.name,
            description: changes.description,
            stage: changes.stage.map(Stage::as_str),
            documentation_url: changes.documentation_url,
        }
    }
}

impl EarlyAccessChangeset {
    /// Whether no column changes: diesel refuses an `UPDATE` without columns.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.description.is_none()
            && self.stage.is_none()
            && self.documentation_url.is_none()
    }
}
