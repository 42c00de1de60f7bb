//! The tenancy and API key ports, faked.

use async_trait::async_trait;
use chrono::{DateTime, SubsecRound as _, Utc};
use uuid::Uuid;

use crate::activity::NewActivity;
use crate::api_key::{ApiKey, ApiKeyRepository, ApiKeyTransaction, NewApiKey};
use crate::error::Unexpected;
use crate::ports::{Page, PageRequest};
use crate::tenancy::{AsSeenBy, TenancyRepository, TenancyTransaction, VisibleProjects};
use crate::tenancy::{
    Email, MembershipLevel, Organization, OrganizationId, OrganizationMembership,
    PluginsAccessLevel, Project, ProjectId, SurveyConfig, User, UserId,
};

use super::transaction::Draft;
use super::{InMemoryStore, State, page_of};

fn new_user(state: &State, email: &Email, first_name: &str) -> User {
    User {
        id: UserId(state.users.len() as i32 + 1),
        uuid: Uuid::now_v7(),
        email: email.as_str().to_owned(),
        first_name: first_name.to_owned(),
        last_name: String::new(),
        distinct_id: Uuid::new_v4().to_string(),
        is_active: true,
        is_email_verified: false,
        current_organization_id: None,
        current_project_id: None,
        created_at: Utc::now(),
    }
}

/// A write PostgreSQL's constraints refuse (a taken unique value, a reference to nothing),
/// refused alike so that no test passes on the fake alone.
fn refused(what: String) -> Unexpected {
    Unexpected::new(format!("refused as PostgreSQL would: {what}"))
}

/// Refuses a project token another project holds (`projects.api_token` is unique).
fn check_token_free(state: &State, token: &str) -> Result<(), Unexpected> {
    if state.projects.iter().any(|p| p.api_token == token) {
        return Err(refused(format!("project token {token} is taken")));
    }
    Ok(())
}

/// Refuses a key whose id or stored hash another key holds (both are unique).
fn check_key_free(state: &State, key: &NewApiKey) -> Result<(), Unexpected> {
    if state
        .keys
        .iter()
        .any(|(value, stored)| *value == key.secure_value || stored.id == key.id)
    {
        return Err(refused(format!("key {} is taken", key.id)));
    }
    Ok(())
}

/// Refuses a reference to an organization that does not exist (a foreign key).
fn check_organization(state: &State, organization: OrganizationId) -> Result<(), Unexpected> {
    if !state.organizations.iter().any(|o| o.id == organization) {
        return Err(refused(format!("no organization {organization}")));
    }
    Ok(())
}

/// Refuses a reference to a project that does not exist (a foreign key).
fn check_project(state: &State, project: ProjectId) -> Result<(), Unexpected> {
    if !state.projects.iter().any(|p| p.id == project) {
        return Err(refused(format!("no project {project}")));
    }
    Ok(())
}

/// Refuses a reference to a user that does not exist (a foreign key).
fn check_user(state: &State, user: UserId) -> Result<(), Unexpected> {
    if !state.users.iter().any(|u| u.id == user) {
        return Err(refused(format!("no user {}", user.0)));
    }
    Ok(())
}

fn insert_project(
    state: &mut State,
    organization: OrganizationId,
    name: &str,
    token: &str,
) -> Project {
    let project = Project {
        id: ProjectId(state.projects.len() as i32 + 1),
        organization_id: organization,
        name: name.to_owned(),
        api_token: token.to_owned(),
        created_at: Utc::now(),
        survey_config: None,
    };
    state.projects.push(project.clone());
    project
}

fn insert_key(state: &mut State, owner: UserId, key: NewApiKey) {
    state.keys.push((
        key.secure_value,
        ApiKey {
            id: key.id,
            user_id: owner,
            label: key.label,
            mask: key.mask,
            scopes: key.scopes,
            scoped_teams: key.scoped_teams,
            scoped_organizations: key.scoped_organizations,
            created_at: Utc::now(),
            last_used_at: None,
        },
    ));
}

#[async_trait]
impl ApiKeyRepository for InMemoryStore {
    async fn find_active(&self, secure_value: &str) -> Result<Option<(ApiKey, User)>, Unexpected> {
        let state = self.lock();
        Ok(state
            .keys
            .iter()
            .find(|(value, _)| value == secure_value)
            .and_then(|(_, key)| {
                let user = state
                    .users
                    .iter()
                    .find(|u| u.id == key.user_id && u.is_active)?;
                Some((key.clone(), user.clone()))
            }))
    }

    async fn touch(&self, key_id: Uuid, at: DateTime<Utc>) -> Result<(), Unexpected> {
        // PostgreSQL keeps microseconds, and diesel drops the rest on the way in.
        self.set_key_last_used_at(key_id, Some(at.trunc_subsecs(6)));
        Ok(())
    }

