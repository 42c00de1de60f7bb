//! The feature flag port, faked: live keys unique per project, soft deletes.

use async_trait::async_trait;
use chrono::Utc;

use crate::error::{DomainError, Unexpected};
use crate::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagId, NewFlag, ServingFlags,
};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic, UserId};

use super::{InMemoryStore, State, StoredFlag, page_of};

impl State {
    pub(super) fn flag_view(&self, stored: &StoredFlag) -> FeatureFlag {
        FeatureFlag {
            created_by: self.user_basic(stored.created_by),
            ..stored.flag.clone()
        }
    }

    pub(super) fn flag_any(&self, id: FlagId) -> Option<FeatureFlag> {
        self.flags
            .iter()
            .find(|f| f.flag.id == id)
            .map(|f| self.flag_view(f))
    }

    /// A flag as stored, without its creator (what a write returns).
    fn stored_flag(&self, id: FlagId) -> &StoredFlag {
        self.flags
            .iter()
            .find(|f| f.flag.id == id)
            .expect("a flag just written")
    }

    pub(super) fn live_flag_mut(
        &mut self,
        project: ProjectId,
        id: FlagId,
    ) -> Option<&mut StoredFlag> {
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

    pub(super) fn insert_flag(
        &mut self,
        project: ProjectId,
        creator: Option<UserId>,
        new: NewFlag,
    ) -> Result<FlagId, DomainError> {
        if self.key_taken(project, new.key.as_str(), None) {
            return Err(DomainError::Conflict);
        }
        let id = FlagId(self.flags.len() as i32 + 1);
        self.flags.push(StoredFlag {
            flag: FeatureFlag {
                id,
                project_id: project,
                name: new.name,
                key: new.key.into_string(),
                filters: new.filters,
                deleted: false,
                active: new.active,
                ensure_experience_continuity: new.ensure_experience_continuity,
                is_remote_configuration: new.is_remote_configuration,
                created_at: Utc::now(),
                created_by: None,
            },
            created_by: creator,
        });
        Ok(id)
    }

    /// Applies the changes, as given, to a live flag of the project. A flag out of reach is
    /// `NotFound` whatever the changes, as PostgreSQL's `UPDATE … WHERE` finds no row to check.
    pub(super) fn change_flag(
        &mut self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<(), DomainError> {
        if self.live_flag_mut(project, id).is_none() {
            return Err(DomainError::NotFound);
        }
        if let Some(key) = &changes.key
            && self.key_taken(project, key.as_str(), Some(id))
        {
            return Err(DomainError::Conflict);
        }
        let stored = self
            .live_flag_mut(project, id)
            .ok_or(DomainError::NotFound)?;
        let flag = &mut stored.flag;
        if let Some(name) = changes.name {
            flag.name = name;
        }
        if let Some(key) = changes.key {
            flag.key = key.into_string();
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
        if let Some(remote) = changes.is_remote_configuration {
            flag.is_remote_configuration = remote;
        }
        if let Some(deleted) = changes.deleted {
            flag.deleted = deleted;
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
        Ok(page_of(flags, page))
    }

    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected> {
        let state = self.lock();
        Ok(state
            .flags
            .iter()
            .find(|f| f.flag.id == id && f.flag.project_id == project && !f.flag.deleted)
            .map(|f| state.flag_view(f)))
    }

    async fn get_by_key(
        &self,
        project: ProjectId,
        key: &str,
    ) -> Result<Option<FeatureFlag>, Unexpected> {
        let state = self.lock();
        Ok(state
            .flags
            .iter()
            .find(|f| f.flag.key == key && f.flag.project_id == project && !f.flag.deleted)
            .map(|f| state.flag_view(f)))
    }

    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        flag: NewFlag,
    ) -> Result<FeatureFlag, DomainError> {
        let mut state = self.lock();
        let id = state.insert_flag(project, creator.as_ref().map(|user| user.id), flag)?;
        Ok(FeatureFlag {
            created_by: creator,
            ..state.stored_flag(id).flag.clone()
        })
    }

    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, DomainError> {
        let mut state = self.lock();
        state.change_flag(project, id, changes)?;
        Ok(state.stored_flag(id).flag.clone())
    }

    async fn active(&self, project: ProjectId) -> Result<Vec<FeatureFlag>, Unexpected> {
        let state = self.lock();
        let mut flags: Vec<_> = state
            .flags
            .iter()
            .filter(|f| f.flag.project_id == project && !f.flag.deleted && f.flag.active)
            .map(|f| f.flag.clone())
            .collect();
        flags.sort_by_key(|f| f.id);
        Ok(flags)
    }

    async fn serving(
        &self,
        project: ProjectId,
        max_bytes: u64,
    ) -> Result<ServingFlags, Unexpected> {
        let flags = self.active(project).await?;
        let bytes: usize = flags.iter().map(|flag| flag.filters.weight()).sum();
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        Ok(if bytes > max_bytes {
            ServingFlags::TooLarge(bytes)
        } else {
            ServingFlags::Loaded(flags)
        })
    }
}
