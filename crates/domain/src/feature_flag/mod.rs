//! Feature flags: the entity, the commands that create and change one, and the use cases behind
//! `/api/projects/{id}/feature_flags/`. Surveys link to flags and create targeting flags.

mod dependency;
mod dependency_graph;
pub mod evaluation;
mod filters;
mod key;
mod operator;
pub mod pattern;
mod port;
mod property_rules;
pub mod semver;
mod service;

pub use dependency::{
    DependencyValues, FLAG_FILTER_TYPE, FlagDependency, flag_id as dependency_flag_id,
};
pub use dependency_graph::{
    DependencyGraph, MAX_DEPENDENCY_DEPTH, WrittenFlag, check_new_dependencies, check_switch,
};
pub use evaluation::{Evaluation, Person, Reason, ReasonCode};
pub use filters::{
    ConditionSet, FlagFilters, FlagFiltersPatch, GROUP_FILTER_TYPE, MAX_CONDITION_SETS,
    MAX_FLAG_WEIGHT, MAX_PROPERTIES_PER_SET, MAX_VARIANTS, Multivariate, PropertyFilter,
    REGEX_WEIGHT, Variant,
};
pub use key::{FlagKey, KEY_PATTERN, MAX_KEY_CHARS};
pub use operator::Operator;
pub use port::{FeatureFlagRepository, ServingFlags};
pub use service::{FeatureFlagService, MAX_PROJECT_FLAG_WEIGHT};

use chrono::{DateTime, Utc};

use crate::tenancy::{ProjectId, UserBasic};

/// A flag's integer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlagId(pub i32);

#[derive(Debug, Clone, PartialEq)]
pub struct FeatureFlag {
    pub id: FlagId,
    pub project_id: ProjectId,
    pub name: String,
    pub key: String,
    pub filters: FlagFilters,
    pub deleted: bool,
    pub active: bool,
    pub ensure_experience_continuity: bool,
    /// A flag whose payload a server fetches as configuration (`remote_config`), not evaluated.
    pub is_remote_configuration: bool,
    pub created_at: DateTime<Utc>,
    pub created_by: Option<UserBasic>,
}

impl FeatureFlag {
    /// The keys of the flag's variants (empty for a boolean flag).
    pub fn variant_keys(&self) -> Vec<String> {
        self.filters.variant_keys()
    }

    /// What `remote_config` answers: the payload of `true`, as stored (`null` without one).
    pub fn remote_config_payload(&self) -> Option<&serde_json::Value> {
        self.filters.payloads.as_ref()?.get("true")
    }
}

/// How a request names a flag: by id, or by key (`remote_config` takes either, as PostHog).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagRef {
    Id(FlagId),
    Key(String),
}

impl FlagRef {
    /// A path segment: all digits is an id, anything else a key.
    pub fn parse(segment: &str) -> Self {
        match segment.parse::<i32>() {
            Ok(id) if segment.bytes().all(|byte| byte.is_ascii_digit()) => Self::Id(FlagId(id)),
            _ => Self::Key(segment.to_owned()),
        }
    }
}

/// A flag to create: what a client (or a survey's targeting) asks for, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFlag {
    pub key: FlagKey,
    pub name: String,
    pub filters: FlagFilters,
    pub active: bool,
    pub ensure_experience_continuity: bool,
    pub is_remote_configuration: bool,
}

/// Changes to a flag; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlagChanges {
    pub name: Option<String>,
    pub key: Option<FlagKey>,
    pub filters: Option<FlagFilters>,
    pub active: Option<bool>,
    pub ensure_experience_continuity: Option<bool>,
    pub is_remote_configuration: Option<bool>,
    pub deleted: Option<bool>,
}

impl FlagChanges {
    /// A soft delete: the flag leaves the API, frees its key and stops serving.
    pub fn deletion() -> Self {
        Self {
            deleted: Some(true),
            active: Some(false),
            ..Self::default()
        }
    }

    /// Whether nothing would change.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn variant_keys_come_from_multivariate() {
        let flag = FeatureFlag {
            id: FlagId(1),
            project_id: ProjectId(1),
            name: String::new(),
            key: "k".into(),
            filters: FlagFilters::parse(json!({"multivariate": {"variants": [
                {"key": "a", "rollout_percentage": 50},
                {"key": "b", "rollout_percentage": 50}
            ]}}))
            .unwrap(),
            deleted: false,
            active: true,
            ensure_experience_continuity: false,
            is_remote_configuration: false,
            created_at: Utc::now(),
            created_by: None,
        };
        assert_eq!(flag.variant_keys(), vec!["a", "b"]);
    }

    #[test]
    fn a_deletion_also_switches_the_flag_off() {
        let deletion = FlagChanges::deletion();
        assert_eq!(
            (deletion.deleted, deletion.active),
            (Some(true), Some(false))
        );
        assert!(FlagChanges::default().is_empty());
        assert!(!deletion.is_empty());
    }
}