    async fn create(&self, owner: UserId, key: NewApiKey) -> Result<(), Unexpected> {
        let mut state = self.lock();
        check_user(&state, owner)?;
        check_key_free(&state, &key)?;
        insert_key(&mut state, owner, key);
        Ok(())
    }

    async fn begin(&self) -> Result<Box<dyn ApiKeyTransaction>, Unexpected> {
        Ok(Box::new(Draft::begin(self).await))
    }
}

#[async_trait]
impl ApiKeyTransaction for Draft {
    async fn insert_key(&mut self, owner: UserId, key: NewApiKey) -> Result<(), Unexpected> {
        check_user(&self.state, owner)?;
        check_key_free(&self.state, &key)?;
        insert_key(&mut self.state, owner, key);
        Ok(())
    }
}

#[async_trait]
impl TenancyTransaction for Draft {
    async fn user_by_email(&mut self, email: &Email) -> Result<Option<User>, Unexpected> {
        Ok(self
            .state
            .users
            .iter()
            .find(|u| u.email.eq_ignore_ascii_case(email.as_str()))
            .cloned())
    }

    async fn insert_user(&mut self, email: &Email, first_name: &str) -> Result<User, Unexpected> {
        if self.user_by_email(email).await?.is_some() {
            return Err(refused(format!("email {} is taken", email.as_str())));
        }
        let user = new_user(&self.state, email, first_name);
        self.state.users.push(user.clone());
        Ok(user)
    }

    async fn insert_organization(
        &mut self,
        name: &str,
        plugins_access_level: PluginsAccessLevel,
    ) -> Result<Organization, Unexpected> {
        let organization = Organization {
            id: OrganizationId(Uuid::now_v7()),
            name: name.to_owned(),
            plugins_access_level,
            created_at: Utc::now(),
        };
        self.state.organizations.push(organization.clone());
        Ok(organization)
    }

    async fn insert_membership(
        &mut self,
        user: UserId,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), Unexpected> {
        check_user(&self.state, user)?;
        check_organization(&self.state, organization)?;
        self.state.memberships.push((user, organization, level));
        Ok(())
    }

    async fn insert_project(
        &mut self,
        organization: OrganizationId,
        name: &str,
        api_token: &str,
    ) -> Result<Project, Unexpected> {
        check_organization(&self.state, organization)?;
        check_token_free(&self.state, api_token)?;
        Ok(insert_project(
            &mut self.state,
            organization,
            name,
            api_token,
        ))
    }

    async fn set_current(
        &mut self,
        user: UserId,
        organization: OrganizationId,
        project: ProjectId,
    ) -> Result<User, Unexpected> {
        check_organization(&self.state, organization)?;
        check_project(&self.state, project)?;
        let found = self
            .state
            .users
            .iter_mut()
            .find(|u| u.id == user)
            .ok_or_else(|| refused(format!("no user {}", user.0)))?;
        found.current_organization_id = Some(organization);
        found.current_project_id = Some(project);
        Ok(found.clone())
    }

    async fn lock_project(&mut self, id: ProjectId) -> Result<Option<Project>, Unexpected> {
        Ok(self.state.projects.iter().find(|p| p.id == id).cloned())
    }

    async fn set_survey_config(
        &mut self,
        id: ProjectId,
        config: Option<&SurveyConfig>,
        activity: Option<&NewActivity>,
    ) -> Result<Project, Unexpected> {
        let found = self
            .state
            .projects
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(|| refused(format!("no project {id}")))?;
        found.survey_config = config.cloned();
        let project = found.clone();
        if let Some(activity) = activity {
            self.state.log_survey(id, None, activity);
        }
        Ok(project)
    }
}

#[async_trait]
impl TenancyRepository for InMemoryStore {
    async fn project(&self, id: ProjectId) -> Result<Option<Project>, Unexpected> {
        Ok(self.lock().projects.iter().find(|p| p.id == id).cloned())
    }

    async fn project_by_token(&self, token: &str) -> Result<Option<Project>, Unexpected> {
        Ok(self
            .lock()
            .projects
            .iter()
            .find(|p| p.api_token == token)
            .cloned())
    }

    async fn organization(&self, id: OrganizationId) -> Result<Option<Organization>, Unexpected> {
        Ok(self
            .lock()
            .organizations
            .iter()
            .find(|o| o.id == id)
            .cloned())
    }

    async fn project_for(
        &self,
        user: UserId,
        id: ProjectId,
    ) -> Result<Option<AsSeenBy<Project>>, Unexpected> {
        let state = self.lock();
        Ok(state
            .projects
            .iter()
            .find(|p| p.id == id)
            .map(|project| AsSeenBy {
                level: level_in(&state, user, project.organization_id),
                tenant: project.clone(),
            }))
    }

