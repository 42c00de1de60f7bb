//! The survey port, faked: reads of the shared state, and the transaction primitives over a
//! `Draft`, which replaces the state only on commit.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::activity::{ActivityEntry, ActivityPage, NewActivity};
use crate::error::{DomainError, Unexpected};
use crate::feature_flag::{FeatureFlag, FlagId};
use crate::feature_flag::{FlagChanges, NewFlag};
use crate::ports::{Page, PageRequest};
use crate::survey::{
    DESCRIPTION_SIMILARITY, DESCRIPTION_WEIGHT, DeletedSurvey, FlagLock, MAX_PROJECT_SURVEYS,
    NAME_SIMILARITY, OwnedNewFlag, SearchMatch, SearchTerm, Survey, SurveyFilter, SurveyId,
    SurveyLock, SurveyRecord, SurveyRepository, SurveyRevision, SurveyState, SurveyTransaction,
    SurveyType, activity::SCOPE, sampling_due, schedule_due, writes::too_many_surveys,
};
use crate::tenancy::{ProjectId, UserId};

use super::transaction::Draft;
use super::{InMemoryStore, State, StoredSurvey, page_of};
use trigrams::{similarity, word_similarity};

mod trigrams;

/// A survey activity entry with what the adapter's table keeps beside it.
#[derive(Debug, Clone)]
pub(super) struct StoredActivity {
    project: ProjectId,
    /// `None` for an entry about the project's survey settings.
    survey: Option<SurveyId>,
    user: UserId,
    entry: ActivityEntry,
}

impl InMemoryStore {
    /// Stores `count` plain surveys (`Stored <n>`, type `api`) straight into `project`, as a
    /// project that grew before: for tests of what a project may hold.
    pub fn fill_with_surveys(&self, project: ProjectId, count: usize) {
        let mut state = self.lock();
        for n in 0..count {
            state.surveys.push(StoredSurvey {
                id: SurveyId::generate(),
                project_id: project,
                state: SurveyState::draft(format!("Stored {n}"), SurveyType::Api),
                targeting_flag_id: None,
                owns_targeting_flag: false,
                created_at: Utc::now(),
                created_by: None,
            });
        }
    }

    /// Surveys of every project in `state`s that `due` keeps, at most `limit`, by project and id:
    /// what the rounds' `due_*` reads find.
    fn due_by(&self, limit: u32, due: impl Fn(&SurveyState) -> bool) -> Vec<(ProjectId, SurveyId)> {
        let mut found: Vec<(ProjectId, SurveyId)> = self
            .lock()
            .surveys
            .iter()
            .filter(|s| due(&s.state))
            .map(|s| (s.project_id, s.id))
            .collect();
        found.sort_by_key(|(project, id)| (project.0, id.0));
        found.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        found
    }
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

    /// Logs an entry about `survey`, or (`None`) about the project's survey settings, whose
    /// `item_id` is `""`.
    pub(super) fn log_survey(
        &mut self,
        project: ProjectId,
        survey: impl Into<Option<SurveyId>>,
        activity: &NewActivity,
    ) {
        let survey = survey.into();
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
                item_id: survey.map(|id| id.0.to_string()).unwrap_or_default(),
                detail: activity.detail.clone(),
                created_at: Utc::now(),
            },
        });
    }
}

/// Whether `filter` keeps a stored survey, as `SurveyRepository::list` states.
fn kept(filter: &SurveyFilter, survey: &StoredSurvey) -> bool {
    let SurveyFilter {
        ids,
        survey_type,
        archived,
        created_by,
        status,
        search,
    } = filter;
    let state = &survey.state;
    ids.as_ref().is_none_or(|ids| ids.contains(&survey.id))
        && created_by.is_none_or(|user| survey.created_by == Some(user))
        && survey_type.is_none_or(|kind| state.survey_type == kind)
        && archived.is_none_or(|archived| state.archived == archived)
        && status.is_none_or(|status| status.holds(state))
        && search.as_ref().is_none_or(|search| {
            let term = search.term.as_str();
            match search.tier {
                SearchMatch::Exact => holds(term, state),
                SearchMatch::Similar => !holds(term, state) && similar(term, state),
            }
        })
}

/// The exact tier: the term in the name or the description, ignoring case.
fn holds(term: &str, state: &SurveyState) -> bool {
    let term = term.to_lowercase();
    state.name.to_lowercase().contains(&term) || state.description.to_lowercase().contains(&term)
}

/// The similar tier's thresholds, compared as PostgreSQL compares them (`float8`).
fn similar(term: &str, state: &SurveyState) -> bool {
    f64::from(word_similarity(term, &state.name)) > NAME_SIMILARITY
        || f64::from(word_similarity(term, &state.description)) > DESCRIPTION_SIMILARITY
}

