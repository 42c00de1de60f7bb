//! Feature-flag evaluation as PostHog's flag service does it (`POST /flags/?v=2`), so a person
//! lands in the same bucket on Burrow as on PostHog: condition sets OR-ed in order, each with
//! its property filters AND-ed and its rollout checked by PostHog's hash, variants chosen by the
//! same hash salted `"variant"`, payloads by the resulting value.
//!
//! Pure: [`evaluate_until`] reads only the flag and its [`Inputs`] (the person, the groups the
//! request names, the clock for relative dates, …), with regex filters' patterns compiled by a
//! [`Patterns`] it is given.

mod hash;
mod properties;

pub use hash::{ROLLOUT_SALT, VARIANT_SALT, hash};
pub use properties::{matches as property_matches, parse_date, regex_pattern};

use std::collections::HashMap;
use std::time::Instant;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::pattern::Patterns;
use super::{ConditionSet, DependencyValues, FeatureFlag, FlagFilters, FlagId, Operator};
use crate::cohort::{CohortLookup, contains};
use crate::group::{GroupTypeIndex, MAX_GROUP_TYPES};

/// Who a flag is evaluated for: the id the SDK sent and every property known of them (stored
/// ones under the ones the request sent).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Person {
    pub distinct_id: String,
    pub properties: Map<String, Value>,
}

/// Why a flag has its value; the wire strings are PostHog's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasonCode {
    /// A condition set matched (its index is the reason's `condition_index`).
    ConditionMatch,
    /// No condition set matched the person's properties.
    NoConditionMatch,
    /// A condition set's properties matched but the person is outside its rollout.
    OutOfRolloutBound,
    /// The flag aggregates by a group type the request names no group of.
    NoGroupType,
    /// An early-access enrollment (`super_groups`) decided the value.
    SuperConditionValue,
    /// The flag is inactive or deleted (PostHog's `flag_disabled`).
    Disabled,
}

impl ReasonCode {
    /// The code as PostHog writes it in `reason.code`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConditionMatch => "condition_match",
            Self::NoConditionMatch => "no_condition_match",
            Self::OutOfRolloutBound => "out_of_rollout_bound",
            Self::NoGroupType => "no_group_type",
            Self::SuperConditionValue => "super_condition_value",
            Self::Disabled => "flag_disabled",
        }
    }

    /// Which of two non-matching reasons PostHog reports: the higher one, the later condition
    /// on a tie.
    fn rank(self) -> u8 {
        match self {
            Self::Disabled => 0,
            Self::NoGroupType => 1,
            Self::NoConditionMatch => 2,
            Self::OutOfRolloutBound => 3,
            Self::ConditionMatch => 4,
            Self::SuperConditionValue => 6,
        }
    }
}

/// `reason` of a flag in PostHog's `/flags/?v=2` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reason {
    pub code: ReasonCode,
    /// The condition set that decided, counted from 0.
    pub condition_index: Option<usize>,
}

impl Reason {
    pub fn new(code: ReasonCode, condition_index: Option<usize>) -> Self {
        Self {
            code,
            condition_index,
        }
    }

    /// PostHog's words: "Matched condition set 1", "No matching condition set", … Written
    /// straight into the answer: a `/flags` request describes every flag of the project.
    pub fn description(&self) -> Description {
        Description(*self)
    }
}

/// A [`Reason`] in PostHog's words, written by `Display`.
#[derive(Debug, Clone, Copy)]
pub struct Description(Reason);

impl std::fmt::Display for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Reason {
            code,
            condition_index,
        } = self.0;
        let words = match code {
            ReasonCode::ConditionMatch => {
                let set = condition_index.unwrap_or(0).saturating_add(1);
                return write!(f, "Matched condition set {set}");
            }
            ReasonCode::NoConditionMatch => "No matching condition set",
            ReasonCode::OutOfRolloutBound => "Out of rollout bound",
            ReasonCode::NoGroupType => "No group type",
            ReasonCode::SuperConditionValue => "Super condition value",
            ReasonCode::Disabled => "Feature flag is disabled",
        };
        f.write_str(words)
    }
}

