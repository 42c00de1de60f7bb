//! `CohortRepository` over the `cohorts` table (soft-deleted cohorts are hidden). A cold path —
//! cohorts are written by people, and read once per SDK snapshot of a project whose flags name
//! them — so these are plain diesel statements, one at a time.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::cohort::{Cohort, CohortChanges, CohortId, CohortRepository, NewCohort};
use domain::ports::{Page, PageRequest};
use domain::tenancy::{ProjectId, UserBasic};
use domain::{DomainError, Unexpected};

use crate::postgres::errors::StorageContext;
use crate::postgres::paging::{page, window};
use crate::postgres::rows::{CohortChangeset, CohortRow, NewCohortRow, UserBasicRow};
use crate::postgres::schema::{cohorts, users};

crate::postgres::over_the_pool! {
    /// Cohorts in PostgreSQL.
    PgCohortRepository
}

/// `(cohort, creator)` rows as domain cohorts.
fn to_cohorts(rows: Vec<(CohortRow, Option<UserBasicRow>)>) -> Result<Vec<Cohort>, Unexpected> {
    rows.into_iter()
        .map(|(cohort, creator)| cohort.into_cohort(creator.map(Into::into)))
        .collect()
}

#[async_trait]
impl CohortRepository for PgCohortRepository {
    async fn list(
        &self,
        project: ProjectId,
        page_request: PageRequest,
    ) -> Result<Page<Cohort>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let live = || {
            cohorts::table
                .filter(cohorts::project_id.eq(project.0))
                .filter(cohorts::deleted.eq(false))
        };
        let count = live()
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting cohorts")?;
        let rows = window(
            live()
                .left_join(users::table)
                .order((cohorts::created_at.desc(), cohorts::id.desc()))
                .select((CohortRow::as_select(), Option::<UserBasicRow>::as_select())),
            page_request,
        )
        .load(&mut conn)
        .await
        .during("listing cohorts")?;
        Ok(page(count, to_cohorts(rows)?))
    }

    async fn get(&self, project: ProjectId, id: CohortId) -> Result<Option<Cohort>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = cohorts::table
            .left_join(users::table)
            .filter(cohorts::id.eq(id.0))
            .filter(cohorts::project_id.eq(project.0))
            .filter(cohorts::deleted.eq(false))
            .select((CohortRow::as_select(), Option::<UserBasicRow>::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .during("loading a cohort")?;
        Ok(to_cohorts(row.into_iter().collect())?.pop())
    }

    async fn live(&self, project: ProjectId) -> Result<Vec<Cohort>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows = cohorts::table
            .filter(cohorts::project_id.eq(project.0))
            .filter(cohorts::deleted.eq(false))
            .order(cohorts::id.asc())
            .select(CohortRow::as_select())
            .load(&mut conn)
            .await
            .during("loading the live cohorts")?;
        rows.into_iter().map(|row| row.into_cohort(None)).collect()
    }

    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        cohort: NewCohort,
    ) -> Result<Cohort, DomainError> {
        let creator_id = creator.as_ref().map(|user| user.id);
        let values = NewCohortRow::new(project, creator_id, &cohort)?;
        let mut conn = self.database.connection().await?;
        let row = diesel::insert_into(cohorts::table)
            .values(values)
            .returning(CohortRow::as_returning())
            .get_result(&mut conn)
            .await
            .during("creating a cohort")?;
        // The creator is the one given: nothing is read back beyond the row written.
        Ok(row.into_cohort(creator)?)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: CohortId,
        changes: CohortChanges,
    ) -> Result<Cohort, DomainError> {
        let changeset = CohortChangeset::new(changes)?;
        let mut conn = self.database.connection().await?;
        let live = cohorts::table
            .filter(cohorts::id.eq(id.0))
            .filter(cohorts::project_id.eq(project.0))
            .filter(cohorts::deleted.eq(false));
        let row = if changeset.is_empty() {
            // Diesel refuses an `UPDATE` without columns.
            live.select(CohortRow::as_select())
                .first(&mut conn)
                .await
                .optional()
                .during("loading a cohort")?
        } else {
            diesel::update(live)
                .set(changeset)
                .returning(CohortRow::as_returning())
                .get_result(&mut conn)
                .await
                .optional()
                .during("updating a cohort")?
        };
        Ok(row.ok_or(DomainError::NotFound)?.into_cohort(None)?)
    }
}
