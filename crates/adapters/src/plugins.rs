//! `PluginRepository` over `plugins`, `plugin_source_files` and `plugin_activity`; each write,
//! with its files and its activity entry, is one transaction.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::activity::{ActivityPage, NewActivity};
use domain::plugin::{
    Plugin, PluginFiles, PluginId, PluginPlanner, PluginRepository, PluginWrite, SourceChanges,
};
use domain::ports::{Page, PageRequest};
use domain::tenancy::OrganizationId;
use domain::{DomainError, Unexpected};
use uuid::Uuid;

use crate::database::Database;
use crate::errors::{StorageContext, TransactionError, write_error};
use crate::paging::{page, window};
use crate::rows::{ActivityRow, PluginRow, PluginStateRow, activity_page};
use crate::schema::{
    organizations, plugin_activity, plugin_configs, plugin_source_files, plugins, projects, users,
};

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

/// The plugins among `ids`, by id, each with its organization's name, in one statement.
async fn load_named(
    conn: &mut impl AsyncConnection<Backend = Pg>,
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
/// plugin config transaction's.
pub(crate) async fn visible_plugin(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    organization: OrganizationId,
    id: PluginId,
) -> Result<Option<Plugin>, Unexpected> {
    let ids = visible_to(organization)
        .filter(plugins::id.eq(id.0))
        .select(plugins::id);
    Ok(load_named(conn, ids).await?.pop())
}

/// One plugin by id, whoever owns it.
fn by_id(id: i32) -> plugins::BoxedQuery<'static, Pg, sql_types::Integer> {
    plugins::table
        .filter(plugins::id.eq(id))
        .select(plugins::id)
        .into_boxed()
}

/// Writes source file changes: sets and deletes.
async fn write_source(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    plugin: i32,
    changes: &SourceChanges,
) -> QueryResult<()> {
    for (filename, content) in changes {
        let file = plugin_source_files::table
            .filter(plugin_source_files::plugin_id.eq(plugin))
            .filter(plugin_source_files::filename.eq(filename));
        match content {
            Some(source) => {
                diesel::insert_into(plugin_source_files::table)
                    .values((
                        plugin_source_files::plugin_id.eq(plugin),
                        plugin_source_files::filename.eq(filename),
                        plugin_source_files::source.eq(source),
                    ))
                    .on_conflict((
                        plugin_source_files::plugin_id,
                        plugin_source_files::filename,
                    ))
                    .do_update()
                    .set((
                        plugin_source_files::source.eq(source),
                        plugin_source_files::updated_at.eq(diesel::dsl::now),
                    ))
                    .execute(conn)
                    .await?;
            }
            None => {
                diesel::delete(file).execute(conn).await?;
            }
        }
    }
    Ok(())
}

async fn write_activity(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    organization: OrganizationId,
    plugin: i32,
    activity: &NewActivity,
) -> QueryResult<usize> {
    diesel::insert_into(plugin_activity::table)
        .values((
            plugin_activity::id.eq(Uuid::now_v7()),
            plugin_activity::organization_id.eq(organization.0),
            plugin_activity::plugin_id.eq(plugin),
            plugin_activity::user_id.eq(activity.user.0),
            plugin_activity::scope.eq("Plugin"),
            plugin_activity::activity.eq(activity.activity),
            plugin_activity::detail.eq(&activity.detail),
        ))
        .execute(conn)
        .await
}

/// A plugin's files, activity and archive, after its row was written.
async fn write_rest(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    organization: OrganizationId,
    id: i32,
    write: &PluginWrite,
) -> Result<(), Unexpected> {
    write_source(conn, id, &write.source)
        .await
        .during("writing a plugin's source files")?;
    if let Some(archive) = &write.archive {
        diesel::update(plugins::table.find(id))
            .set(plugins::archive.eq(archive))
            .execute(conn)
            .await
            .during("storing a plugin's archive")?;
    }
    if let Some(activity) = &write.activity {
        write_activity(conn, organization, id, activity)
            .await
            .during("logging a plugin's activity")?;
    }
    Ok(())
}

/// One plugin by id with its organization's name, read inside a write's transaction.
async fn reload(
    conn: &mut impl AsyncConnection<Backend = Pg>,
    id: i32,
) -> Result<Plugin, Unexpected> {
    load_named(conn, by_id(id))
        .await?
        .pop()
        .ok_or_else(|| Unexpected::new(format!("plugin {id} vanished while being written")))
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

    async fn create(
        &self,
        organization: OrganizationId,
        write: PluginWrite,
    ) -> Result<Plugin, DomainError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let id = diesel::insert_into(plugins::table)
                .values((
                    PluginStateRow::from(&write.state),
                    plugins::organization_id.eq(organization.0),
                ))
                .returning(plugins::id)
                .get_result::<i32>(conn)
                .await
                .map_err(|error| write_error(error, URL_INDEX, "installing a plugin"))?;
            write_rest(conn, organization, id, &write).await?;
            Ok(reload(conn, id).await?)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn update(
        &self,
        organization: OrganizationId,
        id: PluginId,
        planner: &PluginPlanner<'_>,
    ) -> Result<Plugin, DomainError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            plugins::table
                .filter(plugins::id.eq(id.0))
                .filter(plugins::organization_id.eq(organization.0))
                .select(plugins::id)
                .for_update()
                .first::<i32>(conn)
                .await
                .optional()
                .during("locking a plugin")?
                .ok_or(DomainError::NotFound)?;
            let current = reload(conn, id.0).await?;
            let write = planner(&current)?;
            diesel::update(plugins::table.find(id.0))
                .set((
                    PluginStateRow::from(&write.state),
                    plugins::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await
                .map_err(|error| write_error(error, URL_INDEX, "updating a plugin"))?;
            write_rest(conn, organization, id.0, &write).await?;
            Ok(reload(conn, id.0).await?)
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn delete(
        &self,
        organization: OrganizationId,
        id: PluginId,
        activity: NewActivity,
    ) -> Result<(), DomainError> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, TransactionError, _>(async |conn| {
            let deleted = diesel::delete(
                plugins::table
                    .filter(plugins::id.eq(id.0))
                    .filter(plugins::organization_id.eq(organization.0)),
            )
            .execute(conn)
            .await
            .during("uninstalling a plugin")?;
            if deleted == 0 {
                return Err(DomainError::NotFound.into());
            }
            write_activity(conn, organization, id.0, &activity)
                .await
                .during("logging a plugin's activity")?;
            Ok(())
        })
        .await
        .map_err(|TransactionError(error)| error)
    }

    async fn source(&self, id: PluginId) -> Result<PluginFiles, Unexpected> {
        let mut conn = self.database.connection().await?;
        let files = plugin_source_files::table
            .filter(plugin_source_files::plugin_id.eq(id.0))
            .select((plugin_source_files::filename, plugin_source_files::source))
            .load::<(String, String)>(&mut conn)
            .await
            .during("loading a plugin's source files")?;
        Ok(files.into_iter().collect())
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
        let of_organization =
            || plugin_activity::table.filter(plugin_activity::organization_id.eq(organization.0));
        let total = of_organization()
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting plugin activity")?;
        let rows = window(
            of_organization()
                .left_join(users::table)
                .order((
                    plugin_activity::created_at.desc(),
                    plugin_activity::id.desc(),
                ))
                .select((
                    ActivityRow::as_select(),
                    users::first_name.nullable(),
                    users::email.nullable(),
                )),
            page_request,
        )
        .load::<(ActivityRow, Option<String>, Option<String>)>(&mut conn)
        .await
        .during("listing plugin activity")?;
        Ok(activity_page(total, rows))
    }
}