/// One flag's value for one person, borrowing what it names from the flag (a `/flags` answer
/// is written straight from these).
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation<'a> {
    pub flag_id: FlagId,
    pub key: &'a str,
    pub enabled: bool,
    /// The variant key of a multivariate flag that is enabled.
    pub variant: Option<&'a str>,
    pub reason: Reason,
    /// `filters.payloads` under the variant key, or under `"true"` for a boolean flag that is
    /// enabled; returned as stored (often a JSON document inside a string).
    pub payload: Option<&'a Value>,
}

/// What one evaluation reads besides the flag: the person, the groups the request names, the
/// person's hash key overrides, the clock (for relative dates such as `-7d`), compiled
/// patterns, the values of the flags it depends on and the project's cohorts.
#[derive(Clone, Copy)]
pub struct Inputs<'i> {
    pub person: &'i Person,
    pub groups: &'i GroupSubjects,
    /// By flag key: what a flag ensuring experience continuity hashes instead of the person's
    /// distinct id (the anonymous id they had when they were identified).
    pub hash_key_overrides: &'i HashMap<String, String>,
    pub now: DateTime<Utc>,
    pub patterns: &'i dyn Patterns,
    pub dependencies: &'i dyn DependencyValues,
    pub cohorts: &'i dyn CohortLookup,
}

/// One group a request names (`groups`), as flags aggregated by its type see it.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSubject {
    /// What its flags hash, as a person's flags hash the distinct id.
    pub group_key: String,
    /// Stored ones under the ones the request sent (`group_properties`), with `$group_key`.
    pub properties: Map<String, Value>,
}

/// The groups a request names, by type index.
#[derive(Debug, Clone, Default)]
pub struct GroupSubjects([Option<GroupSubject>; MAX_GROUP_TYPES as usize]);

impl GroupSubjects {
    /// Names `group` as the request's group of type `index`.
    pub fn insert(&mut self, index: GroupTypeIndex, group: GroupSubject) {
        self.0[usize::from(index.get())] = Some(group);
    }

    fn get(&self, index: u64) -> Option<&GroupSubject> {
        let index = GroupTypeIndex::new(index)?;
        self.0[usize::from(index.get())].as_ref()
    }
}

/// Whom a flag (or one of its condition sets) is evaluated for: the person, or the group of its
/// type the request names.
#[derive(Clone, Copy)]
struct Subject<'s> {
    /// What rollouts and variants hash.
    id: &'s str,
    properties: &'s Map<String, Value>,
}

/// The flag evaluated for `inputs`, given up (`None`) when `deadline` has passed before one of
/// its condition sets: a costly flag (thousands of filters over large properties) stops within
/// one set of its budget rather than after the whole flag.
pub fn evaluate_until<'a>(
    flag: &'a FeatureFlag,
    inputs: &Inputs<'_>,
    deadline: Option<Instant>,
) -> Option<Evaluation<'a>> {
    let out_of_time = || deadline.is_some_and(|deadline| Instant::now() > deadline);
    let filters = &flag.filters;
    let result = |enabled: bool, variant: Option<&'a str>, reason: Reason, payload| Evaluation {
        flag_id: flag.id,
        key: &flag.key,
        enabled,
        variant,
        reason,
        payload,
    };
    if flag.deleted || !flag.active {
        return Some(result(
            false,
            None,
            Reason::new(ReasonCode::Disabled, None),
            None,
        ));
    }
    let subject = match filters.aggregation_group_type_index {
        Some(index) => match inputs.groups.get(index) {
            Some(group) => Subject {
                id: &group.group_key,
                properties: &group.properties,
            },
            None => {
                let reason = Reason::new(ReasonCode::NoGroupType, None);
                return Some(result(false, None, reason, None));
            }
        },
        None => Subject {
            id: hashed_id(flag, inputs),
            properties: &inputs.person.properties,
        },
    };
    if out_of_time() {
        return None;
    }

    if let Some(outcome) = super_condition(flag, subject, inputs) {
        let reason = Reason::new(ReasonCode::SuperConditionValue, Some(0));
        return Some(result(outcome, None, reason, payload(filters, None)));
    }

    let (mut reason, mut index) = (ReasonCode::NoConditionMatch, None);
    for (position, condition) in filters.groups.iter().enumerate() {
        if out_of_time() {
            return None;
        }
        // Mixed targeting: a set aggregated by a group type of its own is evaluated for the
        // request's group of that type, and matches no one without one, as the SDKs do.
        let subject = match condition.aggregation_group_type_index {
            Some(own) if Some(own) != filters.aggregation_group_type_index => {
                match inputs.groups.get(own) {
                    Some(group) => Subject {
                        id: &group.group_key,
                        properties: &group.properties,
                    },
                    None => continue,
                }
            }
            _ => subject,
        };
        let outcome = condition_outcome(&flag.key, condition, subject, inputs);
        if reason.rank() <= outcome.rank() {
            (reason, index) = (outcome, Some(position));
        }
        if outcome == ReasonCode::ConditionMatch {
            let variant = variant_override(filters, condition)
                .or_else(|| matching_variant(&flag.key, filters, subject.id));
            let payload = payload(filters, variant);
            return Some(result(true, variant, Reason::new(reason, index), payload));
        }
    }
    Some(result(false, None, Reason::new(reason, index), None))
}

