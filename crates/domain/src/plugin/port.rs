//! The port of stored plugins, their source files and their activity log. Every write, with its
//! source files and its activity entry, is one transaction.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::{Plugin, PluginFiles, PluginId, PluginState};
use crate::activity::{ActivityPage, NewActivity};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest};
use crate::tenancy::OrganizationId;

/// Source files to write: `Some` sets a file, `None` deletes it; files not named stay.
pub type SourceChanges = BTreeMap<String, Option<String>>;

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

/// Plans an update from the plugin as stored (and locked).
pub type PluginPlanner<'a> = dyn Fn(&Plugin) -> Result<PluginWrite, DomainError> + Send + Sync + 'a;

#[async_trait]
pub trait PluginRepository: Send + Sync {
    /// The plugins `organization` can see — its own, global ones, and ones a project of it has
    /// a live config for — ordered by id.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn list(
        &self,
        organization: OrganizationId,
        page: PageRequest,
    ) -> Result<Page<Plugin>, Unexpected>;

    /// A plugin `organization` can see.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn get(
        &self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected>;

    /// Stores a new plugin of `organization` with its source files, archive and activity entry.
    ///
    /// # Errors
    /// `Conflict` when the organization already has a plugin of that URL (its query string
    /// ignored); `Unexpected`.
    async fn create(
        &self,
        organization: OrganizationId,
        write: PluginWrite,
    ) -> Result<Plugin, DomainError>;

    /// Locks one of `organization`'s own plugins, asks `planner` what to write, and writes it.
    ///
    /// # Errors
    /// `NotFound` when the organization owns no such plugin; the planner's errors; `Unexpected`.
    async fn update(
        &self,
        organization: OrganizationId,
        id: PluginId,
        planner: &PluginPlanner<'_>,
    ) -> Result<Plugin, DomainError>;

    /// Deletes one of `organization`'s own plugins (its configs and files go with it) and
    /// writes the activity entry.
    ///
    /// # Errors
    /// `NotFound`, `Unexpected`.
    async fn delete(
        &self,
        organization: OrganizationId,
        id: PluginId,
        activity: NewActivity,
    ) -> Result<(), DomainError>;

    /// The plugin's source files.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn source(&self, id: PluginId) -> Result<PluginFiles, Unexpected>;

    /// Ids of `organization`'s own plugins that no project has an enabled, live config for,
    /// ascending.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn unused(&self, organization: OrganizationId) -> Result<Vec<PluginId>, Unexpected>;

    /// The organization's plugin activity, newest first.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn activity(
        &self,
        organization: OrganizationId,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected>;
}
