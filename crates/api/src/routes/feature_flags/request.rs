//! A feature flag request body read into [`FeatureFlagWrite`] — also its schema in the OpenAPI
//! document — and from there into the domain's command.

use domain::ValidationError;
use domain::feature_flag::{
    FlagChanges, FlagFilters, FlagKey, KEY_PATTERN, MAX_KEY_CHARS, NewFlag,
};
use domain::patch::Patch;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::ObjectBuilder;

use crate::contract::flag_filter_shapes::FlagFiltersShape;
use crate::contract::schemas::text;
use crate::fields::{Fields, non_null, not_null};

/// A feature flag to create (`key` required) or change (any subset; `deleted: true` deletes).
#[derive(ToSchema)]
pub(crate) struct FeatureFlagWrite {
    #[schema(schema_with = key_schema, required = false)]
    key: Option<FlagKey>,
    #[schema(nullable = false)]
    name: Option<String>,
    #[schema(value_type = FlagFiltersShape, required = false)]
    filters: Option<FlagFilters>,
    #[schema(nullable = false)]
    active: Option<bool>,
    #[schema(nullable = false)]
    ensure_experience_continuity: Option<bool>,
    /// Its payload (of `true`) is fetched as configuration through `…/remote_config`.
    #[schema(nullable = false)]
    is_remote_configuration: Option<bool>,
    /// PATCH only: `true` deletes the flag (soft).
    #[schema(nullable = false)]
    deleted: Option<bool>,
}

/// The key as the domain checks it: its pattern and length are the domain's constants.
fn key_schema() -> ObjectBuilder {
    text(MAX_KEY_CHARS, false)
        .min_length(Some(1))
        .pattern(Some(KEY_PATTERN))
        .description(Some(
            "Letters, digits, `-` and `_`; unique among the project's live flags.",
        ))
}

/// Each reader fills the fields in its own order (a struct literal evaluates them as written), so
/// the first error reported stays the one PostHog reports for that method.
impl FeatureFlagWrite {
    /// Reads a create body: `key` first (required), `null` elsewhere taken as absent, and no
    /// `deleted`.
    fn create(mut body: Map<String, Value>) -> Result<Self, ValidationError> {
        let filters = sent_filters(&mut body);
        let fields = Fields(&body);
        Ok(Self {
            key: Some(match fields.string("key")? {
                Patch::Value(key) => FlagKey::parse(&key)?,
                Patch::Absent => return Err(ValidationError::required("key")),
                Patch::Null => return Err(not_null("key")),
            }),
            name: fields.string("name")?.value(),
            filters: filters.value().map(FlagFilters::parse).transpose()?,
            active: fields.boolean("active")?.value(),
            ensure_experience_continuity: fields.boolean("ensure_experience_continuity")?.value(),
            is_remote_configuration: fields.boolean("is_remote_configuration")?.value(),
            deleted: None,
        })
    }

    /// Reads a PATCH body: `name` first, and no field may be `null`.
    fn change(mut body: Map<String, Value>) -> Result<Self, ValidationError> {
        let filters = sent_filters(&mut body);
        let fields = Fields(&body);
        Ok(Self {
            name: non_null(fields.string("name")?, "name")?,
            key: non_null(fields.string("key")?, "key")?
                .map(|key| FlagKey::parse(&key))
                .transpose()?,
            filters: non_null(filters, "filters")?
                .map(FlagFilters::parse)
                .transpose()?,
            active: non_null(fields.boolean("active")?, "active")?,
            ensure_experience_continuity: non_null(
                fields.boolean("ensure_experience_continuity")?,
                "ensure_experience_continuity",
            )?,
            is_remote_configuration: non_null(
                fields.boolean("is_remote_configuration")?,
                "is_remote_configuration",
            )?,
            deleted: non_null(fields.boolean("deleted")?, "deleted")?,
        })
    }
}

/// `filters` as sent, taken out of the body: parsed once, from the value itself.
fn sent_filters(body: &mut Map<String, Value>) -> Patch<Value> {
    match body.remove("filters") {
        None => Patch::Absent,
        Some(Value::Null) => Patch::Null,
        Some(filters) => Patch::Value(filters),
    }
}

/// Reads a create body: `key` required, everything else defaulted.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_flag(body: Map<String, Value>) -> Result<NewFlag, ValidationError> {
    let write = FeatureFlagWrite::create(body)?;
    Ok(NewFlag {
        key: write.key.ok_or_else(|| ValidationError::required("key"))?,
        name: write.name.unwrap_or_default(),
        filters: write.filters.unwrap_or_default(),
        active: write.active.unwrap_or(true),
        ensure_experience_continuity: write.ensure_experience_continuity.unwrap_or(false),
        is_remote_configuration: write.is_remote_configuration.unwrap_or(false),
    })
}

/// Reads a PATCH body: only the fields sent change, none may be `null`.
///
/// # Errors
/// The first invalid field.
pub(super) fn flag_changes(body: Map<String, Value>) -> Result<FlagChanges, ValidationError> {
    let write = FeatureFlagWrite::change(body)?;
    Ok(FlagChanges {
        name: write.name,
        key: write.key,
        filters: write.filters,
        active: write.active,
        ensure_experience_continuity: write.ensure_experience_continuity,
        is_remote_configuration: write.is_remote_configuration,
        deleted: write.deleted,
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
            new_flag(body(json!({"name": "x"}))).unwrap_err().detail,
            "This field is required."
        );
        let bad = new_flag(body(json!({"key": "has space"}))).unwrap_err();
        assert_eq!(
            (bad.attr.as_deref(), bad.code.as_str()),
            (Some("key"), "invalid_key")
        );
        let flag = new_flag(body(json!({"key": "beta"}))).unwrap();
        assert!(flag.active && !flag.ensure_experience_continuity);
        assert_eq!(flag.filters, FlagFilters::default());
    }

    #[test]
    fn patches_change_only_what_is_sent_and_refuse_nulls() {
        let changes = flag_changes(body(json!({"active": false}))).unwrap();
        assert_eq!(
            changes,
            FlagChanges {
                active: Some(false),
                ..FlagChanges::default()
            }
        );
        let bad = flag_changes(body(
            json!({"filters": {"groups": [{"rollout_percentage": 150}]}}),
        ))
        .unwrap_err();
        assert_eq!(bad.attr.as_deref(), Some("filters"));
        let null = flag_changes(body(json!({"filters": null}))).unwrap_err();
        assert_eq!(
            (null.attr.as_deref(), null.detail.as_str()),
            (Some("filters"), "This field may not be null.")
        );
    }
}
