//! Project use cases beyond access: the project as stored, and changes to its settings
//! (`survey_config`, the one field of a project Burrow writes).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Project, ProjectId, SurveyConfig, TenancyRepository, UserId, config_changes};
use crate::activity::NewActivity;
use crate::error::DomainError;
use crate::error::OrNotFound as _;
use crate::in_transaction;
use crate::patch::Patch;

/// The name PostHog's activity log gives a change of a project's `survey_config`.
pub const GLOBAL_SURVEY_SETTINGS: &str = "global survey appearance";

/// A partial update of a project.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectChanges {
    /// Merged onto the stored config (its sent keys replace the stored ones); `Null` clears it.
    pub survey_config: Patch<SurveyConfig>,
}

pub struct ProjectService {
    tenancy: Arc<dyn TenancyRepository>,
}

impl ProjectService {
    pub fn new(tenancy: Arc<dyn TenancyRepository>) -> Self {
        Self { tenancy }
    }

    /// The project as stored now: the access check may answer from what it remembered, which
    /// a write on another node may have changed since.
    ///
    /// # Errors
    /// `NotFound` for a project deleted meanwhile; `Unexpected`.
    pub async fn project(&self, id: ProjectId) -> Result<Project, DomainError> {
        self.tenancy.project(id).await?.or_not_found()
    }

    /// Applies `changes` by `user` to the project, with the project locked: the sent
    /// `survey_config` is merged onto the stored one (PostHog's shallow merge) and checked
    /// whole, and a change is logged in the project's survey activity as PostHog logs it. A
    /// config that comes out as stored is not written, so nodes keep their SDK snapshots.
    ///
    /// # Errors
    /// `Invalid` when the merged config passes its bound; `NotFound` for a project deleted
    /// meanwhile; `Unexpected`.
    pub async fn update(
        &self,
        id: ProjectId,
        user: UserId,
        changes: ProjectChanges,
    ) -> Result<Project, DomainError> {
        if changes.survey_config.is_absent() {
            return self.project(id).await;
        }
        in_transaction!(self.tenancy.begin(), |tx| {
            let project = tx.lock_project(id).await?.or_not_found()?;
            let before = project.survey_config.as_ref();
            let after = match changes.survey_config {
                Patch::Value(sent) => Some(sent.merged_onto(before)?),
                Patch::Null | Patch::Absent => None,
            };
            if after.as_ref() == before {
                return Ok(project);
            }
            let activity = settings_activity(before, after.as_ref(), user);
            Ok(tx
                .set_survey_config(id, after.as_ref(), activity.as_ref())
                .await?)
        })
    }
}

/// PostHog's entry for a change of `survey_config`: `updated`, named
/// [`GLOBAL_SURVEY_SETTINGS`], with the changes of each key; `None` when none changed. A cleared
/// config logs nothing, as in PostHog, which compares what it clears as `{}` with `{}`.
fn settings_activity(
    before: Option<&SurveyConfig>,
    after: Option<&SurveyConfig>,
    user: UserId,
) -> Option<NewActivity> {
    let changes = config_changes(after.and(before), after);
    (!changes.is_empty()).then(|| NewActivity {
        user,
        activity: "updated",
        detail: json!({"name": GLOBAL_SURVEY_SETTINGS, "changes": Value::Array(changes)}),
    })
}
