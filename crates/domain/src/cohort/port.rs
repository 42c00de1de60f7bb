//! The port of stored cohorts and static cohorts' members. Deleted cohorts are invisible. Writes
//! go through a transaction (`begin`), whose primitives the service orders.

use async_trait::async_trait;
use uuid::Uuid;

use super::{
    Cohort, CohortChanges, CohortId, CohortListFilter, CohortPerson, MemberCounts, NewCohort,
};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest, Transaction};
use crate::tenancy::{ProjectId, UserBasic};

#[async_trait]
pub trait CohortRepository: Send + Sync {
    /// Live cohorts of the project that `filter` keeps, newest first (ties by id, descending);
    /// the page's count is theirs. `is_static` keeps the cohorts of that kind, `created_by` those
    /// the user created (never one without a creator), `search` those whose name holds its text
    /// ignoring case (as PostgreSQL's `ILIKE` folds it), every character, `%` and `_` included,
    /// standing for itself.
    async fn list(
        &self,
        project: ProjectId,
        filter: &CohortListFilter,
        page: PageRequest,
    ) -> Result<Page<Cohort>, Unexpected>;

    /// A live cohort of the project.
    async fn get(&self, project: ProjectId, id: CohortId) -> Result<Option<Cohort>, Unexpected>;

    /// Every live cohort of the project, by id, without creators: what flags are evaluated
    /// with and what writes are checked against.
    async fn live(&self, project: ProjectId) -> Result<Vec<Cohort>, Unexpected>;

    /// How many distinct ids each of `cohorts` (the project's) lists; a cohort listing none is
    /// left out.
    async fn member_counts(
        &self,
        project: ProjectId,
        cohorts: &[CohortId],
    ) -> Result<Vec<(CohortId, u64)>, Unexpected>;

    /// The members of a cohort of the project who have been captured (a person stored under
    /// the distinct id listed), by distinct id in byte order; the page's count is theirs. The
    /// page ends early once its persons' properties, as JSON text, pass `properties_bytes`
    /// (`survey_response::rows_within`: its last person passing it, never none).
    async fn persons(
        &self,
        project: ProjectId,
        cohort: CohortId,
        page: PageRequest,
        properties_bytes: usize,
    ) -> Result<Page<CohortPerson>, Unexpected>;

    /// Starts a transaction, the only way to write cohorts and members.
    ///
    /// # Errors
    /// `Unexpected` when storage fails (or cannot be reached).
    async fn begin(&self) -> Result<Box<dyn CohortTransaction>, Unexpected>;
}

/// The primitive reads and writes of cohort use cases, inside one transaction. Stores only
/// execute them; what to lock and write, and in which order, is the service's. A write of
/// members takes [`Self::lock_members`] before it locks its cohort, so two writes never wait on
/// each other's locks.
#[async_trait]
pub trait CohortTransaction: Transaction {
    /// Stores a new cohort as given and returns it as written.
    async fn insert(
        &mut self,
        project: ProjectId,
        creator: Option<UserBasic>,
        cohort: NewCohort,
    ) -> Result<Cohort, Unexpected>;

    /// A live cohort of the project, without its creator, locked until the transaction ends.
    async fn lock(
        &mut self,
        project: ProjectId,
        id: CohortId,
    ) -> Result<Option<Cohort>, Unexpected>;

    /// Applies the changes to a live cohort and returns it as written, without its creator.
    ///
    /// # Errors
    /// `NotFound`, `Unexpected`.
    async fn update(
        &mut self,
        project: ProjectId,
        id: CohortId,
        changes: CohortChanges,
    ) -> Result<Cohort, DomainError>;

    /// Waits for any other write of the project's members to end, and keeps them waiting until
    /// this transaction ends, so the counts it reads stay true until it writes.
    async fn lock_members(&mut self, project: ProjectId) -> Result<(), Unexpected>;

    /// How many distinct ids `cohort` lists, and the project's cohorts together.
    async fn member_counts(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
    ) -> Result<MemberCounts, Unexpected>;

    /// The distinct ids of the project's persons with these UUIDs; unknown UUIDs name none.
    async fn distinct_ids_of(
        &mut self,
        project: ProjectId,
        uuids: &[Uuid],
    ) -> Result<Vec<String>, Unexpected>;

    /// Lists the distinct ids in the cohort, those it lists already kept as they are; how many
    /// were new.
    async fn add_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
        distinct_ids: &[String],
    ) -> Result<u64, Unexpected>;

    /// Stops listing the distinct ids in the cohort (those it does not list are no matter).
    async fn remove_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
        distinct_ids: &[String],
    ) -> Result<(), Unexpected>;

    /// Stops listing anyone in the cohort: a deleted static cohort keeps no members.
    async fn clear_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
    ) -> Result<(), Unexpected>;
}
