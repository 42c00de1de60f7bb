//! The plugin config use cases. A config may only use a plugin its project's organization can
//! see, and the values of secret fields never leave the server.
//!
//! Every write is one transaction the service runs itself: lock what the write depends on,
//! decide the write with the pure rules below, write, then commit, or roll back on any error
//! (`in_transaction!`), so concurrent writes of one config each see the other's result instead
//! of overwriting it.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{
    NewPluginConfig, PluginConfig, PluginConfigChanges, PluginConfigId, PluginConfigRepository,
    PluginConfigTransaction,
};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, Unexpected, ValidationError};
use crate::in_transaction;
use crate::plugin::{Plugin, PluginAccess, PluginId, PluginRepository};
use crate::ports::{Page, PageRequest};
use crate::tenancy::ProjectId;

/// What a secret field's value is shown as (PostHog's placeholder).
pub const SECRET_PLACEHOLDER: &str = "**************** POSTHOG SECRET FIELD ****************";

pub struct PluginConfigService {
    configs: Arc<dyn PluginConfigRepository>,
    plugins: Arc<dyn PluginRepository>,
}

impl PluginConfigService {
    pub fn new(
        configs: Arc<dyn PluginConfigRepository>,
        plugins: Arc<dyn PluginRepository>,
    ) -> Self {
        Self { configs, plugins }
    }

    /// The project's configs, secrets masked.
    ///
    /// # Errors
    /// `Forbidden` below the `config` level.
    pub async fn list(
        &self,
        access: &PluginAccess,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<PluginConfig>, DomainError> {
        access.require_read()?;
        let page = self.configs.list(project, page).await?;
        // One plugin lookup per distinct plugin on the page, not per config.
        let mut plugins: HashMap<PluginId, Plugin> = HashMap::new();
        let mut masked = Vec::with_capacity(page.items.len());
        for config in page.items {
            let plugin = match plugins.entry(config.plugin_id) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(slot) => slot.insert(self.plugin_of(access, &config).await?),
            };
            masked.push(mask(plugin, config));
        }
        Ok(Page {
            count: page.count,
            items: masked,
        })
    }

