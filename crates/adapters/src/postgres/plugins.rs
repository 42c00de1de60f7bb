//! `PluginRepository` over `plugins`, `plugin_source_files` and `plugin_activity`: the reads,
//! and the primitives of a write's transaction, in plain diesel; every write returns what it
//! wrote.

use async_trait::async_trait;
use diesel::pg::upsert::excluded;
use diesel::prelude::*;
use diesel::sql_types;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::activity::{ActivityPage, NewActivity};
use domain::plugin::{
    Plugin, PluginFiles, PluginId, PluginRepository, PluginState, PluginTransaction, SourceChanges,
};
use domain::ports::{Page, PageRequest};
use domain::tenancy::OrganizationId;
use domain::{DomainError, Unexpected};

use crate::postgres::activity::{Owner, PLUGIN_ACTIVITY};
use crate::postgres::errors::{StorageContext, write_error};
use crate::postgres::paging::{page, window};
use crate::postgres::rows::{NewPluginActivityRow, PluginRow, PluginStateRow};
use crate::postgres::schema::{
    organizations, plugin_activity, plugin_configs, plugin_source_files, plugins, projects,
};
use crate::postgres::transaction::PgTransaction;

type Pg = diesel::pg::Pg;

/// The index that allows one install of a URL per organization.
const URL_INDEX: &str = "plugins_organization_url_key";

crate::postgres::over_the_pool! {
    /// Plugins in PostgreSQL.
    PgPluginRepository
}

/// The plugins `organization` can see: its own, global ones, and ones its projects configure.
fn visible_to(organization: OrganizationId) -> plugins::BoxedQuery<'static, Pg> {
    let configured = plugin_configs::table
        .inner_join(projects::table)
        .filter(projects::organization_id.eq(organization.0))
        .filter(plugin_configs::deleted.eq(false))
        .select(plugin_configs::plugin_id);
    plugins::table
        .filter(
            plugins::organization_id
                .eq(organization.0)
                .or(plugins::is_global.eq(true))
                .or(plugins::id.eq_any(configured)),
        )
        .into_boxed()
}

/// The plugins among `ids`, by id, each with its organization's name, in one statement.
async fn load_named(
    conn: &mut AsyncPgConnection,
    ids: plugins::BoxedQuery<'_, Pg, sql_types::Integer>,
) -> Result<Vec<Plugin>, Unexpected> {
    plugins::table
        .inner_join(organizations::table)
        .filter(plugins::id.eq_any(ids))
        .order(plugins::id.asc())
        .select((PluginRow::as_select(), organizations::name))
        .load::<(PluginRow, String)>(conn)
        .await
        .during("loading plugins with their organizations' names")?
        .into_iter()
        .map(|(row, name)| row.into_plugin(name))
        .collect()
}

/// The plugin `organization` can see with this id, on any connection: the repository's own or a
/// transaction's.
pub(crate) async fn visible_plugin(
    conn: &mut AsyncPgConnection,
    organization: OrganizationId,
    id: PluginId,
) -> Result<Option<Plugin>, Unexpected> {
    let ids = visible_to(organization)
        .filter(plugins::id.eq(id.0))
        .select(plugins::id);
    Ok(load_named(conn, ids).await?.pop())
}

#[async_trait]
impl PluginRepository for PgPluginRepository {
    async fn list(
        &self,
        organization: OrganizationId,
        page_request: PageRequest,
    ) -> Result<Page<Plugin>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let count = visible_to(organization)
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting plugins")?;
        let ids = window(
            visible_to(organization)
                .order(plugins::id.asc())
                .select(plugins::id),
            page_request,
        );
        Ok(page(count, load_named(&mut conn, ids).await?))
    }

    async fn get(
        &self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected> {
        let mut conn = self.database.connection().await?;
        visible_plugin(&mut conn, organization, id).await
    }

    async fn installed(
        &self,
        organization: OrganizationId,
        display_url: &str,
    ) -> Result<bool, Unexpected> {
        let mut conn = self.database.connection().await?;
        diesel::select(diesel::dsl::exists(
            plugins::table
                .filter(plugins::organization_id.eq(organization.0))
                .filter(plugins::url_key.eq(display_url)),
        ))
        .get_result(&mut conn)
        .await
        .during("looking for an install of a URL")
    }

    async fn begin(&self) -> Result<Box<dyn PluginTransaction>, Unexpected> {
        Ok(Box::new(PgTransaction::open(&self.database).await?))
    }

    async fn source(&self, id: PluginId) -> Result<PluginFiles, Unexpected> {
        let mut conn = self.database.connection().await?;
        source_files(&mut conn, id).await
    }

    async fn unused(&self, organization: OrganizationId) -> Result<Vec<PluginId>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let enabled = plugin_configs::table
            .filter(plugin_configs::enabled.eq(true))
            .filter(plugin_configs::deleted.eq(false))
            .select(plugin_configs::plugin_id);
        let ids = plugins::table
            .filter(plugins::organization_id.eq(organization.0))
            .filter(diesel::dsl::not(plugins::id.eq_any(enabled)))
            .order(plugins::id.asc())
            .select(plugins::id)
            .load::<i32>(&mut conn)
            .await
            .during("listing unused plugins")?;
        Ok(ids.into_iter().map(PluginId).collect())
    }

    async fn activity(
        &self,
        organization: OrganizationId,
        page_request: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let mut conn = self.database.connection().await?;
        PLUGIN_ACTIVITY
            .page(
                &mut conn,
                Owner::Organization(organization.0),
                None,
                page_request,
            )
            .await
    }
}