/// A search's relevance score, summed in the adapter's order and precision.
fn score(term: &str, state: &SurveyState) -> f64 {
    f64::from(word_similarity(term, &state.name))
        + f64::from(similarity(&state.name, term))
        + f64::from(word_similarity(term, &state.description)) * DESCRIPTION_WEIGHT
}

/// The fake's revision: a digest of the whole survey, so it changes with anything the survey
/// shows (its flags' and creator's fields included).
fn revision_of(survey: &Survey) -> SurveyRevision {
    let mut hasher = DefaultHasher::new();
    format!("{survey:?}").hash(&mut hasher);
    SurveyRevision(u128::from(hasher.finish()))
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
        let mut surveys: Vec<_> = state
            .surveys
            .iter()
            .filter(|s| s.project_id == project && kept(filter, s))
            .collect();
        match &filter.search {
            None => surveys.sort_by_key(|s| std::cmp::Reverse((s.created_at, s.id))),
            Some(search) => {
                let term = search.term.as_str();
                // Names tie-break in code point order; PostgreSQL uses the database's collation,
                // which orders mixed case and punctuation otherwise.
                surveys.sort_by(|a, b| {
                    let (a, b) = (&a.state, &b.state);
                    score(term, b)
                        .total_cmp(&score(term, a))
                        .then_with(|| a.name.cmp(&b.name))
                });
            }
        }
        Ok(page_of(surveys, page).map(|s| state.survey_view(s)))
    }

    async fn due_schedules(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<(ProjectId, SurveyId)>, Unexpected> {
        Ok(self.due_by(limit, |state| schedule_due(state, now)))
    }

    async fn due_sampling(
        &self,
        today: NaiveDate,
        limit: u32,
    ) -> Result<Vec<(ProjectId, SurveyId)>, Unexpected> {
        Ok(self.due_by(limit, |state| sampling_due(state, today)))
    }

    async fn holds_term(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        term: &SearchTerm,
    ) -> Result<bool, Unexpected> {
        let filter = SurveyFilter {
            search: None,
            ..filter.clone()
        };
        Ok(self
            .lock()
            .surveys
            .iter()
            .any(|s| s.project_id == project && kept(&filter, s) && holds(term.as_str(), &s.state)))
    }

    async fn revisions(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<(SurveyId, SurveyRevision)>, Unexpected> {
        let surveys = self.list(project, filter, page).await?;
        Ok(surveys.map(|survey| (survey.id, revision_of(&survey))))
    }

    async fn revision(
        &self,
        project: ProjectId,
        id: SurveyId,
    ) -> Result<Option<SurveyRevision>, Unexpected> {
        Ok(self.get(project, id).await?.as_ref().map(revision_of))
    }

    async fn whole(
        &self,
        project: ProjectId,
        ids: &[SurveyId],
    ) -> Result<Vec<(Survey, SurveyRevision)>, Unexpected> {
        let state = self.lock();
        Ok(state
            .surveys
            .iter()
            .filter(|s| s.project_id == project && ids.contains(&s.id))
            .map(|s| {
                let survey = state.survey_view(s);
                let revision = revision_of(&survey);
                (survey, revision)
            })
            .collect())
    }

    async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Option<Survey>, Unexpected> {
        let state = self.lock();
        Ok(state
            .surveys
            .iter()
            .find(|s| s.id == id && s.project_id == project)
            .map(|s| state.survey_view(s)))
    }

    async fn project_of(&self, id: SurveyId) -> Result<Option<ProjectId>, Unexpected> {
        Ok(self
            .lock()
            .surveys
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.project_id))
    }

    async fn begin(&self) -> Result<Box<dyn SurveyTransaction>, Unexpected> {
        Ok(Box::new(Draft::begin(self).await))
    }

    async fn activity(
        &self,
        project: ProjectId,
        survey: Option<SurveyId>,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let state = self.lock();
        let logged = state
            .survey_activity
            .iter()
            .filter(|a| a.project == project && survey.is_none_or(|id| a.survey == Some(id)))
            .map(|a| (a.user, &a.entry));
        Ok(state.activity_page(logged, page))
    }
}

/// A flag as a survey shows it: without its creator.
fn shown(flag: FeatureFlag) -> FeatureFlag {
    FeatureFlag {
        created_by: None,
        ..flag
    }
}

