//! The ports to where plugin code comes from: upstream hosts (GitHub, GitLab, the npm registry,
//! the repository listing), the local plugins directory, and the static reading of a plugin's
//! exports. Adapters implement them; the install, upgrade and source-edit use cases call them.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;

use super::url::PluginUrl;

/// The text files of a plugin archive or directory, by path relative to the plugin's root
/// (`plugin.json`, `index.ts`, `dist/index.js`, …). Binary and oversized files are left out.
pub type PluginFiles = BTreeMap<String, String>;

/// A downloaded plugin: the archive as fetched (stored for later) and its readable files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginArchive {
    pub bytes: Vec<u8>,
    pub files: PluginFiles,
}

/// Why an upstream could not give what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// Unreachable, timed out, rate-limited, or answered an error (the reason says which): the
    /// client's request was fine, the upstream was not (502).
    #[error("{0}")]
    Unavailable(String),
    /// The archive or directory is unusable: too large, too many files, a path escaping the
    /// plugin's root, a symlink, not a zip or tgz (400).
    #[error("{0}")]
    InvalidArchive(String),
    /// This kind of source is not configured on this server (400): local plugins without
    /// `BURROW_PLUGINS_LOCAL_DIR`, npm without `BURROW_PLUGINS_NPM_REGISTRY_URL`.
    #[error("{0}")]
    NotConfigured(String),
}

/// GitHub, GitLab, the npm registry, the repository listing and the local plugins directory.
#[async_trait]
pub trait PluginUpstream: Send + Sync {
    /// The newest ref of an unpinned URL: the latest commit sha (GitHub, GitLab) or the
    /// `latest` version (npm). Not called for URLs that pin a ref.
    ///
    /// # Errors
    /// `Unavailable` (with the upstream's reason), `NotConfigured`.
    async fn latest_tag(&self, url: &PluginUrl) -> Result<String, UpstreamError>;

    /// Downloads the archive of `url` at `tag` and reads its text files.
    ///
    /// # Errors
    /// `Unavailable`, `InvalidArchive`, `NotConfigured`.
    async fn download(&self, url: &PluginUrl, tag: &str) -> Result<PluginArchive, UpstreamError>;

    /// Reads the text files of a `file:` plugin from the local plugins directory.
    ///
    /// # Errors
    /// `NotConfigured` when local plugins are disabled, `InvalidArchive` for a path escaping the
    /// directory or a plugin over the limits, `Unavailable` when it cannot be read.
    async fn local(&self, path: &str) -> Result<PluginFiles, UpstreamError>;

    /// The repository listing (a JSON array), served stale when the upstream fails; `[]` when
    /// no listing is configured.
    ///
    /// # Errors
    /// `Unavailable` when the upstream fails and nothing was cached yet.
    async fn repository(&self) -> Result<Value, UpstreamError>;
}

/// What a plugin's main file exports, read without running it (PostHog leaves this to its
/// plugin server and shows `{}` until then).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// Exported hooks: `processEvent`, `onEvent`, `composeWebhook`, `setupPlugin`, …
    pub methods: Vec<String>,
    /// Names of the exported `jobs`.
    pub jobs: Vec<String>,
    /// Exported `runEveryMinute` / `runEveryHour` / `runEveryDay`.
    pub scheduled_tasks: Vec<String>,
}

/// Reads a plugin's capabilities from its main file's source.
pub trait SourceAnalyzer: Send + Sync {
    /// `filename` decides the dialect (`.ts`, `.tsx`, `.js`).
    ///
    /// # Errors
    /// A description of why the source could not be parsed.
    fn capabilities(&self, filename: &str, source: &str) -> Result<Capabilities, String>;
}
