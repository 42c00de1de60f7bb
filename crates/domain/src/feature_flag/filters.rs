//! `FlagFilters`: who a flag serves (release groups, variants, payloads), checked once on the
//! way in. Errors carry `attr: filters`.

use serde_json::{Map, Value};

use super::pattern;
use crate::error::ValidationError;

/// Most condition sets (`groups`, `super_groups`) a flag may have: far more than targeting
/// needs, few enough that evaluating every flag of a project for each `/flags` request stays
/// cheap.
pub const MAX_CONDITION_SETS: usize = 100;
/// Most property filters one condition set may have.
pub const MAX_PROPERTIES_PER_SET: usize = 100;
/// Most variants a multivariate flag may have.
pub const MAX_VARIANTS: usize = 100;

/// A flag's checked `filters` object, always with `groups`.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagFilters(Map<String, Value>);

impl Default for FlagFilters {
    /// A flag that rolls out to nobody until it is given groups.
    fn default() -> Self {
        let mut filters = Map::new();
        filters.insert("groups".into(), Value::Array(vec![]));
        Self(filters)
    }
}

impl FlagFilters {
    /// Checks a flag's `filters` and fills in `groups` when missing.
    ///
    /// # Errors
    /// A non-object, malformed groups, a rollout outside 0–100, or variants not summing to 100.
    pub fn parse(filters: &Value) -> Result<Self, ValidationError> {
        let Value::Object(filters) = filters else {
            return Err(filters_error("Filters must be an object."));
        };
        let mut filters = filters.clone();
        let groups = filters
            .entry("groups")
            .or_insert_with(|| Value::Array(vec![]));
        let Value::Array(groups) = groups else {
            return Err(filters_error("Filter groups must be a list."));
        };
        validate_condition_sets(groups)?;
        match filters.get("super_groups") {
            None | Some(Value::Null) => {}
            Some(Value::Array(super_groups)) => validate_condition_sets(super_groups)?,
            Some(_) => return Err(filters_error("Filter super groups must be a list.")),
        }
        validate_multivariate(filters.get("multivariate"))?;
        match filters.get("payloads") {
            None | Some(Value::Null) | Some(Value::Object(_)) => {}
            Some(_) => return Err(filters_error("Payloads must be an object.")),
        }
        Ok(Self(filters))
    }

    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

fn filters_error(detail: impl Into<String>) -> ValidationError {
    ValidationError::invalid("filters", detail)
}

fn validate_condition_sets(groups: &[Value]) -> Result<(), ValidationError> {
    if groups.len() > MAX_CONDITION_SETS {
        return Err(filters_error(format!(
            "A flag may have at most {MAX_CONDITION_SETS} condition sets."
        )));
    }
    groups.iter().try_for_each(validate_group)
}

fn validate_group(group: &Value) -> Result<(), ValidationError> {
    let Value::Object(group) = group else {
        return Err(filters_error("Each filter group must be an object."));
    };
    match group.get("properties") {
        None | Some(Value::Null) => {}
        Some(Value::Array(properties)) if properties.len() > MAX_PROPERTIES_PER_SET => {
            return Err(filters_error(format!(
                "A condition set may have at most {MAX_PROPERTIES_PER_SET} property filters."
            )));
        }
        Some(Value::Array(properties)) if properties.iter().all(Value::is_object) => {
            properties.iter().try_for_each(validate_pattern)?;
        }
        Some(Value::Array(_)) => {
            return Err(filters_error(
                "Filters are not valid (can only use person, cohort, and flag properties)",
            ));
        }
        Some(_) => return Err(filters_error("Group properties must be a list.")),
    }
    match group.get("rollout_percentage") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.as_f64().is_some_and(|p| (0.0..=100.0).contains(&p)) => {}
        Some(_) => {
            return Err(filters_error(
                "Rollout percentage must be a number between 0 and 100.",
            ));
        }
    }
    match group.get("variant") {
        None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(filters_error("Group variant must be a string or null.")),
    }
}

/// A `regex` or `not_regex` filter's pattern must compile: one that cannot would never match,
/// silently.
fn validate_pattern(filter: &Value) -> Result<(), ValidationError> {
    let is_regex = matches!(
        filter.get("operator").and_then(Value::as_str),
        Some("regex" | "not_regex")
    );
    let Some(pattern) = filter.get("value").filter(|_| is_regex) else {
        return Ok(());
    };
    let text = match pattern {
        Value::String(text) => text.clone(),
        Value::Null => return Ok(()),
        other => other.to_string(),
    };
    pattern::compile(&text).map(|_| ()).map_err(|error| {
        let reason = match error {
            regex::Error::CompiledTooBig(_) => "it is too large".to_owned(),
            other => other
                .to_string()
                .lines()
                .last()
                .unwrap_or_default()
                .to_owned(),
        };
        filters_error(format!(
            "Invalid regular expression in a property filter: {reason}"
        ))
    })
}

