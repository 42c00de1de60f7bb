//! The early access feature port, faked: newest first, hard deletes, the flag's key read with it.

use async_trait::async_trait;
use chrono::Utc;
use uuid::Uuid;

use crate::early_access::{
    EarlyAccessChanges, EarlyAccessFeature, EarlyAccessId, EarlyAccessRepository,
    NewEarlyAccessFeature, Stage,
};
use crate::error::{DomainError, Unexpected};
use crate::feature_flag::FlagId;
use crate::ports::{Page, PageRequest};
use crate::tenancy::ProjectId;

use super::{InMemoryStore, page_of};

impl InMemoryStore {
    /// The feature as read: its flag's current key.
    fn with_flag_key(&self, feature: &EarlyAccessFeature) -> EarlyAccessFeature {
        let state = self.lock();
        let key = state
            .flag_any(feature.flag_id)
            .map(|flag| flag.key)
            .unwrap_or_default();
        EarlyAccessFeature {
            flag_key: key,
            ..feature.clone()
        }
    }

    fn features_of(&self, project: ProjectId) -> Vec<EarlyAccessFeature> {
        let features: Vec<EarlyAccessFeature> = self
            .lock()
            .early_access
            .iter()
            .filter(|f| f.project_id == project)
            .cloned()
            .collect();
        features.iter().map(|f| self.with_flag_key(f)).collect()
    }
}

#[async_trait]
impl EarlyAccessRepository for InMemoryStore {
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<EarlyAccessFeature>, Unexpected> {
        let mut features = self.features_of(project);
        features.sort_by_key(|f| std::cmp::Reverse((f.created_at, f.id.0)));
        Ok(page_of(features, page))
    }

    async fn get(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
    ) -> Result<Option<EarlyAccessFeature>, Unexpected> {
        Ok(self.features_of(project).into_iter().find(|f| f.id == id))
    }

    async fn in_stages(
        &self,
        project: ProjectId,
        stages: &[Stage],
    ) -> Result<Vec<EarlyAccessFeature>, Unexpected> {
        let mut features: Vec<EarlyAccessFeature> = self
            .features_of(project)
            .into_iter()
            .filter(|f| stages.contains(&f.stage))
            .collect();
        features.sort_by_key(|f| (f.created_at, f.id.0));
        Ok(features)
    }

    async fn count_and_linked(
        &self,
        project: ProjectId,
        flag: FlagId,
    ) -> Result<(usize, bool), Unexpected> {
        let features = self.features_of(project);
        let linked = features.iter().any(|f| f.flag_id == flag);
        Ok((features.len(), linked))
    }

    async fn create(
        &self,
        project: ProjectId,
        new: NewEarlyAccessFeature,
    ) -> Result<EarlyAccessFeature, DomainError> {
        let feature = EarlyAccessFeature {
            id: EarlyAccessId(Uuid::now_v7()),
            project_id: project,
            name: new.name,
            description: new.description,
            stage: new.stage,
            documentation_url: new.documentation_url,
            flag_id: new.flag_id,
            flag_key: String::new(),
            created_at: Utc::now(),
        };
        self.lock().early_access.push(feature.clone());
        Ok(self.with_flag_key(&feature))
    }

    async fn update(
        &self,
        project: ProjectId,
        id: EarlyAccessId,
        changes: EarlyAccessChanges,
    ) -> Result<EarlyAccessFeature, DomainError> {
        let updated = {
            let mut state = self.lock();
            let feature = state
                .early_access
                .iter_mut()
                .find(|f| f.id == id && f.project_id == project)
                .ok_or(DomainError::NotFound)?;
            if let Some(name) = changes.name {
                feature.name = name;
            }
            if let Some(description) = changes.description {
                feature.description = description;
            }
            if let Some(stage) = changes.stage {
                feature.stage = stage;
            }
            if let Some(url) = changes.documentation_url {
                feature.documentation_url = url;
            }
            feature.clone()
        };
        Ok(self.with_flag_key(&updated))
    }

    async fn delete(&self, project: ProjectId, id: EarlyAccessId) -> Result<(), DomainError> {
        let mut state = self.lock();
        let before = state.early_access.len();
        state
            .early_access
            .retain(|f| !(f.id == id && f.project_id == project));
        if state.early_access.len() == before {
            return Err(DomainError::NotFound);
        }
        Ok(())
    }
}
