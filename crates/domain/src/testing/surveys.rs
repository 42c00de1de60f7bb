//! The survey port, faked: writes apply to a copy of the state that replaces it only on success,
//! as a transaction would.

use async_trait::async_trait;
use chrono::Utc;
use uuid::Uuid;

use crate::error::Unexpected;
use crate::ports::{Page, PageRequest};
use crate::survey::{
    Attach, NewSurvey, Survey, SurveyError, SurveyFilter, SurveyRepository, TargetingPlan,
    UpdatePlanner,
};
use crate::tenancy::ProjectId;

use super::{InMemoryStore, State, StoredSurvey};

impl State {
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
