//! The port of stored surveys and their activity log. Every write is one transaction: the store
//! locks the survey and the flags the write may change, lets the domain plan against them, and
//! writes the plan as it is, its activity entry included.

use std::collections::BTreeSet;

use async_trait::async_trait;

use super::{Survey, SurveyFilter, SurveyId, SurveyState, TargetingPlan};
use crate::activity::{ActivityPage, NewActivity};
use crate::error::{DomainError, Unexpected};
use crate::feature_flag::{FeatureFlag, FlagId};
use crate::ports::{Page, PageRequest};
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

/// Plans a create from the referenced flags.
pub type CreatePlanner<'a> =
    dyn Fn(&ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

/// Plans an update from the survey as stored (and locked) and the referenced flags. Creators
/// (the survey's, its flags') may be left out: a plan never depends on who made what.
pub type UpdatePlanner<'a> =
    dyn Fn(&Survey, &ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

/// Plans the copy into one project from the names of that project's surveys that start with the
/// prefix the call names (copies already made by the same call included), so it can pick a free
/// name.
pub type CopyPlanner<'a> =
    dyn Fn(ProjectId, &BTreeSet<String>) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

/// The activity entry of a deletion, from the name the deleted survey had.
pub type DeletionNote<'a> = dyn Fn(&str) -> NewActivity + Send + Sync + 'a;

#[async_trait]
pub trait SurveyRepository: Send + Sync {
    /// The project's surveys matching `filter`, newest first (ties by id, descending), with
    /// their flags and creators, in a fixed number of queries.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<Survey>, Unexpected>;

    /// # Errors
    /// `Unexpected` when storage fails.
    async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Option<Survey>, Unexpected>;

    /// Reads the referenced flags (locking the targeting one, which the write may change),
    /// asks `planner` what to write, and inserts the survey with its targeting plan and
    /// activity entry, atomically. A planner error is returned as is and nothing is written.
    ///
    /// # Errors
    /// `Conflict` when the project has a survey of that name; the planner's errors;
    /// `Unexpected`.
    async fn create(
        &self,
        project: ProjectId,
        id: SurveyId,
        creator: UserId,
        references: FlagReferences,
        planner: &CreatePlanner<'_>,
    ) -> Result<Survey, DomainError>;

    /// Locks the survey and the targeting flags involved (its own and the referenced one),
    /// reads the linked ones, asks `planner` what to write given them, and writes it,
    /// atomically. A linked flag is not locked: linking a flag deleted a moment later ends as
    /// linking it a moment before, since a survey shows its linked flag even once deleted. Concurrent updates of one survey apply one after the
    /// other. A planner error is returned as is and nothing is written.
    ///
    /// # Errors
    /// `NotFound`, `Conflict` (a taken name), the planner's errors, `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: SurveyId,
        references: FlagReferences,
        planner: &UpdatePlanner<'_>,
    ) -> Result<Survey, DomainError>;

    /// Deletes the survey, soft-deletes the targeting flag it owns and logs `note`'s entry,
    /// atomically; returns whether the survey existed (nothing is logged when it did not).
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn delete(
        &self,
        project: ProjectId,
        id: SurveyId,
        note: &DeletionNote<'_>,
    ) -> Result<bool, DomainError>;

    /// Inserts one survey per target, in order, each planned by `planner` against the names its
    /// project already has that start with `name_prefix`, with its targeting plan and activity
    /// entry, created by `creator`: all of them or, on any error, none.
    ///
    /// # Errors
    /// `Conflict` when a name is taken after all; the planner's errors; `Unexpected`.
    async fn create_copies(
        &self,
        targets: &[CopyTarget],
        creator: UserId,
        name_prefix: &str,
        planner: &CopyPlanner<'_>,
    ) -> Result<Vec<Survey>, DomainError>;

    /// The project's survey activity, or one survey's (`survey`), newest first (ties by id,
    /// descending). Entries outlive their survey.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn activity(
        &self,
        project: ProjectId,
        survey: Option<SurveyId>,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected>;
}
