//! Who may do what with plugins: PostHog's organization `plugins_access_level` (none, config,
//! install, root) and ownership, with its exact messages.

use super::Plugin;
use crate::error::DomainError;
use crate::tenancy::{OrganizationId, PluginsAccessLevel, UserId};

const LEVEL_TOO_LOW: &str = "Your organization's plugin access level is insufficient.";
const GLOBAL_NEEDS_ROOT: &str = "This organization can't manage global plugins!";
const MANAGED_ELSEWHERE: &str = "This plugin installation is managed by another organization";

/// The organization a plugin request is made in, its level, and who makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginAccess {
    pub organization: OrganizationId,
    /// Shown with a plugin the caller installs; the caller's organization access knows it.
    pub organization_name: String,
    pub level: PluginsAccessLevel,
    pub user: UserId,
}

impl PluginAccess {
    /// Reading needs the `config` level.
    ///
    /// # Errors
    /// `Forbidden` below it.
    pub fn require_read(&self) -> Result<(), DomainError> {
        self.require(PluginsAccessLevel::Config)
    }

    /// Writing needs the `install` level.
    ///
    /// # Errors
    /// `Forbidden` below it.
    pub fn require_write(&self) -> Result<(), DomainError> {
        self.require(PluginsAccessLevel::Install)
    }

    /// Touching `is_global` needs the `root` level.
    ///
    /// # Errors
    /// `Forbidden` below it.
    pub fn require_global(&self) -> Result<(), DomainError> {
        if self.level >= PluginsAccessLevel::Root {
            Ok(())
        } else {
            Err(DomainError::Forbidden(GLOBAL_NEEDS_ROOT.into()))
        }
    }

    /// Writes touch only this organization's own plugins (a visible global or configured
    /// plugin of another organization is read-only here).
    ///
    /// # Errors
    /// `Forbidden` for another organization's plugin.
    pub fn require_owner(&self, plugin: &Plugin) -> Result<(), DomainError> {
        if plugin.organization_id == self.organization {
            Ok(())
        } else {
            Err(DomainError::Forbidden(MANAGED_ELSEWHERE.into()))
        }
    }

    /// The detail actions (`check_for_updates`, `source`, `update_source`, `upgrade`) work on
    /// this organization's own plugins only, and need `install`; `reason` names the action in
    /// PostHog's message.
    ///
    /// # Errors
    /// `NotFound` for another organization's plugin, `Forbidden` below `install`.
    pub fn require_detail_action(&self, plugin: &Plugin, reason: &str) -> Result<(), DomainError> {
        if plugin.organization_id != self.organization {
            return Err(DomainError::NotFound);
        }
        if self.level < PluginsAccessLevel::Install {
            return Err(DomainError::Forbidden(format!(
                "Plugin {reason} is not available for the current organization!"
            )));
        }
        Ok(())
    }

    fn require(&self, level: PluginsAccessLevel) -> Result<(), DomainError> {
        if self.level >= level {
            Ok(())
        } else {
            Err(DomainError::Forbidden(LEVEL_TOO_LOW.into()))
        }
    }
}
