//! The port of organizations, their projects, users and memberships.

use async_trait::async_trait;

use super::{
    Email, MembershipLevel, Organization, OrganizationId, OrganizationMembership,
    PluginsAccessLevel, Project, ProjectId, SurveyConfig, User, UserId,
};
use crate::activity::NewActivity;
use crate::error::Unexpected;
use crate::ports::{Page, PageRequest, Transaction};

/// A project or organization with one user's level in its organization (`None`: not a member).
#[derive(Debug, Clone, PartialEq)]
pub struct AsSeenBy<T> {
    pub tenant: T,
    pub level: Option<MembershipLevel>,
}

/// Which projects a user can see through one key.
#[derive(Debug, Clone, PartialEq)]
pub struct VisibleProjects {
    pub user_id: UserId,
    /// Restrict to these projects (`None`: no restriction).
    pub project_ids: Option<Vec<ProjectId>>,
    /// Restrict to these organizations (`None`: no restriction).
    pub organization_ids: Option<Vec<OrganizationId>>,
}

/// Organizations, their projects, users and memberships.
#[async_trait]
pub trait TenancyRepository: Send + Sync {
    async fn project(&self, id: ProjectId) -> Result<Option<Project>, Unexpected>;

    /// The project whose public token (`phc_…`, what the SDKs send) this is.
    async fn project_by_token(&self, token: &str) -> Result<Option<Project>, Unexpected>;

    async fn organization(&self, id: OrganizationId) -> Result<Option<Organization>, Unexpected>;

    /// The project with the user's level in its organization, read together because every
    /// request on a project needs both.
    async fn project_for(
        &self,
        user: UserId,
        id: ProjectId,
    ) -> Result<Option<AsSeenBy<Project>>, Unexpected>;

    /// The organization with the user's level in it, read together.
    async fn organization_for(
        &self,
        user: UserId,
        id: OrganizationId,
    ) -> Result<Option<AsSeenBy<Organization>>, Unexpected>;

    /// Every organization the user belongs to, oldest first (ties by id).
    async fn memberships(&self, user: UserId) -> Result<Vec<OrganizationMembership>, Unexpected>;

    /// Projects of the user's organizations within the filter, ordered by id.
    async fn visible_projects(
        &self,
        filter: &VisibleProjects,
        page: PageRequest,
    ) -> Result<Page<Project>, Unexpected>;

    async fn user(&self, id: UserId) -> Result<Option<User>, Unexpected>;

    /// The user with this email, compared case-insensitively.
    async fn user_by_email(&self, email: &Email) -> Result<Option<User>, Unexpected>;

    async fn create_project(
        &self,
        organization: OrganizationId,
        name: &str,
        api_token: &str,
    ) -> Result<Project, Unexpected>;

    /// Adds the user to the organization, or changes their level if already a member.
    async fn upsert_membership(
        &self,
        user: UserId,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), Unexpected>;

    async fn set_plugins_access_level(
        &self,
        organization: OrganizationId,
        level: PluginsAccessLevel,
    ) -> Result<(), Unexpected>;

    /// Sets the user's current organization and project.
    async fn set_current(
        &self,
        user: UserId,
        organization: OrganizationId,
        project: Option<ProjectId>,
    ) -> Result<(), Unexpected>;

    /// Marks the user inactive; their keys stop working at once.
    async fn deactivate_user(&self, user: UserId) -> Result<(), Unexpected>;

    /// Opens a transaction for one write of a project's settings (`ProjectService`).
    async fn begin(&self) -> Result<Box<dyn TenancyTransaction>, Unexpected>;
}

/// The writes of tenants, in one transaction, each returning what it wrote: those a tenant is
/// made of, which `AdminService::bootstrap` runs in its order, and those of a project's
/// settings, which `ProjectService` runs.
#[async_trait]
pub trait TenancyTransaction: Transaction {
    /// The user with this email, compared case-insensitively.
    async fn user_by_email(&mut self, email: &Email) -> Result<Option<User>, Unexpected>;

    /// A new active user, with a fresh distinct id.
    ///
    /// # Errors
    /// `Unexpected` when storage fails (an email taken up to case included).
    async fn insert_user(&mut self, email: &Email, first_name: &str) -> Result<User, Unexpected>;

    async fn insert_organization(
        &mut self,
        name: &str,
        plugins_access_level: PluginsAccessLevel,
    ) -> Result<Organization, Unexpected>;

    /// Makes the user a member of the organization, who is not one yet.
    async fn insert_membership(
        &mut self,
        user: UserId,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), Unexpected>;

    /// # Errors
    /// `Unexpected` when storage fails (a taken token included).
    async fn insert_project(
        &mut self,
        organization: OrganizationId,
        name: &str,
        api_token: &str,
    ) -> Result<Project, Unexpected>;

    /// Sets the user's current organization and project; returns the user as stored.
    async fn set_current(
        &mut self,
        user: UserId,
        organization: OrganizationId,
        project: ProjectId,
    ) -> Result<User, Unexpected>;

    /// The project, locked until the transaction ends, so concurrent writes of its settings
    /// apply one after the other (each merging onto what the one before stored).
    async fn lock_project(&mut self, id: ProjectId) -> Result<Option<Project>, Unexpected>;

    /// Stores the (locked) project's `survey_config` (`None` clears it) and, if any, logs
    /// `activity` in the project's survey activity, about no survey (its `item_id` is `""`);
    /// returns the project as stored.
    async fn set_survey_config(
        &mut self,
        id: ProjectId,
        config: Option<&SurveyConfig>,
        activity: Option<&NewActivity>,
    ) -> Result<Project, Unexpected>;
}
