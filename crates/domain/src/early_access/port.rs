//! The port of stored early access features (deleted ones are gone: PostHog deletes them).

use async_trait::async_trait;

use super::{EarlyAccessChanges, EarlyAccessFeature, EarlyAccessId, NewEarlyAccessFeature, Stage};
use crate::error::{DomainError, Unexpected};
use crate::feature_flag::FlagId;
use crate::ports::{Page, PageRequest};
use crate::tenancy::ProjectId;

#[async_trait]
pub trait EarlyAccessRepository: Send + Sync {
    /// The project's features, newest first (ties by id), each with its flag's key.
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<EarlyAccessFeature>, Unexpected>;

    async fn get(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
    ) -> Result<Option<EarlyAccessFeature>, Unexpected>;

    /// The project's features in one of `stages`, oldest first: what posthog-js lists.
    async fn in_stages(
        &self,
        project: ProjectId,
        stages: &[Stage],
    ) -> Result<Vec<EarlyAccessFeature>, Unexpected>;

    /// How many features the project has, and whether one is linked to `flag`.
    async fn count_and_linked(
        &self,
        project: ProjectId,
        flag: FlagId,
    ) -> Result<(usize, bool), Unexpected>;

    /// Stores a feature and returns it as written (with its flag's key).
    async fn create(
        &self,
        project: ProjectId,
        feature: NewEarlyAccessFeature,
    ) -> Result<EarlyAccessFeature, DomainError>;

    /// # Errors
    /// `NotFound`, `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
        changes: EarlyAccessChanges,
    ) -> Result<EarlyAccessFeature, DomainError>;

    /// # Errors
    /// `NotFound`, `Unexpected`.
    async fn delete(&self, project: ProjectId, id: EarlyAccessId) -> Result<(), DomainError>;
}
