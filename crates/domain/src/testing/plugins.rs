//! The plugin and plugin config ports, faked: visibility across organizations, one install of a
//! URL per organization, writes that apply whole or not at all, cascades on uninstall, and
//! the config transaction's primitives over the fakes' shared `Draft`.

use async_trait::async_trait;
use chrono::Utc;
use uuid::Uuid;

use crate::activity::{ActivityEntry, ActivityPage, NewActivity};
use crate::error::{DomainError, Unexpected};
use crate::plugin::{
    Plugin, PluginFiles, PluginId, PluginRepository, PluginState, PluginTransaction, SourceChanges,
    apply_source,
};
use crate::plugin_config::{
    PluginConfig, PluginConfigId, PluginConfigRepository, PluginConfigState,
    PluginConfigTransaction,
};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{OrganizationId, ProjectId};

use super::transaction::Draft;
use super::{InMemoryStore, State, page_of};

#[derive(Debug, Clone)]
pub(super) struct StoredPlugin {
    id: PluginId,
    organization: OrganizationId,
    state: PluginState,
    source: PluginFiles,
    archive: Option<Vec<u8>>,
}

#[derive(Debug, Clone)]
pub(super) struct StoredActivity {
    organization: OrganizationId,
    user: crate::tenancy::UserId,
    entry: ActivityEntry,
}

impl State {
    fn plugin_view(&self, stored: &StoredPlugin) -> Plugin {
        Plugin {
            id: stored.id,
            organization_id: stored.organization,
            organization_name: self
                .organizations
                .iter()
                .find(|o| o.id == stored.organization)
                .map(|o| o.name.clone())
                .unwrap_or_default(),
            state: stored.state.clone(),
        }
    }

    /// The plugin as `organization` sees it, if it may.
    fn visible_plugin(&self, organization: OrganizationId, id: PluginId) -> Option<Plugin> {
        self.plugins
            .iter()
            .find(|p| p.id == id && self.visible_to(organization, p))
            .map(|p| self.plugin_view(p))
    }

    fn stored_plugin(&self, id: PluginId) -> Option<&StoredPlugin> {
        self.plugins.iter().find(|p| p.id == id)
    }

    fn organization_of(&self, project: ProjectId) -> Option<OrganizationId> {
        self.projects
            .iter()
            .find(|p| p.id == project)
            .map(|p| p.organization_id)
    }

    fn visible_to(&self, organization: OrganizationId, plugin: &StoredPlugin) -> bool {
        plugin.organization == organization
            || plugin.state.is_global
            || self.plugin_configs.iter().any(|config| {
                config.plugin_id == plugin.id
                    && !config.deleted
                    && self.organization_of(config.project_id) == Some(organization)
            })
    }

    fn url_taken(
        &self,
        organization: OrganizationId,
        state: &PluginState,
        except: PluginId,
    ) -> bool {
        state.display_url().is_some_and(|url| {
            self.plugins.iter().any(|p| {
                p.id != except
                    && p.organization == organization
                    && p.state.display_url() == Some(url)
            })
        })
    }

    fn log(&mut self, organization: OrganizationId, plugin: PluginId, activity: &NewActivity) {
        self.plugin_activity.push(StoredActivity {
            organization,
            user: activity.user,
            entry: ActivityEntry {
                id: Uuid::now_v7(),
                // Filled in when read, as the adapter joins the user then.
                user: None,
                scope: "Plugin".into(),
                activity: activity.activity.into(),
                item_id: plugin.to_string(),
                detail: activity.detail.clone(),
                created_at: Utc::now(),
            },
        });
    }
}

impl InMemoryStore {
    /// The archive stored with a plugin, for tests of installs and upgrades.
    pub fn plugin_archive(&self, id: PluginId) -> Option<Vec<u8>> {
        self.lock()
            .plugins
            .iter()
            .find(|p| p.id == id)
            .and_then(|p| p.archive.clone())
    }
}

#[async_trait]
impl PluginRepository for InMemoryStore {
    async fn list(
        &self,
        organization: OrganizationId,
        page: PageRequest,
    ) -> Result<Page<Plugin>, Unexpected> {
        let state = self.lock();
        let mut visible: Vec<_> = state
            .plugins
            .iter()
            .filter(|p| state.visible_to(organization, p))
            .collect();
        visible.sort_by_key(|p| p.id);
        Ok(page_of(visible, page).map(|p| state.plugin_view(p)))
    }

    async fn get(
        &self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected> {
        Ok(self.lock().visible_plugin(organization, id))
    }

    async fn installed(
        &self,
        organization: OrganizationId,
        display_url: &str,
    ) -> Result<bool, Unexpected> {
        Ok(self
            .lock()
            .plugins
            .iter()
            .any(|p| p.organization == organization && p.state.display_url() == Some(display_url)))
    }

    async fn begin(&self) -> Result<Box<dyn PluginTransaction>, Unexpected> {
        Ok(Box::new(Draft::begin(self).await))
    }

    async fn source(&self, id: PluginId) -> Result<PluginFiles, Unexpected> {
        Ok(self
            .lock()
            .plugins
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.source.clone())
            .unwrap_or_default())
    }

