//! The use cases of `/feature_flags/`: list, get, create, change and soft-delete.

use std::sync::Arc;

use serde_json::Value;

use super::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagFilters, FlagId, FlagRef, NewFlag,
    WrittenFlag, check_new_dependencies, check_switch,
};
use crate::cohort::{CohortRepository, check_named_cohorts};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, ValidationCode, ValidationError};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic};

/// Most a project's active flags may weigh together ([`FlagFilters::weight`]): what one project's
/// flags may take of a node's snapshot memory and of each of its `/flags` requests' time. Checked
/// when a flag is created, activated or given new filters through `/feature_flags/`; a race of
/// two such writes may pass it by one flag.
pub const MAX_PROJECT_FLAG_WEIGHT: usize = 512 * 1024;

pub struct FeatureFlagService {
    flags: Arc<dyn FeatureFlagRepository>,
    /// Where the cohorts the filters name are looked up.
    cohorts: Arc<dyn CohortRepository>,
}

impl FeatureFlagService {
    pub fn new(flags: Arc<dyn FeatureFlagRepository>, cohorts: Arc<dyn CohortRepository>) -> Self {
        Self { flags, cohorts }
    }

    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<FeatureFlag>, DomainError> {
        Ok(self.flags.list(project, page).await?)
    }

    /// # Errors
    /// `NotFound` for a missing, deleted or foreign flag.
    pub async fn get(&self, project: ProjectId, id: FlagId) -> Result<FeatureFlag, DomainError> {
        self.flags.get(project, id).await?.or_not_found()
    }

    /// A remote configuration flag's payload, named by id or key, as `remote_config` answers it
    /// (`null` when it has none).
    ///
    /// # Errors
    /// `NotFound` for a missing, deleted or foreign flag, or one that is not a remote
    /// configuration (as PostHog answers).
    pub async fn remote_config_payload(
        &self,
        project: ProjectId,
        flag: &FlagRef,
    ) -> Result<Value, DomainError> {
        let found = match flag {
            FlagRef::Id(id) => self.flags.get(project, *id).await?,
            FlagRef::Key(key) => self.flags.get_by_key(project, key).await?,
        };
        match found {
            Some(flag) if flag.is_remote_configuration => {
                Ok(flag.remote_config_payload().cloned().unwrap_or(Value::Null))
            }
            _ => Err(DomainError::NotFound),
        }
    }

    /// # Errors
    /// `Invalid` for a key another live flag of the project has, or a dependency on a flag
    /// that is missing, disabled, or would close a cycle.
    pub async fn create(
        &self,
        project: ProjectId,
        creator: &UserBasic,
        flag: NewFlag,
    ) -> Result<FeatureFlag, DomainError> {
        let written = WrittenFlag {
            id: None,
            key: flag.key.as_str(),
            filters: &flag.filters,
            active: flag.active,
        };
        let active = self.flags.active(project).await?;
        if flag.active {
            check_project_weight(&active, None, &flag.filters)?;
        }
        self.check_dependencies(project, &written, &active, true, None)
            .await?;
        check_named_cohorts(&*self.cohorts, project, &flag.filters, "filters").await?;
        self.flags
            .create(project, Some(creator.clone()), flag)
            .await
            .map_err(|error| error.conflict_as(key_taken))
    }

    /// Partial update; `deleted: true` deletes the flag (as DELETE does). The flag is read
    /// first, for the weight of what it would serve, for what depends on it, and for its
    /// creator, which the update does not read back.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` for a taken key, a dependency refused (as on create), switching
    /// off or deleting a flag active flags depend on, or switching on one whose dependencies
    /// are off.
    pub async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        mut changes: FlagChanges,
    ) -> Result<FeatureFlag, DomainError> {
        if changes.deleted == Some(true) {
            // A deleted flag never serves.
            changes.active = Some(false);
        }
        let flag = self.get(project, id).await?;
        let active = self.flags.active(project).await?;
        let serves = changes.active.unwrap_or(flag.active);
        let filters = changes.filters.as_ref().unwrap_or(&flag.filters);
        if (changes.filters.is_some() || changes.active == Some(true)) && serves {
            check_project_weight(&active, Some(id), filters)?;
        }
        let key = changes
            .key
            .as_ref()
            .map_or(flag.key.as_str(), |key| key.as_str());
        let written = WrittenFlag {
            id: Some(id),
            key,
            filters,
            active: serves,
        };
        let action = if changes.deleted == Some(true) {
            Some("delete")
        } else if serves != flag.active {
            Some(if serves { "enable" } else { "disable" })
        } else {
            None
        };
        self.check_dependencies(
            project,
            &written,
            &active,
            changes.filters.is_some(),
            action,
        )
        .await?;
        let updated = self
            .flags
            .update(project, id, changes)
            .await
            .map_err(|error| error.conflict_as(key_taken))?;
        Ok(FeatureFlag {
            created_by: flag.created_by,
            ..updated
        })
    }

    /// Soft delete: the flag disappears from the API and frees its key; surveys linked to it
    /// keep showing it with `deleted: true`.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` when active flags depend on it.
    pub async fn delete(&self, project: ProjectId, id: FlagId) -> Result<(), DomainError> {
        self.update(project, id, FlagChanges::deletion())
            .await
            .map(|_| ())
    }
}

impl FeatureFlagService {
    /// The dependency checks of a write to `written` (`active`, the project's active flags):
    /// new filters' dependencies when `filters_sent`, and, for a write that switches the flag
    /// (`action`: PostHog's word for it), what depends on it or what it depends on. A flag a
    /// check needs that is not active is read on its own, to tell a disabled flag from a
    /// missing one.
    async fn check_dependencies(
        &self,
        project: ProjectId,
        written: &WrittenFlag<'_>,
        active: &[FeatureFlag],
        filters_sent: bool,
        action: Option<&str>,
    ) -> Result<(), DomainError> {
        let mut inactive = Vec::new();
        for id in written.filters.dependencies() {
            if Some(id) != written.id
                && !active.iter().any(|flag| flag.id == id)
                && !inactive.iter().any(|flag: &FeatureFlag| flag.id == id)
                && let Some(flag) = self.flags.get(project, id).await?
            {
                inactive.push(flag);
            }
        }
        if filters_sent {
            check_new_dependencies(written, active, &inactive)?;
        }
        if let Some(action) = action {
            check_switch(written, action, active, &inactive)?;
        }
        Ok(())
    }
}

/// Refuses `filters` for an active flag (`replacing` one, whose weight then no longer counts)
/// when the project's `active` flags would weigh more than [`MAX_PROJECT_FLAG_WEIGHT`].
fn check_project_weight(
    active: &[FeatureFlag],
    replacing: Option<FlagId>,
    filters: &FlagFilters,
) -> Result<(), DomainError> {
    let others: usize = active
        .iter()
        .filter(|flag| Some(flag.id) != replacing)
        .map(|flag| flag.filters.weight())
        .sum();
    let total = others.saturating_add(filters.weight());
    if total > MAX_PROJECT_FLAG_WEIGHT {
        return Err(ValidationError::invalid(
            "filters",
            format!(
                "A project's active flags may weigh at most {MAX_PROJECT_FLAG_WEIGHT} bytes \
                 together (their filters' JSON, and 4096 more for each regex filter); with \
                 these filters they would weigh {total}."
            ),
        )
        .into());
    }
    Ok(())
}

fn key_taken() -> ValidationError {
    ValidationError::field(
        "key",
        ValidationCode::Unique,
        "There is already a feature flag with this key.",
    )
}
