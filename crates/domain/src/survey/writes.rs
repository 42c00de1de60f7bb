//! The steps every survey write is made of, over any store's `SurveyTransaction`: read and
//! lock what a write plans against (`read_for_create`, `lock_for_update`), then write the plan
//! (`insert`, `update`) and answer from what was read and what the writes returned — nothing
//! is read back. The service runs them in its use cases, in order, around the pure planners
//! (`plan`, `copy`); the stores' contract tests run them around fixed plans.

use super::{
    FlagLock, FlagReferences, OwnedNewFlag, ReferencedFlags, Survey, SurveyId, SurveyLock,
    SurveyRecord, SurveyTransaction, SurveyWrite, TargetingFlag, TargetingPlan,
};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, Unexpected, ValidationError};
use crate::feature_flag::{FeatureFlag, FlagChanges, FlagId};
use crate::tenancy::{ProjectId, UserBasic};

/// Most surveys one project may hold, archived ones included: what one project may store of
/// them, what its feed snapshot may hold of them (the unarchived ones, whole) and what a list's
/// `search` weighs (every one of them). Room for the benchmarks, which list from a project of
/// 20,000 and create tens of thousands more in ten seconds. Stores
/// refuse the insert past it ([`SurveyTransaction::insert_survey`]), a project's creates counted
/// one at a time; PostgreSQL's trigger `surveys_per_project` holds the same number.
pub const MAX_PROJECT_SURVEYS: usize = 100_000;

/// What a store answers a survey insert past [`MAX_PROJECT_SURVEYS`].
pub fn too_many_surveys() -> DomainError {
    ValidationError::invalid_input(format!(
        "A project may have at most {MAX_PROJECT_SURVEYS} surveys."
    ))
    .into()
}

/// Reads the flags `references` names for a create, locking the targeting one, which the write
/// may change.
///
/// # Errors
/// `Unexpected` when storage fails.
pub async fn read_for_create(
    tx: &mut dyn SurveyTransaction,
    project: ProjectId,
    references: FlagReferences,
) -> Result<FlagsRead, Unexpected> {
    let mut read = FlagsRead {
        references,
        ..FlagsRead::default()
    };
    read.lock(tx, project, [references.targeting]).await?;
    read.fill(tx, project, [references.linked]).await?;
    Ok(read)
}

/// A survey locked for an update, with the flags its plan is made against.
pub struct LockedSurvey {
    /// The survey as stored, its targeting flag as locked; creators (the survey's, its flags')
    /// are left out: a plan never depends on who made what.
    pub planned: Survey,
    current: Survey,
    flags: FlagsRead,
}

impl LockedSurvey {
    /// The live flags the update names.
    pub fn referenced(&self) -> ReferencedFlags {
        self.flags.referenced()
    }

    /// The survey as stored, whole: what a write that turns out to change nothing answers.
    pub fn unchanged(self) -> Survey {
        self.current
    }
}

/// Locks the survey and the targeting flags involved (its own and the referenced one), and
/// reads the linked ones. A linked flag is not locked: linking a flag deleted a moment later
/// ends as linking it a moment before, since a survey shows its linked flag even once deleted.
/// Concurrent updates of one survey apply one after the other.
///
/// # Errors
/// `NotFound`; `Unexpected`.
pub async fn lock_for_update(
    tx: &mut dyn SurveyTransaction,
    project: ProjectId,
    id: SurveyId,
    references: FlagReferences,
) -> Result<LockedSurvey, DomainError> {
    // Adopting a flag by id locks two flags, which must go in id order: then the survey is
    // locked alone first. Otherwise its own targeting flag is locked with it.
    let lock = match references.targeting {
        Some(_) => SurveyLock::SurveyOnly,
        None => SurveyLock::WithTargetingFlag,
    };
    let current = tx.lock_survey(project, id, lock).await?.or_not_found()?;
    let own_targeting = current.targeting_flag.as_ref().map(|flag| flag.id);
    let mut flags = FlagsRead {
        references,
        ..FlagsRead::default()
    };
    flags.known(current.linked_flag.iter().cloned());
    match lock {
        SurveyLock::WithTargetingFlag => flags.locked(current.targeting_flag.iter().cloned()),
        SurveyLock::SurveyOnly => {
            flags
                .lock(tx, project, [own_targeting, references.targeting])
                .await?;
        }
    }
    flags.fill(tx, project, [references.linked]).await?;
    // The plan sees the targeting flag as locked, not as read before the lock.
    let planned = Survey {
        created_by: None,
        targeting_flag: own_targeting.and_then(|flag| flags.get(flag).cloned()),
        ..current.clone()
    };
    Ok(LockedSurvey {
        planned,
        current,
        flags,
    })
}

/// Writes an update planned against `locked`: its targeting steps, then the survey with its
/// activity entry.
///
/// # Errors
/// `Conflict` (a taken name, a taken flag key); `Unexpected`.
pub async fn update(
    tx: &mut dyn SurveyTransaction,
    locked: LockedSurvey,
    write: SurveyWrite,
) -> Result<Survey, DomainError> {
    let LockedSurvey { current, flags, .. } = locked;
    let project = current.project_id;
    let (targeting_flag, owned) = store_targeting(tx, project, &write.targeting, &flags).await?;
    let record = SurveyRecord {
        state: &write.state,
        targeting_flag: targeting_flag.as_ref().map(|flag| flag.id),
        owns_targeting_flag: owned,
    };
    tx.update_survey(project, current.id, record, write.activity.as_ref())
        .await?;
    let linked_flag = flags.shown(tx, project, write.state.linked_flag_id).await?;
    Ok(Survey {
        state: write.state,
        linked_flag,
        targeting_flag,
        owns_targeting_flag: owned,
        ..current
    })
}

/// Inserts a new survey as planned against `read` (a copy plans against no flags:
/// `FlagsRead::default()`), with its targeting flag and activity entry.
///
/// # Errors
/// `Invalid` ([`too_many_surveys`]) when the project has [`MAX_PROJECT_SURVEYS`] already;
/// `Conflict` when it has a survey of that name or a flag of a new flag's key; `Unexpected`.
pub async fn insert(
    tx: &mut dyn SurveyTransaction,
    project: ProjectId,
    id: SurveyId,
    creator: &UserBasic,
    write: SurveyWrite,
    read: &FlagsRead,
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
    read: &FlagsRead,
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

/// The flags a write has read, deleted ones included, which of them it locked, and which the
/// write names.
#[derive(Default)]
pub struct FlagsRead {
    references: FlagReferences,
    flags: Vec<FeatureFlag>,
    locked: Vec<FlagId>,
}

impl FlagsRead {
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

    /// The referenced flags among those read that are live: what a create plans against.
    pub fn referenced(&self) -> ReferencedFlags {
        ReferencedFlags {
            linked: self.live(self.references.linked),
            targeting: self.live(self.references.targeting),
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
