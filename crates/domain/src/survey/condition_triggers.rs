//! What the trigger conditions of a survey list in their `values`: the events that show it
//! (`events`) or call off a showing they armed (`cancelEvents`), each `{name, propertyFilters?}`,
//! and the project's actions that show it (`actions`), each `{id, name, …}`.
//!
//! PostHog's serializer checks none of this: `validate_conditions` only asks for an object, and
//! `_associate_actions` reads each action's `id` (an action that is not an object, or an id that
//! is not a number, is a 500 there). posthog-js skips an event without a name and matches an
//! event's `propertyFilters` as `{property: {values: [string], operator}}`, so a sent value it
//! would skip or misread is refused here rather than stored and silently ignored. Burrow never
//! runs these filters (the SDK does, regex operators included), so no pattern is compiled here.

use serde_json::{Map, Value};

use super::settings::MatchType;

/// The keys of one listed event or action, by wire name.
pub mod trigger_keys {
    pub const NAME: &str = "name";
    pub const PROPERTY_FILTERS: &str = "propertyFilters";
    /// A property filter's accepted values.
    pub const VALUES: &str = "values";
    pub const OPERATOR: &str = "operator";
    /// An action's id in the project.
    pub const ID: &str = "id";
}

use trigger_keys::{ID, NAME, OPERATOR, PROPERTY_FILTERS, VALUES};

/// posthog-js's `PropertyOperator` beyond the match types: numeric comparisons.
const NUMERIC_OPERATORS: [&str; 2] = ["gt", "lt"];

/// The operators an event's property filter may have, posthog-js's `PropertyOperator`.
pub fn property_operators() -> impl Iterator<Item = &'static str> {
    MatchType::ALL
        .into_iter()
        .map(MatchType::as_str)
        .chain(NUMERIC_OPERATORS)
}

/// Checks the sent `values` of `events` or `cancelEvents` (`key` names it in messages): each
/// an object with a non-empty `name` and, when not null, `propertyFilters` posthog-js reads.
pub(super) fn check_events(key: &str, values: &[Value]) -> Result<(), String> {
    for event in values {
        let named = event
            .get(NAME)
            .and_then(Value::as_str)
            .is_some_and(|name| !name.is_empty());
        let Some(event) = event.as_object().filter(|_| named) else {
            return Err(format!("{key} values must be objects with a name"));
        };
        match event.get(PROPERTY_FILTERS) {
            None | Some(Value::Null) => {}
            Some(Value::Object(filters)) => check_property_filters(key, filters)?,
            Some(_) => return Err(format!("{key} {PROPERTY_FILTERS} must be an object")),
        }
    }
    Ok(())
}

/// `{property: {values: [string], operator}}`, an operator posthog-js knows.
fn check_property_filters(key: &str, filters: &Map<String, Value>) -> Result<(), String> {
    for filter in filters.values() {
        let Some(filter) = filter.as_object() else {
            return Err(format!(
                "{key} {PROPERTY_FILTERS} must map properties to objects with {VALUES} and an \
                 {OPERATOR}"
            ));
        };
        let strings = filter
            .get(VALUES)
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().all(Value::is_string));
        if !strings {
            return Err(format!(
                "{key} {PROPERTY_FILTERS} {VALUES} must be a list of strings"
            ));
        }
        let operator = filter.get(OPERATOR).and_then(Value::as_str);
        if !operator.is_some_and(|operator| property_operators().any(|known| known == operator)) {
            let known: Vec<_> = property_operators().collect();
            return Err(format!(
                "{key} {PROPERTY_FILTERS} {OPERATOR} must be one of: {}",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// Checks the sent `values` of `actions`: each an object whose `id`, when not null, is a whole
/// number as PostHog's lookup reads it (an integer, or a string of digits).
pub(super) fn check_actions(key: &str, values: &[Value]) -> Result<(), String> {
    for action in values {
        let Some(action) = action.as_object() else {
            return Err(format!("{key} values must be objects"));
        };
        let whole = match action.get(ID) {
            None | Some(Value::Null) => true,
            Some(Value::Number(id)) => id.is_i64() || id.is_u64(),
            Some(Value::String(id)) => !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()),
            Some(_) => false,
        };
        if !whole {
            return Err(format!("{key} value {ID} must be an integer"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn events(values: Value) -> Result<(), String> {
        check_events("cancelEvents", values.as_array().unwrap())
    }

    #[test]
    fn events_with_a_name_and_posthog_js_filters_pass() {
        assert_eq!(
            events(json!([
                {"name": "$pageview"},
                {"name": "bought", "propertyFilters": null},
                {"name": "clicked", "note": 1, "propertyFilters": {
                    "plan": {"values": ["pro", "team"], "operator": "exact"},
                    "total": {"values": ["100"], "operator": "gt"},
                    "$current_url": {"values": ["^/(a|b)+$"], "operator": "regex"}
                }}
            ])),
            Ok(())
        );
    }

    #[test]
    fn an_event_posthog_js_would_skip_or_misread_is_refused() {
        let named = "cancelEvents values must be objects with a name";
        let operators = "cancelEvents propertyFilters operator must be one of: regex, \
                         not_regex, exact, is_not, icontains, not_icontains, gt, lt";
        for (values, message) in [
            (json!(["$pageview"]), named),
            (json!([{}]), named),
            (json!([{"name": ""}]), named),
            (json!([{"name": 5}]), named),
            (
                json!([{"name": "x", "propertyFilters": []}]),
                "cancelEvents propertyFilters must be an object",
            ),
            (
                json!([{"name": "x", "propertyFilters": {"plan": "pro"}}]),
                "cancelEvents propertyFilters must map properties to objects with values and an operator",
            ),
            (
                json!([{"name": "x", "propertyFilters": {"plan": {"values": "pro", "operator": "exact"}}}]),
                "cancelEvents propertyFilters values must be a list of strings",
            ),
            (
                json!([{"name": "x", "propertyFilters": {"plan": {"values": [1], "operator": "exact"}}}]),
                "cancelEvents propertyFilters values must be a list of strings",
            ),
            (
                json!([{"name": "x", "propertyFilters": {"plan": {"values": ["a"]}}}]),
                operators,
            ),
            (
                json!([{"name": "x", "propertyFilters": {"plan": {"values": ["a"], "operator": "is_set"}}}]),
                operators,
            ),
        ] {
            assert_eq!(events(values.clone()), Err(message.to_owned()), "{values}");
        }
    }

    #[test]
    fn actions_are_objects_with_a_whole_number_id() {
        let check = |values: Value| check_actions("actions", values.as_array().unwrap());
        assert_eq!(
            check(json!([{"id": 1, "name": "Signed up"}, {"id": "2"}, {"id": null}, {}])),
            Ok(())
        );
        assert_eq!(
            check(json!([1])),
            Err("actions values must be objects".to_owned())
        );
        for id in [json!("abc"), json!(1.5), json!(""), json!([1])] {
            assert_eq!(
                check(json!([{ "id": id }])),
                Err("actions value id must be an integer".to_owned()),
                "{id}"
            );
        }
    }
}
