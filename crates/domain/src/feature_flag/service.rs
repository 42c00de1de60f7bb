//! The use cases of `/feature_flags/`: list, get, create, change and soft-delete.

use std::sync::Arc;

use super::{FeatureFlag, FeatureFlagRepository, FlagChanges, FlagId, NewFlag};
use crate::error::{DomainError, ValidationCode, ValidationError};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserId};

pub struct FeatureFlagService {
    flags: Arc<dyn FeatureFlagRepository>,
}

impl FeatureFlagService {
    pub fn new(flags: Arc<dyn FeatureFlagRepository>) -> Self {
        Self { flags }
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
        self.flags
            .get(project, id)
            .await?
            .ok_or(DomainError::NotFound)
    }

    /// # Errors
    /// `Invalid` for a key another live flag of the project has.
    pub async fn create(
        &self,
        project: ProjectId,
        creator: UserId,
        flag: NewFlag,
    ) -> Result<FeatureFlag, DomainError> {
        self.flags
            .create(project, Some(creator), flag)
            .await
            .map_err(|error| error.conflict_as(key_taken))
    }

    /// Partial update; `deleted: true` deletes the flag (as DELETE does).
    ///
    /// # Errors
    /// `NotFound`, or `Invalid` for a taken key.
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
        self.flags
            .update(project, id, changes)
            .await
            .map_err(|error| error.conflict_as(key_taken))
    }

    /// Soft delete: the flag disappears from the API and frees its key; surveys linked to it
    /// keep showing it with `deleted: true`.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn delete(&self, project: ProjectId, id: FlagId) -> Result<(), DomainError> {
        self.flags
            .update(project, id, FlagChanges::deletion())
            .await
            .map(|_| ())
    }
}

fn key_taken() -> ValidationError {
    ValidationError::field(
        "key",
        ValidationCode::Unique,
        "There is already a feature flag with this key.",
    )
}
