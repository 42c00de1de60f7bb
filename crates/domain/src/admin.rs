//! Operator use cases behind `burrow admin …`: bootstrap a tenant, mint keys, manage members.

use std::sync::Arc;

use crate::api_key::ApiKeyRepository;
use crate::api_key::{NewApiKey, PlainApiKey};
use crate::error::{DomainError, Unexpected};
use crate::in_transaction;
use crate::scope::ScopeGrants;
use crate::tenancy::TenancyRepository;
use crate::tenancy::{
    Email, MembershipLevel, Organization, OrganizationId, PluginsAccessLevel, Project, ProjectId,
    User, generate_project_api_token,
};

/// Why an admin command was refused; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{0}")]
    Invalid(String),
    #[error("no user with email '{0}'")]
    UserNotFound(String),
    #[error("no organization with id {0}")]
    OrganizationNotFound(OrganizationId),
    #[error("no project with id {0}")]
    ProjectNotFound(ProjectId),
    #[error(transparent)]
    Unexpected(#[from] Unexpected),
}

/// Input of `admin bootstrap`.
#[derive(Debug, Clone)]
pub struct BootstrapRequest {
    pub email: String,
    pub first_name: String,
    pub organization_name: String,
    pub project_name: String,
    pub scopes: Vec<String>,
    pub plugins_access_level: PluginsAccessLevel,
}

/// What `bootstrap_tenant` creates in one transaction: checked names, a fresh token, a minted
/// key.
#[derive(Debug, Clone)]
pub struct BootstrapPlan {
    pub email: Email,
    pub first_name: String,
    pub organization_name: String,
    pub plugins_access_level: PluginsAccessLevel,
    pub project_name: String,
    pub project_api_token: String,
    pub key: NewApiKey,
}

/// What `bootstrap_tenant` created or reused.
#[derive(Debug, Clone)]
pub struct BootstrapRecord {
    pub user: User,
    pub organization: Organization,
    pub project: Project,
}

/// Creates (or reuses, by email) the user, then a new organization owned by them, a project in
/// it, and the key, all or nothing; the user's current organization and project become the new
/// ones. The sequence of `admin bootstrap`, over the store's primitives.
///
/// # Errors
/// `Unexpected` when storage fails (a taken token or key included); nothing is written then.
pub async fn bootstrap_tenant(
    keys: &dyn ApiKeyRepository,
    plan: BootstrapPlan,
) -> Result<BootstrapRecord, DomainError> {
    in_transaction!(keys.begin(), |tx| {
        let user = match tx.user_by_email(&plan.email).await? {
            Some(user) => user,
            None => tx.insert_user(&plan.email, &plan.first_name).await?,
        };
        let organization = tx
            .insert_organization(&plan.organization_name, plan.plugins_access_level)
            .await?;
        tx.insert_membership(user.id, organization.id, MembershipLevel::Owner)
            .await?;
        let project = tx
            .insert_project(organization.id, &plan.project_name, &plan.project_api_token)
            .await?;
        tx.insert_key(user.id, plan.key).await?;
        let user = tx.set_current(user.id, organization.id, project.id).await?;
        Ok(BootstrapRecord {
            user,
            organization,
            project,
        })
    })
}

/// What `admin bootstrap` made, with the key in clear text (shown once).
#[derive(Debug, Clone)]
pub struct Bootstrapped {
    pub record: BootstrapRecord,
    pub key: PlainApiKey,
}

/// Input of `admin create-key`.
#[derive(Debug, Clone, Default)]
pub struct KeyRequest {
    pub email: String,
    pub label: String,
    pub scopes: Vec<String>,
    pub scoped_teams: Option<Vec<ProjectId>>,
    pub scoped_organizations: Option<Vec<OrganizationId>>,
}

pub struct AdminService {
    keys: Arc<dyn ApiKeyRepository>,
    tenancy: Arc<dyn TenancyRepository>,
}

impl AdminService {
    pub fn new(keys: Arc<dyn ApiKeyRepository>, tenancy: Arc<dyn TenancyRepository>) -> Self {
        Self { keys, tenancy }
    }

