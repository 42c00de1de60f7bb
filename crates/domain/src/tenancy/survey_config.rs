//! A project's `survey_config` (PostHog's `Team.survey_config`): what every survey of the
//! project shares. PostHog knows two keys, a free-form `appearance` and
//! `seenSurveyWaitPeriodInDays`, the project-wide wait between two surveys shown to one person,
//! a floor under each survey's own wait (`Survey::internal_targeting_flag`); other keys are kept
//! as sent.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::activity::change_json;
use crate::error::{ValidationCode, ValidationError};
use crate::json_fields::json_length;

/// The key of the project-wide wait, in days (PostHog's `WAIT_PERIOD_KEY`).
pub const WAIT_PERIOD_KEY: &str = "seenSurveyWaitPeriodInDays";

/// The longest project-wide wait a write may set (PostHog's `MAX_GLOBAL_WAIT_PERIOD_DAYS`).
pub const MAX_WAIT_PERIOD_DAYS: i64 = 365;

/// The most a project's `survey_config` may weigh as JSON text, merged: every node's SDK
/// snapshot and every read of the project carry it, and PostHog sets no bound.
pub const MAX_SURVEY_CONFIG_BYTES: usize = 64 * 1024;

const ATTR: &str = "survey_config";

/// Keys PostHog's activity log never records a change of (`common_field_exclusions`).
const UNLOGGED_KEYS: [&str; 11] = [
    "id",
    "uuid",
    "short_id",
    "created_at",
    "created_by",
    "last_modified_at",
    "last_modified_by",
    "updated_at",
    "updated_by",
    "team",
    "team_id",
];

/// A project's survey settings: a JSON object within [`MAX_SURVEY_CONFIG_BYTES`].
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyConfig(Map<String, Value>);

impl SurveyConfig {
    /// What a write sent (not `null`, which clears the config), checked as PostHog's
    /// `validate_survey_config` checks it, and bounded.
    ///
    /// # Errors
    /// `Must be an object.` (`attr: survey_config`); `Must be a whole number from 0 to 365.`
    /// (`attr: survey_config__seenSurveyWaitPeriodInDays`) for a wait that is not an integer
    /// of that range (a boolean or `7.0` included); `max_length` past
    /// [`MAX_SURVEY_CONFIG_BYTES`].
    pub fn parse(value: Value) -> Result<Self, ValidationError> {
        let Value::Object(object) = value else {
            return Err(ValidationError::invalid(ATTR, "Must be an object."));
        };
        match object.get(WAIT_PERIOD_KEY) {
            None | Some(Value::Null) => {}
            Some(Value::Number(days))
                if days
                    .as_i64()
                    .is_some_and(|days| (0..=MAX_WAIT_PERIOD_DAYS).contains(&days)) => {}
            Some(_) => {
                return Err(ValidationError::invalid(
                    format!("{ATTR}__{WAIT_PERIOD_KEY}"),
                    format!("Must be a whole number from 0 to {MAX_WAIT_PERIOD_DAYS}."),
                ));
            }
        }
        Self(object).bounded()
    }

    /// The config as storage holds it (anything but an object, written around Burrow, is no
    /// config).
    pub fn stored(value: Value) -> Option<Self> {
        match value {
            Value::Object(object) => Some(Self(object)),
            _ => None,
        }
    }

    /// PATCH's shallow merge, as PostHog's: the sent keys replace the stored ones, the others
    /// stay.
    ///
    /// # Errors
    /// `max_length` (`attr: survey_config`) when the merged config passes
    /// [`MAX_SURVEY_CONFIG_BYTES`].
    pub fn merged_onto(self, stored: Option<&Self>) -> Result<Self, ValidationError> {
        let Some(stored) = stored else {
            return Ok(self);
        };
        let mut merged = stored.0.clone();
        merged.extend(self.0);
        Self(merged).bounded()
    }

    /// The project-wide wait in whole days, when it is one (PostHog's
    /// `get_global_wait_period_days`): a floor under every survey's own.
    pub fn wait_period_floor(&self) -> Option<u64> {
        self.0.get(WAIT_PERIOD_KEY).and_then(positive_days)
    }

    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }

    fn bounded(self) -> Result<Self, ValidationError> {
        if json_length(&self.0) > MAX_SURVEY_CONFIG_BYTES {
            return Err(ValidationError::field(
                ATTR,
                ValidationCode::MaxLength,
                format!("Ensure {ATTR} has no more than {MAX_SURVEY_CONFIG_BYTES} bytes."),
            ));
        }
        Ok(self)
    }
}

/// A wait period in whole days, as PostHog's `_positive_days` reads one wherever it is set (a
/// survey's conditions, the project's config): a number (not a boolean) truncated to whole
/// days, when that is more than zero; anything else is no wait. Days past `u64` saturate.
pub fn positive_days(value: &Value) -> Option<u64> {
    let Value::Number(number) = value else {
        return None;
    };
    let days = match number.as_u64() {
        Some(days) => days,
        // A negative integer, or a float: truncated (`as` saturates and maps NaN to 0).
        None => number.as_f64().map_or(0, |days| days.trunc() as u64),
    };
    (days > 0).then_some(days)
}

