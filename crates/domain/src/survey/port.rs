//! The port of stored surveys and their activity log: reads, and a transaction of primitive
//! operations that `SurveyService` composes into each write (through the steps in
//! `survey::writes`), so every store runs the same sequence.

use std::collections::BTreeSet;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};

use super::{
    SearchTerm, Survey, SurveyFilter, SurveyId, SurveyRevision, SurveyState, TargetingPlan,
};
use crate::activity::{ActivityPage, NewActivity};
use crate::error::{DomainError, Unexpected};
use crate::feature_flag::{FeatureFlag, FlagChanges, FlagId, NewFlag};
use crate::ports::{Page, PageRequest, Transaction};
use crate::tenancy::{ProjectId, UserId};

/// The flags a write names by id (`linked_flag_id`, `targeting_flag_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlagReferences {
    pub linked: Option<FlagId>,
    pub targeting: Option<FlagId>,
}

/// Those flags as found among the project's live flags, inside the write's transaction
/// (`None`: no such live flag).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReferencedFlags {
    pub linked: Option<FeatureFlag>,
    pub targeting: Option<FeatureFlag>,
}

/// What one write stores: the survey's next state, its targeting flag change, and what the
/// activity log records about it.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyWrite {
    pub state: SurveyState,
    pub targeting: TargetingPlan,
    /// Logged for the survey in the same transaction; `None` logs nothing (an update that
    /// changed nothing, as PostHog skips those).
    pub activity: Option<NewActivity>,
}

/// Where one copy of a survey goes, and the id it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyTarget {
    pub project: ProjectId,
    pub id: SurveyId,
}

/// What a survey row holds besides its id, project and creator: its state and the targeting flag
/// it points at.
#[derive(Debug, Clone, Copy)]
pub struct SurveyRecord<'a> {
    pub state: &'a SurveyState,
    pub targeting_flag: Option<FlagId>,
    /// Whether the survey owns that flag (created it, and deletes it when it goes).
    pub owns_targeting_flag: bool,
}

/// A targeting flag inserted with the survey that owns it
/// ([`SurveyTransaction::insert_survey_with_flag`]).
#[derive(Debug, Clone, Copy)]
pub struct OwnedNewFlag<'a> {
    pub flag: &'a NewFlag,
    pub created_by: UserId,
}

/// What a deleted survey left behind: what its deletion still has to clean up and log.
#[derive(Debug, Clone, PartialEq)]
pub struct DeletedSurvey {
    pub name: String,
    pub targeting_flag: Option<FlagId>,
    pub owned_targeting_flag: bool,
}

/// The primitive reads and writes of survey use cases, inside one transaction. Stores only
/// execute them; what to read, lock and write, and in which order, is `SurveyService`'s.
#[async_trait]
pub trait SurveyTransaction: Transaction {
    /// The project's survey, whole (its flags as a survey shows them, its creator), locked
    /// until the transaction ends so concurrent writes of it apply one after the other; with
    /// [`SurveyLock::WithTargetingFlag`], its targeting flag is locked after it and shown as
    /// locked (a write that committed while this waited is seen).
    async fn lock_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        lock: SurveyLock,
    ) -> Result<Option<Survey>, Unexpected>;

    /// The project's flags among `ids`, deleted ones included, without their creators. `Lock`
    /// keeps them locked until the transaction ends (always in id order, so two writes locking
    /// the same flags cannot deadlock); a linked flag need not be, as a survey shows its linked
    /// flag even once deleted.
    async fn flags(
        &mut self,
        project: ProjectId,
        ids: &[FlagId],
        lock: FlagLock,
    ) -> Result<Vec<FeatureFlag>, Unexpected>;

    /// Inserts a flag and returns it as stored, without its creator.
    ///
    /// # Errors
    /// `Conflict` when the project has a live flag with that key; `Unexpected`.
    async fn insert_flag(
        &mut self,
        project: ProjectId,
        creator: UserId,
        flag: &NewFlag,
    ) -> Result<FeatureFlag, DomainError>;

    /// Applies `changes` to a live flag of the project and returns it as stored, without its
    /// creator; `None` when there is no such live flag.
    ///
    /// # Errors
    /// `Conflict` when a change of key collides; `Unexpected`.
    async fn change_flag(
        &mut self,
        project: ProjectId,
        id: FlagId,
        changes: &FlagChanges,
    ) -> Result<Option<FeatureFlag>, DomainError>;

    /// Inserts a survey and logs `activity` for it, if any; returns when it was created.
    ///
    /// # Errors
    /// `Invalid` ([`too_many_surveys`](super::writes::too_many_surveys)) when the project holds
    /// [`MAX_PROJECT_SURVEYS`](super::MAX_PROJECT_SURVEYS) already; `Conflict` when it has a
    /// survey of that name; `Unexpected`.
    async fn insert_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        record: SurveyRecord<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<DateTime<Utc>, DomainError>;

    /// Inserts a survey, a targeting flag it owns and the survey's `activity` entry, if any,
    /// at once: a create with targeting filters writes them in one round trip, not two. Returns
    /// when the survey was created and the flag as stored, without its creator.
    ///
    /// # Errors
    /// `Invalid` past the project's bound, as [`Self::insert_survey`]; `Conflict` when the
    /// project has a survey of that name or a live flag of that key; `Unexpected`.
    async fn insert_survey_with_flag(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        state: &SurveyState,
        flag: OwnedNewFlag<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<(DateTime<Utc>, FeatureFlag), DomainError>;

    /// Overwrites a (locked) survey's record and logs `activity` for it, if any.
    ///
    /// # Errors
    /// `Conflict` when another survey of the project has that name; `Unexpected`.
    async fn update_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
        record: SurveyRecord<'_>,
        activity: Option<&NewActivity>,
    ) -> Result<(), DomainError>;

    /// Deletes the project's survey; `None` when it has no such survey.
    async fn delete_survey(
        &mut self,
        project: ProjectId,
        id: SurveyId,
    ) -> Result<Option<DeletedSurvey>, Unexpected>;

    /// Logs an entry for a survey (which may be gone: entries outlive it).
    async fn log_activity(
        &mut self,
        project: ProjectId,
        survey: SurveyId,
        activity: &NewActivity,
    ) -> Result<(), Unexpected>;

    /// The names of the project's surveys that start with `prefix` (matched literally), the
    /// ones this transaction wrote included.
    async fn names_starting_with(
        &mut self,
        project: ProjectId,
        prefix: &str,
    ) -> Result<BTreeSet<String>, Unexpected>;
}

