//! Who is calling and what they may reach: authentication by personal API key, scope checks,
//! and resolution of the project or organization a path names.

mod object_level;
mod remembered;

use std::sync::Arc;
use std::time::Duration;

use chrono::{SubsecRound as _, Utc};

use crate::api_key::ApiKeyRepository;
use crate::api_key::{ApiKey, PlainApiKey};
use crate::error::Unexpected;
use crate::memory::Memories;
use crate::ports::{Page, PageRequest};
use crate::scope::RequiredScope;
use crate::tenancy::{AsSeenBy, TenancyRepository, VisibleProjects};
use crate::tenancy::{
    MembershipLevel, Organization, OrganizationId, OrganizationMembership, Project, ProjectId,
    TenantRef, User, UserId,
};
use remembered::Remembered;

pub use object_level::ObjectAccessLevel;
pub use remembered::MAX_FRESHNESS;

/// Where in the request the key was found; error messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLocation {
    Header,
    Body,
    QueryString,
}

impl std::fmt::Display for KeyLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Header => "Authorization header",
            Self::Body => "body",
            Self::QueryString => "query string",
        })
    }
}

/// A key as the client sent it.
#[derive(Debug, Clone)]
pub struct PresentedKey {
    pub key: PlainApiKey,
    pub location: KeyLocation,
}

/// Every way a request can be refused before it reaches a resource.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("Authentication credentials were not provided.")]
    NotAuthenticated,
    #[error("Personal API key found in request {0} is invalid.")]
    InvalidKey(KeyLocation),
    #[error("API key missing required scope '{0}'")]
    MissingScope(RequiredScope),
    #[error("Project not found.")]
    ProjectNotFound,
    #[error("Organization not found.")]
    OrganizationNotFound,
    #[error("You don't have access to the project.")]
    NotProjectMember,
    #[error("You don't have access to the organization.")]
    NotOrganizationMember,
    #[error("API key does not have access to the requested project: ID {0}.")]
    KeyNotScopedToProject(ProjectId),
    #[error("API key does not have access to the requested organization: ID {0}.")]
    KeyNotScopedToOrganization(OrganizationId),
    /// An SDK request without its project's public token.
    #[error(
        "API key not provided. You can find your project API key in your PostHog project settings."
    )]
    MissingProjectToken,
    #[error(
        "Project API key invalid. You can find your project API key in your PostHog project settings."
    )]
    InvalidProjectToken,
    #[error(transparent)]
    Unexpected(#[from] Unexpected),
}

/// An authenticated caller: the key's owner and the key itself.
#[derive(Debug, Clone)]
pub struct Principal {
    pub user: User,
    pub key: ApiKey,
}

/// A caller cleared to act inside one project.
#[derive(Debug, Clone)]
pub struct ProjectAccess {
    pub principal: Principal,
    pub project: Project,
    pub level: MembershipLevel,
}

/// A caller cleared to act inside one organization.
#[derive(Debug, Clone)]
pub struct OrganizationAccess {
    pub principal: Principal,
    pub organization: Organization,
    pub level: MembershipLevel,
}

/// Resolves and checks callers; the HTTP layer asks it once per request.
pub struct AccessService {
    keys: Arc<dyn ApiKeyRepository>,
    tenancy: Arc<dyn TenancyRepository>,
    /// Keys (by their stored hash) with their active owners.
    principals: Remembered<String, Principal>,
    projects: Remembered<(UserId, ProjectId), AsSeenBy<Project>>,
    organizations: Remembered<(UserId, OrganizationId), AsSeenBy<Organization>>,
}

impl AccessService {
    /// A service that remembers keys and tenants in `memories` for `freshness` (at most
    /// [`MAX_FRESHNESS`]; zero reads storage on every request).
    pub fn new(
        keys: Arc<dyn ApiKeyRepository>,
        tenancy: Arc<dyn TenancyRepository>,
        freshness: Duration,
        memories: &impl Memories,
    ) -> Self {
        Self {
            keys,
            tenancy,
            principals: Remembered::new(freshness, memories),
            projects: Remembered::new(freshness, memories),
            organizations: Remembered::new(freshness, memories),
        }
    }

    /// Finds the key's active owner. A new key works at once; a deactivated owner is refused
    /// once the remembered answer expires.
    ///
    /// # Errors
    /// `NotAuthenticated` without a key, `InvalidKey` for an unknown key or an inactive owner.
    pub async fn authenticate(
        &self,
        presented: Option<PresentedKey>,
    ) -> Result<Principal, AccessError> {
        let presented = presented.ok_or(AccessError::NotAuthenticated)?;
        let secure_value = presented.key.secure_value();
        let mut principal = self
            .principals
            .get_or_load(
                secure_value.clone(),
                || async {
                    let found = self.keys.find_active(&secure_value).await?;
                    Ok(found.map(|(key, user)| Principal { user, key }))
                },
                |_| true,
            )
            .await?
            .ok_or(AccessError::InvalidKey(presented.location))?;
        // Microseconds, as PostgreSQL stores them, so the value shown now is the one read later.
        let now = Utc::now().trunc_subsecs(6);
        if principal.key.needs_last_used_refresh(now) {
            self.keys.touch(principal.key.id, now).await?;
            principal.key.last_used_at = Some(now);
            self.principals.replace(secure_value, principal.clone());
        }
        Ok(principal)
    }

