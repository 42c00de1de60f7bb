//! The use cases of `/cohorts/`: list, get, create, change and soft-delete, with the checks that
//! keep nested cohorts whole (each names a live cohort, no loop, a bounded chain) and a cohort
//! active flags filter by from being deleted; and a static cohort's members, added from a CSV or
//! by person UUID, removed by UUID and listed, within their bounds.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::members::check_bounds;
use super::{
    Cohort, CohortChanges, CohortFilters, CohortId, CohortListFilter, CohortPerson,
    CohortRepository, CohortTransaction, CountedCohort, MAX_COHORT_DEPTH, NamedPersons, NewCohort,
    PAGE_PERSON_BYTES, person_id, person_ids,
};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, ValidationCode, ValidationError};
use crate::feature_flag::{FeatureFlagRepository, FlagFilters};
use crate::in_transaction;
use crate::json_fields::json_length;
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic};

/// Most live cohorts one project may hold: what its snapshot loads when its flags filter by
/// cohorts, and what each write checks against.
pub const MAX_PROJECT_COHORTS: usize = 1_000;

/// Most the filters of a project's live cohorts may weigh together, as JSON: a node's snapshot
/// of the project holds those its flags name (with their parsed form), and each snapshot build
/// reads them all.
pub const MAX_PROJECT_COHORT_BYTES: usize = 1024 * 1024;

/// What removing a person from a static cohort came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The person is not listed (any more): removing is idempotent, as PostHog's.
    Removed,
    /// The project has no person with that UUID (PostHog's 404).
    NoSuchPerson,
}

pub struct CohortService {
    cohorts: Arc<dyn CohortRepository>,
    flags: Arc<dyn FeatureFlagRepository>,
}

impl CohortService {
    pub fn new(cohorts: Arc<dyn CohortRepository>, flags: Arc<dyn FeatureFlagRepository>) -> Self {
        Self { cohorts, flags }
    }

    /// One page of the live cohorts `filter` keeps, the static ones counted (one read for the
    /// page).
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn list(
        &self,
        project: ProjectId,
        filter: &CohortListFilter,
        page: PageRequest,
    ) -> Result<Page<CountedCohort>, DomainError> {
        let page = self.cohorts.list(project, filter, page).await?;
        let statics: Vec<CohortId> = page
            .items
            .iter()
            .filter(|cohort| cohort.is_static)
            .map(|cohort| cohort.id)
            .collect();
        let counts: HashMap<CohortId, u64> = if statics.is_empty() {
            HashMap::new()
        } else {
            self.cohorts
                .member_counts(project, &statics)
                .await?
                .into_iter()
                .collect()
        };
        Ok(page.map(|cohort| {
            let count = cohort
                .is_static
                .then(|| counts.get(&cohort.id).copied().unwrap_or(0));
            CountedCohort { cohort, count }
        }))
    }

    /// # Errors
    /// `NotFound` for a missing, deleted or foreign cohort.
    pub async fn get(
        &self,
        project: ProjectId,
        id: CohortId,
    ) -> Result<CountedCohort, DomainError> {
        let cohort = self.live_cohort(project, id).await?;
        let count = if cohort.is_static {
            let counts = self.cohorts.member_counts(project, &[id]).await?;
            Some(counts.first().map_or(0, |(_, count)| *count))
        } else {
            None
        };
        Ok(CountedCohort { cohort, count })
    }

    /// Creates a cohort; a static one lists `persons` from the start (none: empty, as PostHog's
    /// default), a dynamic one ignores them, as PostHog ignores a CSV sent with one. Each of
    /// `persons` is one source (a CSV, a list of UUIDs).
    ///
    /// # Errors
    /// `Invalid` past [`MAX_PROJECT_COHORTS`], for filters naming a cohort that does not exist
    /// or nesting too deep, for a static cohort with filters, and past the members' bounds.
    pub async fn create(
        &self,
        project: ProjectId,
        creator: &UserBasic,
        cohort: NewCohort,
        persons: Vec<NamedPersons>,
    ) -> Result<CountedCohort, DomainError> {
        let live = self.cohorts.live(project).await?;
        if live.len() >= MAX_PROJECT_COHORTS {
            return Err(ValidationError::invalid_input(format!(
                "A project may have at most {MAX_PROJECT_COHORTS} cohorts."
            ))
            .into());
        }
        if cohort.is_static {
            if cohort.filters.has_values() {
                return Err(ValidationError::invalid(
                    "filters",
                    "Burrow fills a static cohort from a CSV or person ids, not from filters: \
                     create it without filters.",
                )
                .into());
            }
        } else {
            check_nesting(None, &cohort.filters, &live)?;
            check_project_weight(None, &cohort.filters, &live)?;
        }
        let persons = if cohort.is_static {
            persons
        } else {
            Vec::new()
        };
        in_transaction!(self.cohorts.begin(), |transaction| {
            if !persons.is_empty() {
                transaction.lock_members(project).await?;
            }
            let created = transaction
                .insert(project, Some(creator.clone()), cohort)
                .await?;
            let count = if created.is_static {
                let listed = resolve(transaction, project, persons).await?;
                Some(add(transaction, project, created.id, &listed).await?)
            } else {
                None
            };
            Ok(CountedCohort {
                cohort: created,
                count,
            })
        })
    }

