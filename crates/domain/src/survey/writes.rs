//! The unit of work of every survey write, written once over any store's `SurveyTransaction`:
//! what to lock and read, the plan (pure: `plan`, `copy`), the primitive writes that execute it,
//! and the answer, put together from what was read and what the writes returned — nothing is
//! read back. The service passes the planners; the stores' contract tests pass fixed ones.

use std::collections::BTreeSet;

use super::{
    CopyTarget, DeletedSurvey, FlagLock, FlagReferences, OwnedNewFlag, ReferencedFlags, Survey,
    SurveyId, SurveyLock, SurveyRecord, SurveyRepository, SurveyTransaction, SurveyWrite,
    TargetingFlag, TargetingPlan,
};
use crate::activity::NewActivity;
use crate::error::{DomainError, Unexpected};
use crate::feature_flag::{FeatureFlag, FlagChanges, FlagId};
use crate::ports::conclude;
use crate::tenancy::{ProjectId, UserBasic};

/// Plans a create from the referenced flags.
pub type CreatePlanner<'a> =
    dyn Fn(&ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

/// Plans an update from the survey as stored (and locked) and the referenced flags. Creators
/// (the survey's, its flags') are left out: a plan never depends on who made what.
pub type UpdatePlanner<'a> =
    dyn Fn(&Survey, &ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

/// Plans the copy into one project from the names of that project's surveys that start with the
/// prefix the call names (copies already made by the same call included), so it can pick a free
/// name.
pub type CopyPlanner<'a> =
    dyn Fn(ProjectId, &BTreeSet<String>) -> Result<SurveyWrite, DomainError> + Send + Sync + 'a;

/// The activity entry of a deletion, from the name the deleted survey had.
pub type DeletionNote<'a> = dyn Fn(&str) -> NewActivity + Send + Sync + 'a;

/// Reads the flags `references` names (locking the targeting one, which the write may change),
/// asks `planner` what to write, and inserts the survey with its targeting plan and activity
/// entry, atomically. A planner error is returned as is and nothing is written.
///
/// # Errors
/// `Conflict` when the project has a survey of that name or a flag of a new flag's key; the
/// planner's errors; `Unexpected`.
pub async fn create(
    store: &dyn SurveyRepository,
    project: ProjectId,
    id: SurveyId,
    creator: &UserBasic,
    references: FlagReferences,
    planner: &CreatePlanner<'_>,
) -> Result<Survey, DomainError> {
    let mut tx = store.begin().await?;
    let outcome = async {
        let mut read = ReadFlags::default();
        read.lock(&mut *tx, project, [references.targeting]).await?;
        read.fill(&mut *tx, project, [references.linked]).await?;
        let write = planner(&read.referenced(references))?;
        insert(&mut *tx, project, id, creator, write, &read).await
    }
    .await;
    conclude(tx, outcome).await
}

/// Locks the survey and the targeting flags involved (its own and the referenced one), reads
/// the linked ones, asks `planner` what to write given them, and writes it, atomically. A
/// linked flag is not locked: linking a flag deleted a moment later ends as linking it a moment
/// before, since a survey shows its linked flag even once deleted. Concurrent updates of one
/// survey apply one after the other. A planner error is returned as is and nothing is written.
///
/// # Errors
/// `NotFound` (before planning), `Conflict` (a taken name), the planner's errors, `Unexpected`.
pub async fn update(
    store: &dyn SurveyRepository,
    project: ProjectId,
    id: SurveyId,
    references: FlagReferences,
    planner: &UpdatePlanner<'_>,
) -> Result<Survey, DomainError> {
    let mut tx = store.begin().await?;
    let outcome = async {
        // Adopting a flag by id locks two flags, which must go in id order: then the survey is
        // locked alone first. Otherwise its own targeting flag is locked with it.
        let lock = match references.targeting {
            Some(_) => SurveyLock::SurveyOnly,
            None => SurveyLock::WithTargetingFlag,
        };
        let current = tx
            .lock_survey(project, id, lock)
            .await?
            .ok_or(DomainError::NotFound)?;
        let own_targeting = current.targeting_flag.as_ref().map(|flag| flag.id);
        let mut read = ReadFlags::default();
        read.known(current.linked_flag.iter().cloned());
        match lock {
            SurveyLock::WithTargetingFlag => read.locked(current.targeting_flag.iter().cloned()),
            SurveyLock::SurveyOnly => {
                read.lock(&mut *tx, project, [own_targeting, references.targeting])
                    .await?;
            }
        }
        read.fill(&mut *tx, project, [references.linked]).await?;
        // The plan sees the targeting flag as locked, not as read before the lock.
        let planned = Survey {
            created_by: None,
            targeting_flag: own_targeting.and_then(|flag| read.get(flag).cloned()),
            ..current.clone()
        };
        let write = planner(&planned, &read.referenced(references))?;
        let (targeting_flag, owned) =
            store_targeting(&mut *tx, project, &write.targeting, &read).await?;
        let record = SurveyRecord {
            state: &write.state,
            targeting_flag: targeting_flag.as_ref().map(|flag| flag.id),
            owns_targeting_flag: owned,
        };
        tx.update_survey(project, id, record, write.activity.as_ref())
            .await?;
        let linked_flag = read
            .shown(&mut *tx, project, write.state.linked_flag_id)
            .await?;
        Ok(Survey {
            state: write.state,
            linked_flag,
            targeting_flag,
            owns_targeting_flag: owned,
            ..current
        })
    }
    .await;
    conclude(tx, outcome).await
}

/// Deletes the survey, soft-deletes the targeting flag it owns and logs `note`'s entry,
/// atomically; returns whether the survey existed (nothing is logged when it did not).
///
/// # Errors
/// `Unexpected` when storage fails.
pub async fn delete(
    store: &dyn SurveyRepository,
    project: ProjectId,
    id: SurveyId,
    note: &DeletionNote<'_>,
) -> Result<bool, DomainError> {
    let mut tx = store.begin().await?;
    let outcome = async {
        let Some(DeletedSurvey {
            name,
            targeting_flag,
            owned_targeting_flag,
        }) = tx.delete_survey(project, id).await?
        else {
            return Ok(false);
        };
        if let (Some(flag), true) = (targeting_flag, owned_targeting_flag) {
            // A flag deleted through the flags API meanwhile is already gone.
            tx.change_flag(project, flag, &FlagChanges::deletion())
                .await?;
        }
        tx.log_activity(project, id, &note(&name)).await?;
        Ok(true)
    }
    .await;
    conclude(tx, outcome).await
}

/// Inserts one survey per target, in order, each planned by `planner` against the names its
/// project already has that start with `name_prefix`, with its targeting plan and activity
/// entry, created by `creator`: all of them or, on any error, none.
///
/// # Errors
/// `Conflict` when a name is taken after all; the planner's errors; `Unexpected`.
pub async fn create_copies(
    store: &dyn SurveyRepository,
    targets: &[CopyTarget],
    creator: &UserBasic,
    name_prefix: &str,
    planner: &CopyPlanner<'_>,
) -> Result<Vec<Survey>, DomainError> {
    let mut tx = store.begin().await?;
    let outcome = async {
        // A copy makes its own flags; it plans against none.
        let none = ReadFlags::default();
        let mut copies = Vec::with_capacity(targets.len());
        for target in targets {
            let taken = tx.names_starting_with(target.project, name_prefix).await?;
            let write = planner(target.project, &taken)?;
            copies.push(insert(&mut *tx, target.project, target.id, creator, write, &none).await?);
        }
        Ok(copies)
    }
    .await;
    conclude(tx, outcome).await
}

/// Inserts a new survey as planned, with its targeting flag and activity entry.
async fn insert(
    tx: &mut dyn SurveyTransaction,
    project: ProjectId,
    id: SurveyId,
    creator: &UserBasic,
    write: SurveyWrite,
    read: &ReadFlags,
) -> Result<Survey, DomainError> {
    let activity = write.activity.as_ref();
    let (created_at, targeting_flag, owned) = match &write.targeting {
        // A new survey has no flag to let go of; a flag of its own goes in with it.
        TargetingPlan {
            delete: None,
            flag: Some(TargetingFlag::New { flag, created_by }),
        } => {
            let flag = OwnedNewFlag {
                flag,
                created_by: *created_by,
            };
            let (created_at, flag) = tx
                .insert_survey_with_flag(project, id, creator.id, &write.state, flag, activity)
                .await?;
            (created_at, Some(flag), true)
        }
        plan => {
            let (targeting_flag, owned) = store_targeting(tx, project, plan, read).await?;
            let record = SurveyRecord {
                state: &write.state,
                targeting_flag: targeting_flag.as_ref().map(|flag| flag.id),
                owns_targeting_flag: owned,
            };
            let created_at = tx
                .insert_survey(project, id, creator.id, record, activity)
                .await?;
            (created_at, targeting_flag, owned)
        }
    };
    let linked_flag = read.shown(tx, project, write.state.linked_flag_id).await?;
    Ok(Survey {
        id,
        project_id: project,
        state: write.state,
        linked_flag,
        targeting_flag,
        owns_targeting_flag: owned,
        created_at,
        created_by: Some(creator.clone()),
    })
}

/// Executes a plan's targeting steps: soft-delete the flag let go of, then create or change the
/// flag the survey ends up with. Returns that flag as stored and whether the survey owns it.
async fn store_targeting(
    tx: &mut dyn SurveyTransaction,
    project: ProjectId,
    plan: &TargetingPlan,
    read: &ReadFlags,
) -> Result<(Option<FeatureFlag>, bool), DomainError> {
    if let Some(deleted) = plan.delete {
        // A flag deleted meanwhile is already gone.
        tx.change_flag(project, deleted, &FlagChanges::deletion())
            .await?;
    }
    let Some(flag) = &plan.flag else {
        return Ok((None, false));
    };
    let stored = match flag {
        TargetingFlag::New { flag, created_by } => {
            tx.insert_flag(project, *created_by, flag).await?
        }
        TargetingFlag::Existing { id, changes, .. } => match read.locked_live(*id) {
            // Nothing to write when nothing changes about a live flag this write locked.
            Some(locked) if changes.is_empty() => locked.clone(),
            // The plan only keeps flags it was shown live under the lock; anything else is a
            // broken invariant.
            _ => tx
                .change_flag(project, *id, changes)
                .await?
                .ok_or_else(|| {
                    Unexpected::new(format!(
                        "targeting flag {} is not a live flag of the project",
                        id.0
                    ))
                })?,
        },
    };
    Ok((Some(stored), flag.owned()))
}

/// The flags a write has read, deleted ones included, and which of them it locked.
#[derive(Default)]
struct ReadFlags {
    flags: Vec<FeatureFlag>,
    locked: Vec<FlagId>,
}

impl ReadFlags {
    /// Flags read already (with the survey), not locked.
    fn known(&mut self, flags: impl IntoIterator<Item = FeatureFlag>) {
        self.flags.extend(flags);
    }

    /// Flags locked already (with the survey); a copy read earlier is replaced.
    fn locked(&mut self, flags: impl IntoIterator<Item = FeatureFlag>) {
        for flag in flags {
            self.flags.retain(|read| read.id != flag.id);
            self.locked.push(flag.id);
            self.flags.push(flag);
        }
    }

    /// Reads and locks these flags; a copy read earlier is replaced by the locked one.
    async fn lock(
        &mut self,
        tx: &mut dyn SurveyTransaction,
        project: ProjectId,
        ids: impl IntoIterator<Item = Option<FlagId>>,
    ) -> Result<(), Unexpected> {
        let mut ids: Vec<FlagId> = ids.into_iter().flatten().collect();
        ids.sort_unstable_by_key(|id| id.0);
        ids.dedup();
        if ids.is_empty() {
            return Ok(());
        }
        let flags = tx.flags(project, &ids, FlagLock::ForUpdate).await?;
        self.flags.retain(|flag| !ids.contains(&flag.id));
        self.flags.extend(flags);
        self.locked.extend(ids);
        Ok(())
    }

    /// Reads those of these flags not read yet, without locking them.
    async fn fill(
        &mut self,
        tx: &mut dyn SurveyTransaction,
        project: ProjectId,
        ids: impl IntoIterator<Item = Option<FlagId>>,
    ) -> Result<(), Unexpected> {
        let mut missing: Vec<FlagId> = ids
            .into_iter()
            .flatten()
            .filter(|id| self.get(*id).is_none())
            .collect();
        missing.dedup();
        if !missing.is_empty() {
            let flags = tx.flags(project, &missing, FlagLock::None).await?;
            self.flags.extend(flags);
        }
        Ok(())
    }

    fn get(&self, id: FlagId) -> Option<&FeatureFlag> {
        self.flags.iter().find(|flag| flag.id == id)
    }

    fn live(&self, id: Option<FlagId>) -> Option<FeatureFlag> {
        id.and_then(|id| self.get(id))
            .filter(|flag| !flag.deleted)
            .cloned()
    }

    /// A flag this write locked, as long as it is live.
    fn locked_live(&self, id: FlagId) -> Option<&FeatureFlag> {
        self.get(id)
            .filter(|flag| self.locked.contains(&flag.id) && !flag.deleted)
    }

    /// The referenced flags among those read that are live.
    fn referenced(&self, references: FlagReferences) -> ReferencedFlags {
        ReferencedFlags {
            linked: self.live(references.linked),
            targeting: self.live(references.targeting),
        }
    }

    /// The linked flag as the written survey shows it (even deleted), read now only if a plan
    /// named a flag the write had not read.
    async fn shown(
        &self,
        tx: &mut dyn SurveyTransaction,
        project: ProjectId,
        linked: Option<FlagId>,
    ) -> Result<Option<FeatureFlag>, Unexpected> {
        let Some(id) = linked else {
            return Ok(None);
        };
        if let Some(flag) = self.get(id) {
            return Ok(Some(flag.clone()));
        }
        Ok(tx.flags(project, &[id], FlagLock::None).await?.pop())
    }
}
