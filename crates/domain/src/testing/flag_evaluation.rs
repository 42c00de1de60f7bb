//! A flag evaluated on its own — no other flag, no cohort, no group, relative dates counted
//! from now — for tests of the evaluation rules (the server always evaluates a project's flags
//! together, `evaluate_until` with the snapshot's inputs).

use std::collections::HashMap;

use chrono::Utc;

use crate::cohort::{CohortId, CohortLookup, KnownCohort};
use crate::feature_flag::evaluation::{Evaluation, GroupSubjects, Inputs, Person, evaluate_until};
use crate::feature_flag::pattern::Patterns;
use crate::feature_flag::{DependencyValues, FeatureFlag, FlagId};

/// Evaluates `flag` alone for `person`.
pub fn evaluate<'a>(
    flag: &'a FeatureFlag,
    person: &Person,
    patterns: &dyn Patterns,
) -> Evaluation<'a> {
    let inputs = Inputs {
        person,
        groups: &GroupSubjects::default(),
        hash_key_overrides: &HashMap::new(),
        now: Utc::now(),
        patterns,
        dependencies: &NoDependencies,
        cohorts: &NoCohorts,
    };
    let Some(evaluation) = evaluate_until(flag, &inputs, None) else {
        unreachable!("an evaluation without a deadline always ends")
    };
    evaluation
}

struct NoDependencies;

impl DependencyValues for NoDependencies {
    fn value_of(&self, _: FlagId) -> Option<(bool, Option<&str>)> {
        None
    }
}

struct NoCohorts;

impl CohortLookup for NoCohorts {
    fn cohort(&self, _: CohortId) -> Option<KnownCohort<'_>> {
        None
    }
}