    /// Partial update; `deleted: true` deletes the cohort (and a static one's members), unless
    /// active flags filter by it. A static cohort lists `persons` besides those it lists (a
    /// dynamic or deleted one ignores them, as PostHog ignores a CSV sent with one).
    ///
    /// # Errors
    /// `NotFound`; `Invalid` as on create, for a loop, for changing `is_static`, for criteria
    /// given to a static cohort, or for deleting a cohort in use.
    pub async fn update(
        &self,
        project: ProjectId,
        id: CohortId,
        mut changes: CohortChanges,
        persons: Vec<NamedPersons>,
    ) -> Result<CountedCohort, DomainError> {
        let current = self.live_cohort(project, id).await?;
        if changes
            .is_static
            .take()
            .is_some_and(|kind| kind != current.is_static)
        {
            return Err(ValidationError::invalid(
                "is_static",
                "A cohort stays static or dynamic as it was created: create a new cohort instead.",
            )
            .into());
        }
        if let Some(filters) = &changes.filters {
            if current.is_static {
                if filters.has_values() {
                    return Err(ValidationError::invalid_input(
                        "Editing the criteria of a static cohort is not supported yet. Create a \
                         new static cohort instead.",
                    )
                    .into());
                }
            } else {
                let live = self.cohorts.live(project).await?;
                check_nesting(Some(id), filters, &live)?;
                check_project_weight(Some(id), filters, &live)?;
            }
        }
        let deleting = changes.deleted == Some(true);
        if deleting {
            self.check_unused(project, id).await?;
        }
        let persons = if current.is_static && !deleting {
            persons
        } else {
            Vec::new()
        };
        let counted = in_transaction!(self.cohorts.begin(), |transaction| {
            if !persons.is_empty() {
                transaction.lock_members(project).await?;
            }
            transaction.lock(project, id).await?.or_not_found()?;
            let cohort = transaction.update(project, id, changes).await?;
            let count = if !cohort.is_static {
                None
            } else if deleting {
                transaction.clear_members(project, id).await?;
                Some(0)
            } else {
                let listed = resolve(transaction, project, persons).await?;
                Some(add(transaction, project, id, &listed).await?)
            };
            Ok(CountedCohort { cohort, count })
        })?;
        Ok(CountedCohort {
            cohort: Cohort {
                created_by: current.created_by,
                ..counted.cohort
            },
            ..counted
        })
    }

    /// `add_persons_to_static_cohort`: lists the persons `person_ids` names (UUIDs), with
    /// PostHog's checks in its order.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` for a dynamic cohort, `person_ids` as [`person_ids`] refuses it, no
    /// UUID of a person of the project, and past the members' bounds.
    pub async fn add_persons(
        &self,
        project: ProjectId,
        id: CohortId,
        sent: Option<&Value>,
    ) -> Result<(), DomainError> {
        let cohort = self.live_cohort(project, id).await?;
        if !cohort.is_static {
            return Err(
                ValidationError::invalid_input("Can only add users to static cohorts").into(),
            );
        }
        let uuids = person_ids(sent)?;
        in_transaction!(self.cohorts.begin(), |transaction| {
            transaction.lock_members(project).await?;
            transaction.lock(project, id).await?.or_not_found()?;
            let listed = resolve(transaction, project, vec![NamedPersons::Uuids(uuids)]).await?;
            if listed.is_empty() {
                return Err(
                    ValidationError::invalid_input("No valid users to add to cohort").into(),
                );
            }
            add(transaction, project, id, &listed).await?;
            Ok(())
        })
    }

    /// `remove_person_from_static_cohort`: stops listing the person `sent` names (a UUID).
    ///
    /// # Errors
    /// `NotFound`; `Invalid` for a dynamic cohort and `person_id` as [`person_id`] refuses it.
    pub async fn remove_person(
        &self,
        project: ProjectId,
        id: CohortId,
        sent: Option<&Value>,
    ) -> Result<Removal, DomainError> {
        let cohort = self.live_cohort(project, id).await?;
        if !cohort.is_static {
            return Err(ValidationError::invalid_input(
                "Can only remove users from static cohorts",
            )
            .into());
        }
        let uuid = person_id(sent)?;
        in_transaction!(self.cohorts.begin(), |transaction| {
            transaction.lock(project, id).await?.or_not_found()?;
            let listed = transaction.distinct_ids_of(project, &[uuid]).await?;
            if listed.is_empty() {
                return Ok(Removal::NoSuchPerson);
            }
            transaction.remove_members(project, id, &listed).await?;
            Ok(Removal::Removed)
        })
    }