/// A plugin's source files.
async fn source_files(
    conn: &mut AsyncPgConnection,
    id: PluginId,
) -> Result<PluginFiles, Unexpected> {
    let files = plugin_source_files::table
        .filter(plugin_source_files::plugin_id.eq(id.0))
        .select((plugin_source_files::filename, plugin_source_files::source))
        .load::<(String, String)>(conn)
        .await
        .during("loading a plugin's source files")?;
    Ok(files.into_iter().collect())
}

#[async_trait]
impl PluginTransaction for PgTransaction {
    async fn lock(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected> {
        let conn = self.connection().await?;
        let visible = visible_to(organization)
            .filter(plugins::id.eq(id.0))
            .select(plugins::id);
        let Some(row) = plugins::table
            .filter(plugins::id.eq_any(visible))
            .select(PluginRow::as_select())
            .for_update()
            .first::<PluginRow>(conn)
            .await
            .optional_during("locking a plugin")?
        else {
            return Ok(None);
        };
        let name = organizations::table
            .find(row.organization_id)
            .select(organizations::name)
            .first::<String>(conn)
            .await
            .during("reading a plugin's organization's name")?;
        row.into_plugin(name).map(Some)
    }

    async fn source(&mut self, id: PluginId) -> Result<PluginFiles, Unexpected> {
        source_files(self.connection().await?, id).await
    }

    async fn insert(
        &mut self,
        organization: OrganizationId,
        state: &PluginState,
        archive: Option<&[u8]>,
    ) -> Result<(PluginId, PluginState), DomainError> {
        let row = diesel::insert_into(plugins::table)
            .values((
                PluginStateRow::from(state),
                plugins::organization_id.eq(organization.0),
                plugins::archive.eq(archive),
            ))
            .returning(PluginRow::as_returning())
            .get_result::<PluginRow>(self.connection().await?)
            .await
            .map_err(|error| write_error(error, URL_INDEX, "installing a plugin"))?;
        Ok(row.into_state()?)
    }

    async fn update(
        &mut self,
        id: PluginId,
        state: &PluginState,
        archive: Option<&[u8]>,
    ) -> Result<PluginState, DomainError> {
        let row = diesel::update(plugins::table.find(id.0))
            .set((
                PluginStateRow::from(state),
                plugins::updated_at.eq(diesel::dsl::now),
                archive.map(|archive| plugins::archive.eq(archive)),
            ))
            .returning(PluginRow::as_returning())
            .get_result::<PluginRow>(self.connection().await?)
            .await
            .map_err(|error| write_error(error, URL_INDEX, "updating a plugin"))?;
        Ok(row.into_state()?.1)
    }

    async fn delete(&mut self, id: PluginId) -> Result<(), Unexpected> {
        diesel::delete(plugins::table.find(id.0))
            .execute(self.connection().await?)
            .await
            .during("uninstalling a plugin")?;
        Ok(())
    }

    async fn record(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
        source: &SourceChanges,
        activity: Option<&NewActivity>,
    ) -> Result<(), Unexpected> {
        let files: Vec<_> = source
            .iter()
            .filter_map(|(filename, content)| {
                Some((
                    plugin_source_files::plugin_id.eq(id.0),
                    plugin_source_files::filename.eq(filename.as_str()),
                    plugin_source_files::source.eq(content.as_deref()?),
                ))
            })
            .collect();
        let deleted: Vec<&str> = source
            .iter()
            .filter(|(_, content)| content.is_none())
            .map(|(filename, _)| filename.as_str())
            .collect();
        let conn = self.connection().await?;
        if !files.is_empty() {
            diesel::insert_into(plugin_source_files::table)
                .values(files)
                .on_conflict((
                    plugin_source_files::plugin_id,
                    plugin_source_files::filename,
                ))
                .do_update()
                .set((
                    plugin_source_files::source.eq(excluded(plugin_source_files::source)),
                    plugin_source_files::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await
                .during("writing a plugin's source files")?;
        }
        if !deleted.is_empty() {
            diesel::delete(
                plugin_source_files::table
                    .filter(plugin_source_files::plugin_id.eq(id.0))
                    .filter(plugin_source_files::filename.eq_any(deleted)),
            )
            .execute(conn)
            .await
            .during("deleting a plugin's source files")?;
        }
        if let Some(activity) = activity {
            diesel::insert_into(plugin_activity::table)
                .values(NewPluginActivityRow::new(organization, id, activity))
                .execute(conn)
                .await
                .during("logging a plugin's activity")?;
        }
        Ok(())
    }
}
