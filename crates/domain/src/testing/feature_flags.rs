//! The feature flag port, faked: live keys unique per project, soft deletes.

use async_trait::async_trait;
use chrono::Utc;

use crate::error::Unexpected;
use crate::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagError, FlagId, NewFlag,
};
use crate::ports::{Page, PageRequest};
use crate::tenancy::ProjectId;

use super::{InMemoryStore, State, StoredFlag};

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

    pub(super) fn insert_flag(&mut self, new: NewFlag) -> Result<FlagId, FlagError> {
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
