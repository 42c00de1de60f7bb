//! Flag dependencies: a `type: flag` filter (`flag_evaluates_to`) matches when another flag of
//! the project evaluates, for the same person, to the filter's value. Stored as PostHog stores
//! them, the other flag named by its id (as text), so renaming it keeps the dependency.
//!
//! What a dependency matches is decided as the SDKs decide it (`matches_dependency_value` in
//! posthog-python, the same in posthog-node), so local and remote evaluation agree.

use serde_json::Value;

use super::{FlagFilters, FlagId, PropertyFilter};

/// The `type` of a flag-dependency filter.
pub const FLAG_FILTER_TYPE: &str = "flag";

/// One dependency filter read from its property filter: which flag, and what value it wants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlagDependency<'a> {
    /// The flag depended on; `None` when the stored key is not an id (refused when written).
    pub flag: Option<FlagId>,
    /// `true`/`false`, or a variant key.
    pub expected: Option<&'a Value>,
}

impl PropertyFilter {
    /// Whether the filter is a flag dependency (`type: flag`).
    pub fn is_flag_dependency(&self) -> bool {
        self.kind.as_deref() == Some(FLAG_FILTER_TYPE)
    }

    /// The dependency the filter states, if it is one.
    pub fn flag_dependency(&self) -> Option<FlagDependency<'_>> {
        self.is_flag_dependency().then(|| FlagDependency {
            flag: self.key.as_deref().and_then(flag_id),
            expected: self.value.as_ref(),
        })
    }
}

impl FlagFilters {
    /// The flags these filters depend on, each as often as a filter names it. Only the release
    /// condition sets (`groups`) hold dependencies, as PostHog reads them.
    pub fn dependencies(&self) -> impl Iterator<Item = FlagId> + '_ {
        self.groups
            .iter()
            .flat_map(super::ConditionSet::properties)
            .filter_map(PropertyFilter::flag_dependency)
            .filter_map(|dependency| dependency.flag)
    }
}

/// A flag id written as PostHog's dependency filters hold it: decimal digits.
pub fn flag_id(text: &str) -> Option<FlagId> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().map(FlagId)
}

/// What the flags a flag depends on evaluated to for the person being evaluated: filled in
/// dependency order, so a flag's dependencies are there when it is evaluated.
pub trait DependencyValues {
    /// The flag's value (enabled, variant), or `None` when it was not evaluated (missing, or
    /// the evaluation budget ran out).
    fn value_of(&self, flag: FlagId) -> Option<(bool, Option<&str>)>;
}

impl FlagDependency<'_> {
    /// Whether the flag depended on has the wanted value: a variant matches `true` or its own
    /// key; a boolean value matches the same boolean; anything else, or a flag not evaluated,
    /// matches nothing.
    pub fn is_met(&self, values: &dyn DependencyValues) -> bool {
        let (Some(flag), Some(expected)) = (self.flag, self.expected) else {
            return false;
        };
        match (values.value_of(flag), expected) {
            (Some((true, Some(variant))), Value::Bool(wanted)) if !variant.is_empty() => *wanted,
            (Some((true, Some(variant))), Value::String(wanted)) if !variant.is_empty() => {
                variant == wanted
            }
            (Some((enabled, None)), Value::Bool(wanted)) => enabled == *wanted,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Values(Vec<(FlagId, bool, Option<&'static str>)>);

    impl DependencyValues for Values {
        fn value_of(&self, flag: FlagId) -> Option<(bool, Option<&str>)> {
            self.0
                .iter()
                .find(|(id, ..)| *id == flag)
                .map(|(_, enabled, variant)| (*enabled, *variant))
        }
    }

    fn met(expected: Value, value: Option<(bool, Option<&'static str>)>) -> bool {
        let values = Values(value.map(|(e, v)| (FlagId(7), e, v)).into_iter().collect());
        let filter = PropertyFilter::read(json!({
            "key": "7", "type": "flag", "operator": "flag_evaluates_to", "value": expected
        }))
        .unwrap();
        filter.flag_dependency().unwrap().is_met(&values)
    }

    #[test]
    fn a_dependency_is_met_as_the_sdks_decide() {
        assert!(met(json!(true), Some((true, None))));
        assert!(met(json!(false), Some((false, None))));
        assert!(!met(json!(true), Some((false, None))));
        assert!(!met(json!(false), Some((true, None))));
        // A variant counts as true, and matches its own key only (case matters).
        assert!(met(json!(true), Some((true, Some("test")))));
        assert!(!met(json!(false), Some((true, Some("test")))));
        assert!(met(json!("test"), Some((true, Some("test")))));
        assert!(!met(json!("Test"), Some((true, Some("test")))));
        // A boolean flag never matches a variant key; other values never match.
        assert!(!met(json!("test"), Some((true, None))));
        assert!(!met(json!(1), Some((true, None))));
        // A flag not evaluated matches nothing, not even `false`.
        assert!(!met(json!(false), None));
    }

    #[test]
    fn only_digits_name_a_flag() {
        assert_eq!(flag_id("12"), Some(FlagId(12)));
        for text in ["", "-1", "+1", "1.0", "my-flag", "99999999999"] {
            assert_eq!(flag_id(text), None, "{text}");
        }
    }

    #[test]
    fn dependencies_are_read_from_the_release_condition_sets() {
        let filters = FlagFilters::read(json!({"groups": [
            {"properties": [
                {"key": "3", "type": "flag", "operator": "flag_evaluates_to", "value": true},
                {"key": "email", "type": "person", "operator": "is_set"}
            ]},
            {"properties": [{"key": "5", "type": "flag", "value": "a"}]}
        ]}))
        .unwrap();
        assert_eq!(
            filters.dependencies().collect::<Vec<_>>(),
            vec![FlagId(3), FlagId(5)]
        );
    }
}
