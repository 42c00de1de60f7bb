//! Survey use cases: list, get, create, update, launch and stop, delete, copies into other
//! projects, question labels, and the activity log.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, SubsecRound as _, Utc};

use super::copy::{copy_name, name_prefix, plan_copy};
use super::lifecycle::{Switch, plan_switch};
use super::plan::{plan_create, plan_update};
use super::response_sampling::plan_sampling_write;
use super::schedule::{SCHEDULE_ROUND, plan_schedule_step, reanchored_on_resume};
use super::writes::{self, FlagsRead};
use super::{
    CopyTarget, FlagReferences, MAX_LABELLED_SURVEYS, NewSurvey, QuestionLabel, Survey,
    SurveyChanges, SurveyFilter, SurveyId, SurveyRepository, activity, question_labels,
};
use crate::access::ProjectAccess;
use crate::activity::ActivityPage;
use crate::cohort::{CohortRepository, check_named_cohorts};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, Unexpected, ValidationCode, ValidationError};
use crate::feature_flag::{FlagChanges, FlagFilters, FlagFiltersPatch};
use crate::in_transaction;
use crate::ports::PageRequest;
use crate::survey_response::{CountFilter, SurveyResponseRepository};
use crate::tenancy::{ProjectId, UserBasic, UserId};

/// A step the rounds take of a survey: [`SurveyService::step_unattended`]'s.
#[derive(Clone, Copy)]
enum Unattended {
    /// Its recurring schedule's.
    Schedule,
    /// Its response sampling's, the survey having `responses`.
    Sampling { responses: u64 },
}

pub struct SurveyService {
    surveys: Arc<dyn SurveyRepository>,
    /// Where the cohorts targeting filters name are looked up.
    cohorts: Arc<dyn CohortRepository>,
}

impl SurveyService {
    pub fn new(surveys: Arc<dyn SurveyRepository>, cohorts: Arc<dyn CohortRepository>) -> Self {
        Self { surveys, cohorts }
    }

    /// The cohorts targeting filters name must be live cohorts of `project`, as a flag's must.
    async fn check_targeting_cohorts(
        &self,
        project: ProjectId,
        filters: Option<&FlagFilters>,
    ) -> Result<(), DomainError> {
        match filters {
            Some(filters) => {
                check_named_cohorts(&*self.cohorts, project, filters, "targeting_flag_filters")
                    .await
            }
            None => Ok(()),
        }
    }