    /// Ensures a user, a new organization they own, a project in it and a key, atomically.
    ///
    /// # Errors
    /// `Invalid` for a bad email, blank names or unknown scopes.
    pub async fn bootstrap(&self, request: BootstrapRequest) -> Result<Bootstrapped, AdminError> {
        let email = Email::parse(&request.email).map_err(AdminError::Invalid)?;
        let organization_name = checked_name(
            "organization",
            &request.organization_name,
            MAX_ORGANIZATION_NAME,
        )?;
        let project_name = checked_name("project", &request.project_name, MAX_PROJECT_NAME)?;
        let first_name = request.first_name.trim().to_owned();
        if first_name.chars().count() > MAX_FIRST_NAME {
            return Err(AdminError::Invalid(format!(
                "first name must be at most {MAX_FIRST_NAME} characters"
            )));
        }
        let scopes = ScopeGrants::parse(&request.scopes).map_err(AdminError::Invalid)?;
        let (key, new_key) = NewApiKey::mint("bootstrap", scopes, None, None);
        let record = bootstrap_tenant(
            &*self.keys,
            BootstrapPlan {
                email,
                first_name,
                organization_name,
                plugins_access_level: request.plugins_access_level,
                project_name,
                project_api_token: generate_project_api_token(),
                key: new_key,
            },
        )
        .await
        .map_err(|error| match error {
            DomainError::Unexpected(error) => AdminError::Unexpected(error),
            // The store's primitives fail with `Unexpected` alone.
            other => AdminError::Unexpected(Unexpected::new(other.to_string())),
        })?;
        Ok(Bootstrapped { record, key })
    }

    /// Mints a key for an existing user.
    ///
    /// # Errors
    /// `UserNotFound`, `Invalid` for unknown scopes, `ProjectNotFound`/`OrganizationNotFound`
    /// for restrictions naming something that does not exist.
    pub async fn create_key(&self, request: KeyRequest) -> Result<PlainApiKey, AdminError> {
        let user = self.user(&request.email).await?;
        let scopes = ScopeGrants::parse(&request.scopes).map_err(AdminError::Invalid)?;
        for project in request.scoped_teams.iter().flatten() {
            if self.tenancy.project(*project).await?.is_none() {
                return Err(AdminError::ProjectNotFound(*project));
            }
        }
        for organization in request.scoped_organizations.iter().flatten() {
            self.organization_exists(*organization).await?;
        }
        let label = if request.label.trim().is_empty() {
            "cli"
        } else {
            request.label.trim()
        };
        let (key, new_key) = NewApiKey::mint(
            label,
            scopes,
            request.scoped_teams,
            request.scoped_organizations,
        );
        self.keys.create(user.id, new_key).await?;
        Ok(key)
    }

    /// # Errors
    /// `OrganizationNotFound`, `Invalid` for a blank name.
    pub async fn create_project(
        &self,
        organization: OrganizationId,
        name: &str,
    ) -> Result<Project, AdminError> {
        let name = checked_name("project", name, MAX_PROJECT_NAME)?;
        self.organization_exists(organization).await?;
        Ok(self
            .tenancy
            .create_project(organization, &name, &generate_project_api_token())
            .await?)
    }

    /// # Errors
    /// `UserNotFound`, `OrganizationNotFound`.
    pub async fn add_member(
        &self,
        email: &str,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), AdminError> {
        let user = self.user(email).await?;
        self.organization_exists(organization).await?;
        Ok(self
            .tenancy
            .upsert_membership(user.id, organization, level)
            .await?)
    }

    /// # Errors
    /// `OrganizationNotFound`.
    pub async fn set_plugins_access_level(
        &self,
        organization: OrganizationId,
        level: PluginsAccessLevel,
    ) -> Result<(), AdminError> {
        self.organization_exists(organization).await?;
        Ok(self
            .tenancy
            .set_plugins_access_level(organization, level)
            .await?)
    }

    /// # Errors
    /// `UserNotFound`.
    pub async fn deactivate_user(&self, email: &str) -> Result<(), AdminError> {
        let user = self.user(email).await?;
        Ok(self.tenancy.deactivate_user(user.id).await?)
    }

    async fn user(&self, email: &str) -> Result<User, AdminError> {
        let parsed = Email::parse(email).map_err(AdminError::Invalid)?;
        self.tenancy
            .user_by_email(&parsed)
            .await?
            .ok_or_else(|| AdminError::UserNotFound(parsed.as_str().to_owned()))
    }

    async fn organization_exists(&self, id: OrganizationId) -> Result<(), AdminError> {
        match self.tenancy.organization(id).await? {
            Some(_) => Ok(()),
            None => Err(AdminError::OrganizationNotFound(id)),
        }
    }
}

/// Longest names the schema stores (the columns' sizes).
const MAX_ORGANIZATION_NAME: usize = 64;
const MAX_PROJECT_NAME: usize = 200;
const MAX_FIRST_NAME: usize = 150;

/// A trimmed, non-blank name of at most `max` characters.
fn checked_name(what: &str, value: &str, max: usize) -> Result<String, AdminError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(AdminError::Invalid(format!(
            "{what} name must not be blank"
        )));
    }
    if trimmed.chars().count() > max {
        return Err(AdminError::Invalid(format!(
            "{what} name must be at most {max} characters"
        )));
    }
    Ok(trimmed.to_owned())
}
