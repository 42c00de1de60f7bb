//! Organization plugins: the entity, where its code comes from, what it exports, who may touch
//! it, and the use cases behind `/api/organizations/{id}/plugins/`.

mod access;
mod capabilities;
mod command;
mod config_schema;
mod install;
mod manifest;
mod port;
mod service;
mod upstream;
mod url;

use std::fmt;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::tenancy::OrganizationId;

pub use access::PluginAccess;
pub use capabilities::PluginCapabilities;
pub use command::{NewPlugin, PluginChanges, PluginFields};
pub use config_schema::{ConfigField, ConfigItem, ConfigSchema};
pub use manifest::{MAX_ICON_CHARS, MAX_NAME_CHARS, Manifest};
pub use port::{PluginRepository, PluginTransaction, PluginWrite, SourceChanges, apply_source};
pub use service::{MAX_FILENAME_CHARS, MAX_SOURCE_BYTES, PluginService, PluginSettings};
pub use upstream::{
    Capabilities, PluginArchive, PluginFiles, PluginUpstream, SourceAnalyzer, UpstreamError,
};
pub use url::{GitHubRef, MAX_TAG_CHARS, PluginUrl, UNKNOWN_URL, UrlSource};

/// A plugin's integer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PluginId(pub i32);

impl fmt::Display for PluginId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

wire_enum! {
    /// Where a plugin's code came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum PluginType {
        /// A `file:` URL inside the configured local plugins directory.
        Local = "local",
        /// A GitHub, GitLab or npm URL.
        Custom = "custom",
        /// Like `Custom`, picked from the repository listing.
        Repository = "repository",
        /// Written in the API (`update_source`), nothing downloaded.
        Source = "source",
    }
}

impl PluginType {
    /// Whether the code is downloaded from an upstream (and so can be checked and upgraded).
    pub fn is_remote(self) -> bool {
        matches!(self, Self::Custom | Self::Repository)
    }
}

/// Everything stored about a plugin besides its id, owner and code.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginState {
    pub plugin_type: PluginType,
    pub name: Option<String>,
    pub description: Option<String>,
    /// As sent, `?private_token=` included.
    pub url: Option<String>,
    pub icon: Option<String>,
    pub config_schema: ConfigSchema,
    pub tag: Option<String>,
    pub latest_tag: Option<String>,
    pub latest_tag_checked_at: Option<DateTime<Utc>>,
    pub is_global: bool,
    pub is_stateless: bool,
    pub capabilities: PluginCapabilities,
    /// PostHog's plugin server declares and fills these; Burrow keeps what it is given and never
    /// reads it, so it stays the JSON it was given.
    pub metrics: Value,
    /// The manifest's `publicJobs` (or what a client wrote): kept verbatim, never read, as PostHog
    /// keeps it.
    pub public_jobs: Value,
}

impl PluginState {
    /// A plugin with nothing known yet about it.
    pub fn empty(plugin_type: PluginType) -> Self {
        Self {
            plugin_type,
            name: None,
            description: None,
            url: None,
            icon: None,
            config_schema: ConfigSchema::default(),
            tag: None,
            latest_tag: None,
            latest_tag_checked_at: None,
            is_global: false,
            is_stateless: false,
            capabilities: PluginCapabilities::default(),
            metrics: Value::Object(Map::new()),
            public_jobs: Value::Object(Map::new()),
        }
    }

    /// The URL as shown to clients: without its query string, which may hold a token.
    pub fn display_url(&self) -> Option<&str> {
        self.url
            .as_deref()
            .map(|url| url.split('?').next().unwrap_or(url))
    }
}

/// A stored plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct Plugin {
    pub id: PluginId,
    pub organization_id: OrganizationId,
    pub organization_name: String,
    pub state: PluginState,
}
