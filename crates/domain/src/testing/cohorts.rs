//! The cohort port, faked: soft deletes, newest first, lists filtered in Rust; static cohorts'
//! members kept in `State::cohort_members`, written through the fake transaction (`Draft`).

use std::collections::HashSet;

use async_trait::async_trait;
use chrono::Utc;
use uuid::Uuid;

use crate::cohort::{
    Cohort, CohortChanges, CohortId, CohortListFilter, CohortPerson, CohortRepository,
    CohortTransaction, MemberCounts, NewCohort,
};
use crate::error::{DomainError, Unexpected};
use crate::ports::{Page, PageRequest};
use crate::survey_response::rows_within;
use crate::tenancy::{ProjectId, UserBasic, UserId};

use super::persons::CohortMember;
use super::transaction::Draft;
use super::{InMemoryStore, State, page_of};

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
        filter: &CohortListFilter,
        page: PageRequest,
    ) -> Result<Page<Cohort>, Unexpected> {
        let state = self.lock();
        let search = filter
            .search
            .as_ref()
            .map(|search| search.as_str().to_lowercase());
        let kept = |c: &&StoredCohort| {
            c.cohort.project_id == project
                && !c.cohort.deleted
                && filter
                    .is_static
                    .is_none_or(|is_static| c.cohort.is_static == is_static)
                && filter
                    .created_by
                    .is_none_or(|user| c.created_by == Some(user))
                && search
                    .as_ref()
                    .is_none_or(|text| c.cohort.name.to_lowercase().contains(text))
        };
        let mut live: Vec<Cohort> = state
            .cohorts
            .iter()
            .filter(kept)
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
        Ok(state.live_cohort(project, id).map(|c| Cohort {
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

    async fn member_counts(
        &self,
        project: ProjectId,
        cohorts: &[CohortId],
    ) -> Result<Vec<(CohortId, u64)>, Unexpected> {
        let state = self.lock();
        Ok(cohorts
            .iter()
            .map(|id| (*id, state.members_of(project, *id).count() as u64))
            .filter(|(_, count)| *count > 0)
            .collect())
    }

    async fn persons(
        &self,
        project: ProjectId,
        cohort: CohortId,
        page: PageRequest,
        properties_bytes: usize,
    ) -> Result<Page<CohortPerson>, Unexpected> {
        let state = self.lock();
        let mut persons: Vec<CohortPerson> = state
            .members_of(project, cohort)
            .filter_map(|member| {
                let person = state
                    .person_properties
                    .iter()
                    .find(|p| p.project == project && p.distinct_id == member.distinct_id)?;
                Some(CohortPerson {
                    uuid: person.uuid,
                    distinct_id: person.distinct_id.clone(),
                    properties: person.properties.clone(),
                })
            })
            .collect();
        persons.sort_by(|a, b| a.distinct_id.cmp(&b.distinct_id));
        let mut page = page_of(persons, page);
        let sizes = page
            .items
            .iter()
            .map(|person| serde_json::to_string(&person.properties).map_or(0, |text| text.len()));
        let kept = rows_within(sizes, properties_bytes);
        page.items.truncate(kept);
        Ok(page)
    }

    async fn begin(&self) -> Result<Box<dyn CohortTransaction>, Unexpected> {
        Ok(Box::new(Draft::begin(self).await))
    }
}

#[async_trait]
impl CohortTransaction for Draft {
    async fn insert(
        &mut self,
        project: ProjectId,
        creator: Option<UserBasic>,
        new: NewCohort,
    ) -> Result<Cohort, Unexpected> {
        let cohorts = &mut self.state.cohorts;
        let cohort = Cohort {
            id: CohortId(cohorts.len() as i32 + 1),
            project_id: project,
            name: new.name,
            description: new.description,
            filters: new.filters,
            is_static: new.is_static,
            deleted: false,
            created_at: Utc::now(),
            created_by: None,
        };
        cohorts.push(StoredCohort {
            cohort: cohort.clone(),
            created_by: creator.as_ref().map(|user| user.id),
        });
        Ok(Cohort {
            created_by: creator,
            ..cohort
        })
    }

    async fn lock(
        &mut self,
        project: ProjectId,
        id: CohortId,
    ) -> Result<Option<Cohort>, Unexpected> {
        Ok(self
            .state
            .live_cohort(project, id)
            .map(|c| c.cohort.clone()))
    }

    async fn update(
        &mut self,
        project: ProjectId,
        id: CohortId,
        changes: CohortChanges,
    ) -> Result<Cohort, DomainError> {
        let stored = self
            .state
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

    /// Transactions of the fake take turns already.
    async fn lock_members(&mut self, _: ProjectId) -> Result<(), Unexpected> {
        Ok(())
    }

    async fn member_counts(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
    ) -> Result<MemberCounts, Unexpected> {
        let members = &self.state.cohort_members;
        Ok(MemberCounts {
            cohort: self.state.members_of(project, cohort).count() as u64,
            project: members.iter().filter(|m| m.project == project).count() as u64,
        })
    }

    async fn distinct_ids_of(
        &mut self,
        project: ProjectId,
        uuids: &[Uuid],
    ) -> Result<Vec<String>, Unexpected> {
        Ok(self
            .state
            .person_properties
            .iter()
            .filter(|p| p.project == project && uuids.contains(&p.uuid))
            .map(|p| p.distinct_id.clone())
            .collect())
    }

    async fn add_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
        distinct_ids: &[String],
    ) -> Result<u64, Unexpected> {
        let mut listed: HashSet<String> = self
            .state
            .members_of(project, cohort)
            .map(|m| m.distinct_id.clone())
            .collect();
        let mut added = 0;
        for distinct_id in distinct_ids {
            if listed.insert(distinct_id.clone()) {
                self.state.cohort_members.push(CohortMember {
                    project,
                    cohort,
                    distinct_id: distinct_id.clone(),
                });
                added += 1;
            }
        }
        Ok(added)
    }

    async fn remove_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
        distinct_ids: &[String],
    ) -> Result<(), Unexpected> {
        self.state.cohort_members.retain(|m| {
            !(m.project == project && m.cohort == cohort && distinct_ids.contains(&m.distinct_id))
        });
        Ok(())
    }

    async fn clear_members(
        &mut self,
        project: ProjectId,
        cohort: CohortId,
    ) -> Result<(), Unexpected> {
        self.state
            .cohort_members
            .retain(|m| !(m.project == project && m.cohort == cohort));
        Ok(())
    }
}

impl State {
    fn live_cohort(&self, project: ProjectId, id: CohortId) -> Option<&StoredCohort> {
        self.cohorts
            .iter()
            .find(|c| c.cohort.id == id && c.cohort.project_id == project && !c.cohort.deleted)
    }

    fn members_of(
        &self,
        project: ProjectId,
        cohort: CohortId,
    ) -> impl Iterator<Item = &CohortMember> {
        self.cohort_members
            .iter()
            .filter(move |m| m.project == project && m.cohort == cohort)
    }
}
