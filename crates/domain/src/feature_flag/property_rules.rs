//! What kinds of property filter a condition set may hold, and which values their operators
//! take, checked when a flag is written with PostHog's `validate_filters` messages: a filter
//! Burrow would read and then never match (an event property in a person condition, a number
//! for `regex`, a cohort that does not exist) is refused instead.

use serde_json::Value;

use super::{FLAG_FILTER_TYPE, Operator, PropertyFilter, dependency_flag_id};
use crate::error::{ValidationCode, ValidationError};

/// Checks one property filter of a condition set, `group_aggregated` when the set (or its
/// flag) aggregates by a group type.
///
/// # Errors
/// PostHog's message and code, `attr: filters`.
pub(super) fn check(
    filter: &PropertyFilter,
    group_aggregated: bool,
) -> Result<(), ValidationError> {
    let kind = filter.kind.as_deref().unwrap_or("person");
    let operator = filter.operator();
    if group_aggregated {
        if kind != "group" {
            return Err(invalid(
                "Filters are not valid (group-aggregated conditions can only use group properties)",
            ));
        }
    } else if !matches!(kind, "person" | "cohort" | FLAG_FILTER_TYPE) {
        return Err(invalid(
            "Filters are not valid (person-aggregated conditions can only use person, cohort, \
             and flag properties)",
        ));
    }
    if kind == FLAG_FILTER_TYPE {
        return check_flag_dependency(filter, &operator);
    }
    if kind == "cohort" {
        return check_cohort(filter, &operator);
    }
    match operator {
        Operator::Regex
        | Operator::NotRegex
        | Operator::IContains
        | Operator::NotIContains
        | Operator::Gt
        | Operator::Gte
        | Operator::Lt
        | Operator::Lte
            if !matches!(filter.value, Some(Value::String(_))) =>
        {
            Err(ValidationError::field(
                "filters",
                ValidationCode::InvalidValue,
                format!(
                    "Invalid value for operator {}: {}",
                    operator.name(),
                    python_str(filter.value.as_ref())
                ),
            ))
        }
        Operator::In | Operator::NotIn => Err(ValidationError::field(
            "filters",
            ValidationCode::InvalidOperator,
            format!(
                "The '{}' operator is only valid for cohort properties, not '{kind}' properties.",
                operator.name()
            ),
        )),
        Operator::FlagEvaluatesTo => Err(ValidationError::field(
            "filters",
            ValidationCode::InvalidOperator,
            format!(
                "The 'flag_evaluates_to' operator is only valid for flag properties, not '{kind}' \
                 properties."
            ),
        )),
        _ => Ok(()),
    }
}

/// A cohort filter names a cohort by id (whether the project has it is checked against
/// storage), with `in`, `not_in` or `exact`, the operators the SDKs evaluate.
fn check_cohort(filter: &PropertyFilter, operator: &Operator) -> Result<(), ValidationError> {
    if filter.cohort_id().is_none() {
        return Err(ValidationError::field(
            "filters",
            ValidationCode::CohortDoesNotExist,
            format!(
                "Cohort with id {} does not exist",
                python_str(filter.value.as_ref())
            ),
        ));
    }
    if !matches!(operator, Operator::In | Operator::NotIn | Operator::Exact) {
        return Err(ValidationError::field(
            "filters",
            ValidationCode::InvalidOperator,
            format!(
                "The '{}' operator is not valid for cohort properties: use 'in' or 'not_in'.",
                operator.name()
            ),
        ));
    }
    Ok(())
}

/// A flag dependency names a flag by id, with `flag_evaluates_to` and a value it can match:
/// `true`, `false` or a variant key.
fn check_flag_dependency(
    filter: &PropertyFilter,
    operator: &Operator,
) -> Result<(), ValidationError> {
    if *operator != Operator::FlagEvaluatesTo {
        return Err(invalid(
            "Flag properties must use the 'flag_evaluates_to' operator",
        ));
    }
    let key = filter.key.as_deref().unwrap_or_default();
    if dependency_flag_id(key).is_none() {
        return Err(invalid(format!(
            "Flag dependencies must reference flag IDs (integers), not flag keys. Invalid \
             reference: '{key}'"
        )));
    }
    match &filter.value {
        Some(Value::Bool(_)) => Ok(()),
        Some(Value::String(variant)) if !variant.is_empty() => Ok(()),
        other => Err(ValidationError::field(
            "filters",
            ValidationCode::InvalidValue,
            format!(
                "A flag dependency's value must be true, false or a variant key, not {}.",
                python_str(other.as_ref())
            ),
        )),
    }
}

fn invalid(detail: impl Into<String>) -> ValidationError {
    ValidationError::invalid("filters", detail)
}

