//! `FeatureFlagRepository` over the `feature_flags` table (soft-deleted flags are hidden). Every
//! write to `feature_flags`, including a survey's targeting flag changes, goes through this module.

use async_trait::async_trait;
use diesel::dsl::{AsSelect, SqlTypeOf};
use diesel::prelude::*;
use diesel::query_builder::{Query, QueryFragment, QueryId};
use diesel_async::{AsyncConnectionCore, RunQueryDsl};
use domain::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagId, FlagRef, NewFlag, REGEX_WEIGHT,
    ServingFlags,
};
use domain::ports::{Page, PageRequest};
use domain::tenancy::{ProjectId, UserBasic, UserId};
use domain::{DomainError, Unexpected};

use crate::postgres::database::Database;
use crate::postgres::errors::{StorageContext, write_error};
use crate::postgres::paging::{page, window};
use crate::postgres::rows::{FlagChangeset, FlagRow, NewFlagRow, UserBasicRow};
use crate::postgres::schema::{feature_flags, users};

type Pg = diesel::pg::Pg;

/// The partial unique index that keeps keys unique among a project's live flags.
pub(crate) const LIVE_KEY_INDEX: &str = "feature_flags_project_key_live";

/// Feature flags in PostgreSQL.
pub struct PgFeatureFlagRepository {
    database: Database,
}

impl PgFeatureFlagRepository {
    /// A repository over the shared pool.
    pub fn new(database: Database) -> Self {
        Self { database }
    }

    /// The live flag of the project that `flag` names, with its creator.
    async fn live_flag(
        &self,
        project: ProjectId,
        flag: &FlagRef,
    ) -> Result<Option<FeatureFlag>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let live = feature_flags::table
            .left_join(users::table)
            .filter(feature_flags::project_id.eq(project.0))
            .filter(feature_flags::deleted.eq(false))
            .select((FlagRow::as_select(), Option::<UserBasicRow>::as_select()))
            .into_boxed();
        let row = match flag {
            FlagRef::Id(id) => live.filter(feature_flags::id.eq(id.0)),
            FlagRef::Key(key) => live.filter(feature_flags::key.eq(key.clone())),
        }
        .first(&mut conn)
        .await
        .optional_during("loading a feature flag")?;
        Ok(to_flags(row.into_iter().collect())?.pop())
    }
}

/// Inserts a flag exactly as given.
///
/// # Errors
/// `Conflict` for a key a live flag of the project has.
pub(crate) async fn insert_flag(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    creator: Option<UserId>,
    flag: &NewFlag,
) -> Result<FlagRow, DomainError> {
    flag_insert(project, creator, flag)
        .get_result(conn)
        .await
        .map_err(|error| write_error(error, LIVE_KEY_INDEX, "creating a feature flag"))
}

/// The `INSERT` of a flag exactly as given, returning it as stored: run alone by
/// [`insert_flag`], or inside the statement that inserts the survey owning it.
pub(crate) fn flag_insert<'a>(
    project: ProjectId,
    creator: Option<UserId>,
    flag: &'a NewFlag,
) -> impl Query<SqlType = SqlTypeOf<AsSelect<FlagRow, Pg>>> + QueryFragment<Pg> + QueryId + Send + 'a
{
    diesel::insert_into(feature_flags::table)
        .values(NewFlagRow::new(project, creator, flag))
        .returning(FlagRow::as_returning())
}

/// Applies the changes, exactly as given, to a live flag of the project; `None` when there is
/// no such flag.
///
/// # Errors
/// `Conflict` for a key a live flag of the project has.
pub(crate) async fn change_flag(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    id: FlagId,
    changes: FlagChanges,
) -> Result<Option<FlagRow>, DomainError> {
    let live = feature_flags::table
        .filter(feature_flags::id.eq(id.0))
        .filter(feature_flags::project_id.eq(project.0))
        .filter(feature_flags::deleted.eq(false));
    if changes.is_empty() {
        // Diesel refuses an `UPDATE` without columns.
        return live
            .select(FlagRow::as_select())
            .first(conn)
            .await
            .optional()
            .map_err(|error| write_error(error, LIVE_KEY_INDEX, "loading a feature flag"));
    }
    diesel::update(live)
        .set(FlagChangeset::from(changes))
        .returning(FlagRow::as_returning())
        .get_result(conn)
        .await
        .optional()
        .map_err(|error| write_error(error, LIVE_KEY_INDEX, "updating a feature flag"))
}

