//! `PluginRepository` over `plugins`, `plugin_source_files` and `plugin_activity`: the reads,
//! and the primitives of a write's transaction; file changes carry the activity entry in the
//! same statement, and every write returns what it wrote.

use async_trait::async_trait;
use diesel::pg::upsert::excluded;
use diesel::prelude::*;
use diesel::query_builder::{QueryFragment, QueryId};
use diesel::sql_types;
use diesel_async::{AsyncConnectionCore, AsyncPgConnection, RunQueryDsl};
use domain::activity::{ActivityPage, NewActivity};
use domain::plugin::{
    Plugin, PluginFiles, PluginId, PluginRepository, PluginState, PluginTransaction, SourceChanges,
};
use domain::ports::{Page, PageRequest};
use domain::tenancy::OrganizationId;
use domain::{DomainError, Unexpected};

use crate::postgres::activity::{Owner, PLUGIN_ACTIVITY};
use crate::postgres::database::Database;
use crate::postgres::errors::{StorageContext, write_error};
use crate::postgres::paging::{page, window};
use crate::postgres::prepared::prepared;
use crate::postgres::rows::{NewPluginActivityRow, PluginRow, PluginStateRow};
use crate::postgres::schema::{
    organizations, plugin_activity, plugin_configs, plugin_source_files, plugins, projects,
};
use crate::postgres::transaction::{Lock, PgTransaction, for_update_of, logged};

type Pg = diesel::pg::Pg;

/// The index that allows one install of a URL per organization.
const URL_INDEX: &str = "plugins_organization_url_key";

/// Plugins in PostgreSQL.
pub struct PgPluginRepository {
    database: Database,
}

impl PgPluginRepository {
    /// A repository over the shared pool.
    pub fn new(database: Database) -> Self {
        Self { database }
    }
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

/// The plugins among `ids`, by id, each with its organization's name, in one statement;
/// `lock` keeps the plugins' rows locked until the transaction ends.
async fn load_named(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    ids: plugins::BoxedQuery<'_, Pg, sql_types::Integer>,
    lock: Lock,
) -> Result<Vec<Plugin>, Unexpected> {
    let query = plugins::table
        .inner_join(organizations::table)
        .filter(plugins::id.eq_any(ids))
        .order(plugins::id.asc())
        .select((PluginRow::as_select(), organizations::name));
    match lock {
        Lock::ForUpdate => {
            for_update_of(query, "plugins")
                .load::<(PluginRow, String)>(conn)
                .await
        }
        Lock::None => query.load::<(PluginRow, String)>(conn).await,
    }
    .during("loading plugins with their organizations' names")?
    .into_iter()
    .map(|(row, name)| row.into_plugin(name))
    .collect()
}

/// The plugin `organization` can see with this id, on any connection: the repository's own or a
/// transaction's.
pub(crate) async fn visible_plugin(
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
    organization: OrganizationId,
    id: PluginId,
    lock: Lock,
) -> Result<Option<Plugin>, Unexpected> {
    let ids = visible_to(organization)
        .filter(plugins::id.eq(id.0))
        .select(plugins::id);
    Ok(load_named(conn, ids, lock).await?.pop())
}

/// Runs `write`, carrying `log`'s activity entry in the same statement when there is one.
async fn with_log<W>(
    conn: &mut AsyncPgConnection,
    log: Option<NewPluginActivityRow<'_>>,
    write: W,
) -> QueryResult<usize>
where
    W: QueryFragment<Pg> + QueryId + Send,
{
    match log {
        Some(log) => {
            let log = diesel::insert_into(plugin_activity::table).values(log);
            logged(log, write).execute(conn).await
        }
        None => write.execute(conn).await,
    }
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
        Ok(page(count, load_named(&mut conn, ids, Lock::None).await?))
    }

    async fn get(
        &self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected> {
        let mut conn = self.database.connection().await?;
        visible_plugin(&mut conn, organization, id, Lock::None).await
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
    conn: &mut impl AsyncConnectionCore<Backend = Pg>,
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
        self.read(async |conn| visible_plugin(conn, organization, id, Lock::ForUpdate).await)
            .await
    }

    async fn source(&mut self, id: PluginId) -> Result<PluginFiles, Unexpected> {
        self.read(async |conn| source_files(conn, id).await).await
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
        // Two SQL texts: with the archive and without.
        let update = diesel::update(plugins::table.find(id.0))
            .set((
                PluginStateRow::from(state),
                plugins::updated_at.eq(diesel::dsl::now),
                archive.map(|archive| plugins::archive.eq(archive)),
            ))
            .returning(PluginRow::as_returning());
        let row = prepared(update)
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
        let mut log =
            activity.map(|activity| NewPluginActivityRow::new(organization, id, activity));
        let (set, deleted): (Vec<_>, Vec<_>) =
            source.iter().partition(|(_, content)| content.is_some());
        let conn = self.connection().await?;
        if !set.is_empty() {
            let files: Vec<_> = set
                .iter()
                .filter_map(|(filename, content)| {
                    let source = content.as_deref()?;
                    Some((
                        plugin_source_files::plugin_id.eq(id.0),
                        plugin_source_files::filename.eq(filename.as_str()),
                        plugin_source_files::source.eq(source),
                    ))
                })
                .collect();
            let upsert = diesel::insert_into(plugin_source_files::table)
                .values(files)
                .on_conflict((
                    plugin_source_files::plugin_id,
                    plugin_source_files::filename,
                ))
                .do_update()
                .set((
                    plugin_source_files::source.eq(excluded(plugin_source_files::source)),
                    plugin_source_files::updated_at.eq(diesel::dsl::now),
                ));
            with_log(conn, log.take(), upsert)
                .await
                .during("writing a plugin's source files")?;
        }
        if !deleted.is_empty() {
            let names: Vec<&str> = deleted.iter().map(|(name, _)| name.as_str()).collect();
            let delete = diesel::delete(
                plugin_source_files::table
                    .filter(plugin_source_files::plugin_id.eq(id.0))
                    .filter(plugin_source_files::filename.eq_any(names)),
            );
            with_log(conn, log.take(), delete)
                .await
                .during("deleting a plugin's source files")?;
        }
        if let Some(log) = log {
            diesel::insert_into(plugin_activity::table)
                .values(log)
                .execute(conn)
                .await
                .during("logging a plugin's activity")?;
        }
        Ok(())
    }
}
