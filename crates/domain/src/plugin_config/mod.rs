//! Plugin configs: a project's use of a plugin (enabled or not, in which order, with which
//! settings), behind `/api/projects/{id}/plugin_configs/`. They decide which plugins an
//! organization sees and which count as unused.

mod port;
mod service;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::patch::Patch;
use crate::plugin::PluginId;
use crate::tenancy::ProjectId;

pub use port::{PluginConfigRepository, PluginConfigTransaction};
pub use service::{PluginConfigService, SECRET_PLACEHOLDER};

/// Longest `name` a config stores (PostHog's column).
pub const MAX_NAME_CHARS: usize = 400;
/// Longest `description` a config stores (PostHog's column).
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

/// A config's integer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PluginConfigId(pub i32);

/// What a project sets about one plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginConfigState {
    pub enabled: bool,
    pub order: i32,
    pub config: Map<String, Value>,
    pub name: Option<String>,
    pub description: Option<String>,
}

/// A stored config.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginConfig {
    pub id: PluginConfigId,
    pub project_id: ProjectId,
    pub plugin_id: PluginId,
    pub state: PluginConfigState,
    pub deleted: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A config to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewPluginConfig {
    pub plugin: PluginId,
    pub state: PluginConfigState,
}

/// A PATCH: the fields sent change. In `config`, a `null` for a secret field keeps the stored
/// secret.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginConfigChanges {
    pub enabled: Option<bool>,
    pub order: Option<i32>,
    pub config: Option<Map<String, Value>>,
    pub name: Patch<String>,
    pub description: Patch<String>,
}
