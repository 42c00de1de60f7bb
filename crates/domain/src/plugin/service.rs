//! The plugin use cases: list, install, change, uninstall, source editing, update checks,
//! upgrades, the repository listing, unused plugins and the activity log.

use std::sync::Arc;

use chrono::Utc;
use serde_json::{Value, json};

use super::install::{Extracted, MAIN_FILE, MANIFEST_FILE, extract};
use super::{
    Capabilities, MAX_TAG_CHARS, Manifest, NewPlugin, Plugin, PluginAccess, PluginArchive,
    PluginChanges, PluginFiles, PluginId, PluginRepository, PluginState, PluginTransaction,
    PluginType, PluginUpstream, PluginUrl, PluginWrite, SourceAnalyzer, SourceChanges,
    UpstreamError, UrlSource, apply_source,
};
use crate::activity::{ActivityPage, NewActivity};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, ValidationCode, ValidationError};
use crate::in_transaction;
use crate::ports::{Page, PageRequest};
use crate::tenancy::OrganizationId;

/// Longest source file name.
pub const MAX_FILENAME_CHARS: usize = 200;
/// Largest source file written through `update_source`.
pub const MAX_SOURCE_BYTES: usize = 1024 * 1024;

/// What the plugin use cases need to know about this server.
#[derive(Debug, Clone)]
pub struct PluginSettings {
    /// The PostHog version plugins' `posthogVersion` requirements are checked against.
    pub posthog_version: semver::Version,
}

impl Default for PluginSettings {
    fn default() -> Self {
        Self {
            posthog_version: semver::Version::new(1, 43, 0),
        }
    }
}

pub struct PluginService {
    plugins: Arc<dyn PluginRepository>,
    upstream: Arc<dyn PluginUpstream>,
    analyzer: Arc<dyn SourceAnalyzer>,
    settings: PluginSettings,
}

/// Code fetched for an install or upgrade.
struct Fetched {
    tag: Option<String>,
    archive: Option<Vec<u8>>,
    files: PluginFiles,
}

impl PluginService {
    pub fn new(
        plugins: Arc<dyn PluginRepository>,
        upstream: Arc<dyn PluginUpstream>,
        analyzer: Arc<dyn SourceAnalyzer>,
        settings: PluginSettings,
    ) -> Self {
        Self {
            plugins,
            upstream,
            analyzer,
            settings,
        }
    }

    /// # Errors
    /// `Forbidden` below the `config` level.
    pub async fn list(
        &self,
        access: &PluginAccess,
        page: PageRequest,
    ) -> Result<Page<Plugin>, DomainError> {
        access.require_read()?;
        Ok(self.plugins.list(access.organization, page).await?)
    }

    /// # Errors
    /// `Forbidden` below `config`; `NotFound` for a plugin the organization cannot see.
    pub async fn get(&self, access: &PluginAccess, id: PluginId) -> Result<Plugin, DomainError> {
        access.require_read()?;
        self.visible(access, id).await
    }