    async fn unused(&self, organization: OrganizationId) -> Result<Vec<PluginId>, Unexpected> {
        let state = self.lock();
        let mut ids: Vec<_> = state
            .plugins
            .iter()
            .filter(|p| p.organization == organization)
            .filter(|p| {
                !state
                    .plugin_configs
                    .iter()
                    .any(|c| c.plugin_id == p.id && c.state.enabled && !c.deleted)
            })
            .map(|p| p.id)
            .collect();
        ids.sort();
        Ok(ids)
    }

    async fn activity(
        &self,
        organization: OrganizationId,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let state = self.lock();
        let logged = state
            .plugin_activity
            .iter()
            .filter(|a| a.organization == organization)
            .map(|a| (a.user, &a.entry));
        Ok(state.activity_page(logged, page))
    }
}

#[async_trait]
impl PluginTransaction for Draft {
    async fn lock(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected> {
        Ok(self.state.visible_plugin(organization, id))
    }

    async fn source(&mut self, id: PluginId) -> Result<PluginFiles, Unexpected> {
        Ok(self
            .state
            .stored_plugin(id)
            .map(|p| p.source.clone())
            .unwrap_or_default())
    }

    async fn insert(
        &mut self,
        organization: OrganizationId,
        state: &PluginState,
        archive: Option<&[u8]>,
    ) -> Result<(PluginId, PluginState), DomainError> {
        let next = self.state.plugins.iter().map(|p| p.id.0).max().unwrap_or(0) + 1;
        let id = PluginId(next);
        if self.state.url_taken(organization, state, id) {
            return Err(DomainError::Conflict);
        }
        self.state.plugins.push(StoredPlugin {
            id,
            organization,
            state: state.clone(),
            source: PluginFiles::new(),
            archive: archive.map(<[u8]>::to_vec),
        });
        Ok((id, state.clone()))
    }

    async fn update(
        &mut self,
        id: PluginId,
        state: &PluginState,
        archive: Option<&[u8]>,
    ) -> Result<PluginState, DomainError> {
        let vanished = || Unexpected::new(format!("plugin {} vanished while locked", id.0));
        let organization = self
            .state
            .stored_plugin(id)
            .map(|p| p.organization)
            .ok_or_else(vanished)?;
        if self.state.url_taken(organization, state, id) {
            return Err(DomainError::Conflict);
        }
        let stored = self
            .state
            .plugins
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(vanished)?;
        stored.state = state.clone();
        if let Some(archive) = archive {
            stored.archive = Some(archive.to_vec());
        }
        Ok(state.clone())
    }

    async fn delete(&mut self, id: PluginId) -> Result<(), Unexpected> {
        self.state.plugins.retain(|p| p.id != id);
        self.state
            .plugin_configs
            .retain(|config| config.plugin_id != id);
        Ok(())
    }

    async fn record(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
        source: &SourceChanges,
        activity: Option<&NewActivity>,
    ) -> Result<(), Unexpected> {
        if let Some(stored) = self.state.plugins.iter_mut().find(|p| p.id == id) {
            apply_source(&mut stored.source, source);
        }
        if let Some(activity) = activity {
            self.state.log(organization, id, activity);
        }
        Ok(())
    }
}

#[async_trait]
impl PluginConfigRepository for InMemoryStore {
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<PluginConfig>, Unexpected> {
        let state = self.lock();
        let mut live: Vec<_> = state
            .plugin_configs
            .iter()
            .filter(|c| c.project_id == project && !c.deleted)
            .cloned()
            .collect();
        live.sort_by_key(|c| (c.state.order, c.id));
        Ok(page_of(live, page))
    }

    async fn get(
        &self,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<Option<PluginConfig>, Unexpected> {
        Ok(self
            .lock()
            .plugin_configs
            .iter()
            .find(|c| c.id == id && c.project_id == project && !c.deleted)
            .cloned())
    }

    async fn begin(&self) -> Result<Box<dyn PluginConfigTransaction>, Unexpected> {
        Ok(Box::new(Draft::begin(self).await))
    }
}

#[async_trait]
impl PluginConfigTransaction for Draft {
    async fn lock(
        &mut self,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<Option<PluginConfig>, Unexpected> {
        Ok(self
            .state
            .plugin_configs
            .iter()
            .find(|c| c.id == id && c.project_id == project && !c.deleted)
            .cloned())
    }

    async fn plugin(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected> {
        Ok(self.state.visible_plugin(organization, id))
    }

    async fn insert(
        &mut self,
        project: ProjectId,
        plugin: PluginId,
        state: PluginConfigState,
    ) -> Result<PluginConfig, Unexpected> {
        let configs = &mut self.state.plugin_configs;
        // Ids are never reused, as from a sequence (an uninstall removes configs).
        let last = configs.iter().map(|c| c.id.0).max().unwrap_or(0);
        let now = Utc::now();
        let config = PluginConfig {
            id: PluginConfigId(last + 1),
            project_id: project,
            plugin_id: plugin,
            state,
            deleted: false,
            created_at: now,
            updated_at: now,
        };
        configs.push(config.clone());
        Ok(config)
    }

    async fn update(&mut self, mut config: PluginConfig) -> Result<PluginConfig, Unexpected> {
        let stored = self
            .state
            .plugin_configs
            .iter_mut()
            .find(|c| c.id == config.id && c.project_id == config.project_id)
            .ok_or_else(|| {
                Unexpected::new(format!("plugin config {} is not stored", config.id.0))
            })?;
        config.updated_at = Utc::now();
        *stored = config.clone();
        Ok(config)
    }
}