fn validate_multivariate(multivariate: Option<&Value>) -> Result<(), ValidationError> {
    let variants = match multivariate {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(m)) => m.get("variants"),
        Some(_) => return Err(filters_error("Multivariate must be an object.")),
    };
    let invalid = || {
        filters_error(
            "Invalid variant definitions: Variants must be a list of objects with a key and a rollout_percentage.",
        )
    };
    let Some(Value::Array(variants)) = variants else {
        return Err(invalid());
    };
    if variants.len() > MAX_VARIANTS {
        return Err(filters_error(format!(
            "A flag may have at most {MAX_VARIANTS} variants."
        )));
    }
    let mut total = 0.0;
    for variant in variants {
        let key = variant
            .get("key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty());
        let percentage = variant.get("rollout_percentage").and_then(Value::as_f64);
        match (key, percentage) {
            (Some(_), Some(p)) if (0.0..=100.0).contains(&p) => total += p,
            _ => return Err(invalid()),
        }
    }
    if !variants.is_empty() && (total - 100.0).abs() > f64::EPSILON * 100.0 {
        return Err(filters_error(
            "Invalid variant definitions: Variant rollout percentages must sum to 100.",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rollouts_must_be_between_0_and_100() {
        assert!(
            FlagFilters::parse(&json!({"groups": [{"properties": [], "rollout_percentage": 50}]}))
                .is_ok()
        );
        assert!(FlagFilters::parse(&json!({"groups": [{"rollout_percentage": null}]})).is_ok());
        for bad in [json!(101), json!(-1), json!("50")] {
            let error =
                FlagFilters::parse(&json!({"groups": [{"rollout_percentage": bad}]})).unwrap_err();
            assert_eq!(error.attr.as_deref(), Some("filters"));
        }
    }

    #[test]
    fn variant_percentages_must_sum_to_100() {
        let ok = json!({"groups": [], "multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 50}]}});
        assert!(FlagFilters::parse(&ok).is_ok());
        let bad = json!({"multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 40}]}});
        assert_eq!(
            FlagFilters::parse(&bad).unwrap_err().detail,
            "Invalid variant definitions: Variant rollout percentages must sum to 100."
        );
    }

    #[test]
    fn regex_filters_must_compile_when_written() {
        let filter = |pattern: &str| json!({"groups": [{"properties": [{"key": "email", "operator": "regex", "value": pattern}]}]});
        assert!(FlagFilters::parse(&filter(r"@example\.com$")).is_ok());
        for bad in ["(unclosed", "(?=look-around)"] {
            let error = FlagFilters::parse(&filter(bad)).unwrap_err();
            assert!(
                error.detail.starts_with("Invalid regular expression"),
                "{}",
                error.detail
            );
        }
        let huge = "a{1000}".repeat(100);
        assert_eq!(
            FlagFilters::parse(&filter(&huge)).unwrap_err().detail,
            "Invalid regular expression in a property filter: it is too large"
        );
    }

    #[test]
    fn condition_sets_properties_and_variants_are_capped() {
        let set = json!({"properties": [], "rollout_percentage": 10});
        let sets = json!({"groups": vec![set.clone(); MAX_CONDITION_SETS + 1]});
        assert!(FlagFilters::parse(&sets).is_err());
        let supers = json!({"groups": [], "super_groups": vec![set; MAX_CONDITION_SETS + 1]});
        assert!(FlagFilters::parse(&supers).is_err());
        let property = json!({"key": "a", "value": "b"});
        let properties =
            json!({"groups": [{"properties": vec![property; MAX_PROPERTIES_PER_SET + 1]}]});
        assert_eq!(
            FlagFilters::parse(&properties).unwrap_err().detail,
            "A condition set may have at most 100 property filters."
        );
        let variants: Vec<Value> = (0..=MAX_VARIANTS)
            .map(|i| json!({"key": format!("v{i}"), "rollout_percentage": 0}))
            .collect();
        let multivariate = json!({"groups": [], "multivariate": {"variants": variants}});
        assert!(FlagFilters::parse(&multivariate).is_err());
    }

    #[test]
    fn missing_groups_are_filled_in_and_non_objects_rejected() {
        assert_eq!(
            FlagFilters::parse(&json!({}))
                .unwrap()
                .as_map()
                .get("groups"),
            Some(&json!([]))
        );
        assert_eq!(
            FlagFilters::default(),
            FlagFilters::parse(&json!({})).unwrap()
        );
        assert!(FlagFilters::parse(&json!([])).is_err());
        assert!(FlagFilters::parse(&json!({"groups": "all"})).is_err());
        assert!(FlagFilters::parse(&json!({"groups": [{"properties": [1]}]})).is_err());
    }
}
