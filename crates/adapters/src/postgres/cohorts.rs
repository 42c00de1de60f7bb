//! `CohortRepository` over the `cohorts` table (soft-deleted cohorts are hidden) and static
//! cohorts' `cohort_members` (`members.rs`); writes run in a `PgTransaction`
//! (`transaction.rs`). A cold path — cohorts are written by people, and read once per SDK
//! snapshot of a project whose flags name them — so these are plain diesel statements, one at a
//! time.

mod members;
mod transaction;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::cohort::{
    Cohort, CohortId, CohortListFilter, CohortPerson, CohortRepository, CohortTransaction,
};
use domain::ports::{Page, PageRequest};
use domain::tenancy::ProjectId;

use crate::postgres::errors::StorageContext;
use crate::postgres::paging::{page, window};
use crate::postgres::rows::{CohortRow, UserBasicRow};
use crate::postgres::schema::{cohorts, users};
use crate::postgres::text::{contains_pattern, pg_text};
use crate::postgres::transaction::PgTransaction;

type Pg = diesel::pg::Pg;

crate::postgres::over_the_pool! {
    /// Cohorts in PostgreSQL.
    PgCohortRepository
}

/// The project's live cohorts that `filter` keeps, each beside its creator (if any). Counting
/// it costs no join: a left join on the users' key that nothing reads is removed by the planner.
fn matching(
    project: ProjectId,
    filter: &CohortListFilter,
) -> diesel::dsl::IntoBoxed<'static, diesel::dsl::LeftJoin<cohorts::table, users::table>, Pg> {
    let mut query = cohorts::table
        .left_join(users::table)
        .filter(cohorts::project_id.eq(project.0))
        .filter(cohorts::deleted.eq(false))
        .into_boxed();
    if let Some(is_static) = filter.is_static {
        query = query.filter(cohorts::is_static.eq(is_static));
    }
    if let Some(user) = filter.created_by {
        query = query.filter(cohorts::created_by_id.eq(user.0));
    }
    if let Some(search) = &filter.search {
        query = query.filter(cohorts::name.ilike(contains_pattern(&pg_text(search.as_str()))));
    }
    query
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
        filter: &CohortListFilter,
        page_request: PageRequest,
    ) -> Result<Page<Cohort>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let count = matching(project, filter)
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting cohorts")?;
        let rows = window(
            matching(project, filter)
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
            .optional_during("loading a cohort")?;
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

    async fn member_counts(
        &self,
        project: ProjectId,
        cohorts: &[CohortId],
    ) -> Result<Vec<(CohortId, u64)>, Unexpected> {
        let mut conn = self.database.connection().await?;
        members::counts(&mut conn, project, cohorts).await
    }

    async fn persons(
        &self,
        project: ProjectId,
        cohort: CohortId,
        page: PageRequest,
        properties_bytes: usize,
    ) -> Result<Page<CohortPerson>, Unexpected> {
        let mut conn = self.database.connection().await?;
        members::persons(&mut conn, project, cohort, page, properties_bytes).await
    }

    async fn begin(&self) -> Result<Box<dyn CohortTransaction>, Unexpected> {
        Ok(Box::new(PgTransaction::open(&self.database).await?))
    }
}