/// A value as PostHog's messages print it (Python's `str`): `True`, `None`, `5`, text as is.
fn python_str(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "None".to_owned(),
        Some(Value::Bool(true)) => "True".to_owned(),
        Some(Value::Bool(false)) => "False".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checked(filter: Value, group_aggregated: bool) -> Result<(), (ValidationCode, String)> {
        check(&PropertyFilter::read(filter).unwrap(), group_aggregated)
            .map_err(|error| (error.code, error.detail))
    }

    fn refused(filter: Value) -> String {
        checked(filter, false).unwrap_err().1
    }

    #[test]
    fn person_conditions_take_person_cohort_and_flag_filters_only() {
        assert!(checked(json!({"key": "email", "value": "a"}), false).is_ok());
        assert!(
            checked(
                json!({"key": "email", "value": "a", "type": "person"}),
                false
            )
            .is_ok()
        );
        for kind in ["event", "group", "element", "session"] {
            assert_eq!(
                refused(json!({"key": "x", "value": "a", "type": kind})),
                "Filters are not valid (person-aggregated conditions can only use person, \
                 cohort, and flag properties)"
            );
        }
        let person = checked(json!({"key": "x", "value": "a", "type": "person"}), true);
        assert_eq!(
            person.unwrap_err().1,
            "Filters are not valid (group-aggregated conditions can only use group properties)"
        );
    }

    #[test]
    fn a_cohort_filter_names_a_cohort_by_id_with_a_cohort_operator() {
        assert!(checked(json!({"key": "id", "value": 12, "type": "cohort"}), false).is_ok());
        assert!(
            checked(
                json!({"key": "id", "value": "12", "type": "cohort", "operator": "not_in"}),
                false
            )
            .is_ok()
        );
        let (code, detail) = checked(
            json!({"key": "id", "value": "vip", "type": "cohort"}),
            false,
        )
        .unwrap_err();
        assert_eq!(code, ValidationCode::CohortDoesNotExist);
        assert_eq!(detail, "Cohort with id vip does not exist");
        let (code, _) = checked(
            json!({"key": "id", "value": 12, "type": "cohort", "operator": "icontains"}),
            false,
        )
        .unwrap_err();
        assert_eq!(code, ValidationCode::InvalidOperator);
    }

    #[test]
    fn text_operators_take_text() {
        for operator in [
            "regex",
            "not_regex",
            "icontains",
            "not_icontains",
            "gt",
            "gte",
            "lt",
            "lte",
        ] {
            let (code, detail) = checked(
                json!({"key": "age", "operator": operator, "value": 30}),
                false,
            )
            .unwrap_err();
            assert_eq!(code, ValidationCode::InvalidValue);
            assert_eq!(detail, format!("Invalid value for operator {operator}: 30"));
            assert!(
                checked(
                    json!({"key": "age", "operator": operator, "value": "30"}),
                    false
                )
                .is_ok()
            );
        }
        assert_eq!(
            refused(json!({"key": "a", "operator": "gt", "value": true})),
            "Invalid value for operator gt: True"
        );
    }

    #[test]
    fn cohort_and_flag_operators_belong_to_their_kinds() {
        assert_eq!(
            refused(json!({"key": "a", "operator": "in", "value": "1"})),
            "The 'in' operator is only valid for cohort properties, not 'person' properties."
        );
        assert_eq!(
            refused(
                json!({"key": "a", "operator": "flag_evaluates_to", "value": true, "type": "person"})
            ),
            "The 'flag_evaluates_to' operator is only valid for flag properties, not 'person' \
             properties."
        );
    }

    #[test]
    fn a_flag_dependency_names_a_flag_by_id_with_a_value_it_can_have() {
        let dependency = |key: Value, operator: &str, value: Value| {
            checked(
                json!({"key": key, "type": "flag", "operator": operator, "value": value}),
                false,
            )
        };
        assert!(dependency(json!("12"), "flag_evaluates_to", json!(true)).is_ok());
        assert!(dependency(json!("12"), "flag_evaluates_to", json!(false)).is_ok());
        assert!(dependency(json!("12"), "flag_evaluates_to", json!("control")).is_ok());
        assert_eq!(
            dependency(json!("12"), "exact", json!(true)).unwrap_err().1,
            "Flag properties must use the 'flag_evaluates_to' operator"
        );
        assert_eq!(
            dependency(json!("beta"), "flag_evaluates_to", json!(true))
                .unwrap_err()
                .1,
            "Flag dependencies must reference flag IDs (integers), not flag keys. Invalid \
             reference: 'beta'"
        );
        for value in [json!(1), json!(""), json!(null), json!(["a"])] {
            let (code, _) = dependency(json!("12"), "flag_evaluates_to", value).unwrap_err();
            assert_eq!(code, ValidationCode::InvalidValue);
        }
    }
}