/// The project's flags with these ids in id order, deleted ones included, without their
/// creators: what a write plans against (never who made what). `lock` keeps them locked until
/// the transaction ends, so no other write can change or delete them meanwhile.
pub(crate) async fn flags_by_id(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    project: ProjectId,
    mut ids: Vec<i32>,
    lock: bool,
) -> Result<Vec<FeatureFlag>, Unexpected> {
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let query = feature_flags::table
        .filter(feature_flags::id.eq_any(ids))
        .filter(feature_flags::project_id.eq(project.0))
        // Rows are locked in the order they are read: one order for every writer, so two
        // writes locking the same flags cannot deadlock.
        .order(feature_flags::id)
        .select(FlagRow::as_select());
    let rows = if lock {
        query.for_update().load(conn).await
    } else {
        query.load(conn).await
    }
    .during("reading feature flags for a write")?;
    rows.into_iter().map(|row| row.into_flag(None)).collect()
}

/// A page of `(flag, creator)` rows as domain flags.
fn to_flags(rows: Vec<(FlagRow, Option<UserBasicRow>)>) -> Result<Vec<FeatureFlag>, Unexpected> {
    rows.into_iter()
        .map(|(flag, creator)| flag.into_flag(creator.map(Into::into)))
        .collect()
}

#[async_trait]
impl FeatureFlagRepository for PgFeatureFlagRepository {
    async fn list(
        &self,
        project: ProjectId,
        page_request: PageRequest,
    ) -> Result<Page<FeatureFlag>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let live = || {
            feature_flags::table
                .filter(feature_flags::project_id.eq(project.0))
                .filter(feature_flags::deleted.eq(false))
        };
        let count = live()
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting feature flags")?;
        let rows = window(
            live()
                .left_join(users::table)
                .order((feature_flags::created_at.desc(), feature_flags::id.desc()))
                .select((FlagRow::as_select(), Option::<UserBasicRow>::as_select())),
            page_request,
        )
        .load(&mut conn)
        .await
        .during("listing feature flags")?;
        Ok(page(count, to_flags(rows)?))
    }

    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected> {
        self.live_flag(project, &FlagRef::Id(id)).await
    }

    async fn get_by_key(
        &self,
        project: ProjectId,
        key: &str,
    ) -> Result<Option<FeatureFlag>, Unexpected> {
        self.live_flag(project, &FlagRef::Key(key.to_owned())).await
    }

    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        flag: NewFlag,
    ) -> Result<FeatureFlag, DomainError> {
        let mut conn = self.database.connection().await?;
        let creator_id = creator.as_ref().map(|user| user.id);
        let row = insert_flag(&mut conn, project, creator_id, &flag).await?;
        Ok(row.into_flag(creator)?)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, DomainError> {
        let mut conn = self.database.connection().await?;
        let row = change_flag(&mut conn, project, id, changes)
            .await?
            .ok_or(DomainError::NotFound)?;
        Ok(row.into_flag(None)?)
    }

    async fn active(&self, project: ProjectId) -> Result<Vec<FeatureFlag>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows = feature_flags::table
            .filter(feature_flags::project_id.eq(project.0))
            .filter(feature_flags::deleted.eq(false))
            .filter(feature_flags::active.eq(true))
            .order(feature_flags::id.asc())
            .select(FlagRow::as_select())
            .load(&mut conn)
            .await
            .during("loading the active feature flags")?;
        rows.into_iter().map(|row| row.into_flag(None)).collect()
    }

    async fn serving(
        &self,
        project: ProjectId,
        max_bytes: u64,
    ) -> Result<ServingFlags, Unexpected> {
        let bytes: i64 = {
            let mut conn = self.database.connection().await?;
            feature_flags::table
                .filter(feature_flags::project_id.eq(project.0))
                .filter(feature_flags::deleted.eq(false))
                .filter(feature_flags::active.eq(true))
                // As `FlagFilters::weight` counts: the text, and 4 KiB for each regex filter
                // (`"regex"` and `"not_regex"` both end in `regex"`; a value that does too is
                // counted as well, which only errs towards withholding).
                .select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
                    "coalesce(sum(octet_length(filters::text) + 4096 * ((octet_length(filters::text) \
                     - octet_length(replace(filters::text, 'regex\"', ''))) / 6)), 0)::bigint",
                ))
                .get_result(&mut conn)
                .await
                .during("weighing the active feature flags")?
        };
        let bytes = u64::try_from(bytes).unwrap_or_default();
        debug_assert_eq!(
            REGEX_WEIGHT, 4096,
            "the statement above counts 4096 a pattern"
        );
        if bytes > max_bytes {
            return Ok(ServingFlags::TooLarge(bytes));
        }
        self.active(project).await.map(ServingFlags::Loaded)
    }
}