    /// Every unarchived survey of the project, newest first: what the SDKs' public feed and
    /// project-wide stats are about.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn unarchived(&self, project: ProjectId) -> Result<Vec<Survey>, Unexpected> {
        let filter = SurveyFilter {
            archived: Some(false),
            ..SurveyFilter::default()
        };
        let everything = PageRequest {
            limit: u32::MAX,
            offset: 0,
        };
        Ok(self.surveys.list(project, &filter, everything).await?.items)
    }

    /// # Errors
    /// `NotFound` for a survey of another project.
    pub async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Survey, DomainError> {
        self.surveys.get(project, id).await?.or_not_found()
    }

    /// A survey by its id alone, whatever its project; `None` when there is none.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn find(&self, id: SurveyId) -> Result<Option<Survey>, DomainError> {
        let Some(project) = self.surveys.project_of(id).await? else {
            return Ok(None);
        };
        Ok(self.surveys.get(project, id).await?)
    }

    /// Creates a survey, and its targeting flag when `targeting_flag_filters` is given, in one
    /// transaction.
    ///
    /// # Errors
    /// `Invalid` for any rule broken, including a name already used in the project.
    pub async fn create(
        &self,
        project: ProjectId,
        creator: &UserBasic,
        survey: NewSurvey,
    ) -> Result<Survey, DomainError> {
        survey
            .changes
            .response_sampling
            .check_start_date(Utc::now())?;
        let targeting = survey.changes.targeting_flag_filters.as_ref();
        self.check_targeting_cohorts(project, targeting.map(FlagFiltersPatch::filters))
            .await?;
        let references = references(&survey.changes);
        let id = SurveyId::generate();
        in_transaction!(self.surveys.begin(), |tx| {
            let read = writes::read_for_create(tx, project, references).await?;
            let write = plan_create(&survey, &read.referenced(), creator.id)?;
            writes::insert(tx, project, id, creator, write, &read).await
        })
        .map_err(|error| {
            error.conflict_as(|| name_taken("There is already a survey with this name."))
        })
    }

    /// Updates a survey and its targeting flag in one transaction, planned against the stored
    /// (locked) survey so concurrent updates cannot interleave.
    ///
    /// # Errors
    /// `NotFound`, or `Invalid` for any rule broken.
    pub async fn update(
        &self,
        project: ProjectId,
        id: SurveyId,
        editor: UserId,
        changes: SurveyChanges,
    ) -> Result<Survey, DomainError> {
        changes.response_sampling.check_start_date(Utc::now())?;
        let targeting = changes.targeting_flag_filters.as_ref();
        self.check_targeting_cohorts(project, targeting.map(FlagFiltersPatch::filters))
            .await?;
        in_transaction!(self.surveys.begin(), |tx| {
            let locked = writes::lock_for_update(tx, project, id, references(&changes)).await?;
            let mut write = plan_update(&locked.planned, &changes, &locked.referenced(), editor)?;
            write.state = reanchored_on_resume(&locked.planned.state, write.state, Utc::now())?;
            writes::update(tx, locked, write).await
        })
        .map_err(|error| {
            error.conflict_as(|| name_taken("There is already another survey with this name."))
        })
    }

    /// Launches or stops a survey as PostHog's `launch/` and `stop/` do, in one transaction with
    /// the survey locked: its date becomes now (to the microsecond, as stored) and its
    /// targeting flag follows as after a PATCH of that date. A survey launched or stopped
    /// already is answered as it is, and nothing is written.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` for PostHog's refusals (`plan_switch`).
    pub async fn switch(
        &self,
        project: ProjectId,
        id: SurveyId,
        editor: UserId,
        switch: Switch,
    ) -> Result<Survey, DomainError> {
        let now = Utc::now().trunc_subsecs(6);
        in_transaction!(self.surveys.begin(), |tx| {
            let locked =
                writes::lock_for_update(tx, project, id, FlagReferences::default()).await?;
            match plan_switch(&locked.planned, switch, now, editor)? {
                Some(write) => writes::update(tx, locked, write).await,
                None => Ok(locked.unchanged()),
            }
        })
    }

    /// The labels of the questions of the project's newest [`MAX_LABELLED_SURVEYS`] surveys,
    /// archived ones included, newest survey first.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn question_labels(
        &self,
        project: ProjectId,
    ) -> Result<Vec<QuestionLabel>, Unexpected> {
        let newest = PageRequest {
            limit: MAX_LABELLED_SURVEYS,
            offset: 0,
        };
        let surveys = self
            .surveys
            .list(project, &SurveyFilter::default(), newest)
            .await?;
        Ok(question_labels(&surveys.items))
    }

    /// Deletes a survey and the targeting flag it created; its linked flag stays, and so does
    /// its activity log, which records who deleted it.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn delete(
        &self,
        project: ProjectId,
        id: SurveyId,
        deleter: UserId,
    ) -> Result<(), DomainError> {
        in_transaction!(self.surveys.begin(), |tx| {
            let deleted = tx.delete_survey(project, id).await?.or_not_found()?;
            if let (Some(flag), true) = (deleted.targeting_flag, deleted.owned_targeting_flag) {
                // A flag deleted through the flags API meanwhile is already gone.
                tx.change_flag(project, flag, &FlagChanges::deletion())
                    .await?;
            }
            tx.log_activity(project, id, &activity::deleted(&deleted.name, deleter))
                .await?;
            Ok(())
        })
    }

    /// Moves the schedules of recurring surveys on as far as `now` asks (`schedule.rs`): each
    /// due survey, at most [`SCHEDULE_ROUND`] a call. Answers how many it moved.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn advance_schedules(&self, now: DateTime<Utc>) -> Result<usize, Unexpected> {
        let due = self.surveys.due_schedules(now, SCHEDULE_ROUND).await?;
        let mut moved = 0;
        for (project, id) in due {
            let stepped = self
                .step_unattended(project, id, Unattended::Schedule, now)
                .await?;
            moved += usize::from(stepped);
        }
        Ok(moved)
    }

    /// The daily round of response sampling (`response_sampling.rs`): each survey sampling and
    /// not yet looked at on `now`'s day, at most [`SCHEDULE_ROUND`] a call, its rollout set from
    /// its responses in `responses`. Answers how many it looked at.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn advance_response_sampling(
        &self,
        responses: &dyn SurveyResponseRepository,
        now: DateTime<Utc>,
    ) -> Result<usize, Unexpected> {
        let due = self
            .surveys
            .due_sampling(now.date_naive(), SCHEDULE_ROUND)
            .await?;
        let mut looked = 0;
        for (project, id) in due {
            let filter = CountFilter {
                survey_ids: Some(vec![id.0.to_string()]),
                exclude_archived: false,
            };
            let count = responses.counts(project, &filter).await?.values().sum();
            let stepped = self
                .step_unattended(project, id, Unattended::Sampling { responses: count }, now)
                .await?;
            looked += usize::from(stepped);
        }
        Ok(looked)
    }

    /// Writes the `step` due at `now` of a survey nobody asked to change, in a transaction of
    /// its own that locks it first (a user's update meanwhile is planned against the stepped
    /// survey, or steps it itself). Answers whether it wrote; one deleted meanwhile is passed
    /// over.
    async fn step_unattended(
        &self,
        project: ProjectId,
        id: SurveyId,
        step: Unattended,
        now: DateTime<Utc>,
    ) -> Result<bool, Unexpected> {
        let written = in_transaction!(self.surveys.begin(), |tx| {
            let locked =
                writes::lock_for_update(tx, project, id, FlagReferences::default()).await?;
            let planned = match step {
                Unattended::Schedule => plan_schedule_step(&locked.planned, now),
                Unattended::Sampling { responses } => {
                    plan_sampling_write(&locked.planned, now, responses)
                }
            };
            match planned {
                Some(write) => writes::update(tx, locked, write).await.map(|_| true),
                None => Ok(false),
            }
        });
        match written {
            Ok(stepped) => Ok(stepped),
            Err(DomainError::NotFound) => Ok(false),
            Err(DomainError::Unexpected(error)) => Err(error),
            // Nothing else comes of a write that checks no rule and takes no name.
            Err(other) => Err(Unexpected::new(other.to_string())),
        }
    }

    /// Copies `source` into each target project (each once, answered in the order given) as a
    /// draft created by `creator`, all in one transaction: every copy is made or none is. The caller
    /// has cleared every target for the key, as it clears the project in the path.
    ///
    /// # Errors
    /// `Invalid` when a copy's name was taken meanwhile; `Unexpected`.
    pub async fn duplicate_to_projects(
        &self,
        source: &Survey,
        creator: &UserBasic,
        targets: &[ProjectAccess],
    ) -> Result<Vec<Survey>, DomainError> {
        let mut seen = BTreeSet::new();
        let targets: Vec<CopyTarget> = targets
            .iter()
            .filter(|target| seen.insert(target.project.id))
            .map(|target| CopyTarget {
                project: target.project.id,
                id: SurveyId::generate(),
            })
            .collect();
        // The copies' targeting names the source's cohorts, which each project must have.
        let targeting = source.targeting_flag.as_ref().filter(|flag| !flag.deleted);
        for target in &targets {
            let filters = targeting.map(|flag| &flag.filters);
            self.check_targeting_cohorts(target.project, filters)
                .await?;
        }
        let now = Utc::now();
        let prefix = name_prefix(&source.state.name);
        in_transaction!(self.surveys.begin(), |tx| {
            // A copy makes its own flags; it plans against none.
            let none = FlagsRead::default();
            // An insert holds its project's survey count until the commit: projects are
            // written in id order, so two copies into the same projects never wait on each
            // other in a circle.
            let mut in_lock_order: Vec<&CopyTarget> = targets.iter().collect();
            in_lock_order.sort_by_key(|target| target.project.0);
            let mut copies = Vec::with_capacity(targets.len());
            for target in in_lock_order {
                let taken = tx.names_starting_with(target.project, &prefix).await?;
                let name = copy_name(&source.state.name, now, &taken);
                let write = plan_copy(source, name, creator.id)?;
                copies.push(
                    writes::insert(tx, target.project, target.id, creator, write, &none).await?,
                );
            }
            // Answered in the order asked.
            copies.sort_by_key(|copy| targets.iter().position(|target| target.id == copy.id));
            Ok(copies)
        })
        .map_err(|error| {
            error.conflict_as(|| name_taken("There is already a survey with this name."))
        })
    }

    /// The project's survey activity, or one survey's, newest first. Entries of deleted surveys
    /// stay in the project's log, but a deleted survey's own log is not found, as in PostHog.
    ///
    /// # Errors
    /// `NotFound` for a survey the project does not have.
    pub async fn activity(
        &self,
        project: ProjectId,
        survey: Option<SurveyId>,
        page: PageRequest,
    ) -> Result<ActivityPage, DomainError> {
        if let Some(id) = survey {
            self.get(project, id).await?;
        }
        Ok(self.surveys.activity(project, survey, page).await?)
    }
}

/// The flags the changes name by id.
fn references(changes: &SurveyChanges) -> FlagReferences {
    FlagReferences {
        linked: changes.linked_flag_id.value(),
        targeting: changes.targeting_flag_id.value(),
    }
}

fn name_taken(detail: &str) -> ValidationError {
    ValidationError::field("name", ValidationCode::Unique, detail)
}
