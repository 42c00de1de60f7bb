//! `FlagFilters`: who a flag serves (release groups, variants, payloads), checked once on the
//! way in. Errors carry `attr: filters`.

use serde_json::{Map, Value};

use crate::error::ValidationError;

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
        groups.iter().try_for_each(validate_group)?;
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

fn validate_group(group: &Value) -> Result<(), ValidationError> {
    let Value::Object(group) = group else {
        return Err(filters_error("Each filter group must be an object."));
    };
    match group.get("properties") {
        None | Some(Value::Null) => {}
        Some(Value::Array(properties)) if properties.iter().all(Value::is_object) => {}
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