    /// Installs a plugin: downloads and reads its code (except `source` plugins), then stores
    /// it, its files and an `installed` entry at once. Nothing is written unless all succeeds.
    ///
    /// # Errors
    /// `Forbidden` below `install` (`root` for a global plugin); `Invalid` for a bad URL, a bad
    /// archive or manifest, or a URL this organization already installed; `Upstream` when the
    /// upstream fails.
    pub async fn install(
        &self,
        access: &PluginAccess,
        plugin: NewPlugin,
    ) -> Result<Plugin, DomainError> {
        access.require_write()?;
        if plugin.fields.is_global == Some(true) {
            access.require_global()?;
        }
        let url = match (&plugin.url, plugin.fields.plugin_type) {
            (_, Some(PluginType::Source)) => None,
            (Some(raw), _) => Some(PluginUrl::parse(raw)?),
            (None, _) => return Err(ValidationError::required("url").into()),
        };
        let plugin_type = match (&url, plugin.fields.plugin_type) {
            (None, _) => PluginType::Source,
            (Some(url), _) if matches!(url.source, UrlSource::Local { .. }) => PluginType::Local,
            (Some(_), Some(PluginType::Repository)) => PluginType::Repository,
            (Some(_), _) => PluginType::Custom,
        };
        let mut state = PluginState::empty(plugin_type);
        plugin.fields.apply(&mut state);
        state.plugin_type = plugin_type;
        let already_installed = |url: &PluginUrl| -> DomainError {
            ValidationError::general(
                ValidationCode::Unique,
                format!("Plugin from URL \"{}\" already installed!", url.display()),
            )
            .into()
        };
        let mut source = SourceChanges::new();
        let mut archive = None;
        if let Some(url) = &url {
            // Before any download: an install that cannot be stored costs nothing upstream.
            if self
                .plugins
                .installed(access.organization, url.display())
                .await?
            {
                return Err(already_installed(url));
            }
            let fetched = self.fetch(url, None).await?;
            let extracted = extract(&fetched.files, &self.settings.posthog_version)?;
            self.take_code(&mut state, &extracted, fetched.tag);
            state.url = Some(url.raw().to_owned());
            source = extracted.source;
            archive = fetched.archive;
        }
        let name = state.name.clone();
        let write = PluginWrite {
            state,
            source,
            archive,
            activity: Some(NewActivity {
                user: access.user,
                activity: "installed",
                detail: json!({"name": name}),
            }),
        };
        let organization = access.organization;
        let installed = in_transaction!(self.plugins.begin(), |tx| {
            let (id, state) = tx
                .insert(organization, &write.state, write.archive.as_deref())
                .await?;
            // A new plugin has no files to delete.
            let mut source = write.source;
            source.retain(|_, content| content.is_some());
            tx.record(organization, id, &source, write.activity.as_ref())
                .await?;
            Ok(Plugin {
                id,
                organization_id: organization,
                // Known to the caller, so not read back.
                organization_name: access.organization_name.clone(),
                state,
            })
        });
        match installed {
            // Installed by a concurrent request since the check above.
            Err(DomainError::Conflict) => Err(url
                .as_ref()
                .map_or(DomainError::Conflict, already_installed)),
            other => other,
        }
    }

    /// Changes the writable fields of one of the organization's own plugins.
    ///
    /// # Errors
    /// `Forbidden` below `install` (`root` when `is_global` is sent) or for another
    /// organization's plugin; `NotFound`.
    pub async fn update(
        &self,
        access: &PluginAccess,
        id: PluginId,
        changes: PluginChanges,
    ) -> Result<Plugin, DomainError> {
        access.require_write()?;
        if changes.is_global.is_some() {
            access.require_global()?;
        }
        in_transaction!(self.plugins.begin(), |tx| {
            let current = locked(tx, access.organization, id).await?;
            access.require_owner(&current)?;
            let mut state = current.state.clone();
            changes.apply(&mut state);
            let write = PluginWrite {
                activity: Some(NewActivity {
                    user: access.user,
                    activity: "updated",
                    detail: json!({"name": state.name, "changes": changed_fields(&current.state, &state)}),
                }),
                state,
                source: SourceChanges::new(),
                archive: None,
            };
            store(tx, access.organization, current, write).await
        })
    }

    /// Uninstalls one of the organization's own plugins; its configs and files go with it.
    ///
    /// # Errors
    /// `Forbidden` below `install` or for another organization's plugin; `NotFound`; `Invalid`
    /// for a global plugin.
    pub async fn uninstall(&self, access: &PluginAccess, id: PluginId) -> Result<(), DomainError> {
        access.require_write()?;
        in_transaction!(self.plugins.begin(), |tx| {
            let plugin = locked(tx, access.organization, id).await?;
            access.require_owner(&plugin)?;
            if plugin.state.is_global {
                return Err(ValidationError::invalid_input(
                    "This plugin is marked as global! Make it local before uninstallation",
                )
                .into());
            }
            let activity = NewActivity {
                user: access.user,
                activity: "uninstalled",
                detail: json!({"name": plugin.state.name}),
            };
            tx.delete(id).await?;
            tx.record(
                access.organization,
                id,
                &SourceChanges::new(),
                Some(&activity),
            )
            .await?;
            Ok(())
        })
    }

