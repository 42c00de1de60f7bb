//! The port of stored cohorts. Deleted cohorts are invisible.

use async_trait::async_trait;

use super::{Cohort, CohortChanges, CohortId, NewCohort};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic};

#[async_trait]
pub trait CohortRepository: Send + Sync {
    /// Live cohorts of the project, newest first (ties by id, descending).
    async fn list(&self, project: ProjectId, page: PageRequest)
    -> Result<Page<Cohort>, Unexpected>;

    /// A live cohort of the project.
    async fn get(&self, project: ProjectId, id: CohortId) -> Result<Option<Cohort>, Unexpected>;

    /// Every live cohort of the project, by id, without creators: what flags are evaluated
    /// with and what writes are checked against.
    async fn live(&self, project: ProjectId) -> Result<Vec<Cohort>, Unexpected>;

    /// Stores a new cohort as given and returns it as written.
    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        cohort: NewCohort,
    ) -> Result<Cohort, DomainError>;

    /// Applies the changes to a live cohort and returns it as written, without its creator.
    ///
    /// # Errors
    /// `NotFound`, `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: CohortId,
        changes: CohortChanges,
    ) -> Result<Cohort, DomainError>;
}
