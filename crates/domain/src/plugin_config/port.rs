//! The port of stored plugin configs. Deleted configs are kept (with `deleted: true`) but never
//! listed or found.
//!
//! Writes go through a [`PluginConfigTransaction`]: the service locks what it reads, decides the
//! write by the domain's rules and commits (`in_transaction!`), so two writes of one config never
//! overwrite each other's changes with what they read before. The stores offer only these
//! primitives; which ones a use case calls, and in which order, is the service's business.

use async_trait::async_trait;

use super::{PluginConfig, PluginConfigId, PluginConfigState};
use crate::error::Unexpected;
use crate::plugin::{Plugin, PluginId};
use crate::ports::{Page, PageRequest, Transaction};
use crate::tenancy::{OrganizationId, ProjectId};

#[async_trait]
pub trait PluginConfigRepository: Send + Sync {
    /// The project's live configs, by `order` then id.
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<PluginConfig>, Unexpected>;

    /// A live config of the project, for reading only: a write reads through `begin` instead.
    async fn get(
        &self,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<Option<PluginConfig>, Unexpected>;

    /// Starts a transaction, the only way to write configs, so a write and the reads it depends
    /// on see one state.
    ///
    /// # Errors
    /// `Unexpected` when storage fails (or cannot be reached).
    async fn begin(&self) -> Result<Box<dyn PluginConfigTransaction>, Unexpected>;
}

/// The primitive reads and writes of plugin config use cases, inside one transaction. Stores
/// only execute them; what to lock and write, and in which order, is the service's.
#[async_trait]
pub trait PluginConfigTransaction: Transaction {
    /// A live config of the project, locked until the transaction ends, so no other write
    /// changes or deletes it meanwhile.
    async fn lock(
        &mut self,
        project: ProjectId,
        id: PluginConfigId,
    ) -> Result<Option<PluginConfig>, Unexpected>;

    /// A plugin `organization` can see, read within this transaction: a write checks its plugin
    /// and reads the plugin's secret fields here, not through another connection that could
    /// wait on this one.
    async fn plugin(
        &mut self,
        organization: OrganizationId,
        id: PluginId,
    ) -> Result<Option<Plugin>, Unexpected>;

    /// Stores a new live config and returns it as stored (its id and times given by the store).
    ///
    /// # Errors
    /// `Unexpected` when storage fails (the plugin was checked by the service).
    async fn insert(
        &mut self,
        project: ProjectId,
        plugin: PluginId,
        state: PluginConfigState,
    ) -> Result<PluginConfig, Unexpected>;

    /// Writes `config`'s state and `deleted` over the stored config it was locked as, and
    /// returns it as stored (`updated_at` set by the store).
    ///
    /// # Errors
    /// `Unexpected` when storage fails or no such config is stored (write only what `lock`
    /// found).
    async fn update(&mut self, config: PluginConfig) -> Result<PluginConfig, Unexpected>;
}
