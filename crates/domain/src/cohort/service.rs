//! The use cases of `/cohorts/`: list, get, create, change and soft-delete, with the checks that
//! keep nested cohorts whole (each names a live cohort, no loop, a bounded chain) and a cohort
//! active flags filter by from being deleted.

use std::collections::HashMap;
use std::sync::Arc;

use super::{
    Cohort, CohortChanges, CohortFilters, CohortId, CohortRepository, MAX_COHORT_DEPTH, NewCohort,
};
use crate::error::{DomainError, ValidationCode, ValidationError};
use crate::feature_flag::FeatureFlagRepository;
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic};

/// Most live cohorts one project may hold: what its snapshot loads when its flags filter by
/// cohorts, and what each write checks against.
pub const MAX_PROJECT_COHORTS: usize = 1_000;

pub struct CohortService {
    cohorts: Arc<dyn CohortRepository>,
    flags: Arc<dyn FeatureFlagRepository>,
}

impl CohortService {
    pub fn new(cohorts: Arc<dyn CohortRepository>, flags: Arc<dyn FeatureFlagRepository>) -> Self {
        Self { cohorts, flags }
    }

    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<Cohort>, DomainError> {
        Ok(self.cohorts.list(project, page).await?)
    }

    /// # Errors
    /// `NotFound` for a missing, deleted or foreign cohort.
    pub async fn get(&self, project: ProjectId, id: CohortId) -> Result<Cohort, DomainError> {
        self.cohorts
            .get(project, id)
            .await?
            .ok_or(DomainError::NotFound)
    }

    /// # Errors
    /// `Invalid` past [`MAX_PROJECT_COHORTS`], or for filters naming a cohort that does not
    /// exist or nesting too deep.
    pub async fn create(
        &self,
        project: ProjectId,
        creator: &UserBasic,
        cohort: NewCohort,
    ) -> Result<Cohort, DomainError> {
        let live = self.cohorts.live(project).await?;
        if live.len() >= MAX_PROJECT_COHORTS {
            return Err(ValidationError::invalid_input(format!(
                "A project may have at most {MAX_PROJECT_COHORTS} cohorts."
            ))
            .into());
        }
        check_nesting(None, &cohort.filters, &live)?;
        self.cohorts
            .create(project, Some(creator.clone()), cohort)
            .await
    }

    /// Partial update; `deleted: true` deletes the cohort, unless active flags filter by it.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` as on create, for a loop, or for deleting a cohort in use.
    pub async fn update(
        &self,
        project: ProjectId,
        id: CohortId,
        changes: CohortChanges,
    ) -> Result<Cohort, DomainError> {
        let cohort = self.get(project, id).await?;
        if let Some(filters) = &changes.filters {
            let live = self.cohorts.live(project).await?;
            check_nesting(Some(id), filters, &live)?;
        }
        if changes.deleted == Some(true) {
            self.check_unused(project, id).await?;
        }
        let updated = self.cohorts.update(project, id, changes).await?;
        Ok(Cohort {
            created_by: cohort.created_by,
            ..updated
        })
    }

    /// Refuses deleting a cohort the project's active flags filter by, as PostHog does.
    async fn check_unused(&self, project: ProjectId, id: CohortId) -> Result<(), DomainError> {
        let using: Vec<String> = self
            .flags
            .active(project)
            .await?
            .into_iter()
            .filter(|flag| flag.filters.cohort_ids().contains(&id))
            .map(|flag| {
                if flag.name.is_empty() {
                    flag.key
                } else {
                    flag.name
                }
            })
            .collect();
        if using.is_empty() {
            return Ok(());
        }
        Err(ValidationError::invalid_input(format!(
            "This cohort is used in {} active feature flag(s): {}. Please remove the cohort from \
             these feature flags before deleting it.",
            using.len(),
            using.join(", ")
        ))
        .into())
    }
}

/// The cohorts `filters` name must be live cohorts of the project, none of them the cohort
/// written (`id`) or leading back to it, and no chain of nested cohorts may pass more than
/// [`MAX_COHORT_DEPTH`] cohorts.
fn check_nesting(
    id: Option<CohortId>,
    filters: &CohortFilters,
    live: &[Cohort],
) -> Result<(), ValidationError> {
    let by_id: HashMap<CohortId, &CohortFilters> = live
        .iter()
        .filter(|cohort| Some(cohort.id) != id)
        .map(|cohort| (cohort.id, &cohort.filters))
        .collect();
    for named in filters.cohort_ids() {
        if Some(named) == id {
            return Err(loop_error());
        }
        if !by_id.contains_key(&named) {
            return Err(does_not_exist(named));
        }
    }
    let mut chains = Chains {
        written: id,
        by_id: &by_id,
        depths: HashMap::new(),
        on_path: Vec::new(),
    };
    let mut deepest = 0;
    for named in filters.cohort_ids() {
        deepest = deepest.max(chains.depth(named)?);
    }
    if deepest + 1 > MAX_COHORT_DEPTH {
        return Err(ValidationError::invalid(
            "filters",
            format!(
                "Cohorts may nest at most {MAX_COHORT_DEPTH} deep (a cohort naming a cohort \
                 naming …); this chain holds {}.",
                deepest + 1
            ),
        ));
    }
    Ok(())
}

/// The stored cohorts' chains, walked once each.
struct Chains<'a> {
    written: Option<CohortId>,
    by_id: &'a HashMap<CohortId, &'a CohortFilters>,
    depths: HashMap<CohortId, usize>,
    on_path: Vec<CohortId>,
}

impl Chains<'_> {
    /// How many cohorts the longest chain from `cohort` passes; a loop back to the cohort
    /// written is refused (a loop among stored ones, left by a race, counts once around).
    fn depth(&mut self, cohort: CohortId) -> Result<usize, ValidationError> {
        if Some(cohort) == self.written {
            return Err(loop_error());
        }
        if let Some(depth) = self.depths.get(&cohort) {
            return Ok(*depth);
        }
        if self.on_path.contains(&cohort) {
            return Ok(0);
        }
        let Some(filters) = self.by_id.get(&cohort) else {
            return Ok(1);
        };
        self.on_path.push(cohort);
        let mut deepest = 0;
        for named in filters.cohort_ids() {
            deepest = deepest.max(self.depth(named)?);
        }
        self.on_path.pop();
        self.depths.insert(cohort, deepest + 1);
        Ok(deepest + 1)
    }
}

fn loop_error() -> ValidationError {
    ValidationError::invalid_input("Cohorts cannot reference other cohorts in a loop.")
}

/// PostHog's answer to a filter naming a cohort the project does not have.
pub(crate) fn does_not_exist(id: CohortId) -> ValidationError {
    ValidationError::field(
        "filters",
        ValidationCode::CohortDoesNotExist,
        format!("Cohort with id {} does not exist", id.0),
    )
}