#[async_trait]
impl SurveyTransaction for Draft {
    /// The draft is the store's only writer, so everything it reads is as good as locked.
    async fn lock_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        _lock: SurveyLock,
    ) -> Result<Option<Survey>, Unexpected> {
        let state = &self.state;
        Ok(state
            .surveys
            .iter()
            .find(|s| s.id == id && s.project_id == project)
            .map(|s| state.survey_view(s)))
    }

    async fn flags(
        &mut self,
        project: ProjectId,
        ids: &[FlagId],
        _lock: FlagLock,
    ) -> Result<Vec<FeatureFlag>, Unexpected> {
        let mut flags: Vec<FeatureFlag> = self
            .state
            .flags
            .iter()
            .filter(|f| f.flag.project_id == project && ids.contains(&f.flag.id))
            .map(|f| shown(f.flag.clone()))
            .collect();
        flags.sort_by_key(|flag| flag.id.0);
        Ok(flags)
    }

    async fn insert_flag(
        &mut self,
        project: ProjectId,
        creator: UserId,
        flag: &NewFlag,
    ) -> Result<FeatureFlag, DomainError> {
        let id = self
            .state
            .insert_flag(project, Some(creator), flag.clone())?;
        self.state
            .flag_any(id)
            .map(shown)
            .ok_or_else(|| Unexpected::new("an inserted flag vanished").into())
    }

    async fn change_flag(
        &mut self,
        project: ProjectId,
        id: FlagId,
        changes: &FlagChanges,
    ) -> Result<Option<FeatureFlag>, DomainError> {
        match self.state.change_flag(project, id, changes.clone()) {
            Ok(()) => Ok(self.state.flag_any(id).map(shown)),
            Err(DomainError::NotFound) => Ok(None),
            Err(other) => Err(other),
        }
    }

    async fn insert_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        record: SurveyRecord<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<DateTime<Utc>, DomainError> {
        let held = self
            .state
            .surveys
            .iter()
            .filter(|s| s.project_id == project)
            .count();
        if held >= MAX_PROJECT_SURVEYS {
            return Err(too_many_surveys());
        }
        if self.state.name_taken(project, &record.state.name, id) {
            return Err(DomainError::Conflict);
        }
        let created_at = Utc::now();
        self.state.surveys.push(StoredSurvey {
            id,
            project_id: project,
            state: record.state.clone(),
            targeting_flag_id: record.targeting_flag,
            owns_targeting_flag: record.owns_targeting_flag,
            created_at,
            created_by: Some(creator),
        });
        if let Some(activity) = activity {
            self.state.log_survey(project, id, activity);
        }
        Ok(created_at)
    }

    async fn insert_survey_with_flag(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        state: &SurveyState,
        flag: OwnedNewFlag<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<(DateTime<Utc>, FeatureFlag), DomainError> {
        let flag = self
            .insert_flag(project, flag.created_by, flag.flag)
            .await?;
        let record = SurveyRecord {
            state,
            targeting_flag: Some(flag.id),
            owns_targeting_flag: true,
        };
        let created_at = self
            .insert_survey(project, id, creator, record, activity)
            .await?;
        Ok((created_at, flag))
    }

    async fn update_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        record: SurveyRecord<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<(), DomainError> {
        if self.state.name_taken(project, &record.state.name, id) {
            return Err(DomainError::Conflict);
        }
        let stored = self
            .state
            .surveys
            .iter_mut()
            .find(|s| s.id == id && s.project_id == project)
            .ok_or_else(|| Unexpected::new(format!("survey {} vanished while locked", id.0)))?;
        stored.state = record.state.clone();
        stored.targeting_flag_id = record.targeting_flag;
        stored.owns_targeting_flag = record.owns_targeting_flag;
        if let Some(activity) = activity {
            self.state.log_survey(project, id, activity);
        }
        Ok(())
    }

    async fn delete_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
    ) -> Result<Option<DeletedSurvey>, Unexpected> {
        let surveys = &mut self.state.surveys;
        let Some(index) = surveys
            .iter()
            .position(|s| s.id == id && s.project_id == project)
        else {
            return Ok(None);
        };
        let survey = surveys.remove(index);
        Ok(Some(DeletedSurvey {
            name: survey.state.name,
            targeting_flag: survey.targeting_flag_id,
            owned_targeting_flag: survey.owns_targeting_flag,
        }))
    }

    async fn log_activity(
        &mut self,
        project: ProjectId,
        survey: SurveyId,
        activity: &NewActivity,
    ) -> Result<(), Unexpected> {
        self.state.log_survey(project, survey, activity);
        Ok(())
    }

    async fn names_starting_with(
        &mut self,
        project: ProjectId,
        prefix: &str,
    ) -> Result<BTreeSet<String>, Unexpected> {
        Ok(self
            .state
            .surveys
            .iter()
            .filter(|s| s.project_id == project && s.state.name.starts_with(prefix))
            .map(|s| s.state.name.clone())
            .collect())
    }
}
