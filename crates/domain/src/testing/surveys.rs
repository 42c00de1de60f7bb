//! The survey port, faked: writes apply to a copy of the state that replaces it only on success,
//! as a transaction would, activity entries included.

use std::collections::BTreeSet;

use async_trait::async_trait;
use chrono::Utc;
use uuid::Uuid;

use crate::activity::{ActivityEntry, ActivityPage, NewActivity};
use crate::error::{DomainError, Unexpected};
use crate::feature_flag::{FeatureFlag, FlagId};
use crate::ports::{Page, PageRequest};
use crate::survey::{
    CopyPlanner, CopyTarget, CreatePlanner, DeletionNote, FlagReferences, ReferencedFlags, Survey,
    SurveyFilter, SurveyId, SurveyRepository, SurveyWrite, TargetingFlag, UpdatePlanner,
    activity::SCOPE,
};
use crate::tenancy::{ProjectId, UserId};

use super::{InMemoryStore, State, StoredSurvey};

/// A survey activity entry with what the adapter's table keeps beside it.
#[derive(Debug, Clone)]
pub(super) struct StoredActivity {
    project: ProjectId,
    survey: SurveyId,
    user: UserId,
    entry: ActivityEntry,
}

impl State {
    fn survey_view(&self, stored: &StoredSurvey) -> Survey {
        // Deleted flags are shown; another project's never are; none with its creator.
        let flag = |id: Option<FlagId>| {
            id.and_then(|id| self.flag_any(id))
                .filter(|flag| flag.project_id == stored.project_id)
                .map(|flag| FeatureFlag {
                    created_by: None,
                    ..flag
                })
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

    fn log_survey(&mut self, project: ProjectId, survey: SurveyId, activity: &NewActivity) {
        self.survey_activity.push(StoredActivity {
            project,
            survey,
            user: activity.user,
            entry: ActivityEntry {
                id: Uuid::now_v7(),
                // Filled in when read, as the adapter joins the user then.
                user: None,
                scope: SCOPE.into(),
                activity: activity.activity.into(),
                item_id: survey.0.to_string(),
                detail: activity.detail.clone(),
                created_at: Utc::now(),
            },
        });
    }

    /// Inserts a new survey and stores `write` over it; returns its index.
    fn insert_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        write: SurveyWrite,
    ) -> Result<usize, DomainError> {
        self.surveys.push(StoredSurvey {
            id,
            project_id: project,
            state: write.state.clone(),
            targeting_flag_id: None,
            owns_targeting_flag: false,
            created_at: Utc::now(),
            created_by: Some(creator),
        });
        let index = self.surveys.len() - 1;
        self.store(index, write)?;
        Ok(index)
    }

    /// Stores a planned write of the survey at `index`, executing its targeting plan as the
    /// adapter does: delete, then point at the resulting flag; then logs its activity.
    fn store(&mut self, index: usize, write: SurveyWrite) -> Result<(), DomainError> {
        let (project, id) = (self.surveys[index].project_id, self.surveys[index].id);
        if self.name_taken(project, &write.state.name, id) {
            return Err(DomainError::Conflict);
        }
        if let Some(activity) = &write.activity {
            self.log_survey(project, id, activity);
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
        let index = draft.insert_survey(project, id, creator, write)?;
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

    async fn delete(
        &self,
        project: ProjectId,
        id: SurveyId,
        note: &DeletionNote<'_>,
    ) -> Result<bool, DomainError> {
        let mut guard = self.lock();
        let mut state = guard.clone();
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
        state.log_survey(project, id, &note(&survey.state.name));
        *guard = state;
        Ok(true)
    }

    async fn create_copies(
        &self,
        targets: &[CopyTarget],
        creator: UserId,
        name_prefix: &str,
        planner: &CopyPlanner<'_>,
    ) -> Result<Vec<Survey>, DomainError> {
        let mut guard = self.lock();
        let mut draft = guard.clone();
        let mut copies = Vec::with_capacity(targets.len());
        for target in targets {
            let taken: BTreeSet<String> = draft
                .surveys
                .iter()
                .filter(|s| s.project_id == target.project && s.state.name.starts_with(name_prefix))
                .map(|s| s.state.name.clone())
                .collect();
            let write = planner(target.project, &taken)?;
            let index = draft.insert_survey(target.project, target.id, creator, write)?;
            copies.push(draft.survey_view(&draft.surveys[index]));
        }
        *guard = draft;
        Ok(copies)
    }

    async fn activity(
        &self,
        project: ProjectId,
        survey: Option<SurveyId>,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let state = self.lock();
        let mut entries: Vec<ActivityEntry> = state
            .survey_activity
            .iter()
            .filter(|a| a.project == project && survey.is_none_or(|id| a.survey == id))
            .map(|a| ActivityEntry {
                user: state
                    .users
                    .iter()
                    .find(|u| u.id == a.user)
                    .map(|u| (u.first_name.clone(), u.email.clone())),
                ..a.entry.clone()
            })
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
        let total = entries.len() as u64;
        Ok(ActivityPage {
            entries: entries
                .into_iter()
                .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
                .take(page.limit as usize)
                .collect(),
            total,
        })
    }
}