/// What [`SurveyTransaction::lock_survey`] locks besides the survey. Every writer locks a survey
/// before its flags, and several flags in id order, so two writes cannot deadlock: a write that
/// locks another flag too locks the survey alone and then all its flags at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurveyLock {
    /// The survey only; its flags are read as they were when the read began.
    SurveyOnly,
    /// The survey, then its targeting flag, in the same round trip: for a write that locks no
    /// other flag.
    WithTargetingFlag,
}

/// Whether [`SurveyTransaction::flags`] locks what it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagLock {
    /// Locked until the transaction ends: flags the write may change.
    ForUpdate,
    /// Only read.
    None,
}

#[async_trait]
pub trait SurveyRepository: Send + Sync {
    /// The project's surveys that `filter` keeps, with their flags and creators, in a fixed
    /// number of queries; the filters apply before paging, and `count` is of all they keep.
    ///
    /// What each filter keeps: `ids`, the surveys among them; `survey_type`, `archived`,
    /// `created_by`, those with that value; `status`, those [`SurveyStatus::holds`] of. A
    /// `search` in the exact tier keeps the surveys whose name or description contains the
    /// term, ignoring case (`%`, `_` and `\` are ordinary characters); in the similar tier,
    /// those that do not but whose `word_similarity(term, name)` is above
    /// [`NAME_SIMILARITY`] or `word_similarity(term, description)` above
    /// [`DESCRIPTION_SIMILARITY`] (pg_trgm's, `float4`, compared as `float8`).
    ///
    /// Order: newest first (ties by id, descending); with a `search`, by score descending, then
    /// name, the score being `word_similarity(term, name) + similarity(name, term) +`
    /// [`DESCRIPTION_WEIGHT`]` × word_similarity(term, description)`, summed as `float8`.
    ///
    /// [`SurveyStatus::holds`]: super::SurveyStatus::holds
    /// [`NAME_SIMILARITY`]: super::NAME_SIMILARITY
    /// [`DESCRIPTION_SIMILARITY`]: super::DESCRIPTION_SIMILARITY
    /// [`DESCRIPTION_WEIGHT`]: super::DESCRIPTION_WEIGHT
    async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<Survey>, Unexpected>;

    /// Surveys of every project whose schedule has a step due at `now` (a running recurring
    /// survey whose next iteration has begun, or whose last one has ended), at most `limit` of
    /// them, by project and id.
    async fn due_schedules(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<(ProjectId, SurveyId)>, Unexpected>;

    /// Surveys of every project the daily round of response sampling looks at on `today`:
    /// sampling ([`ResponseSampling::is_on`]), not stopped, and not looked at on `today` yet
    /// (`checked_on` before it, or never); at most `limit` of them, by project and id.
    ///
    /// [`ResponseSampling::is_on`]: super::ResponseSampling::is_on
    async fn due_sampling(
        &self,
        today: NaiveDate,
        limit: u32,
    ) -> Result<Vec<(ProjectId, SurveyId)>, Unexpected>;

    /// Whether any of the project's surveys that `filter` keeps (its `search` left out) holds
    /// `term` in its name or description, ignoring case: what decides a search's tier
    /// ([`SurveySearch::among`](super::SurveySearch::among)).
    async fn holds_term(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        term: &SearchTerm,
    ) -> Result<bool, Unexpected>;

    async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Option<Survey>, Unexpected>;

    /// [`Self::list`] as the revisions of the page's surveys, in the page's order: a read that
    /// keeps renderings asks this, then loads whole only the surveys it holds none of.
    async fn revisions(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<(SurveyId, SurveyRevision)>, Unexpected>;

    /// The revision of the project's survey; `None` when it has no such survey.
    async fn revision(
        &self,
        project: ProjectId,
        id: SurveyId,
    ) -> Result<Option<SurveyRevision>, Unexpected>;

    /// The project's surveys among `ids`, whole, each with the revision read with it, in any
    /// order (one deleted meanwhile is missing).
    async fn whole(
        &self,
        project: ProjectId,
        ids: &[SurveyId],
    ) -> Result<Vec<(Survey, SurveyRevision)>, Unexpected>;

    /// The project a survey belongs to, whichever it is: only for what a survey's id alone
    /// opens (its hosted page).
    async fn project_of(&self, id: SurveyId) -> Result<Option<ProjectId>, Unexpected>;

    /// Opens a transaction for one write.
    async fn begin(&self) -> Result<Box<dyn SurveyTransaction>, Unexpected>;

    /// The project's survey activity, or one survey's (`survey`), newest first (ties by id,
    /// descending). Entries outlive their survey.
    async fn activity(
        &self,
        project: ProjectId,
        survey: Option<SurveyId>,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected>;
}
