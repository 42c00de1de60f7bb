//! The port of stored plugin configs. Deleted configs are kept (with `deleted: true`) but never
//! listed or found.

use async_trait::async_trait;

use super::{PluginConfig, PluginConfigId, PluginConfigState};
use crate::error::{DomainError, Unexpected};
use crate::plugin::PluginId;
use crate::ports::{Page, PageRequest};
use crate::tenancy::ProjectId;

#[async_trait]
pub trait PluginConfigRepository: Send + Sync {
    /// The project's live configs, by `order` then id.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<PluginConfig>, Unexpected>;

    /// A live config of the project.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn get(
        &self,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<Option<PluginConfig>, Unexpected>;

    /// # Errors
    /// `Unexpected` when storage fails (the plugin was checked by the service).
    async fn create(
        &self,
        project: ProjectId,
        plugin: PluginId,
        state: PluginConfigState,
    ) -> Result<PluginConfig, DomainError>;

    /// Replaces a live config's state.
    ///
    /// # Errors
    /// `NotFound`, `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: PluginConfigId,
        state: PluginConfigState,
    ) -> Result<PluginConfig, DomainError>;

    /// Marks a live config deleted (and disabled).
    ///
    /// # Errors
    /// `NotFound`, `Unexpected`.
    async fn delete(&self, project: ProjectId, id: PluginConfigId) -> Result<(), DomainError>;
}
