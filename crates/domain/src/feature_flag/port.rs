//! The port of stored feature flags. Deleted flags are invisible except through a survey's link.

use async_trait::async_trait;

use super::{FeatureFlag, FlagChanges, FlagId, NewFlag};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserId};

#[async_trait]
pub trait FeatureFlagRepository: Send + Sync {
    /// Live flags of the project, newest first (ties by id, descending).
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<FeatureFlag>, Unexpected>;

    /// A live flag of the project.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected>;

    /// Stores a new flag exactly as given.
    ///
    /// # Errors
    /// `Conflict` when a live flag of the project has the key; `Unexpected` otherwise.
    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserId>,
        flag: NewFlag,
    ) -> Result<FeatureFlag, DomainError>;

    /// Applies the changes, exactly as given, to a live flag and returns it.
    ///
    /// # Errors
    /// `NotFound`, `Conflict` (a taken key), `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, DomainError>;

    /// The project's flags that serve: active and not deleted, ordered by id.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn active(&self, project: ProjectId) -> Result<Vec<FeatureFlag>, Unexpected>;
}