    /// The plugin's source files, `{filename: content}`.
    ///
    /// # Errors
    /// `Forbidden`, `NotFound` (also for another organization's plugin).
    pub async fn source(
        &self,
        access: &PluginAccess,
        id: PluginId,
    ) -> Result<PluginFiles, DomainError> {
        access.require_read()?;
        let plugin = self.visible(access, id).await?;
        access.require_detail_action(&plugin, "source editing")?;
        Ok(self.plugins.source(id).await?)
    }

    /// Writes source files (`None` deletes one). A new `plugin.json` must be valid and renames
    /// the plugin and replaces its config schema; a new `index.ts` refreshes its capabilities.
    /// Returns every file afterwards.
    ///
    /// # Errors
    /// `Forbidden`, `NotFound`; `Invalid` for a bad file name, an oversized file or an invalid
    /// `plugin.json` (`attr: "plugin.json"`), with nothing saved.
    pub async fn update_source(
        &self,
        access: &PluginAccess,
        id: PluginId,
        changes: SourceChanges,
    ) -> Result<PluginFiles, DomainError> {
        access.require_write()?;
        for (name, content) in &changes {
            check_source_file(name, content.as_deref())?;
        }
        let manifest = match changes.get(MANIFEST_FILE) {
            Some(Some(text)) => Some(Manifest::parse(text, Some(MANIFEST_FILE))?),
            _ => None,
        };
        let capabilities = match changes.get(MAIN_FILE) {
            Some(Some(main)) => self.capabilities(MAIN_FILE, main),
            Some(None) => Some(Capabilities::default()),
            None => None,
        };
        in_transaction!(self.plugins.begin(), |tx| {
            let current = locked(tx, access.organization, id).await?;
            access.require_detail_action(&current, "source editing")?;
            let mut state = current.state.clone();
            if let Some(manifest) = manifest {
                state.name = Some(manifest.name);
                state.config_schema = manifest.config_schema;
            }
            if let Some(capabilities) = capabilities {
                state.capabilities = capabilities.into();
            }
            let mut files = tx.source(id).await?;
            apply_source(&mut files, &changes);
            let write = PluginWrite {
                activity: Some(NewActivity {
                    user: access.user,
                    activity: "source_updated",
                    detail: json!({"name": state.name, "files": changes.keys().collect::<Vec<_>>()}),
                }),
                state,
                source: changes,
                archive: None,
            };
            store(tx, access.organization, current, write).await?;
            Ok(files)
        })
    }

    /// Resolves the newest tag of the plugin's URL and records it (pinned URLs report their own
    /// tag).
    ///
    /// # Errors
    /// `Forbidden`, `NotFound`; `Invalid` for a plugin without a remote URL; `Upstream`.
    pub async fn check_for_updates(
        &self,
        access: &PluginAccess,
        id: PluginId,
    ) -> Result<Plugin, DomainError> {
        access.require_read()?;
        let plugin = self.visible(access, id).await?;
        access.require_detail_action(&plugin, "installation")?;
        let url = remote_url(&plugin)?.ok_or_else(|| {
            ValidationError::invalid_input(format!(
                "{} plugins have no remote URL to check for updates.",
                capitalized(plugin.state.plugin_type.as_str())
            ))
        })?;
        let latest = self.resolve_tag(&url, None).await?;
        in_transaction!(self.plugins.begin(), |tx| {
            let current = locked(tx, access.organization, id).await?;
            access.require_detail_action(&current, "installation")?;
            let mut state = current.state.clone();
            state.latest_tag = Some(latest);
            state.latest_tag_checked_at = Some(Utc::now());
            let write = PluginWrite {
                state,
                source: SourceChanges::new(),
                archive: None,
                activity: None,
            };
            store(tx, access.organization, current, write).await
        })
    }