    /// The captured members of a static cohort, by distinct id, a page ending early past
    /// [`PAGE_PERSON_BYTES`] of properties. A dynamic cohort is evaluated for each person when a
    /// flag asks, so Burrow has no list of its persons.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` for a dynamic cohort.
    pub async fn persons(
        &self,
        project: ProjectId,
        id: CohortId,
        page: PageRequest,
    ) -> Result<Page<CohortPerson>, DomainError> {
        let cohort = self.live_cohort(project, id).await?;
        if !cohort.is_static {
            return Err(ValidationError::invalid_input(
                "Burrow lists the persons of static cohorts only: a dynamic cohort is evaluated \
                 for each person when a flag asks.",
            )
            .into());
        }
        Ok(self
            .cohorts
            .persons(project, id, page, PAGE_PERSON_BYTES)
            .await?)
    }

    async fn live_cohort(&self, project: ProjectId, id: CohortId) -> Result<Cohort, DomainError> {
        self.cohorts.get(project, id).await?.or_not_found()
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

/// The distinct ids `persons` names: as given, or those of the project's persons with the
/// UUIDs given (unknown ones skipped).
async fn resolve(
    transaction: &mut dyn CohortTransaction,
    project: ProjectId,
    persons: Vec<NamedPersons>,
) -> Result<Vec<String>, DomainError> {
    let mut listed = Vec::new();
    for named in persons {
        match named {
            NamedPersons::DistinctIds(ids) => listed.extend(ids),
            NamedPersons::Uuids(uuids) if uuids.is_empty() => {}
            NamedPersons::Uuids(uuids) => {
                listed.extend(transaction.distinct_ids_of(project, &uuids).await?);
            }
        }
    }
    Ok(listed)
}

/// Lists `distinct_ids` in the cohort, within its bounds and the project's (the members' lock
/// held, so the counts read are exact; past a bound the transaction is rolled back, nothing
/// listed); how many the cohort lists then.
async fn add(
    transaction: &mut dyn CohortTransaction,
    project: ProjectId,
    cohort: CohortId,
    distinct_ids: &[String],
) -> Result<u64, DomainError> {
    let before = transaction.member_counts(project, cohort).await?;
    if distinct_ids.is_empty() {
        return Ok(before.cohort);
    }
    let added = transaction
        .add_members(project, cohort, distinct_ids)
        .await?;
    Ok(check_bounds(before, added)?)
}

/// The project's live cohorts, with `filters` written to cohort `id` (a new one for `None`),
/// may weigh at most [`MAX_PROJECT_COHORT_BYTES`] together.
fn check_project_weight(
    id: Option<CohortId>,
    filters: &CohortFilters,
    live: &[Cohort],
) -> Result<(), ValidationError> {
    let others: usize = live
        .iter()
        .filter(|cohort| Some(cohort.id) != id)
        .map(|cohort| json_length(&cohort.filters))
        .sum();
    let total = others.saturating_add(json_length(filters));
    if total > MAX_PROJECT_COHORT_BYTES {
        return Err(ValidationError::invalid(
            "filters",
            format!(
                "A project's cohorts may weigh at most {MAX_PROJECT_COHORT_BYTES} bytes of \
                 filters together; with these they would weigh {total}."
            ),
        ));
    }
    Ok(())
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
/// Every cohort `filters` name (a flag's, or a survey's targeting, sent as `attr`) must be a
/// live cohort of the project.
///
/// # Errors
/// `Invalid` (`cohort_does_not_exist`, `attr`) for the first that is not.
pub(crate) async fn check_named_cohorts(
    cohorts: &dyn CohortRepository,
    project: ProjectId,
    filters: &FlagFilters,
    attr: &str,
) -> Result<(), DomainError> {
    let mut checked = Vec::new();
    for id in filters.cohort_ids() {
        if checked.contains(&id) {
            continue;
        }
        if cohorts.get(project, id).await?.is_none() {
            let mut error = does_not_exist(id);
            error.attr = Some(attr.to_owned());
            return Err(error.into());
        }
        checked.push(id);
    }
    Ok(())
}

fn does_not_exist(id: CohortId) -> ValidationError {
    ValidationError::field(
        "filters",
        ValidationCode::CohortDoesNotExist,
        format!("Cohort with id {} does not exist", id.0),
    )
}
