//! The port of stored plugins, their source files and their activity log: reads, and a
//! transaction of primitive operations that `PluginService` composes into each write (its
//! source files and its activity entry with it).

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::{Plugin, PluginFiles, PluginId, PluginState};
use crate::activity::{ActivityPage, NewActivity};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest, Transaction};
use crate::tenancy::OrganizationId;

/// Source files to write: `Some` sets a file, `None` deletes it; files not named stay.
pub type SourceChanges = BTreeMap<String, Option<String>>;

/// Applies source changes to files: `Some` sets a file, `None` deletes it.
pub fn apply_source(files: &mut PluginFiles, changes: &SourceChanges) {
    for (name, content) in changes {
        match content {
            Some(text) => {
                files.insert(name.clone(), text.clone());
            }
            None => {
                files.remove(name);
            }
        }
    }
}

/// What one write stores.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginWrite {
    pub state: PluginState,
    pub source: SourceChanges,
    /// A newly downloaded archive; `None` keeps the stored one.
    pub archive: Option<Vec<u8>>,
    /// `None` for bookkeeping no one needs to read about (an update check).
    pub activity: Option<NewActivity>,
}

#[async_trait]
pub trait PluginRepository: Send + Sync {
    /// The plugins `organization` can see — its own, global ones, and ones a project of it has
    /// a live config for — ordered by id.
    async fn list(
        &self,
        organization: OrganizationId,
        page: PageRequest,
    ) -> Result<Page<Plugin>, Unexpected>;

    /// A plugin `organization` can see.
    async fn get(
        &self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected>;

    /// Whether `organization` installed a plugin of this URL (its query string left out):
    /// checked before any download; the unique index still settles a race.
    async fn installed(
        &self,
        organization: OrganizationId,
        display_url: &str,
    ) -> Result<bool, Unexpected>;

    /// Opens a transaction for one write.
    async fn begin(&self) -> Result<Box<dyn PluginTransaction>, Unexpected>;

    /// The plugin's source files.
    async fn source(&self, id: PluginId) -> Result<PluginFiles, Unexpected>;

    /// Ids of `organization`'s own plugins that no project has an enabled, live config for,
    /// ascending.
    async fn unused(&self, organization: OrganizationId) -> Result<Vec<PluginId>, Unexpected>;

    /// The organization's plugin activity, newest first.
    async fn activity(
        &self,
        organization: OrganizationId,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected>;
}

/// The primitive reads and writes of plugin use cases, inside one transaction. What to read,
/// check and write, in which order, is `PluginService`'s.
#[async_trait]
pub trait PluginTransaction: Transaction {
    /// A plugin `organization` can see, with its organization's name, locked until the
    /// transaction ends so concurrent writes of it apply one after the other.
    async fn lock(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected>;

    /// A plugin's source files.
    async fn source(&mut self, id: PluginId) -> Result<PluginFiles, Unexpected>;

    /// Inserts a plugin of `organization`, with its archive; returns its id and its state as
    /// stored.
    ///
    /// # Errors
    /// `Conflict` when the organization has a plugin of that URL; `Unexpected`.
    async fn insert(
        &mut self,
        organization: OrganizationId,
        state: &PluginState,
        archive: Option<&[u8]>,
    ) -> Result<(PluginId, PluginState), DomainError>;

    /// Overwrites a (locked) plugin's state, and its archive when one is given; returns the
    /// state as stored.
    ///
    /// # Errors
    /// `Conflict` for a URL the organization has already; `Unexpected`.
    async fn update(
        &mut self,
        id: PluginId,
        state: &PluginState,
        archive: Option<&[u8]>,
    ) -> Result<PluginState, DomainError>;

    /// Deletes a plugin; its configs and files go with it.
    async fn delete(&mut self, id: PluginId) -> Result<(), Unexpected>;

    /// Writes source file changes of a plugin and logs `activity` in `organization`'s log (the
    /// plugin may be gone: entries outlive it).
    async fn record(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
        source: &SourceChanges,
        activity: Option<&NewActivity>,
    ) -> Result<(), Unexpected>;
}
