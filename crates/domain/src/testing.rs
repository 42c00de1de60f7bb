//! In-memory fakes of every port, so domain rules can be tested without a database.
//!
//! One `InMemoryStore` plays every repository; clone it to share the same state between
//! services, as the adapters share one database.

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::api_key::{ApiKey, NewApiKey};
use crate::error::Unexpected;
use crate::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagError, FlagId, NewFlag,
};
use crate::ports::{
    ApiKeyRepository, BootstrapPlan, BootstrapRecord, Page, PageRequest, TenancyRepository,
    VisibleProjects,
};
use crate::survey::{
    Attach, NewSurvey, Survey, SurveyError, SurveyFilter, SurveyRepository, SurveyState,
    TargetingPlan, UpdatePlanner,
};
use crate::tenancy::{
    Email, MembershipLevel, Organization, OrganizationId, OrganizationMembership,
    PluginsAccessLevel, Project, ProjectId, User, UserBasic, UserId,
};

#[derive(Debug, Default, Clone)]
struct State {
    users: Vec<User>,
    organizations: Vec<Organization>,
    projects: Vec<Project>,
    memberships: Vec<(UserId, OrganizationId, MembershipLevel)>,
    keys: Vec<(String, ApiKey)>,
    flags: Vec<StoredFlag>,
    surveys: Vec<StoredSurvey>,
}

#[derive(Debug, Clone)]
struct StoredFlag {
    flag: FeatureFlag,
    created_by: Option<UserId>,
}

#[derive(Debug, Clone)]
struct StoredSurvey {
    id: Uuid,
    project_id: ProjectId,
    state: SurveyState,
    targeting_flag_id: Option<FlagId>,
    owns_targeting_flag: bool,
    created_at: DateTime<Utc>,
    created_by: Option<UserId>,
}

/// Every port, backed by vectors behind a mutex.
#[derive(Debug, Clone, Default)]
pub struct InMemoryStore {
    state: Arc<Mutex<State>>,
}

impl InMemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("in-memory store poisoned")
    }

    /// The stored `last_used_at` of a key, for tests of the refresh rule.
    pub fn key_last_used_at(&self, key_id: Uuid) -> Option<DateTime<Utc>> {
        self.lock()
            .keys
            .iter()
            .find(|(_, key)| key.id == key_id)
            .and_then(|(_, key)| key.last_used_at)
    }

    /// Every flag ever stored in the project, deleted ones included.
    pub fn all_flags(&self, project: ProjectId) -> Vec<FeatureFlag> {
        let state = self.lock();
        state
            .flags
            .iter()
            .filter(|f| f.flag.project_id == project)
            .map(|f| state.flag_view(f))
            .collect()
    }

    /// How many surveys are stored, across projects.
    pub fn survey_count(&self) -> usize {
        self.lock().surveys.len()
    }

    /// Overwrites a key's `last_used_at`, to simulate the passing of time.
    pub fn set_key_last_used_at(&self, key_id: Uuid, at: Option<DateTime<Utc>>) {
        if let Some((_, key)) = self
            .lock()
            .keys
            .iter_mut()
            .find(|(_, key)| key.id == key_id)
        {
            key.last_used_at = at;
        }
    }
}

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
        self.set_key_last_used_at(key_id, Some(at));
        Ok(())
    }

    async fn create(&self, owner: UserId, key: NewApiKey) -> Result<(), Unexpected> {
        insert_key(&mut self.lock(), owner, key);
        Ok(())
    }
}

#[async_trait]
impl TenancyRepository for InMemoryStore {
    async fn project(&self, id: ProjectId) -> Result<Option<Project>, Unexpected> {
        Ok(self.lock().projects.iter().find(|p| p.id == id).cloned())
    }

    async fn organization(&self, id: OrganizationId) -> Result<Option<Organization>, Unexpected> {
        Ok(self
            .lock()
            .organizations
            .iter()
            .find(|o| o.id == id)
            .cloned())
    }

