//! Cohorts: named groups of persons a flag (or a survey's targeting) can filter by, behind
//! `/api/projects/{id}/cohorts/`. A dynamic cohort is defined by person-property filters and other
//! cohorts, evaluated for each person when a flag asks; Burrow keeps no events, so behavioral
//! cohorts are refused. A static cohort is a list of persons (`members.rs`), uploaded as a CSV
//! (`csv.rs`) or named by UUID. Lists narrow by kind, creator and name (`list_filter.rs`).

mod csv;
mod filters;
mod list_filter;
mod members;
mod port;
mod service;

pub use csv::read_csv;
pub use filters::{
    CohortFilters, CohortGroup, CohortLookup, CohortNode, KnownCohort, MAX_COHORT_FILTERS,
    MAX_COHORT_FILTERS_BYTES, MAX_GROUP_DEPTH, contains,
};
pub use list_filter::{CohortListFilter, CohortSearch, MAX_COHORT_SEARCH_CHARS};
pub use members::{
    CohortPerson, MAX_COHORT_MEMBERS, MAX_CSV_PERSONS, MAX_PERSONS_PER_REQUEST,
    MAX_PROJECT_MEMBERS, MemberCounts, NamedPersons, PAGE_PERSON_BYTES, create_person_ids,
    person_id, person_ids,
};
pub use port::{CohortRepository, CohortTransaction};
pub(crate) use service::check_named_cohorts;
pub use service::{CohortService, MAX_PROJECT_COHORT_BYTES, MAX_PROJECT_COHORTS, Removal};

use chrono::{DateTime, Utc};

use crate::tenancy::{ProjectId, UserBasic};

/// Most cohorts one chain of nested cohorts may pass through (a cohort naming a cohort naming
/// …): checked when written, and where evaluation stops should a loop be stored by a race.
pub const MAX_COHORT_DEPTH: usize = 10;

/// A cohort's integer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CohortId(pub i32);

#[derive(Debug, Clone, PartialEq)]
pub struct Cohort {
    pub id: CohortId,
    pub project_id: ProjectId,
    pub name: String,
    pub description: String,
    pub filters: CohortFilters,
    /// A list of persons (`cohort_members`) rather than filters; its filters are empty.
    pub is_static: bool,
    pub deleted: bool,
    pub created_at: DateTime<Utc>,
    pub created_by: Option<UserBasic>,
}

/// A cohort with PostHog's `count`: how many distinct ids a static cohort lists (`None` for a
/// dynamic one, which is evaluated for each person and never counted).
#[derive(Debug, Clone, PartialEq)]
pub struct CountedCohort {
    pub cohort: Cohort,
    pub count: Option<u64>,
}

/// A cohort to create, checked. A static one has empty filters (`CohortFilters::empty`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewCohort {
    pub name: String,
    pub description: String,
    pub filters: CohortFilters,
    pub is_static: bool,
}

/// Changes to a cohort; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CohortChanges {
    pub name: Option<String>,
    pub description: Option<String>,
    pub filters: Option<CohortFilters>,
    pub deleted: Option<bool>,
    /// As sent: the service refuses a change (a cohort is static or dynamic for good) and
    /// never passes it on to be written.
    pub is_static: Option<bool>,
}

impl crate::feature_flag::PropertyFilter {
    /// The cohort a `type: cohort` filter names (its `value`: an id, as a number or digits).
    pub fn cohort_id(&self) -> Option<CohortId> {
        if self.kind.as_deref() != Some("cohort") {
            return None;
        }
        match self.value.as_ref()? {
            serde_json::Value::Number(id) => id.as_i64(),
            serde_json::Value::String(id) if id.bytes().all(|b| b.is_ascii_digit()) => {
                id.parse().ok()
            }
            _ => None,
        }
        .and_then(|id| i32::try_from(id).ok())
        .map(CohortId)
    }
}

impl crate::feature_flag::FlagFilters {
    /// The cohorts these filters name, in any condition set.
    pub fn cohort_ids(&self) -> Vec<CohortId> {
        self.condition_sets()
            .flat_map(crate::feature_flag::ConditionSet::properties)
            .filter_map(crate::feature_flag::PropertyFilter::cohort_id)
            .collect()
    }
}
