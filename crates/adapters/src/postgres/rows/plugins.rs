//! Rows of plugins and their activity log.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::activity::NewActivity;
use domain::plugin::{ConfigSchema, Plugin, PluginCapabilities, PluginId, PluginState, PluginType};
use domain::tenancy::OrganizationId;
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::schema::{plugin_activity, plugins};

/// A plugin's columns, the archive left out (it is never shown, and can be megabytes).
#[derive(Queryable, Selectable)]
#[diesel(table_name = plugins, check_for_backend(diesel::pg::Pg))]
pub(crate) struct PluginRow {
    pub id: i32,
    pub organization_id: Uuid,
    pub plugin_type: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub url: Option<String>,
    pub icon: Option<String>,
    pub config_schema: Value,
    pub tag: Option<String>,
    pub latest_tag: Option<String>,
    pub latest_tag_checked_at: Option<DateTime<Utc>>,
    pub is_global: bool,
    pub is_stateless: bool,
    pub capabilities: Value,
    pub metrics: Value,
    pub public_jobs: Value,
}

impl PluginRow {
    pub fn into_plugin(self, organization_name: String) -> Result<Plugin, Unexpected> {
        let organization_id = OrganizationId(self.organization_id);
        let (id, state) = self.into_state()?;
        Ok(Plugin {
            id,
            organization_id,
            organization_name,
            state,
        })
    }

    /// The plugin's id and state: what a write returns (its caller knows the organization).
    pub fn into_state(self) -> Result<(PluginId, PluginState), Unexpected> {
        let plugin_type = PluginType::parse(&self.plugin_type).ok_or_else(|| {
            Unexpected::new(format!(
                "plugin {} has type {:?}",
                self.id, self.plugin_type
            ))
        })?;
        let Value::Object(capabilities) = self.capabilities else {
            return Err(Unexpected::new(format!(
                "plugin {} has capabilities that are not an object",
                self.id
            )));
        };
        Ok((
            PluginId(self.id),
            PluginState {
                plugin_type,
                name: self.name,
                description: self.description,
                url: self.url,
                icon: self.icon,
                config_schema: ConfigSchema::from_json(self.config_schema),
                tag: self.tag,
                latest_tag: self.latest_tag,
                latest_tag_checked_at: self.latest_tag_checked_at,
                is_global: self.is_global,
                is_stateless: self.is_stateless,
                capabilities: PluginCapabilities::from_json(capabilities),
                metrics: self.metrics,
                public_jobs: self.public_jobs,
            },
        ))
    }
}

/// A plugin activity entry as inserted.
#[derive(Insertable)]
#[diesel(table_name = plugin_activity)]
pub(crate) struct NewPluginActivityRow<'a> {
    id: Uuid,
    organization_id: Uuid,
    plugin_id: i32,
    user_id: i32,
    scope: &'static str,
    activity: &'static str,
    detail: &'a Value,
}

impl<'a> NewPluginActivityRow<'a> {
    pub fn new(organization: OrganizationId, plugin: PluginId, activity: &'a NewActivity) -> Self {
        Self {
            id: Uuid::now_v7(),
            organization_id: organization.0,
            plugin_id: plugin.0,
            user_id: activity.user.0,
            scope: "Plugin",
            activity: activity.activity,
            detail: &activity.detail,
        }
    }
}

/// The columns a write sets from a plugin's state; an update writes `None` as `NULL`, clearing
/// the column.
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = plugins,
    check_for_backend(diesel::pg::Pg),
    treat_none_as_null = true
)]
pub(crate) struct PluginStateRow<'a> {
    pub plugin_type: &'static str,
    pub name: Option<&'a str>,
    pub description: Option<&'a str>,
    pub url: Option<&'a str>,
    pub url_key: Option<&'a str>,
    pub icon: Option<&'a str>,
    pub config_schema: Value,
    pub tag: Option<&'a str>,
    pub latest_tag: Option<&'a str>,
    pub latest_tag_checked_at: Option<DateTime<Utc>>,
    pub is_global: bool,
    pub is_stateless: bool,
    pub capabilities: Value,
    pub metrics: &'a Value,
    pub public_jobs: &'a Value,
}

impl<'a> From<&'a PluginState> for PluginStateRow<'a> {
    fn from(state: &'a PluginState) -> Self {
        Self {
            plugin_type: state.plugin_type.as_str(),
            name: state.name.as_deref(),
            description: state.description.as_deref(),
            url: state.url.as_deref(),
            url_key: state.display_url(),
            icon: state.icon.as_deref(),
            config_schema: state.config_schema.to_json(),
            tag: state.tag.as_deref(),
            latest_tag: state.latest_tag.as_deref(),
            latest_tag_checked_at: state.latest_tag_checked_at,
            is_global: state.is_global,
            is_stateless: state.is_stateless,
            capabilities: Value::Object(state.capabilities.to_json()),
            metrics: &state.metrics,
            public_jobs: &state.public_jobs,
        }
    }
}