    /// Downloads the plugin again — at `tag` when given, else the newest (or pinned) version —
    /// and replaces its code and manifest fields at once. `source` and `local` plugins are
    /// returned unchanged, as PostHog does.
    ///
    /// # Errors
    /// `Forbidden`, `NotFound`; `Invalid` for a bad archive or manifest; `Upstream`.
    pub async fn upgrade(
        &self,
        access: &PluginAccess,
        id: PluginId,
        tag: Option<String>,
    ) -> Result<Plugin, DomainError> {
        access.require_write()?;
        let plugin = self.visible(access, id).await?;
        access.require_detail_action(&plugin, "upgrading")?;
        let Some(url) = remote_url(&plugin)? else {
            return Ok(plugin);
        };
        let fetched = self.fetch(&url, tag).await?;
        let extracted = extract(&fetched.files, &self.settings.posthog_version)?;
        in_transaction!(self.plugins.begin(), |tx| {
            let current = locked(tx, access.organization, id).await?;
            access.require_detail_action(&current, "upgrading")?;
            let mut state = current.state.clone();
            self.take_code(&mut state, &extracted, fetched.tag);
            let write = PluginWrite {
                activity: Some(NewActivity {
                    user: access.user,
                    activity: "upgraded",
                    detail: json!({"name": state.name, "tag": state.tag}),
                }),
                state,
                source: extracted.source,
                archive: fetched.archive,
            };
            store(tx, access.organization, current, write).await
        })
    }

    /// The repository listing, as the configured upstream serves it.
    ///
    /// # Errors
    /// `Forbidden` below `config`; `Upstream` when it cannot be had.
    pub async fn repository(&self, access: &PluginAccess) -> Result<Value, DomainError> {
        access.require_read()?;
        self.upstream.repository().await.map_err(upstream_error)
    }

    /// Ids of the organization's plugins no project has enabled, ascending.
    ///
    /// # Errors
    /// `Forbidden` below `config`.
    pub async fn unused(&self, access: &PluginAccess) -> Result<Vec<PluginId>, DomainError> {
        access.require_read()?;
        Ok(self.plugins.unused(access.organization).await?)
    }

    /// The organization's plugin activity, newest first.
    ///
    /// # Errors
    /// `Forbidden` below `config`.
    pub async fn activity(
        &self,
        access: &PluginAccess,
        page: PageRequest,
    ) -> Result<ActivityPage, DomainError> {
        access.require_read()?;
        Ok(self.plugins.activity(access.organization, page).await?)
    }

    async fn visible(&self, access: &PluginAccess, id: PluginId) -> Result<Plugin, DomainError> {
        self.plugins
            .get(access.organization, id)
            .await?
            .or_not_found()
    }

    /// The code behind `url`: an archive at `tag` (or the pinned or newest tag), or a local
    /// directory's files.
    async fn fetch(&self, url: &PluginUrl, tag: Option<String>) -> Result<Fetched, DomainError> {
        if let UrlSource::Local { path } = &url.source {
            let files = self.upstream.local(path).await.map_err(upstream_error)?;
            return Ok(Fetched {
                tag: None,
                archive: None,
                files,
            });
        }
        let tag = self.resolve_tag(url, tag).await?;
        let PluginArchive { bytes, files } = self
            .upstream
            .download(url, &tag)
            .await
            .map_err(upstream_error)?;
        Ok(Fetched {
            tag: Some(tag),
            archive: Some(bytes),
            files,
        })
    }

    /// The version to install: the client's, the URL's pin, or the upstream's newest — which
    /// must fit the `tag` column like the others (a 502 naming it, not a database error).
    async fn resolve_tag(
        &self,
        url: &PluginUrl,
        tag: Option<String>,
    ) -> Result<String, DomainError> {
        if let Some(tag) = tag.or_else(|| url.pinned_tag()) {
            return Ok(tag);
        }
        let tag = self
            .upstream
            .latest_tag(url)
            .await
            .map_err(upstream_error)?;
        if tag.chars().count() > MAX_TAG_CHARS {
            return Err(upstream_error(UpstreamError::Unavailable(format!(
                "the upstream named a version longer than {MAX_TAG_CHARS} characters"
            ))));
        }
        Ok(tag)
    }

