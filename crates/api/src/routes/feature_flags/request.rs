//! A feature flag request body read into the domain's command.

use domain::ValidationError;
use domain::feature_flag::{FlagChanges, FlagFilters, FlagKey, NewFlag};
use domain::patch::Patch;
use serde_json::{Map, Value};

use crate::fields::{Fields, non_null, not_null};

/// Reads a create body: `key` required, everything else defaulted.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_flag(body: &Map<String, Value>) -> Result<NewFlag, ValidationError> {
    let fields = Fields(body);
    let key = match fields.string("key")? {
        Patch::Value(key) => FlagKey::parse(&key)?,
        Patch::Absent => return Err(ValidationError::required("key")),
        Patch::Null => return Err(not_null("key")),
    };
    Ok(NewFlag {
        key,
        name: fields.string("name")?.value().unwrap_or_default(),
        filters: fields
            .raw("filters")
            .value()
            .map(FlagFilters::parse)
            .transpose()?
            .unwrap_or_default(),
        active: fields.boolean("active")?.value().unwrap_or(true),
        ensure_experience_continuity: fields
            .boolean("ensure_experience_continuity")?
            .value()
            .unwrap_or(false),
    })
}

/// Reads a PATCH body: only the fields sent change, none may be `null`.
///
/// # Errors
/// The first invalid field.
pub(super) fn flag_changes(body: &Map<String, Value>) -> Result<FlagChanges, ValidationError> {
    let fields = Fields(body);
    Ok(FlagChanges {
        name: non_null(fields.string("name")?, "name")?,
        key: non_null(fields.string("key")?, "key")?
            .map(|key| FlagKey::parse(&key))
            .transpose()?,
        filters: non_null(fields.raw("filters"), "filters")?
            .map(FlagFilters::parse)
            .transpose()?,
        active: non_null(fields.boolean("active")?, "active")?,
        ensure_experience_continuity: non_null(
            fields.boolean("ensure_experience_continuity")?,
            "ensure_experience_continuity",
        )?,
        deleted: non_null(fields.boolean("deleted")?, "deleted")?,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_flag_needs_a_valid_key_and_gets_defaults() {
        assert_eq!(
            new_flag(&body(json!({"name": "x"}))).unwrap_err().detail,
            "This field is required."
        );
        let bad = new_flag(&body(json!({"key": "has space"}))).unwrap_err();
        assert_eq!(
            (bad.attr.as_deref(), bad.code.as_str()),
            (Some("key"), "invalid_key")
        );
        let flag = new_flag(&body(json!({"key": "beta"}))).unwrap();
        assert!(flag.active && !flag.ensure_experience_continuity);
        assert_eq!(flag.filters, FlagFilters::default());
    }

    #[test]
    fn patches_change_only_what_is_sent_and_refuse_nulls() {
        let changes = flag_changes(&body(json!({"active": false}))).unwrap();
        assert_eq!(
            changes,
            FlagChanges {
                active: Some(false),
                ..FlagChanges::default()
            }
        );
        let bad = flag_changes(&body(
            json!({"filters": {"groups": [{"rollout_percentage": 150}]}}),
        ))
        .unwrap_err();
        assert_eq!(bad.attr.as_deref(), Some("filters"));
        let null = flag_changes(&body(json!({"filters": null}))).unwrap_err();
        assert_eq!(
            (null.attr.as_deref(), null.detail.as_str()),
            (Some("filters"), "This field may not be null.")
        );
    }
}
