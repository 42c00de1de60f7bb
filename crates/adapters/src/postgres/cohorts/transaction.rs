//! `CohortTransaction` on `PgTransaction`: the primitives a cohort write runs inside the
//! domain's unit of work (insert, lock, update; the members' lock, counts and writes).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::Integer;
use diesel_async::RunQueryDsl;
use domain::cohort::{Cohort, CohortChanges, CohortId, CohortTransaction, MemberCounts, NewCohort};
use domain::tenancy::{ProjectId, UserBasic};
use domain::{DomainError, Unexpected};
use uuid::Uuid;

use super::members;
use crate::postgres::errors::StorageContext;
use crate::postgres::rows::{CohortChangeset, CohortRow, NewCohortRow};
use crate::postgres::schema::cohorts;
use crate::postgres::transaction::PgTransaction;

/// The first key of the project's members' advisory lock (`pg_advisory_xact_lock(int, int)`,
/// the project id the second): "Coho" in ASCII, so it names what it guards.
const MEMBERS_LOCK: i32 = 0x436f_686f;

#[async_trait]
impl CohortTransaction for PgTransaction {
    async fn insert(
        &mut self,
        project: ProjectId,
        creator: Option<UserBasic>,
        cohort: NewCohort,
    ) -> Result<Cohort, Unexpected> {
        let creator_id = creator.as_ref().map(|user| user.id);
        let values = NewCohortRow::new(project, creator_id, &cohort)?;
        let row = diesel::insert_into(cohorts::table)
            .values(values)
            .returning(CohortRow::as_returning())
            .get_result(self.connection().await?)
            .await
            .during("creating a cohort")?;
        // The creator is the one given: nothing is read back beyond the row written.
        row.into_cohort(creator)
    }

    async fn lock(
        &mut self,
        project: ProjectId,
        id: CohortId,
    ) -> Result<Option<Cohort>, Unexpected> {
        let row = cohorts::table
            .filter(cohorts::id.eq(id.0))
            .filter(cohorts::project_id.eq(project.0))
            .filter(cohorts::deleted.eq(false))
            .select(CohortRow::as_select())
            .for_update()
            .first(self.connection().await?)
            .await
            .optional_during("locking a cohort")?;
        row.map(|row| row.into_cohort(None)).transpose()
    }

    async fn update(
        &mut self,
        project: ProjectId,
        id: CohortId,
        changes: CohortChanges,
    ) -> Result<Cohort, DomainError> {
        let changeset = CohortChangeset::new(changes)?;
        let conn = self.connection().await?;
        let live = cohorts::table
            .filter(cohorts::id.eq(id.0))
            .filter(cohorts::project_id.eq(project.0))
            .filter(cohorts::deleted.eq(false));
        let row = if changeset.is_empty() {
            // Diesel refuses an `UPDATE` without columns.
            live.select(CohortRow::as_select())
                .first(conn)
                .await
                .optional_during("loading a cohort")?
        } else {
            diesel::update(live)
                .set(changeset)
                .returning(CohortRow::as_returning())
                .get_result(conn)
                .await
                .optional_during("updating a cohort")?
        };
        Ok(row.ok_or(DomainError::NotFound)?.into_cohort(None)?)
    }

    async fn lock_members(&mut self, project: ProjectId) -> Result<(), Unexpected> {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1, $2)")
            .bind::<Integer, _>(MEMBERS_LOCK)
            .bind::<Integer, _>(project.0)
            .execute(self.connection().await?)
            .await
            .during("locking a project's cohort members")?;
        Ok(())
    }

    async fn member_counts(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
    ) -> Result<MemberCounts, Unexpected> {
        members::totals(self.connection().await?, project, cohort).await
    }

    async fn distinct_ids_of(
        &mut self,
        project: ProjectId,
        uuids: &[Uuid],
    ) -> Result<Vec<String>, Unexpected> {
        members::distinct_ids_of(self.connection().await?, project, uuids).await
    }

    async fn add_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
        distinct_ids: &[String],
    ) -> Result<u64, Unexpected> {
        members::add(self.connection().await?, project, cohort, distinct_ids).await
    }

    async fn remove_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
        distinct_ids: &[String],
    ) -> Result<(), Unexpected> {
        members::remove(
            self.connection().await?,
            project,
            cohort,
            Some(distinct_ids),
        )
        .await
    }

    async fn clear_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
    ) -> Result<(), Unexpected> {
        members::remove(self.connection().await?, project, cohort, None).await
    }
}
