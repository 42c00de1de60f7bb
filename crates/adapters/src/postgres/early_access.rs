//! `EarlyAccessRepository` over the `early_access_features` table (deleted features are gone).
//! A cold path — features are written by people, and listed once per posthog-js page load that
//! asks — so these are plain diesel statements, one at a time. Every read joins the feature's
//! flag for its current key, what posthog-js enrolls by.

use async_trait::async_trait;
use diesel::dsl::count;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::early_access::{
    EarlyAccessChanges, EarlyAccessFeature, EarlyAccessId, EarlyAccessRepository,
    NewEarlyAccessFeature, Stage,
};
use domain::feature_flag::FlagId;
use domain::ports::{Page, PageRequest};
use domain::tenancy::ProjectId;
use domain::{DomainError, Unexpected};

use crate::postgres::database::Connection;
use crate::postgres::errors::{StorageContext, write_error};
use crate::postgres::paging::{page, window};
use crate::postgres::rows::{EarlyAccessChangeset, EarlyAccessRow, NewEarlyAccessRow};
use crate::postgres::schema::{early_access_features, feature_flags};

/// The unique index that gives a flag one feature at most.
const FLAG_INDEX: &str = "early_access_features_flag_key";

crate::postgres::over_the_pool! {
    /// Early access features in PostgreSQL.
    PgEarlyAccessRepository
}

/// `(feature, flag key)` rows as domain features.
fn to_features(rows: Vec<(EarlyAccessRow, String)>) -> Result<Vec<EarlyAccessFeature>, Unexpected> {
    rows.into_iter()
        .map(|(feature, key)| feature.into_feature(key))
        .collect()
}

/// A feature just written, with its flag's key. The flag is there: the foreign key keeps a
/// feature's flag from being deleted (and flags are only ever soft-deleted).
async fn with_flag_key(
    conn: &mut Connection,
    row: EarlyAccessRow,
) -> Result<EarlyAccessFeature, Unexpected> {
    let key = feature_flags::table
        .find(row.feature_flag_id)
        .select(feature_flags::key)
        .first::<String>(conn)
        .await
        .during("loading an early access feature's flag key")?;
    row.into_feature(key)
}

#[async_trait]
impl EarlyAccessRepository for PgEarlyAccessRepository {
    async fn list(
        &self,
        project: ProjectId,
        page_request: PageRequest,
    ) -> Result<Page<EarlyAccessFeature>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let count = early_access_features::table
            .filter(early_access_features::project_id.eq(project.0))
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting early access features")?;
        let rows = window(
            early_access_features::table
                .inner_join(feature_flags::table)
                .filter(early_access_features::project_id.eq(project.0))
                .order((
                    early_access_features::created_at.desc(),
                    early_access_features::id.desc(),
                ))
                .select((EarlyAccessRow::as_select(), feature_flags::key)),
            page_request,
        )
        .load(&mut conn)
        .await
        .during("listing early access features")?;
        Ok(page(count, to_features(rows)?))
    }

    async fn get(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
    ) -> Result<Option<EarlyAccessFeature>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = early_access_features::table
            .inner_join(feature_flags::table)
            .filter(early_access_features::id.eq(id.0))
            .filter(early_access_features::project_id.eq(project.0))
            .select((EarlyAccessRow::as_select(), feature_flags::key))
            .first(&mut conn)
            .await
            .optional_during("loading an early access feature")?;
        Ok(to_features(row.into_iter().collect())?.pop())
    }

    async fn in_stages(
        &self,
        project: ProjectId,
        stages: &[Stage],
    ) -> Result<Vec<EarlyAccessFeature>, Unexpected> {
        let stages: Vec<&str> = stages.iter().map(|stage| stage.as_str()).collect();
        let mut conn = self.database.connection().await?;
        let rows = early_access_features::table
            .inner_join(feature_flags::table)
            .filter(early_access_features::project_id.eq(project.0))
            .filter(early_access_features::stage.eq_any(stages))
            .order((
                early_access_features::created_at.asc(),
                early_access_features::id.asc(),
            ))
            .select((EarlyAccessRow::as_select(), feature_flags::key))
            .load(&mut conn)
            .await
            .during("loading early access features by stage")?;
        to_features(rows)
    }

    async fn count_and_linked(
        &self,
        project: ProjectId,
        flag: FlagId,
    ) -> Result<(usize, bool), Unexpected> {
        let mut conn = self.database.connection().await?;
        // Both in one statement: `count(id) FILTER (WHERE feature_flag_id = $flag)`.
        let (features, linked) = early_access_features::table
            .filter(early_access_features::project_id.eq(project.0))
            .select((
                count(early_access_features::id),
                count(early_access_features::id)
                    .aggregate_filter(early_access_features::feature_flag_id.eq(flag.0)),
            ))
            .get_result::<(i64, i64)>(&mut conn)
            .await
            .during("counting early access features")?;
        let features = usize::try_from(features).map_err(Unexpected::new)?;
        Ok((features, linked > 0))
    }

    async fn create(
        &self,
        project: ProjectId,
        feature: NewEarlyAccessFeature,
    ) -> Result<EarlyAccessFeature, DomainError> {
        let mut conn = self.database.connection().await?;
        let row = diesel::insert_into(early_access_features::table)
            .values(NewEarlyAccessRow::new(project, &feature))
            .returning(EarlyAccessRow::as_returning())
            .get_result(&mut conn)
            .await
            // The service refuses a flag that has a feature; two creates racing on one flag
            // meet the index, and the second is a conflict.
            .map_err(|error| write_error(error, FLAG_INDEX, "creating an early access feature"))?;
        Ok(with_flag_key(&mut conn, row).await?)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
        changes: EarlyAccessChanges,
    ) -> Result<EarlyAccessFeature, DomainError> {
        let changeset = EarlyAccessChangeset::from(changes);
        let mut conn = self.database.connection().await?;
        let target = early_access_features::table
            .filter(early_access_features::id.eq(id.0))
            .filter(early_access_features::project_id.eq(project.0));
        let row = if changeset.is_empty() {
            // Diesel refuses an `UPDATE` without columns.
            target
                .select(EarlyAccessRow::as_select())
                .first(&mut conn)
                .await
                .optional_during("loading an early access feature")?
        } else {
            diesel::update(target)
                .set(changeset)
                .returning(EarlyAccessRow::as_returning())
                .get_result(&mut conn)
                .await
                .optional_during("updating an early access feature")?
        };
        let row = row.ok_or(DomainError::NotFound)?;
        Ok(with_flag_key(&mut conn, row).await?)
    }

    async fn delete(&self, project: ProjectId, id: EarlyAccessId) -> Result<(), DomainError> {
        let mut conn = self.database.connection().await?;
        let deleted = diesel::delete(
            early_access_features::table
                .filter(early_access_features::id.eq(id.0))
                .filter(early_access_features::project_id.eq(project.0)),
        )
        .execute(&mut conn)
        .await
        .during("deleting an early access feature")?;
        if deleted == 0 {
            return Err(DomainError::NotFound);
        }
        Ok(())
    }
}
