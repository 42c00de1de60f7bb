//! Survey creates and updates through the domain's own steps (`domain::survey::writes`, the
//! functions `SurveyService` calls), with the plan the test gives instead of one planned from a
//! request, so the contract tests watch what the store does with fixed plans. Deletes go
//! through the service itself (`Stores::delete_survey`).

use domain::DomainError;
use domain::survey::writes;
use domain::survey::{
    FlagReferences, ReferencedFlags, Survey, SurveyId, SurveyRepository, SurveyState, SurveyWrite,
    TargetingPlan,
};
use domain::tenancy::{ProjectId, UserBasic};

/// A create: reads the referenced flags, plans with `planner`, inserts.
pub async fn create(
    store: &dyn SurveyRepository,
    project: ProjectId,
    id: SurveyId,
    creator: &UserBasic,
    references: FlagReferences,
    planner: &(dyn Fn(&ReferencedFlags) -> Result<SurveyWrite, DomainError> + Sync),
) -> Result<Survey, DomainError> {
    domain::in_transaction!(store.begin(), |tx| {
        let read = writes::read_for_create(tx, project, references).await?;
        let write = planner(&read.referenced())?;
        writes::insert(tx, project, id, creator, write, &read).await
    })
}

/// A create of a survey in `state` as it is (no flags, no activity), by `creator`.
pub async fn create_as_is(
    store: &dyn SurveyRepository,
    project: ProjectId,
    creator: &UserBasic,
    state: SurveyState,
) -> SurveyId {
    let planner = move |_: &ReferencedFlags| {
        Ok(SurveyWrite {
            state: state.clone(),
            targeting: TargetingPlan::default(),
            activity: None,
        })
    };
    let id = SurveyId::generate();
    create(
        store,
        project,
        id,
        creator,
        FlagReferences::default(),
        &planner,
    )
    .await
    .expect("creating a survey");
    id
}

/// An update: locks, plans with `planner` against the survey as locked, writes.
pub async fn update(
    store: &dyn SurveyRepository,
    project: ProjectId,
    id: SurveyId,
    references: FlagReferences,
    planner: &(dyn Fn(&Survey, &ReferencedFlags) -> Result<SurveyWrite, DomainError> + Sync),
) -> Result<Survey, DomainError> {
    domain::in_transaction!(store.begin(), |tx| {
        let locked = writes::lock_for_update(tx, project, id, references).await?;
        let write = planner(&locked.planned, &locked.referenced())?;
        writes::update(tx, locked, write).await
    })
}