    /// # Errors
    /// `MissingScope` when the key's scopes do not grant `required`.
    pub fn require_scope(
        principal: &Principal,
        required: RequiredScope,
    ) -> Result<(), AccessError> {
        if principal.key.scopes.allows(required) {
            Ok(())
        } else {
            Err(AccessError::MissingScope(required))
        }
    }

    /// Resolves the project a path names (`42` or `@current`) and checks the caller may use it.
    ///
    /// # Errors
    /// `ProjectNotFound` for a missing project, `KeyNotScopedTo…` when the key is restricted
    /// elsewhere, `NotProjectMember` when the user is not in its organization.
    pub async fn project(
        &self,
        principal: Principal,
        reference: TenantRef<ProjectId>,
    ) -> Result<ProjectAccess, AccessError> {
        let id = match reference {
            TenantRef::Id(id) => id,
            TenantRef::Current => self.current_project(&principal).await?,
        };
        let AsSeenBy {
            tenant: project,
            level,
        } = self
            .project_for(principal.user.id, id)
            .await?
            .ok_or(AccessError::ProjectNotFound)?;
        if !principal.key.reaches_project(project.id) {
            return Err(AccessError::KeyNotScopedToProject(project.id));
        }
        if !principal.key.reaches_organization(project.organization_id) {
            return Err(AccessError::KeyNotScopedToOrganization(
                project.organization_id,
            ));
        }
        let level = level.ok_or(AccessError::NotProjectMember)?;
        Ok(ProjectAccess {
            principal,
            project,
            level,
        })
    }

    /// Resolves projects a request names in its body, each with the checks [`Self::project`]
    /// makes for the project in the path, so acting on them is allowed exactly as it would be
    /// through their own URLs.
    ///
    /// # Errors
    /// The first refused project's error, in the order given.
    pub async fn projects(
        &self,
        principal: &Principal,
        ids: &[ProjectId],
    ) -> Result<Vec<ProjectAccess>, AccessError> {
        let mut cleared = Vec::with_capacity(ids.len());
        for id in ids {
            cleared.push(self.project(principal.clone(), TenantRef::Id(*id)).await?);
        }
        Ok(cleared)
    }

    /// Resolves the organization a path names (UUID or `@current`) and checks the caller may
    /// use it.
    ///
    /// # Errors
    /// `OrganizationNotFound`, `KeyNotScopedToOrganization`, `NotOrganizationMember`.
    pub async fn organization(
        &self,
        principal: Principal,
        reference: TenantRef<OrganizationId>,
    ) -> Result<OrganizationAccess, AccessError> {
        let id = match reference {
            TenantRef::Current => self.current_organization(&principal).await?,
            TenantRef::Id(id) => id,
        };
        let AsSeenBy {
            tenant: organization,
            level,
        } = self
            .organization_for(principal.user.id, id)
            .await?
            .ok_or(AccessError::OrganizationNotFound)?;
        if !principal.key.reaches_organization(id) {
            return Err(AccessError::KeyNotScopedToOrganization(id));
        }
        let level = level.ok_or(AccessError::NotOrganizationMember)?;
        Ok(OrganizationAccess {
            principal,
            organization,
            level,
        })
    }

    /// The organization of a project the caller was cleared for: what depends on the
    /// organization's settings (its plugin access level) reads them here.
    ///
    /// # Errors
    /// `Unexpected` when storage fails or the organization is gone.
    pub async fn organization_of(
        &self,
        access: &ProjectAccess,
    ) -> Result<Organization, AccessError> {
        self.organization_for(access.principal.user.id, access.project.organization_id)
            .await?
            .map(|seen| seen.tenant)
            .ok_or(AccessError::OrganizationNotFound)
    }