    async fn membership_level(
        &self,
        user: UserId,
        organization: OrganizationId,
    ) -> Result<Option<MembershipLevel>, Unexpected> {
        Ok(self
            .lock()
            .memberships
            .iter()
            .find(|(u, o, _)| *u == user && *o == organization)
            .map(|(_, _, level)| *level))
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
        let count = projects.len() as u64;
        let items = projects
            .into_iter()
            .skip(page.offset as usize)
            .take(page.limit as usize)
            .collect();
        Ok(Page { count, items })
    }

    async fn user_by_email(&self, email: &Email) -> Result<Option<User>, Unexpected> {
        Ok(self
            .lock()
            .users
            .iter()
            .find(|u| u.email.eq_ignore_ascii_case(email.as_str()))
            .cloned())
    }

    async fn bootstrap(&self, plan: BootstrapPlan) -> Result<BootstrapRecord, Unexpected> {
        let mut state = self.lock();
        let existing = state
            .users
            .iter()
            .position(|u| u.email.eq_ignore_ascii_case(plan.email.as_str()));
        let user_index = match existing {
            Some(index) => index,
            None => {
                let user = new_user(&state, &plan.email, &plan.first_name);
                state.users.push(user);
                state.users.len() - 1
            }
        };
        let organization = Organization {
            id: OrganizationId(Uuid::now_v7()),
            name: plan.organization_name,
            plugins_access_level: plan.plugins_access_level,
            created_at: Utc::now(),
        };
        state.organizations.push(organization.clone());
        let user_id = state.users[user_index].id;
        state
            .memberships
            .push((user_id, organization.id, MembershipLevel::Owner));
        let project = insert_project(
            &mut state,
            organization.id,
            &plan.project_name,
            &plan.project_api_token,
        );
        insert_key(&mut state, user_id, plan.key);
        let user = &mut state.users[user_index];
        user.current_organization_id = Some(organization.id);
        user.current_project_id = Some(project.id);
        Ok(BootstrapRecord {
            user: user.clone(),
            organization,
            project,
        })
    }

    async fn create_project(
        &self,
        organization: OrganizationId,
        name: &str,
        api_token: &str,
    ) -> Result<Project, Unexpected> {
        Ok(insert_project(
            &mut self.lock(),
            organization,
            name,
            api_token,
        ))
    }

    async fn upsert_membership(
        &self,
        user: UserId,
        organization: OrganizationId,
        level: MembershipLevel,
    ) -> Result<(), Unexpected> {
        let mut state = self.lock();
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

    async fn deactivate_user(&self, user: UserId) -> Result<(), Unexpected> {
        if let Some(found) = self.lock().users.iter_mut().find(|u| u.id == user) {
            found.is_active = false;
        }
        Ok(())
    }
}

impl State {
    fn user_basic(&self, id: Option<UserId>) -> Option<UserBasic> {
        let id = id?;
        self.users.iter().find(|u| u.id == id).map(UserBasic::from)
    }

    fn flag_view(&self, stored: &StoredFlag) -> FeatureFlag {
        FeatureFlag {
            created_by: self.user_basic(stored.created_by),
            ..stored.flag.clone()
        }
    }

    fn flag_any(&self, id: FlagId) -> Option<FeatureFlag> {
        self.flags
            .iter()
            .find(|f| f.flag.id == id)
            .map(|f| self.flag_view(f))
    }

    fn live_flag_mut(&mut self, project: ProjectId, id: FlagId) -> Option<&mut StoredFlag> {
        self.flags
            .iter_mut()
            .find(|f| f.flag.id == id && f.flag.project_id == project && !f.flag.deleted)
    }

    fn key_taken(&self, project: ProjectId, key: &str, except: Option<FlagId>) -> bool {
        self.flags.iter().any(|f| {
            f.flag.project_id == project
                && !f.flag.deleted
                && f.flag.key == key
                && Some(f.flag.id) != except
        })
    }

