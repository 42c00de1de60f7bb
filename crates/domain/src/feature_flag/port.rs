//! The port of stored feature flags. Deleted flags are invisible except through a survey's link.

use async_trait::async_trait;

use super::{FeatureFlag, FlagChanges, FlagId, NewFlag};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic};

/// A project's serving flags as storage hands them to an SDK snapshot: loaded, or only
/// weighed, when loading them would hold more memory than a snapshot may.
#[derive(Debug)]
pub enum ServingFlags {
    Loaded(Vec<FeatureFlag>),
    /// Their filters weighed more than the bound asked for: this many bytes.
    TooLarge(u64),
}

#[async_trait]
pub trait FeatureFlagRepository: Send + Sync {
    /// Live flags of the project, newest first (ties by id, descending).
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<FeatureFlag>, Unexpected>;

    /// A live flag of the project.
    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected>;

    /// The live flag of the project with this key (keys are unique among live flags).
    async fn get_by_key(
        &self,
        project: ProjectId,
        key: &str,
    ) -> Result<Option<FeatureFlag>, Unexpected>;

    /// Stores a new flag exactly as given and returns it as written, created by `creator`,
    /// whom the caller holds (nothing is read back).
    ///
    /// # Errors
    /// `Conflict` when a live flag of the project has the key; `Unexpected` otherwise.
    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        flag: NewFlag,
    ) -> Result<FeatureFlag, DomainError>;

    /// Applies the changes, exactly as given, to a live flag and returns it as written,
    /// without its creator (`created_by: None`): a caller that shows the flag holds it.
    ///
    /// # Errors
    /// `NotFound`, `Conflict` (a taken key), `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, DomainError>;

    /// The project's flags that serve: active and not deleted, ordered by id, without their
    /// creators (what serves and what they weigh never shows who made them).
    async fn active(&self, project: ProjectId) -> Result<Vec<FeatureFlag>, Unexpected>;

    /// [`Self::active`], unless their filters weigh more than `max_bytes` together (as
    /// `FlagFilters::weight` counts: JSON text, and 4 KiB a regex filter): then only their
    /// weight, so a project of huge flags is weighed without being loaded.
    async fn serving(&self, project: ProjectId, max_bytes: u64)
    -> Result<ServingFlags, Unexpected>;
}
