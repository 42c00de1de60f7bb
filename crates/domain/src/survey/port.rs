//! The port of stored surveys. Every write is one transaction: the store locks the survey and
//! the flags the write touches, lets the domain plan against them, and writes the plan as it is.

use async_trait::async_trait;

use super::{Survey, SurveyFilter, SurveyId, SurveyState, TargetingPlan};
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

/// What one write stores: the survey's next state and its targeting flag change.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyWrite {
    pub state: SurveyState,
    pub targeting: TargetingPlan,
}

/// Plans a create from the referenced flags.
pub type CreatePlanner<'a> =
    dyn Fn(&ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

/// Plans an update from the survey as stored (and locked) and the referenced flags.
pub type UpdatePlanner<'a> =
    dyn Fn(&Survey, &ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

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

    /// Locks the referenced flags, asks `planner` what to write, and inserts the survey with its
    /// targeting plan, atomically. A planner error is returned as is and nothing is written.
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

    /// Locks the survey, its flags and the referenced flags, asks `planner` what to write given
    /// them, and writes it, atomically. Concurrent updates of one survey apply one after the
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

    /// Deletes the survey and soft-deletes the targeting flag it owns, atomically; returns
    /// whether the survey existed.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn delete(&self, project: ProjectId, id: SurveyId) -> Result<bool, DomainError>;
}