/// The changes between two configs as PostHog's `dict_changes_between` lists them for the
/// `Survey` scope, one per key whose value differs (a missing key counting as `null`), keys in
/// order; keys PostHog never logs are left out.
pub fn config_changes(before: Option<&SurveyConfig>, after: Option<&SurveyConfig>) -> Vec<Value> {
    let empty = Map::new();
    let before = before.map_or(&empty, |config| &config.0);
    let after = after.map_or(&empty, |config| &config.0);
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|key| !UNLOGGED_KEYS.contains(&key.as_str()))
        .filter_map(|key| {
            let before = before.get(key).unwrap_or(&Value::Null);
            let after = after.get(key).unwrap_or(&Value::Null);
            (before != after)
                .then(|| change_json(crate::survey::activity::SCOPE, key, before, after))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config(value: Value) -> SurveyConfig {
        SurveyConfig::parse(value).unwrap()
    }

    fn refusal(value: Value) -> (Option<String>, String, &'static str) {
        let error = SurveyConfig::parse(value).unwrap_err();
        (error.attr, error.detail, error.code.as_str())
    }

    #[test]
    fn a_config_is_an_object() {
        for sent in [json!("x"), json!([]), json!(7), json!(true)] {
            assert_eq!(
                refusal(sent),
                (
                    Some("survey_config".into()),
                    "Must be an object.".into(),
                    "invalid_input"
                )
            );
        }
        assert_eq!(
            config(json!({"appearance": {"backgroundColor": "#fff"}, "other": [1]})).as_map(),
            json!({"appearance": {"backgroundColor": "#fff"}, "other": [1]})
                .as_object()
                .unwrap()
        );
    }

    #[test]
    fn the_wait_is_a_whole_number_of_days_up_to_a_year() {
        for days in [json!(0), json!(30), json!(365), Value::Null] {
            assert!(SurveyConfig::parse(json!({"seenSurveyWaitPeriodInDays": days})).is_ok());
        }
        for days in [
            json!(-1),
            json!(366),
            json!(7.0),
            json!(7.5),
            json!(true),
            json!("7"),
            json!({}),
        ] {
            assert_eq!(
                refusal(json!({"seenSurveyWaitPeriodInDays": days})),
                (
                    Some("survey_config__seenSurveyWaitPeriodInDays".into()),
                    "Must be a whole number from 0 to 365.".into(),
                    "invalid_input"
                ),
                "{days}"
            );
        }
    }

    #[test]
    fn a_config_is_bounded_as_sent_and_as_merged() {
        let half = "x".repeat(MAX_SURVEY_CONFIG_BYTES / 2);
        let whole = "x".repeat(MAX_SURVEY_CONFIG_BYTES);
        assert_eq!(
            refusal(json!({"appearance": whole})),
            (
                Some("survey_config".into()),
                format!("Ensure survey_config has no more than {MAX_SURVEY_CONFIG_BYTES} bytes."),
                "max_length"
            )
        );
        let stored = config(json!({"a": half}));
        let sent = config(json!({"b": half}));
        let error = sent.merged_onto(Some(&stored)).unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.code.as_str()),
            (Some("survey_config"), "max_length")
        );
    }

    #[test]
    fn a_merge_replaces_the_sent_keys_and_keeps_the_others() {
        let stored = config(json!({"appearance": {"a": 1}, "seenSurveyWaitPeriodInDays": 7}));
        let merged = config(json!({"appearance": {"b": 2}, "x": null}))
            .merged_onto(Some(&stored))
            .unwrap();
        assert_eq!(
            Value::Object(merged.into_map()),
            json!({"appearance": {"b": 2}, "seenSurveyWaitPeriodInDays": 7, "x": null})
        );
        let first = config(json!({"x": 1})).merged_onto(None).unwrap();
        assert_eq!(Value::Object(first.into_map()), json!({"x": 1}));
    }

    #[test]
    fn waits_are_positive_whole_days_and_anything_else_is_none() {
        assert_eq!(positive_days(&json!(7)), Some(7));
        assert_eq!(positive_days(&json!(7.9)), Some(7));
        assert_eq!(positive_days(&json!(1e30)), Some(u64::MAX));
        for none in [
            json!(0),
            json!(0.5),
            json!(-3),
            json!(-3.5),
            json!(true),
            json!("7"),
            Value::Null,
        ] {
            assert_eq!(positive_days(&none), None, "{none}");
        }
        assert_eq!(
            config(json!({"seenSurveyWaitPeriodInDays": 30})).wait_period_floor(),
            Some(30)
        );
        assert_eq!(
            config(json!({"seenSurveyWaitPeriodInDays": 0})).wait_period_floor(),
            None
        );
        assert_eq!(config(json!({})).wait_period_floor(), None);
    }

    #[test]
    fn changes_are_listed_per_key_as_posthog_lists_them() {
        let before = config(json!({"appearance": {"a": 1}, "kept": 1, "gone": "x", "id": 1}));
        let after = config(json!({"appearance": {"a": 2}, "kept": 1, "new": true, "id": 2}));
        assert_eq!(
            config_changes(Some(&before), Some(&after)),
            vec![
                json!({"type": "Survey", "action": "changed", "field": "appearance",
                       "before": {"a": 1}, "after": {"a": 2}}),
                json!({"type": "Survey", "action": "deleted", "field": "gone",
                       "before": "x", "after": null}),
                json!({"type": "Survey", "action": "created", "field": "new",
                       "before": null, "after": true}),
            ]
        );
        assert_eq!(
            config_changes(None, Some(&after)).len(),
            3,
            "every key but id is created"
        );
        assert!(config_changes(Some(&before), Some(&before)).is_empty());
        assert!(config_changes(None, None).is_empty());
    }
}
