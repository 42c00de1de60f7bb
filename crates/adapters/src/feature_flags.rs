//! `FeatureFlagRepository` over the `feature_flags` table (soft-deleted flags are hidden).

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::Unexpected;
use domain::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagError, FlagId, NewFlag,
};
use domain::ports::{Page, PageRequest};
use domain::tenancy::{ProjectId, UserBasic};

use crate::database::Database;
use crate::errors::{StorageContext, is_unique_violation, unexpected};
use crate::rows::{FlagChangeset, FlagRow, NewFlagRow, UserBasicRow};
use crate::schema::{feature_flags, users};

type Pg = diesel::pg::Pg;

/// The partial unique index that keeps keys unique among a project's live flags.
const LIVE_KEY_INDEX: &str = "feature_flags_project_key_live";

/// Feature flags in PostgreSQL.
pub struct PgFeatureFlagRepository {
    database: Database,
}

impl PgFeatureFlagRepository {
    /// A repository over the shared pool.
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

/// Inserts a flag; shared with the survey transactions that create targeting flags.
pub(crate) async fn insert_flag(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    flag: &NewFlag,
) -> QueryResult<FlagRow> {
    diesel::insert_into(feature_flags::table)
        .values(NewFlagRow::from(flag))
        .returning(FlagRow::as_returning())
        .get_result(conn)
        .await
}

/// Soft-deletes a flag of the project: it frees its key and stops serving.
pub(crate) async fn soft_delete_flag(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    project: ProjectId,
    flag: FlagId,
) -> QueryResult<usize> {
    diesel::update(
        feature_flags::table
            .filter(feature_flags::id.eq(flag.0))
            .filter(feature_flags::project_id.eq(project.0)),
    )
    .set((
        feature_flags::deleted.eq(true),
        feature_flags::active.eq(false),
    ))
    .execute(conn)
    .await
}

/// The users with these ids, as `created_by` shows them, in one query.
pub(crate) async fn load_creators(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    mut ids: Vec<i32>,
) -> QueryResult<HashMap<i32, UserBasic>> {
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = users::table
        .filter(users::id.eq_any(ids))
        .select(UserBasicRow::as_select())
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(|row| (row.id, row.into())).collect())
}

/// A flag row with its creator, looked up by one more query.
async fn with_creator(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    row: FlagRow,
) -> Result<FeatureFlag, Unexpected> {
    let mut creators = load_creators(conn, row.created_by_id.into_iter().collect())
        .await
        .during("loading a feature flag's creator")?;
    let creator = row.created_by_id.and_then(|id| creators.remove(&id));
    row.into_flag(creator)
}

fn flag_error(error: diesel::result::Error, what: &'static str) -> FlagError {
    if is_unique_violation(&error, LIVE_KEY_INDEX) {
        FlagError::KeyTaken
    } else {
        FlagError::Unexpected(unexpected(error, what))
    }
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
        page: PageRequest,
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
        let rows = live()
            .left_join(users::table)
            .order((feature_flags::created_at.desc(), feature_flags::id.desc()))
            .limit(i64::from(page.limit))
            .offset(i64::try_from(page.offset).unwrap_or(i64::MAX))
            .select((FlagRow::as_select(), Option::<UserBasicRow>::as_select()))
            .load(&mut conn)
            .await
            .during("listing feature flags")?;
        Ok(Page {
            count: count.unsigned_abs(),
            items: to_flags(rows)?,
        })
    }

    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = feature_flags::table
            .left_join(users::table)
            .filter(feature_flags::id.eq(id.0))
            .filter(feature_flags::project_id.eq(project.0))
            .filter(feature_flags::deleted.eq(false))
            .select((FlagRow::as_select(), Option::<UserBasicRow>::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .during("loading a feature flag")?;
        Ok(to_flags(row.into_iter().collect())?.pop())
    }

    async fn create(&self, flag: NewFlag) -> Result<FeatureFlag, FlagError> {
        let mut conn = self.database.connection().await?;
        let row = insert_flag(&mut conn, &flag)
            .await
            .map_err(|error| flag_error(error, "creating a feature flag"))?;
        Ok(with_creator(&mut conn, row).await?)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, FlagError> {
        let changeset = FlagChangeset::from(changes);
        if changeset.is_empty() {
            return self.get(project, id).await?.ok_or(FlagError::NotFound);
        }
        let mut conn = self.database.connection().await?;
        let row = diesel::update(
            feature_flags::table
                .filter(feature_flags::id.eq(id.0))
                .filter(feature_flags::project_id.eq(project.0))
                .filter(feature_flags::deleted.eq(false)),
        )
        .set(changeset)
        .returning(FlagRow::as_returning())
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(|error| flag_error(error, "updating a feature flag"))?
        .ok_or(FlagError::NotFound)?;
        Ok(with_creator(&mut conn, row).await?)
    }
}
