//! `GroupRepository` over `group_types` and `groups`, which capture writes
//! (`survey_responses/capture.rs`). A cold path — types are renamed and deleted by people, a
//! group found one at a time — so these are plain diesel statements; the writes that touch
//! more than one row run in one transaction.

use async_trait::async_trait;
use diesel::dsl;
use diesel::prelude::*;
use diesel_async::{AsyncConnection as _, RunQueryDsl};
use domain::group::{Group, GroupRepository, GroupType, GroupTypeIndex, GroupTypeNames};
use domain::tenancy::ProjectId;
use domain::{DomainError, Unexpected};

use crate::postgres::errors::StorageContext;
use crate::postgres::rows::{GroupRow, GroupTypeChangeset, GroupTypeRow, TypedJson};
use crate::postgres::schema::{group_types, groups};
use crate::postgres::text::pg_text;

crate::postgres::over_the_pool! {
    /// Group types and groups in PostgreSQL.
    PgGroupRepository
}

/// The row of one type of a project.
type OneType = dsl::Filter<
    dsl::Filter<group_types::table, dsl::Eq<group_types::project_id, i32>>,
    dsl::Eq<group_types::group_type_index, i16>,
>;

/// One type of a project, by index.
fn group_type(project: ProjectId, index: GroupTypeIndex) -> OneType {
    group_types::table
        .filter(group_types::project_id.eq(project.0))
        .filter(group_types::group_type_index.eq(i16::from(index.get())))
}

#[async_trait]
impl GroupRepository for PgGroupRepository {
    async fn types(&self, project: ProjectId) -> Result<Vec<GroupType>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows = group_types::table
            .filter(group_types::project_id.eq(project.0))
            .order(group_types::group_type_index.asc())
            .select(GroupTypeRow::as_select())
            .load(&mut conn)
            .await
            .during("listing group types")?;
        rows.into_iter()
            .map(GroupTypeRow::into_group_type)
            .collect()
    }

    async fn rename(
        &self,
        project: ProjectId,
        names: Vec<GroupTypeNames>,
    ) -> Result<(), DomainError> {
        let mut conn = self.database.connection().await?;
        let renamed = conn
            .transaction::<_, diesel::result::Error, _>(async |conn| {
                // Every type named is locked first, so none is renamed unless all exist.
                let indices: Vec<i16> = names
                    .iter()
                    .map(|named| i16::from(named.index.get()))
                    .collect();
                let found: Vec<i16> = group_types::table
                    .filter(group_types::project_id.eq(project.0))
                    .filter(group_types::group_type_index.eq_any(&indices))
                    .order(group_types::group_type_index.asc())
                    .select(group_types::group_type_index)
                    .for_update()
                    .load(conn)
                    .await?;
                if indices.iter().any(|index| !found.contains(index)) {
                    return Ok(false);
                }
                for named in &names {
                    let changes = GroupTypeChangeset::new(named);
                    if changes.is_empty() {
                        continue;
                    }
                    diesel::update(group_type(project, named.index))
                        .set(changes)
                        .execute(conn)
                        .await?;
                }
                Ok(true)
            })
            .await
            .during("renaming group types")?;
        if renamed {
            Ok(())
        } else {
            Err(DomainError::NotFound)
        }
    }

    async fn set_default_columns(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        columns: Vec<String>,
    ) -> Result<GroupType, DomainError> {
        let mut conn = self.database.connection().await?;
        let row = diesel::update(group_type(project, index))
            .set(group_types::default_columns.eq(Some(TypedJson(columns))))
            .returning(GroupTypeRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional_during("setting a group type's default columns")?;
        Ok(row.ok_or(DomainError::NotFound)?.into_group_type()?)
    }

    async fn delete_type(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
    ) -> Result<(), DomainError> {
        let mut conn = self.database.connection().await?;
        let deleted = conn
            .transaction::<_, diesel::result::Error, _>(async |conn| {
                let Some(name) = diesel::delete(group_type(project, index))
                    .returning(group_types::group_type)
                    .get_result::<String>(conn)
                    .await
                    .optional()?
                else {
                    return Ok(false);
                };
                diesel::delete(
                    groups::table
                        .filter(groups::project_id.eq(project.0))
                        .filter(groups::group_type.eq(name)),
                )
                .execute(conn)
                .await?;
                Ok(true)
            })
            .await
            .during("deleting a group type")?;
        if deleted {
            Ok(())
        } else {
            Err(DomainError::NotFound)
        }
    }

    async fn find(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        group_key: &str,
    ) -> Result<Option<Group>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let Some(name) = group_type(project, index)
            .select(group_types::group_type)
            .first::<String>(&mut conn)
            .await
            .optional_during("finding a group's type")?
        else {
            return Ok(None);
        };
        let row = groups::table
            .find((project.0, name, pg_text(group_key).as_ref()))
            .select(GroupRow::as_select())
            .first(&mut conn)
            .await
            .optional_during("finding a group")?;
        Ok(row.map(|row| row.into_group(index)))
    }
}
