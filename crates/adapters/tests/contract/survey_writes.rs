//! Survey writes as `SurveyService` runs them — the store's primitives and the domain's steps
//! in one transaction, in the service's order — but planned by the test: the contract tests
//! drive the same sequence with fixed plans and watch what the store does with them.

use std::collections::BTreeSet;

use domain::DomainError;
use domain::activity::NewActivity;
use domain::feature_flag::FlagChanges;
use domain::survey::writes::{self, FlagsRead};
use domain::survey::{
    CopyTarget, FlagReferences, ReferencedFlags, Survey, SurveyId, SurveyRepository, SurveyWrite,
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

/// A deletion logged with `note`'s entry; whether the survey existed.
pub async fn delete(
    store: &dyn SurveyRepository,
    project: ProjectId,
    id: SurveyId,
    note: &(dyn Fn(&str) -> NewActivity + Sync),
) -> Result<bool, DomainError> {
    domain::in_transaction!(store.begin(), |tx| {
        let Some(deleted) = tx.delete_survey(project, id).await? else {
            return Ok(false);
        };
        if let (Some(flag), true) = (deleted.targeting_flag, deleted.owned_targeting_flag) {
            tx.change_flag(project, flag, &FlagChanges::deletion())
                .await?;
        }
        tx.log_activity(project, id, &note(&deleted.name)).await?;
        Ok(true)
    })
}

/// Copies, each planned by `planner` against the names its project has that start with
/// `name_prefix`.
pub async fn create_copies(
    store: &dyn SurveyRepository,
    targets: &[CopyTarget],
    creator: &UserBasic,
    name_prefix: &str,
    planner: impl Fn(ProjectId, &BTreeSet<String>) -> Result<SurveyWrite, DomainError>,
) -> Result<Vec<Survey>, DomainError> {
    domain::in_transaction!(store.begin(), |tx| {
        let none = FlagsRead::default();
        let mut copies = Vec::new();
        for target in targets {
            let taken = tx.names_starting_with(target.project, name_prefix).await?;
            let write = planner(target.project, &taken)?;
            copies
                .push(writes::insert(tx, target.project, target.id, creator, write, &none).await?);
        }
        Ok(copies)
    })
}
