//! The cohort port, faked: soft deletes, newest first.

use async_trait::async_trait;
use chrono::Utc;

use crate::cohort::{Cohort, CohortChanges, CohortId, CohortRepository, NewCohort};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic, UserId};

use super::{InMemoryStore, page_of};

#[derive(Debug, Clone)]
pub(super) struct StoredCohort {
    cohort: Cohort,
    created_by: Option<UserId>,
}

#[async_trait]
impl CohortRepository for InMemoryStore {
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<Cohort>, Unexpected> {
        let state = self.lock();
        let mut live: Vec<Cohort> = state
            .cohorts
            .iter()
            .filter(|c| c.cohort.project_id == project && !c.cohort.deleted)
            .map(|c| Cohort {
                created_by: state.user_basic(c.created_by),
                ..c.cohort.clone()
            })
            .collect();
        live.sort_by_key(|c| std::cmp::Reverse((c.created_at, c.id)));
        Ok(page_of(live, page))
    }

    async fn get(&self, project: ProjectId, id: CohortId) -> Result<Option<Cohort>, Unexpected> {
        let state = self.lock();
        Ok(state
            .cohorts
            .iter()
            .find(|c| c.cohort.id == id && c.cohort.project_id == project && !c.cohort.deleted)
            .map(|c| Cohort {
                created_by: state.user_basic(c.created_by),
                ..c.cohort.clone()
            }))
    }

    async fn live(&self, project: ProjectId) -> Result<Vec<Cohort>, Unexpected> {
        let state = self.lock();
        Ok(state
            .cohorts
            .iter()
            .filter(|c| c.cohort.project_id == project && !c.cohort.deleted)
            .map(|c| c.cohort.clone())
            .collect())
    }

    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        new: NewCohort,
    ) -> Result<Cohort, DomainError> {
        let mut state = self.lock();
        let cohort = Cohort {
            id: CohortId(state.cohorts.len() as i32 + 1),
            project_id: project,
            name: new.name,
            description: new.description,
            filters: new.filters,
            deleted: false,
            created_at: Utc::now(),
            created_by: None,
        };
        state.cohorts.push(StoredCohort {
            cohort: cohort.clone(),
            created_by: creator.as_ref().map(|user| user.id),
        });
        Ok(Cohort {
            created_by: creator,
            ..cohort
        })
    }

    async fn update(
        &self,
        project: ProjectId,
        id: CohortId,
        changes: CohortChanges,
    ) -> Result<Cohort, DomainError> {
        let mut state = self.lock();
        let stored = state
            .cohorts
            .iter_mut()
            .find(|c| c.cohort.id == id && c.cohort.project_id == project && !c.cohort.deleted)
            .ok_or(DomainError::NotFound)?;
        let cohort = &mut stored.cohort;
        if let Some(name) = changes.name {
            cohort.name = name;
        }
        if let Some(description) = changes.description {
            cohort.description = description;
        }
        if let Some(filters) = changes.filters {
            cohort.filters = filters;
        }
        if let Some(deleted) = changes.deleted {
            cohort.deleted = deleted;
        }
        Ok(cohort.clone())
    }
}