    fn insert_flag(&mut self, new: NewFlag) -> Result<FlagId, FlagError> {
        if self.key_taken(new.project_id, &new.key, None) {
            return Err(FlagError::KeyTaken);
        }
        let id = FlagId(self.flags.len() as i32 + 1);
        self.flags.push(StoredFlag {
            flag: FeatureFlag {
                id,
                project_id: new.project_id,
                name: new.name,
                key: new.key,
                filters: new.filters,
                deleted: false,
                active: new.active,
                ensure_experience_continuity: new.ensure_experience_continuity,
                created_at: Utc::now(),
                created_by: None,
            },
            created_by: new.created_by,
        });
        Ok(id)
    }

    fn survey_view(&self, stored: &StoredSurvey) -> Survey {
        Survey {
            id: stored.id,
            project_id: stored.project_id,
            state: stored.state.clone(),
            linked_flag: stored.state.linked_flag_id.and_then(|id| self.flag_any(id)),
            targeting_flag: stored.targeting_flag_id.and_then(|id| self.flag_any(id)),
            owns_targeting_flag: stored.owns_targeting_flag,
            created_at: stored.created_at,
            created_by: self.user_basic(stored.created_by),
        }
    }

    fn name_taken(&self, project: ProjectId, name: &str, except: Uuid) -> bool {
        self.surveys
            .iter()
            .any(|s| s.project_id == project && s.state.name == name && s.id != except)
    }

    /// Applies a targeting plan to the survey at `index`, as the adapter does.
    fn apply_targeting(&mut self, index: usize, plan: TargetingPlan) -> Result<(), SurveyError> {
        let project = self.surveys[index].project_id;
        if let Some(detach) = plan.detach {
            if detach.delete
                && let Some(flag) = self.flags.iter_mut().find(|f| f.flag.id == detach.flag)
            {
                flag.flag.deleted = true;
                flag.flag.active = false;
            }
            self.surveys[index].targeting_flag_id = None;
            self.surveys[index].owns_targeting_flag = false;
        }
        match plan.attach {
            Some(Attach::New(flag)) => {
                let id = self
                    .insert_flag(flag)
                    .map_err(|e| SurveyError::Unexpected(Unexpected::new(e.to_string())))?;
                self.surveys[index].targeting_flag_id = Some(id);
                self.surveys[index].owns_targeting_flag = true;
            }
            Some(Attach::Existing(id)) => {
                self.surveys[index].targeting_flag_id = Some(id);
                self.surveys[index].owns_targeting_flag = false;
            }
            None => {}
        }
        if let Some(id) = self.surveys[index].targeting_flag_id
            && let Some(flag) = self.live_flag_mut(project, id)
        {
            if let Some(filters) = plan.filters {
                flag.flag.filters = filters;
            }
            flag.flag.active = plan.active;
        }
        Ok(())
    }
}

#[async_trait]
impl FeatureFlagRepository for InMemoryStore {
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<FeatureFlag>, Unexpected> {
        let state = self.lock();
        let mut flags: Vec<_> = state
            .flags
            .iter()
            .filter(|f| f.flag.project_id == project && !f.flag.deleted)
            .map(|f| state.flag_view(f))
            .collect();
        flags.sort_by_key(|f| std::cmp::Reverse((f.created_at, f.id)));
        let count = flags.len() as u64;
        let items = flags
            .into_iter()
            .skip(page.offset as usize)
            .take(page.limit as usize)
            .collect();
        Ok(Page { count, items })
    }

    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected> {
        let state = self.lock();
        Ok(state
            .flags
            .iter()
            .find(|f| f.flag.id == id && f.flag.project_id == project && !f.flag.deleted)
            .map(|f| state.flag_view(f)))
    }