    async fn organization_for(
        &self,
        user: UserId,
        id: OrganizationId,
    ) -> Result<Option<AsSeenBy<Organization>>, Unexpected> {
        let state = self.lock();
        Ok(state
            .organizations
            .iter()
            .find(|o| o.id == id)
            .map(|organization| AsSeenBy {
                level: level_in(&state, user, id),
                tenant: organization.clone(),
            }))
    }

    async fn memberships(&self, user: UserId) -> Result<Vec<OrganizationMembership>, Unexpected> {
        let state = self.lock();
        let mut memberships: Vec<_> = state
            .memberships
            .iter()
            .filter(|(u, _, _)| *u == user)
            .filter_map(|(_, org, level)| {
                let organization = state.organizations.iter().find(|o| o.id == *org)?.clone();
                Some(OrganizationMembership {
                    organization,
                    level: *level,
                })
            })
            .collect();
        memberships.sort_by_key(|m| (m.organization.created_at, m.organization.id));
        Ok(memberships)
    }

    async fn visible_projects(
        &self,
        filter: &VisibleProjects,
        page: PageRequest,
    ) -> Result<Page<Project>, Unexpected> {
        let state = self.lock();
        let mut projects: Vec<_> = state
            .projects
            .iter()
            .filter(|p| {
                state
                    .memberships
                    .iter()
                    .any(|(u, o, _)| *u == filter.user_id && *o == p.organization_id)
            })
            .filter(|p| {
                filter
                    .project_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&p.id))
            })
            .filter(|p| {
                filter
                    .organization_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&p.organization_id))
            })
            .cloned()
            .collect();
        projects.sort_by_key(|p| p.id);
        Ok(page_of(projects, page))
    }

    async fn user(&self, id: UserId) -> Result<Option<User>, Unexpected> {
        Ok(self.lock().users.iter().find(|u| u.id == id).cloned())
    }

    async fn user_by_email(&self, email: &Email) -> Result<Option<User>, Unexpected> {
        Ok(self
            .lock()
            .users
            .iter()
            .find(|u| u.email.eq_ignore_ascii_case(email.as_str()))
            .cloned())
    }

    async fn create_project(
        &self,
        organization: OrganizationId,
        name: &str,
        api_token: &str,
    ) -> Result<Project, Unexpected> {
        let mut state = self.lock();
        check_organization(&state, organization)?;
        check_token_free(&state, api_token)?;
        Ok(insert_project(&mut state, organization, name, api_token))
    }

    async fn upsert_membership(
        &self,
        user: UserId,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), Unexpected> {
        let mut state = self.lock();
        check_user(&state, user)?;
        check_organization(&state, organization)?;
        state
            .memberships
            .retain(|(u, o, _)| !(*u == user && *o == organization));
        state.memberships.push((user, organization, level));
        Ok(())
    }

    async fn set_plugins_access_level(
        &self,
        organization: OrganizationId,
        level: PluginsAccessLevel,
    ) -> Result<(), Unexpected> {
        if let Some(org) = self
            .lock()
            .organizations
            .iter_mut()
            .find(|o| o.id == organization)
        {
            org.plugins_access_level = level;
        }
        Ok(())
    }

    async fn set_current(
        &self,
        user: UserId,
        organization: OrganizationId,
        project: Option<ProjectId>,
    ) -> Result<(), Unexpected> {
        let mut state = self.lock();
        // An update of no user checks nothing, as PostgreSQL's updates of no row do.
        let Some(index) = state.users.iter().position(|u| u.id == user) else {
            return Ok(());
        };
        check_organization(&state, organization)?;
        if let Some(project) = project {
            check_project(&state, project)?;
        }
        let found = &mut state.users[index];
        found.current_organization_id = Some(organization);
        found.current_project_id = project;
        Ok(())
    }

    async fn deactivate_user(&self, user: UserId) -> Result<(), Unexpected> {
        if let Some(found) = self.lock().users.iter_mut().find(|u| u.id == user) {
            found.is_active = false;
        }
        Ok(())
    }

    async fn begin(&self) -> Result<Box<dyn TenancyTransaction>, Unexpected> {
        Ok(Box::new(Draft::begin(self).await))
    }
}

/// The user's level in the organization, or `None` when not a member.
fn level_in(state: &State, user: UserId, organization: OrganizationId) -> Option<MembershipLevel> {
    state
        .memberships
        .iter()
        .find(|(u, o, _)| *u == user && *o == organization)
        .map(|(_, _, level)| *level)
}