    /// # Errors
    /// `Forbidden`, `NotFound`.
    pub async fn get(
        &self,
        access: &PluginAccess,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<PluginConfig, DomainError> {
        access.require_read()?;
        let config = self.configs.get(project, id).await?.or_not_found()?;
        let plugin = self.plugin_of(access, &config).await?;
        Ok(mask(&plugin, config))
    }

    /// # Errors
    /// `Forbidden`; `Invalid` for a plugin the organization cannot see.
    pub async fn create(
        &self,
        access: &PluginAccess,
        project: ProjectId,
        config: NewPluginConfig,
    ) -> Result<PluginConfig, DomainError> {
        access.require_read()?;
        in_transaction!(self.configs.begin(), |transaction| {
            create_in(transaction, access, project, config).await
        })
    }

    /// # Errors
    /// `Forbidden`, `NotFound`.
    pub async fn update(
        &self,
        access: &PluginAccess,
        project: ProjectId,
        id: PluginConfigId,
        changes: PluginConfigChanges,
    ) -> Result<PluginConfig, DomainError> {
        access.require_read()?;
        in_transaction!(self.configs.begin(), |transaction| {
            update_in(transaction, access, project, id, changes).await
        })
    }

    /// # Errors
    /// `Forbidden`, `NotFound`.
    pub async fn delete(
        &self,
        access: &PluginAccess,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<(), DomainError> {
        access.require_read()?;
        in_transaction!(self.configs.begin(), |transaction| {
            delete_in(transaction, project, id).await
        })
    }

    async fn plugin_of(
        &self,
        access: &PluginAccess,
        config: &PluginConfig,
    ) -> Result<Plugin, DomainError> {
        let found = self
            .plugins
            .get(access.organization, config.plugin_id)
            .await?;
        used_plugin(config, found)
    }
}

/// Creating: the plugin is checked in the transaction that stores the config.
async fn create_in(
    transaction: &mut dyn PluginConfigTransaction,
    access: &PluginAccess,
    project: ProjectId,
    config: NewPluginConfig,
) -> Result<PluginConfig, DomainError> {
    let plugin = transaction
        .plugin(access.organization, config.plugin)
        .await?
        .ok_or_else(|| missing_plugin(config.plugin))?;
    let stored = transaction.insert(project, plugin.id, config.state).await?;
    Ok(mask(&plugin, stored))
}

/// Updating: the changes apply to the config as locked, never to an earlier read of it.
async fn update_in(
    transaction: &mut dyn PluginConfigTransaction,
    access: &PluginAccess,
    project: ProjectId,
    id: PluginConfigId,
    changes: PluginConfigChanges,
) -> Result<PluginConfig, DomainError> {
    let current = transaction.lock(project, id).await?.or_not_found()?;
    let found = transaction
        .plugin(access.organization, current.plugin_id)
        .await?;
    let plugin = used_plugin(&current, found)?;
    let stored = transaction
        .update(changed(&plugin, current, changes))
        .await?;
    Ok(mask(&plugin, stored))
}

/// Deleting: a deleted config is kept, disabled, so it no longer counts as a use.
async fn delete_in(
    transaction: &mut dyn PluginConfigTransaction,
    project: ProjectId,
    id: PluginConfigId,
) -> Result<(), DomainError> {
    let mut config = transaction.lock(project, id).await?.or_not_found()?;
    config.deleted = true;
    config.state.enabled = false;
    transaction.update(config).await?;
    Ok(())
}

/// The plugin a config uses, which its organization must still see.
fn used_plugin(config: &PluginConfig, found: Option<Plugin>) -> Result<Plugin, DomainError> {
    found.ok_or_else(|| {
        DomainError::Unexpected(Unexpected::new(format!(
            "plugin config {} uses plugin {} its organization cannot see",
            config.id.0, config.plugin_id
        )))
    })
}

/// `current` with `changes` applied: the fields sent change, the others stay as stored.
fn changed(
    plugin: &Plugin,
    mut current: PluginConfig,
    changes: PluginConfigChanges,
) -> PluginConfig {
    let state = &mut current.state;
    if let Some(enabled) = changes.enabled {
        state.enabled = enabled;
    }
    if let Some(order) = changes.order {
        state.order = order;
    }
    state.name = changes.name.apply(state.name.take());
    state.description = changes.description.apply(state.description.take());
    if let Some(config) = changes.config {
        state.config = merge_config(plugin, &state.config, config);
    }
    current
}

fn missing_plugin(id: PluginId) -> DomainError {
    ValidationError::invalid(
        "plugin",
        format!("Invalid pk \"{id}\" - object does not exist."),
    )
    .into()
}

/// The keys of the plugin's secret config fields (list-form schemas only, as in PostHog).
fn secret_keys(plugin: &Plugin) -> Vec<&str> {
    plugin.state.config_schema.secret_keys()
}

/// A config as shown: set secret values replaced by the placeholder (`""` stays `""`).
fn mask(plugin: &Plugin, mut config: PluginConfig) -> PluginConfig {
    for key in secret_keys(plugin) {
        if let Some(value) = config.state.config.get_mut(key)
            && !value.is_null()
            && value.as_str() != Some("")
        {
            *value = Value::String(SECRET_PLACEHOLDER.into());
        }
    }
    config
}

/// New config values over the stored ones: a secret sent as `null` (or as the placeholder a
/// client read back) keeps the stored secret.
fn merge_config(
    plugin: &Plugin,
    stored: &Map<String, Value>,
    sent: Map<String, Value>,
) -> Map<String, Value> {
    let secrets = secret_keys(plugin);
    let mut merged = Map::new();
    for (key, value) in sent {
        let keeps_secret = secrets.contains(&key.as_str())
            && (value.is_null() || value.as_str() == Some(SECRET_PLACEHOLDER));
        let value = if keeps_secret {
            stored.get(&key).cloned().unwrap_or(Value::Null)
        } else {
            value
        };
        merged.insert(key, value);
    }
    merged
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plugin::{ConfigSchema, PluginState, PluginType};
    use crate::plugin_config::PluginConfigState;
    use crate::tenancy::OrganizationId;

    fn plugin() -> Plugin {
        let mut state = PluginState::empty(PluginType::Source);
        state.config_schema =
            ConfigSchema::from_json(json!([{"key": "token", "secret": true}, {"key": "host"}]));
        Plugin {
            id: PluginId(1),
            organization_id: OrganizationId(uuid::Uuid::nil()),
            organization_name: String::new(),
            state,
        }
    }

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn set_secrets_are_masked_and_empty_ones_shown() {
        let config = PluginConfig {
            id: PluginConfigId(1),
            project_id: ProjectId(1),
            plugin_id: PluginId(1),
            state: PluginConfigState {
                enabled: true,
                order: 0,
                config: map(json!({"token": "s3cret", "host": "h"})),
                name: None,
                description: None,
            },
            deleted: false,
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
        };
        let shown = mask(&plugin(), config.clone());
        assert_eq!(shown.state.config["token"], SECRET_PLACEHOLDER);
        assert_eq!(shown.state.config["host"], "h");
        let mut empty = config;
        empty.state.config.insert("token".into(), json!(""));
        assert_eq!(mask(&plugin(), empty).state.config["token"], "");
    }

    #[test]
    fn a_null_secret_keeps_the_stored_one() {
        let stored = map(json!({"token": "s3cret", "host": "old"}));
        let merged = merge_config(
            &plugin(),
            &stored,
            map(json!({"token": null, "host": "new"})),
        );
        assert_eq!(merged, map(json!({"token": "s3cret", "host": "new"})));
        let replaced = merge_config(&plugin(), &stored, map(json!({"token": "other"})));
        assert_eq!(replaced["token"], "other");
    }
}