    /// Projects the caller can reach through this key, ordered by id.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn visible_projects(
        &self,
        principal: &Principal,
        page: PageRequest,
    ) -> Result<Page<Project>, AccessError> {
        Ok(self
            .tenancy
            .visible_projects(&visible_to(principal), page)
            .await?)
    }

    /// Organizations the caller belongs to and the key reaches, oldest first.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn visible_organizations(
        &self,
        principal: &Principal,
    ) -> Result<Vec<OrganizationMembership>, AccessError> {
        let mut memberships = self.tenancy.memberships(principal.user.id).await?;
        memberships.retain(|m| principal.key.reaches_organization(m.organization.id));
        Ok(memberships)
    }

    /// The user's current project and organization as this key sees them (`None` when it
    /// reaches none), for `/users/@me`.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn current(
        &self,
        principal: &Principal,
    ) -> Result<(Option<ProjectAccess>, Option<OrganizationAccess>), AccessError> {
        let project = match self.project(principal.clone(), TenantRef::Current).await {
            Ok(project) => Some(project),
            Err(AccessError::Unexpected(cause)) => return Err(cause.into()),
            Err(_) => None,
        };
        let organization = match self
            .organization(principal.clone(), TenantRef::Current)
            .await
        {
            Ok(organization) => Some(organization),
            Err(AccessError::Unexpected(cause)) => return Err(cause.into()),
            Err(_) => None,
        };
        Ok((project, organization))
    }

    /// Makes `project` (and its organization), or `organization` (and its first project this key
    /// sees), the user's current ones.
    ///
    /// # Errors
    /// What resolving them would answer: 404 for what does not exist, 403 for what the user or
    /// key may not reach.
    pub async fn switch_current(
        &self,
        principal: &Principal,
        organization: Option<OrganizationId>,
        project: Option<ProjectId>,
    ) -> Result<User, AccessError> {
        let (organization, project) = match (project, organization) {
            (Some(project), _) => {
                let access = self
                    .project(principal.clone(), TenantRef::Id(project))
                    .await?;
                (access.project.organization_id, Some(access.project.id))
            }
            (None, Some(organization)) => {
                self.organization(principal.clone(), TenantRef::Id(organization))
                    .await?;
                let mut filter = visible_to(principal);
                filter.organization_ids = Some(vec![organization]);
                let first = self
                    .tenancy
                    .visible_projects(
                        &filter,
                        PageRequest {
                            limit: 1,
                            offset: 0,
                        },
                    )
                    .await?;
                (organization, first.items.first().map(|p| p.id))
            }
            (None, None) => return Ok(principal.user.clone()),
        };
        self.tenancy
            .set_current(principal.user.id, organization, project)
            .await?;
        let mut user = principal.user.clone();
        user.current_organization_id = Some(organization);
        user.current_project_id = project;
        Ok(user)
    }

    /// The projects of one organization the caller was cleared for, as this key sees them,
    /// ordered by id.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn organization_projects(
        &self,
        access: &OrganizationAccess,
        page: PageRequest,
    ) -> Result<Page<Project>, AccessError> {
        let mut filter = visible_to(&access.principal);
        filter.organization_ids = Some(vec![access.organization.id]);
        Ok(self.tenancy.visible_projects(&filter, page).await?)
    }

    /// The user's current project: the stored one if this key reaches it and the user is still
    /// in its organization, else the first the key can see.
    async fn current_project(&self, principal: &Principal) -> Result<ProjectId, AccessError> {
        if let Some(current) = self.stored_user(principal).await?.current_project_id
            && principal.key.reaches_project(current)
            && let Some(seen) = self.project_for(principal.user.id, current).await?
            && seen.level.is_some()
        {
            return Ok(current);
        }
        let first = PageRequest {
            limit: 1,
            offset: 0,
        };
        let page = self
            .tenancy
            .visible_projects(&visible_to(principal), first)
            .await?;
        page.items
            .first()
            .map(|p| p.id)
            .ok_or(AccessError::ProjectNotFound)
    }

    /// The user's current organization: the stored one if this key reaches it, else the oldest
    /// membership the key reaches.
    async fn current_organization(
        &self,
        principal: &Principal,
    ) -> Result<OrganizationId, AccessError> {
        let memberships = self.visible_organizations(principal).await?;
        if let Some(current) = self.stored_user(principal).await?.current_organization_id
            && memberships.iter().any(|m| m.organization.id == current)
        {
            return Ok(current);
        }
        memberships
            .first()
            .map(|m| m.organization.id)
            .ok_or(AccessError::OrganizationNotFound)
    }

    /// The caller as stored now rather than as remembered: a user's own switch of current
    /// project or organization must show on their next request, whichever node answers it.
    async fn stored_user(&self, principal: &Principal) -> Result<User, AccessError> {
        Ok(self
            .tenancy
            .user(principal.user.id)
            .await?
            .unwrap_or_else(|| principal.user.clone()))
    }

    async fn project_for(
        &self,
        user: UserId,
        id: ProjectId,
    ) -> Result<Option<AsSeenBy<Project>>, Unexpected> {
        self.projects
            .get_or_load(
                (user, id),
                || self.tenancy.project_for(user, id),
                |seen| seen.level.is_some(),
            )
            .await
    }

    async fn organization_for(
        &self,
        user: UserId,
        id: OrganizationId,
    ) -> Result<Option<AsSeenBy<Organization>>, Unexpected> {
        self.organizations
            .get_or_load(
                (user, id),
                || self.tenancy.organization_for(user, id),
                |seen| seen.level.is_some(),
            )
            .await
    }
}

fn visible_to(principal: &Principal) -> VisibleProjects {
    VisibleProjects {
        user_id: principal.user.id,
        project_ids: principal.key.scoped_teams.clone().filter(|t| !t.is_empty()),
        organization_ids: principal
            .key
            .scoped_organizations
            .clone()
            .filter(|o| !o.is_empty()),
    }
}
