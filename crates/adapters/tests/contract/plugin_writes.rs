//! Plugin writes as `PluginService` runs them — lock, check, write the row, its files and its
//! activity entry, in one transaction — but planned by the test: the contract tests drive the
//! store's primitives in the service's order with fixed plans.

use domain::DomainError;
use domain::activity::NewActivity;
use domain::plugin::{Plugin, PluginId, PluginRepository, PluginWrite, SourceChanges};
use domain::tenancy::OrganizationId;

/// The organization a write acts in, as the caller knows it.
#[derive(Debug, Clone, Copy)]
pub struct Installer<'a> {
    pub organization: OrganizationId,
    pub organization_name: &'a str,
}

/// An install: the row with its archive, then its files with the activity entry.
pub async fn install(
    store: &dyn PluginRepository,
    installer: Installer<'_>,
    write: PluginWrite,
) -> Result<Plugin, DomainError> {
    let organization = installer.organization;
    domain::in_transaction!(store.begin(), |tx| {
        let (id, state) = tx
            .insert(organization, &write.state, write.archive.as_deref())
            .await?;
        let mut source = write.source;
        source.retain(|_, content| content.is_some());
        tx.record(organization, id, &source, write.activity.as_ref())
            .await?;
        Ok(Plugin {
            id,
            organization_id: organization,
            organization_name: installer.organization_name.to_owned(),
            state,
        })
    })
}

/// An update: locks the plugin, plans with `planner` from it as locked, writes.
pub async fn update(
    store: &dyn PluginRepository,
    organization: OrganizationId,
    id: PluginId,
    planner: &(dyn Fn(&Plugin) -> Result<PluginWrite, DomainError> + Sync),
) -> Result<Plugin, DomainError> {
    domain::in_transaction!(store.begin(), |tx| {
        let current = tx
            .lock(organization, id)
            .await?
            .ok_or(DomainError::NotFound)?;
        let write = planner(&current)?;
        let state = tx
            .update(id, &write.state, write.archive.as_deref())
            .await?;
        tx.record(organization, id, &write.source, write.activity.as_ref())
            .await?;
        Ok(Plugin { state, ..current })
    })
}

/// An uninstall: locks the plugin, asks `check` for its activity entry, deletes it.
pub async fn uninstall(
    store: &dyn PluginRepository,
    organization: OrganizationId,
    id: PluginId,
    check: &(dyn Fn(&Plugin) -> Result<NewActivity, DomainError> + Sync),
) -> Result<(), DomainError> {
    domain::in_transaction!(store.begin(), |tx| {
        let current = tx
            .lock(organization, id)
            .await?
            .ok_or(DomainError::NotFound)?;
        let activity = check(&current)?;
        tx.delete(id).await?;
        tx.record(organization, id, &SourceChanges::new(), Some(&activity))
            .await?;
        Ok(())
    })
}
