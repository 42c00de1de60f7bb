//! The commands a client sends about plugins, read off the wire: the writable fields (create and
//! PATCH) and an install.

use serde_json::Value;

use super::{ConfigSchema, PluginCapabilities, PluginState, PluginType};
use crate::patch::Patch;

/// The fields a client may write (PostHog's writable serializer fields). `url` and `latest_tag`
/// are not among them: they come from the upstream.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginFields {
    pub plugin_type: Option<PluginType>,
    pub name: Patch<String>,
    pub description: Patch<String>,
    pub icon: Patch<String>,
    pub config_schema: Option<ConfigSchema>,
    pub tag: Patch<String>,
    pub is_global: Option<bool>,
    pub capabilities: Option<PluginCapabilities>,
    pub metrics: Option<Value>,
    pub public_jobs: Option<Value>,
}

/// A PATCH: the fields sent change.
pub type PluginChanges = PluginFields;

impl PluginFields {
    /// The fields over `state`.
    pub(crate) fn apply(&self, state: &mut PluginState) {
        if let Some(plugin_type) = self.plugin_type {
            state.plugin_type = plugin_type;
        }
        state.name = self.name.clone().apply(state.name.take());
        state.description = self.description.clone().apply(state.description.take());
        state.icon = self.icon.clone().apply(state.icon.take());
        state.tag = self.tag.clone().apply(state.tag.take());
        if let Some(schema) = &self.config_schema {
            state.config_schema = schema.clone();
        }
        if let Some(is_global) = self.is_global {
            state.is_global = is_global;
        }
        if let Some(capabilities) = &self.capabilities {
            state.capabilities = capabilities.clone();
        }
        if let Some(metrics) = &self.metrics {
            state.metrics = metrics.clone();
        }
        if let Some(public_jobs) = &self.public_jobs {
            state.public_jobs = public_jobs.clone();
        }
    }
}

/// An install (`POST /plugins/`): a URL to fetch (none for `source` plugins) and fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewPlugin {
    /// As sent, `?private_token=` included.
    pub url: Option<String>,
    pub fields: PluginFields,
}
