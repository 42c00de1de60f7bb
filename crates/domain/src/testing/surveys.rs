//! The survey port, faked: writes apply to a copy of the state that replaces it only on success,
//! as a transaction would.

use async_trait::async_trait;
use chrono::Utc;

use crate::error::{DomainError, Unexpected};
use crate::feature_flag::FlagId;
use crate::ports::{Page, PageRequest};
use crate::survey::{
    CreatePlanner, FlagReferences, ReferencedFlags, Survey, SurveyFilter, SurveyId,
    SurveyRepository, SurveyWrite, TargetingFlag, UpdatePlanner,
};
use crate::tenancy::{ProjectId, UserId};

use super::{InMemoryStore, State, StoredSurvey};

impl State {
    fn survey_view(&self, stored: &StoredSurvey) -> Survey {
        // Deleted flags are shown; another project's never are.
        let flag = |id: Option<FlagId>| {
            id.and_then(|id| self.flag_any(id))
                .filter(|flag| flag.project_id == stored.project_id)
        };
        Survey {
            id: stored.id,
            project_id: stored.project_id,
            state: stored.state.clone(),
            linked_flag: flag(stored.state.linked_flag_id),
            targeting_flag: flag(stored.targeting_flag_id),
            owns_targeting_flag: stored.owns_targeting_flag,
            created_at: stored.created_at,
            created_by: self.user_basic(stored.created_by),
        }
    }

    fn name_taken(&self, project: ProjectId, name: &str, except: SurveyId) -> bool {
        self.surveys
            .iter()
            .any(|s| s.project_id == project && s.state.name == name && s.id != except)
    }

    /// The live flags of the project that a write names.
    fn referenced(&self, project: ProjectId, references: FlagReferences) -> ReferencedFlags {
        let live = |id: Option<FlagId>| {
            id.and_then(|id| self.flag_any(id))
                .filter(|flag| flag.project_id == project && !flag.deleted)
        };
        ReferencedFlags {
            linked: live(references.linked),
            targeting: live(references.targeting),
        }
    }

    /// Stores a planned write of the survey at `index`, executing its targeting plan as the
    /// adapter does: delete, then point at the resulting flag.
    fn store(&mut self, index: usize, write: SurveyWrite) -> Result<(), DomainError> {
        let project = self.surveys[index].project_id;
        if self.name_taken(project, &write.state.name, self.surveys[index].id) {
            return Err(DomainError::Conflict);
        }
        self.surveys[index].state = write.state;
        if let Some(deleted) = write.targeting.delete {
            self.delete_flag_if_live(project, deleted)?;
        }
        let owned = write
            .targeting
            .flag
            .as_ref()
            .is_some_and(TargetingFlag::owned);
        let flag = match write.targeting.flag {
            None => None,
            Some(TargetingFlag::New { flag, created_by }) => {
                Some(self.insert_flag(project, Some(created_by), flag)?)
            }
            Some(TargetingFlag::Existing { id, changes, .. }) => {
                // The plan only keeps flags it was shown live under the lock; anything else is
                // a broken invariant, as the adapter reports it.
                if self.live_flag_mut(project, id).is_none() {
                    let error =
                        format!("targeting flag {} is not a live flag of the project", id.0);
                    return Err(Unexpected::new(error).into());
                }
                self.change_flag(project, id, changes)?;
                Some(id)
            }
        };
        self.surveys[index].targeting_flag_id = flag;
        self.surveys[index].owns_targeting_flag = owned;
        Ok(())
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

    async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Option<Survey>, Unexpected> {
        let state = self.lock();
        Ok(state
            .surveys
            .iter()
            .find(|s| s.id == id && s.project_id == project)
            .map(|s| state.survey_view(s)))
    }

    async fn create(
        &self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        references: FlagReferences,
        planner: &CreatePlanner<'_>,
    ) -> Result<Survey, DomainError> {
        let mut guard = self.lock();
        let mut draft = guard.clone();
        let write = planner(&draft.referenced(project, references))?;
        draft.surveys.push(StoredSurvey {
            id,
            project_id: project,
            state: write.state.clone(),
            targeting_flag_id: None,
            owns_targeting_flag: false,
            created_at: Utc::now(),
            created_by: Some(creator),
        });
        let index = draft.surveys.len() - 1;
        draft.store(index, write)?;
        let view = draft.survey_view(&draft.surveys[index]);
        *guard = draft;
        Ok(view)
    }

    async fn update(
        &self,
        project: ProjectId,
        id: SurveyId,
        references: FlagReferences,
        planner: &UpdatePlanner<'_>,
    ) -> Result<Survey, DomainError> {
        let mut guard = self.lock();
        let mut draft = guard.clone();
        let index = draft
            .surveys
            .iter()
            .position(|s| s.id == id && s.project_id == project)
            .ok_or(DomainError::NotFound)?;
        let current = draft.survey_view(&draft.surveys[index]);
        let write = planner(&current, &draft.referenced(project, references))?;
        draft.store(index, write)?;
        let view = draft.survey_view(&draft.surveys[index]);
        *guard = draft;
        Ok(view)
    }

    async fn delete(&self, project: ProjectId, id: SurveyId) -> Result<bool, DomainError> {
        let mut state = self.lock();
        let Some(index) = state
            .surveys
            .iter()
            .position(|s| s.id == id && s.project_id == project)
        else {
            return Ok(false);
        };
        let survey = state.surveys.remove(index);
        if let (Some(flag), true) = (survey.targeting_flag_id, survey.owns_targeting_flag) {
            // A flag deleted through the flags API meanwhile is already gone.
            state.delete_flag_if_live(project, flag)?;
        }
        Ok(true)
    }
}
