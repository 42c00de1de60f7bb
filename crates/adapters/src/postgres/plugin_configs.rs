//! `PluginConfigRepository` over `plugin_configs` (soft-deleted configs are hidden), in plain
//! diesel. Writes run in a `PgTransaction`: the config locked (`FOR UPDATE`), then written with
//! `RETURNING`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::plugin::{Plugin, PluginId};
use domain::plugin_config::{
    PluginConfig, PluginConfigId, PluginConfigRepository, PluginConfigState,
    PluginConfigTransaction,
};
use domain::ports::{Page, PageRequest};
use domain::tenancy::{OrganizationId, ProjectId};
use serde_json::Value;

use crate::postgres::errors::StorageContext;
use crate::postgres::paging::{page, window};
use crate::postgres::plugins::visible_plugin;
use crate::postgres::schema::plugin_configs;
use crate::postgres::transaction::PgTransaction;

crate::postgres::over_the_pool! {
    /// Plugin configs in PostgreSQL.
    PgPluginConfigRepository
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = plugin_configs, check_for_backend(diesel::pg::Pg))]
struct ConfigRow {
    id: i32,
    project_id: i32,
    plugin_id: i32,
    enabled: bool,
    order: i32,
    config: Value,
    name: Option<String>,
    description: Option<String>,
    deleted: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ConfigRow {
    fn into_config(self) -> Result<PluginConfig, Unexpected> {
        let Value::Object(config) = self.config else {
            return Err(Unexpected::new(format!(
                "plugin config {} has a config that is not an object",
                self.id
            )));
        };
        Ok(PluginConfig {
            id: PluginConfigId(self.id),
            project_id: ProjectId(self.project_id),
            plugin_id: PluginId(self.plugin_id),
            state: PluginConfigState {
                enabled: self.enabled,
                order: self.order,
                config,
                name: self.name,
                description: self.description,
            },
            deleted: self.deleted,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The columns a write sets from a config's state; an update writes `None` as `NULL`, clearing
/// the column.
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = plugin_configs,
    check_for_backend(diesel::pg::Pg),
    treat_none_as_null = true
)]
struct ConfigStateRow<'a> {
    enabled: bool,
    order: i32,
    config: Value,
    name: Option<&'a str>,
    description: Option<&'a str>,
}

impl<'a> From<&'a PluginConfigState> for ConfigStateRow<'a> {
    fn from(state: &'a PluginConfigState) -> Self {
        Self {
            enabled: state.enabled,
            order: state.order,
            config: Value::Object(state.config.clone()),
            name: state.name.as_deref(),
            description: state.description.as_deref(),
        }
    }
}

/// Whether a config is a live one of the project (a condition, so a lock can use it too).
#[diesel::dsl::auto_type]
fn live_in(project: i32) -> _ {
    plugin_configs::project_id
        .eq(project)
        .and(plugin_configs::deleted.eq(false))
}

/// The live configs of a project.
fn live(project: ProjectId) -> plugin_configs::BoxedQuery<'static, diesel::pg::Pg> {
    plugin_configs::table
        .filter(live_in(project.0))
        .into_boxed()
}

#[async_trait]
impl PluginConfigRepository for PgPluginConfigRepository {
    async fn list(
        &self,
        project: ProjectId,
        page_request: PageRequest,
    ) -> Result<Page<PluginConfig>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let count = live(project)
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting plugin configs")?;
        let rows = window(
            live(project)
                .order((plugin_configs::order.asc(), plugin_configs::id.asc()))
                .select(ConfigRow::as_select()),
            page_request,
        )
        .load(&mut conn)
        .await
        .during("listing plugin configs")?;
        let items = rows
            .into_iter()
            .map(ConfigRow::into_config)
            .collect::<Result<_, _>>()?;
        Ok(page(count, items))
    }

    async fn get(
        &self,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<Option<PluginConfig>, Unexpected> {
        let mut conn = self.database.connection().await?;
        live(project)
            .filter(plugin_configs::id.eq(id.0))
            .select(ConfigRow::as_select())
            .first(&mut conn)
            .await
            .optional_during("loading a plugin config")?
            .map(ConfigRow::into_config)
            .transpose()
    }

    async fn begin(&self) -> Result<Box<dyn PluginConfigTransaction>, Unexpected> {
        Ok(Box::new(PgTransaction::open(&self.database).await?))
    }
}

#[async_trait]
impl PluginConfigTransaction for PgTransaction {
    async fn lock(
        &mut self,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<Option<PluginConfig>, Unexpected> {
        plugin_configs::table
            .filter(live_in(project.0))
            .filter(plugin_configs::id.eq(id.0))
            .select(ConfigRow::as_select())
            .for_update()
            .first(self.connection().await?)
            .await
            .optional_during("locking a plugin config")?
            .map(ConfigRow::into_config)
            .transpose()
    }

    async fn plugin(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected> {
        visible_plugin(self.connection().await?, organization, id).await
    }

    async fn insert(
        &mut self,
        project: ProjectId,
        plugin: PluginId,
        state: PluginConfigState,
    ) -> Result<PluginConfig, Unexpected> {
        diesel::insert_into(plugin_configs::table)
            .values((
                ConfigStateRow::from(&state),
                plugin_configs::project_id.eq(project.0),
                plugin_configs::plugin_id.eq(plugin.0),
            ))
            .returning(ConfigRow::as_returning())
            .get_result(self.connection().await?)
            .await
            .during("creating a plugin config")?
            .into_config()
    }

    async fn update(&mut self, config: PluginConfig) -> Result<PluginConfig, Unexpected> {
        let updated_at = diesel::update(
            plugin_configs::table
                .filter(plugin_configs::id.eq(config.id.0))
                .filter(plugin_configs::project_id.eq(config.project_id.0)),
        )
        .set((
            ConfigStateRow::from(&config.state),
            plugin_configs::deleted.eq(config.deleted),
            plugin_configs::updated_at.eq(diesel::dsl::now),
        ))
        .returning(plugin_configs::updated_at)
        .get_result(self.connection().await?)
        .await
        .optional_during("updating a plugin config")?
        .ok_or_else(|| Unexpected::new(format!("plugin config {} is not stored", config.id.0)))?;
        Ok(PluginConfig {
            updated_at,
            ..config
        })
    }
}