    /// The manifest's fields, the tag and the main file's capabilities over `state`.
    fn take_code(&self, state: &mut PluginState, extracted: &Extracted, tag: Option<String>) {
        let manifest = &extracted.manifest;
        state.name = Some(manifest.name.clone());
        state.description = Some(manifest.description.clone());
        state.icon.clone_from(&manifest.icon);
        state.config_schema = manifest.config_schema.clone();
        state.public_jobs = manifest.public_jobs.clone();
        state.is_stateless = manifest.stateless;
        state.latest_tag.clone_from(&tag);
        state.tag = tag;
        if let Some(capabilities) = extracted
            .main
            .as_ref()
            .and_then(|(name, source)| self.capabilities(name, source))
        {
            state.capabilities = capabilities.into();
        }
    }

    /// What the main file exports, or `None` (capabilities kept as they were) when it cannot be
    /// parsed: a plugin that PostHog's server would run is not refused for Burrow's parser.
    fn capabilities(&self, filename: &str, source: &str) -> Option<Capabilities> {
        self.analyzer
            .capabilities(filename, source)
            .inspect_err(|reason| {
                tracing::warn!(filename, reason = %reason, "could not read a plugin's capabilities");
            })
            .ok()
    }
}

/// A plugin `organization` can see, locked, so whoever may write it is decided on what is
/// stored.
async fn locked(
    tx: &mut dyn PluginTransaction,
    organization: OrganizationId,
    id: PluginId,
) -> Result<Plugin, DomainError> {
    tx.lock(organization, id).await?.or_not_found()
}

/// Writes what was planned from `current` (locked): its state, source files and activity entry
/// (in `organization`'s log); answers from what was locked and what the write returned.
async fn store(
    tx: &mut dyn PluginTransaction,
    organization: OrganizationId,
    current: Plugin,
    write: PluginWrite,
) -> Result<Plugin, DomainError> {
    let state = tx
        .update(current.id, &write.state, write.archive.as_deref())
        .await?;
    tx.record(
        organization,
        current.id,
        &write.source,
        write.activity.as_ref(),
    )
    .await?;
    Ok(Plugin { state, ..current })
}

/// The plugin's stored URL, parsed, when it is fetched from an upstream.
fn remote_url(plugin: &Plugin) -> Result<Option<PluginUrl>, DomainError> {
    match (&plugin.state.url, plugin.state.plugin_type.is_remote()) {
        (Some(url), true) => Ok(Some(PluginUrl::parse(url)?)),
        _ => Ok(None),
    }
}

/// Source file names are plain names; contents are bounded.
fn check_source_file(name: &str, content: Option<&str>) -> Result<(), ValidationError> {
    let bad_name = name.is_empty()
        || name.contains(['/', '\\', '\0'])
        || name == "."
        || name == ".."
        || name.chars().count() > MAX_FILENAME_CHARS;
    if bad_name {
        return Err(ValidationError::invalid(
            name,
            format!(
                "Source file names must be plain file names of at most {MAX_FILENAME_CHARS} characters."
            ),
        ));
    }
    if content.is_some_and(|text| text.len() > MAX_SOURCE_BYTES) {
        return Err(ValidationError::invalid(
            name,
            format!("Source files must be at most {MAX_SOURCE_BYTES} bytes."),
        ));
    }
    Ok(())
}

/// The names of the writable fields that differ.
fn changed_fields(before: &PluginState, after: &PluginState) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let mut compare = |field, differs: bool| {
        if differs {
            changed.push(field);
        }
    };
    compare("plugin_type", before.plugin_type != after.plugin_type);
    compare("name", before.name != after.name);
    compare("description", before.description != after.description);
    compare("icon", before.icon != after.icon);
    compare("config_schema", before.config_schema != after.config_schema);
    compare("tag", before.tag != after.tag);
    compare("is_global", before.is_global != after.is_global);
    compare("capabilities", before.capabilities != after.capabilities);
    compare("metrics", before.metrics != after.metrics);
    compare("public_jobs", before.public_jobs != after.public_jobs);
    changed
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// An upstream failure in the domain's terms: the upstream's fault is a 502, the plugin's or
/// the configuration's a 400.
fn upstream_error(error: UpstreamError) -> DomainError {
    match error {
        UpstreamError::Unavailable(reason) => DomainError::Upstream(reason),
        UpstreamError::InvalidArchive(reason) | UpstreamError::NotConfigured(reason) => {
            ValidationError::invalid_input(reason).into()
        }
    }
}
