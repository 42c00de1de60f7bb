//! A question's `validation`: the rules posthog-js holds an open answer to before it is sent
//! (`min_length`, `max_length`, `email`). Checked as PostHog's serializer checks them when a
//! question is sent; the value is kept as sent, in the question's other keys, for the SDKs.

use serde_json::Value;

/// The key a question holds its rules under.
pub(super) const VALIDATION: &str = "validation";

/// The rule types PostHog accepts, in its message's order.
const RULE_TYPES: [&str; 3] = ["min_length", "max_length", "email"];

/// Checks a sent question's `validation`: a list of objects, each of a known type, a length
/// rule's `value` a positive whole number or null, and a minimum no greater than the maximum.
///
/// # Errors
/// PostHog's message for the first rule broken.
pub(super) fn check_validation_rules(sent: &Value) -> Result<(), String> {
    let Value::Array(rules) = sent else {
        return Err("Question validation must be a list of validation rules".to_owned());
    };
    let mut lengths = [None, None];
    for rule in rules {
        let Value::Object(rule) = rule else {
            return Err("Each validation rule must be an object".to_owned());
        };
        let kind = rule.get("type").and_then(Value::as_str);
        let Some(kind) = kind.filter(|kind| RULE_TYPES.contains(kind)) else {
            return Err(format!(
                "Validation rule type must be one of: {}",
                RULE_TYPES.join(", ")
            ));
        };
        let slot = match kind {
            "min_length" => 0,
            "max_length" => 1,
            _ => continue,
        };
        let value = match rule.get("value") {
            None | Some(Value::Null) => None,
            Some(value) => Some(value.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                format!("Validation rule value for {kind} must be a positive integer")
            })?),
        };
        // PostHog compares the first rule of each type.
        if lengths[slot].is_none() {
            lengths[slot] = Some(value);
        }
    }
    if let [Some(Some(min)), Some(Some(max))] = lengths
        && min > max
    {
        return Err("Minimum length cannot be greater than maximum length".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checked(rules: Value) -> Result<(), String> {
        check_validation_rules(&rules)
    }

    #[test]
    fn known_rules_with_positive_lengths_pass() {
        let rules = json!([{"type": "min_length", "value": 2}, {"type": "max_length", "value": 2},
                           {"type": "email"}, {"type": "max_length", "value": null}]);
        assert_eq!(checked(rules), Ok(()));
        assert_eq!(checked(json!([])), Ok(()));
    }

    #[test]
    fn each_broken_rule_has_posthogs_message() {
        let cases = [
            (
                json!({}),
                "Question validation must be a list of validation rules",
            ),
            (json!(["email"]), "Each validation rule must be an object"),
            (
                json!([{"type": "regex"}]),
                "Validation rule type must be one of: min_length, max_length, email",
            ),
            (
                json!([{"value": 3}]),
                "Validation rule type must be one of: min_length, max_length, email",
            ),
            (
                json!([{"type": "min_length", "value": 0}]),
                "Validation rule value for min_length must be a positive integer",
            ),
            (
                json!([{"type": "max_length", "value": "5"}]),
                "Validation rule value for max_length must be a positive integer",
            ),
            (
                json!([{"type": "max_length", "value": 2.5}]),
                "Validation rule value for max_length must be a positive integer",
            ),
            (
                json!([{"type": "max_length", "value": 3}, {"type": "min_length", "value": 4}]),
                "Minimum length cannot be greater than maximum length",
            ),
        ];
        for (rules, message) in cases {
            assert_eq!(checked(rules.clone()), Err(message.to_owned()), "{rules}");
        }
    }
}