/// What a person's flag hashes: the person's hash key override for a flag ensuring experience
/// continuity, else their distinct id.
fn hashed_id<'i>(flag: &FeatureFlag, inputs: &Inputs<'i>) -> &'i str {
    let overridden = flag
        .ensure_experience_continuity
        .then(|| inputs.hash_key_overrides.get(&flag.key))
        .flatten();
    overridden.unwrap_or(&inputs.person.distinct_id)
}

/// A condition set's verdict for the subject: `ConditionMatch`, `NoConditionMatch` (a property
/// filter failed) or `OutOfRolloutBound` (the properties matched, the rollout did not).
fn condition_outcome(
    flag_key: &str,
    condition: &ConditionSet,
    subject: Subject<'_>,
    inputs: &Inputs<'_>,
) -> ReasonCode {
    let Inputs {
        now,
        patterns,
        dependencies,
        cohorts,
        ..
    } = *inputs;
    if !condition.properties().iter().all(|filter| {
        if let Some(dependency) = filter.flag_dependency() {
            return dependency.is_met(dependencies);
        }
        if let Some(cohort) = filter.cohort_id() {
            let member = contains(cohorts, cohort, subject.properties, now, patterns, 1);
            return member != (filter.operator() == Operator::NotIn);
        }
        properties::matches(filter, subject.properties, now, patterns)
    }) {
        return ReasonCode::NoConditionMatch;
    }
    let rollout = condition.rollout();
    if rollout >= 100.0 || hash(flag_key, subject.id, ROLLOUT_SALT) <= rollout / 100.0 {
        ReasonCode::ConditionMatch
    } else {
        ReasonCode::OutOfRolloutBound
    }
}

/// An early-access enrollment: when the person has the property of the first super condition
/// set (`$feature_enrollment/<key>`), that set alone decides (`Some(matched)`).
fn super_condition(flag: &FeatureFlag, subject: Subject<'_>, inputs: &Inputs<'_>) -> Option<bool> {
    let condition = flag.filters.super_groups.as_ref()?.first()?;
    let key = condition.properties().first()?.key.as_deref()?;
    if !subject.properties.contains_key(key) {
        return None;
    }
    let outcome = condition_outcome(&flag.key, condition, subject, inputs);
    Some(outcome == ReasonCode::ConditionMatch)
}

/// A condition set's `variant`, when it names one of the flag's variants.
fn variant_override<'a>(filters: &FlagFilters, condition: &'a ConditionSet) -> Option<&'a str> {
    let wanted = condition.variant.as_deref()?;
    filters
        .variants()
        .any(|variant| variant.key == wanted)
        .then_some(wanted)
}

/// The variant whose slice of [0, 1) holds the person's variant hash; slices follow the
/// variants' order and widths, as PostHog's lookup table does.
fn matching_variant<'a>(
    flag_key: &str,
    filters: &'a FlagFilters,
    distinct_id: &str,
) -> Option<&'a str> {
    let value = hash(flag_key, distinct_id, VARIANT_SALT);
    let mut low = 0.0;
    for variant in filters.variants() {
        let percentage = variant.rollout_percentage.as_f64().unwrap_or_default();
        let high = low + percentage / 100.0;
        if value >= low && value < high {
            return Some(&variant.key);
        }
        low = high;
    }
    None
}

fn payload<'a>(filters: &'a FlagFilters, variant: Option<&str>) -> Option<&'a Value> {
    filters
        .payloads
        .as_ref()?
        .get(variant.unwrap_or("true"))
        .filter(|payload| !payload.is_null())
}
