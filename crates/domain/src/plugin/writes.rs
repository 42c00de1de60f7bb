//! The unit of work of every plugin write, written once over any store's `PluginTransaction`:
//! lock what the write is about (so whoever may write it is decided on what is stored), plan,
//! write the row, its source files and its activity entry, and answer from what was locked and
//! what the writes returned — nothing is read back. The service passes its planners; the
//! stores' contract tests pass fixed ones.

use super::{Plugin, PluginFiles, PluginId, PluginRepository, PluginWrite, SourceChanges};
use crate::activity::NewActivity;
use crate::error::DomainError;
use crate::ports::conclude;
use crate::tenancy::OrganizationId;

/// Plans an update from the plugin as stored (and locked); refusing here writes nothing.
pub type PluginPlanner<'a> = dyn Fn(&Plugin) -> Result<PluginWrite, DomainError> + Send + Sync + 'a;

/// Decides on an uninstall from the plugin as stored (and locked): its activity entry, or why
/// not.
pub type UninstallCheck<'a> =
    dyn Fn(&Plugin) -> Result<NewActivity, DomainError> + Send + Sync + 'a;

/// The organization a write acts in, as the caller knows it.
#[derive(Debug, Clone, Copy)]
pub struct Installer<'a> {
    pub organization: OrganizationId,
    /// Shown with the plugin; known to the caller, so not read back.
    pub organization_name: &'a str,
}

/// Stores a new plugin of the organization with its source files, archive and activity entry,
/// atomically.
///
/// # Errors
/// `Conflict` when the organization has a plugin of that URL (query string ignored);
/// `Unexpected`.
pub async fn install(
    store: &dyn PluginRepository,
    installer: Installer<'_>,
    write: PluginWrite,
) -> Result<Plugin, DomainError> {
    let mut tx = store.begin().await?;
    let organization = installer.organization;
    let outcome = async {
        let archive = write.archive.as_deref();
        let (id, state) = tx.insert(organization, &write.state, archive).await?;
        // A new plugin has no files to delete.
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
    }
    .await;
    conclude(tx, outcome).await
}

/// Locks a plugin the organization can see, asks `planner` what to write, and writes it,
/// atomically.
///
/// # Errors
/// `NotFound` when the organization cannot see such a plugin; the planner's errors;
/// `Unexpected`.
pub async fn update(
    store: &dyn PluginRepository,
    organization: OrganizationId,
    id: PluginId,
    planner: &PluginPlanner<'_>,
) -> Result<Plugin, DomainError> {
    let (plugin, _) = write(store, organization, id, planner, Files::Leave).await?;
    Ok(plugin)
}

/// `update`, answering also with the plugin's source files as the write leaves them.
///
/// # Errors
/// As `update`.
pub async fn update_source(
    store: &dyn PluginRepository,
    organization: OrganizationId,
    id: PluginId,
    planner: &PluginPlanner<'_>,
) -> Result<(Plugin, PluginFiles), DomainError> {
    let (plugin, files) = write(store, organization, id, planner, Files::Return).await?;
    Ok((plugin, files.unwrap_or_default()))
}

/// Locks a plugin the organization can see, asks `check` whether it may go (and what to log),
/// and deletes it with its configs and files, atomically.
///
/// # Errors
/// `NotFound`; `check`'s errors; `Unexpected`.
pub async fn uninstall(
    store: &dyn PluginRepository,
    organization: OrganizationId,
    id: PluginId,
    check: &UninstallCheck<'_>,
) -> Result<(), DomainError> {
    let mut tx = store.begin().await?;
    let outcome = async {
        let current = tx
            .lock(organization, id)
            .await?
            .ok_or(DomainError::NotFound)?;
        let activity = check(&current)?;
        tx.delete(id).await?;
        tx.record(organization, id, &SourceChanges::new(), Some(&activity))
            .await?;
        Ok(())
    }
    .await;
    conclude(tx, outcome).await
}

/// Whether an update answers with the source files it leaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Files {
    Leave,
    Return,
}

async fn write(
    store: &dyn PluginRepository,
    organization: OrganizationId,
    id: PluginId,
    planner: &PluginPlanner<'_>,
    files: Files,
) -> Result<(Plugin, Option<PluginFiles>), DomainError> {
    let mut tx = store.begin().await?;
    let outcome = async {
        let current = tx
            .lock(organization, id)
            .await?
            .ok_or(DomainError::NotFound)?;
        let write = planner(&current)?;
        let files = match files {
            Files::Leave => None,
            Files::Return => {
                let mut files = tx.source(id).await?;
                apply(&mut files, &write.source);
                Some(files)
            }
        };
        let archive = write.archive.as_deref();
        let state = tx.update(id, &write.state, archive).await?;
        tx.record(organization, id, &write.source, write.activity.as_ref())
            .await?;
        Ok((Plugin { state, ..current }, files))
    }
    .await;
    conclude(tx, outcome).await
}

/// Applies source changes to files: `Some` sets a file, `None` deletes it.
pub fn apply(files: &mut PluginFiles, changes: &SourceChanges) {
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