    async fn create(&self, flag: NewFlag) -> Result<FeatureFlag, FlagError> {
        let mut state = self.lock();
        let id = state.insert_flag(flag)?;
        Ok(state.flag_any(id).expect("just inserted"))
    }

    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, FlagError> {
        let mut state = self.lock();
        if let Some(key) = &changes.key
            && state.key_taken(project, key, Some(id))
        {
            return Err(FlagError::KeyTaken);
        }
        let stored = state
            .live_flag_mut(project, id)
            .ok_or(FlagError::NotFound)?;
        let flag = &mut stored.flag;
        if let Some(name) = changes.name {
            flag.name = name;
        }
        if let Some(key) = changes.key {
            flag.key = key;
        }
        if let Some(filters) = changes.filters {
            flag.filters = filters;
        }
        if let Some(active) = changes.active {
            flag.active = active;
        }
        if let Some(ensure) = changes.ensure_experience_continuity {
            flag.ensure_experience_continuity = ensure;
        }
        if changes.deleted == Some(true) {
            flag.deleted = true;
            flag.active = false;
        }
        Ok(state.flag_any(id).expect("just updated"))
    }
}

#[async_trait]
impl SurveyRepository for InMemoryStore {
    async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<Survey>, Unexpected> {
        let state = self.lock();
        let matches = |s: &&StoredSurvey| {
            let text = format!("{}\n{}", s.state.name, s.state.description).to_lowercase();
            s.project_id == project
                && filter
                    .archived
                    .is_none_or(|archived| s.state.archived == archived)
                && filter
                    .search
                    .iter()
                    .all(|term| text.contains(&term.to_lowercase()))
        };
        let mut surveys: Vec<_> = state.surveys.iter().filter(matches).collect();
        surveys.sort_by_key(|s| std::cmp::Reverse((s.created_at, s.id)));
        let count = surveys.len() as u64;
        let items = surveys
            .into_iter()
            .skip(page.offset as usize)
            .take(page.limit as usize)
            .map(|s| state.survey_view(s))
            .collect();
        Ok(Page { count, items })
    }

    async fn get(&self, project: ProjectId, id: Uuid) -> Result<Option<Survey>, Unexpected> {
        let state = self.lock();
        Ok(state
            .surveys
            .iter()
            .find(|s| s.id == id && s.project_id == project)
            .map(|s| state.survey_view(s)))
    }

    async fn create(&self, survey: NewSurvey) -> Result<Survey, SurveyError> {
        let mut guard = self.lock();
        let mut draft = guard.clone();
        if draft.name_taken(survey.project_id, &survey.state.name, survey.id) {
            return Err(SurveyError::NameTaken);
        }
        draft.surveys.push(StoredSurvey {
            id: survey.id,
            project_id: survey.project_id,
            state: survey.state,
            targeting_flag_id: None,
            owns_targeting_flag: false,
            created_at: Utc::now(),
            created_by: survey.created_by,
        });
        let index = draft.surveys.len() - 1;
        draft.apply_targeting(index, survey.targeting)?;
        let view = draft.survey_view(&draft.surveys[index]);
        *guard = draft;
        Ok(view)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: Uuid,
        planner: &UpdatePlanner<'_>,
    ) -> Result<Survey, SurveyError> {
        let mut guard = self.lock();
        let mut draft = guard.clone();
        let index = draft
            .surveys
            .iter()
            .position(|s| s.id == id && s.project_id == project)
            .ok_or(SurveyError::NotFound)?;
        let update = planner(&draft.survey_view(&draft.surveys[index]))?;
        if draft.name_taken(project, &update.state.name, id) {
            return Err(SurveyError::NameTaken);
        }
        draft.surveys[index].state = update.state;
        draft.apply_targeting(index, update.targeting)?;
        let view = draft.survey_view(&draft.surveys[index]);
        *guard = draft;
        Ok(view)
    }

    async fn delete(&self, project: ProjectId, id: Uuid) -> Result<bool, Unexpected> {
        let mut state = self.lock();
        let Some(index) = state
            .surveys
            .iter()
            .position(|s| s.id == id && s.project_id == project)
        else {
            return Ok(false);
        };
        let survey = state.surveys.remove(index);
        if survey.owns_targeting_flag
            && let Some(flag) = survey
                .targeting_flag_id
                .and_then(|id| state.flags.iter_mut().find(|f| f.flag.id == id))
        {
            flag.flag.deleted = true;
            flag.flag.active = false;
        }
        Ok(true)
    }
}
