//! Feature flags: the entity, the rules of its `filters`, and the use cases behind
//! `/api/projects/{id}/feature_flags/`. Surveys link to flags and create targeting flags.

use std::sync::{Arc, OnceLock};

use chrono::{DateTime, Utc};
use regex::Regex;
use serde_json::{Map, Value};

use crate::error::{Unexpected, ValidationCode, ValidationError};
use crate::input::{Fields, Patch, not_null};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic, UserId};

/// A flag's integer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlagId(pub i32);

#[derive(Debug, Clone, PartialEq)]
pub struct FeatureFlag {
    pub id: FlagId,
    pub project_id: ProjectId,
    pub name: String,
    pub key: String,
    /// Always an object: `groups`, optional `multivariate`, optional `payloads`.
    pub filters: Map<String, Value>,
    pub deleted: bool,
    pub active: bool,
    pub ensure_experience_continuity: bool,
    pub created_at: DateTime<Utc>,
    pub created_by: Option<UserBasic>,
}

impl FeatureFlag {
    /// The keys of the flag's variants (empty for a boolean flag).
    pub fn variant_keys(&self) -> Vec<String> {
        self.filters
            .get("multivariate")
            .and_then(|m| m.get("variants"))
            .and_then(Value::as_array)
            .map(|variants| {
                variants
                    .iter()
                    .filter_map(|v| v.get("key").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A flag to insert.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFlag {
    pub project_id: ProjectId,
    pub name: String,
    pub key: String,
    pub filters: Map<String, Value>,
    pub active: bool,
    pub ensure_experience_continuity: bool,
    pub created_by: Option<UserId>,
}

/// Changes to a flag; `None` leaves a column as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlagChanges {
    pub name: Option<String>,
    pub key: Option<String>,
    pub filters: Option<Map<String, Value>>,
    pub active: Option<bool>,
    pub ensure_experience_continuity: Option<bool>,
    pub deleted: Option<bool>,
}

#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    #[error("Not found.")]
    NotFound,
    /// Another live flag of the project has the key.
    #[error("There is already a feature flag with this key.")]
    KeyTaken,
    #[error(transparent)]
    Unexpected(#[from] Unexpected),
}

impl FlagError {
    /// The key-conflict as the validation error clients expect.
    fn into_client_error(self) -> Self {
        match self {
            Self::KeyTaken => Self::Invalid(ValidationError::field(
                "key",
                ValidationCode::Unique,
                "There is already a feature flag with this key.",
            )),
            other => other,
        }
    }
}

/// Stored feature flags. Deleted flags are invisible except through a survey's link.
#[async_trait::async_trait]
pub trait FeatureFlagRepository: Send + Sync {
    /// Live flags of the project, newest first (ties by id, descending).
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<FeatureFlag>, Unexpected>;

    /// A live flag of the project.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected>;

    /// # Errors
    /// `KeyTaken` when a live flag of the project has the key; `Unexpected` otherwise.
    async fn create(&self, flag: NewFlag) -> Result<FeatureFlag, FlagError>;

    /// Applies the changes to a live flag and returns it.
    ///
    /// # Errors
    /// `NotFound`, `KeyTaken`, `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, FlagError>;
}

/// Use cases of `/feature_flags/`.
pub struct FeatureFlagService {
    flags: Arc<dyn FeatureFlagRepository>,
}

impl FeatureFlagService {
    pub fn new(flags: Arc<dyn FeatureFlagRepository>) -> Self {
        Self { flags }
    }

    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<FeatureFlag>, FlagError> {
        Ok(self.flags.list(project, page).await?)
    }

    /// # Errors
    /// `NotFound` for a missing, deleted or foreign flag.
    pub async fn get(&self, project: ProjectId, id: FlagId) -> Result<FeatureFlag, FlagError> {
        self.flags
            .get(project, id)
            .await?
            .ok_or(FlagError::NotFound)
    }

    /// # Errors
    /// `Invalid` for a bad body, including a taken key.
    pub async fn create(
        &self,
        project: ProjectId,
        creator: UserId,
        body: &Map<String, Value>,
    ) -> Result<FeatureFlag, FlagError> {
        let fields = Fields(body);
        let key = match fields.string("key")? {
            Patch::Value(key) => validate_key(&key)?,
            Patch::Absent => return Err(ValidationError::required("key").into()),
            Patch::Null => return Err(not_null("key").into()),
        };
        let name = fields.string("name")?.value().unwrap_or_default();
        let filters = match fields.raw("filters") {
            Patch::Value(filters) => validate_filters(filters)?,
            Patch::Absent | Patch::Null => default_filters(),
        };
        let active = fields.boolean("active")?.value().unwrap_or(true);
        let ensure_experience_continuity = fields
            .boolean("ensure_experience_continuity")?
            .value()
            .unwrap_or(false);
        let flag = NewFlag {
            project_id: project,
            name,
            key,
            filters,
            active,
            ensure_experience_continuity,
            created_by: Some(creator),
        };
        self.flags
            .create(flag)
            .await
            .map_err(FlagError::into_client_error)
    }

    /// Partial update; `deleted: true` deletes the flag (as DELETE does).
    ///
    /// # Errors
    /// `NotFound`, `Invalid`.
    pub async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        body: &Map<String, Value>,
    ) -> Result<FeatureFlag, FlagError> {
        let fields = Fields(body);
        let changes = FlagChanges {
            name: non_null(fields.string("name")?, "name")?,
            key: non_null(fields.string("key")?, "key")?
                .map(|key| validate_key(&key))
                .transpose()?,
            filters: match fields.raw("filters") {
                Patch::Value(filters) => Some(validate_filters(filters)?),
                Patch::Null => return Err(not_null("filters").into()),
                Patch::Absent => None,
            },
            active: non_null(fields.boolean("active")?, "active")?,
            ensure_experience_continuity: non_null(
                fields.boolean("ensure_experience_continuity")?,
                "ensure_experience_continuity",
            )?,
            deleted: non_null(fields.boolean("deleted")?, "deleted")?,
        };
        self.flags
            .update(project, id, changes)
            .await
            .map_err(FlagError::into_client_error)
    }

    /// Soft delete: the flag disappears from the API and frees its key; surveys linked to it
    /// keep showing it with `deleted: true`.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn delete(&self, project: ProjectId, id: FlagId) -> Result<(), FlagError> {
        let changes = FlagChanges {
            deleted: Some(true),
            ..FlagChanges::default()
        };
        self.flags.update(project, id, changes).await.map(|_| ())
    }
}

fn non_null<T>(patch: Patch<T>, attr: &str) -> Result<Option<T>, ValidationError> {
    match patch {
        Patch::Absent => Ok(None),
        Patch::Null => Err(not_null(attr)),
        Patch::Value(value) => Ok(Some(value)),
    }
}

/// `^[a-zA-Z0-9_-]+$`, with PostHog's message.
pub fn validate_key(key: &str) -> Result<String, ValidationError> {
    static KEY: OnceLock<Regex> = OnceLock::new();
    let pattern =
        KEY.get_or_init(|| Regex::new(r"^[a-zA-Z0-9_-]+$").expect("static regex compiles"));
    if key.is_empty() {
        return Err(ValidationError::field(
            "key",
            ValidationCode::Blank,
            "This field may not be blank.",
        ));
    }
    if key.len() > 400 {
        return Err(ValidationError::field(
            "key",
            ValidationCode::MaxLength,
            "Ensure this field has no more than 400 characters.",
        ));
    }
    if !pattern.is_match(key) {
        return Err(ValidationError::field(
            "key",
            ValidationCode::InvalidKey,
            "Only letters, numbers, hyphens (\"-\") & underscores (\"_\") are allowed.",
        ));
    }
    Ok(key.to_owned())
}

/// A flag that rolls out to nobody until it is given groups.
pub fn default_filters() -> Map<String, Value> {
    let mut filters = Map::new();
    filters.insert("groups".into(), Value::Array(vec![]));
    filters
}

fn filters_error(detail: impl Into<String>) -> ValidationError {
    ValidationError::field("filters", ValidationCode::Invalid, detail)
}

/// Checks a flag's `filters` and returns them with `groups` present. Errors use `attr: filters`.
///
/// # Errors
/// A non-object, malformed groups, a rollout outside 0–100, or variants not summing to 100.
pub fn validate_filters(filters: &Value) -> Result<Map<String, Value>, ValidationError> {
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
    for group in groups.iter() {
        let Value::Object(group) = group else {
            return Err(filters_error("Each filter group must be an object."));
        };
        match group.get("properties") {
            None | Some(Value::Null) | Some(Value::Array(_)) => {}
            Some(_) => return Err(filters_error("Group properties must be a list.")),
        }
        if let Some(Value::Array(properties)) = group.get("properties")
            && properties.iter().any(|p| !p.is_object())
        {
            return Err(filters_error(
                "Filters are not valid (can only use person, cohort, and flag properties)",
            ));
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
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(_) => return Err(filters_error("Group variant must be a string or null.")),
        }
    }
    validate_multivariate(filters.get("multivariate"))?;
    match filters.get("payloads") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(_) => return Err(filters_error("Payloads must be an object.")),
    }
    Ok(filters)
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
    fn keys_allow_letters_digits_hyphens_and_underscores_only() {
        assert!(validate_key("beta-feature_2").is_ok());
        let error = validate_key("beta feature").unwrap_err();
        assert_eq!(error.code, ValidationCode::InvalidKey);
        assert_eq!(error.attr.as_deref(), Some("key"));
        assert_eq!(validate_key("").unwrap_err().code, ValidationCode::Blank);
    }

    #[test]
    fn rollouts_must_be_between_0_and_100() {
        assert!(
            validate_filters(&json!({"groups": [{"properties": [], "rollout_percentage": 50}]}))
                .is_ok()
        );
        assert!(validate_filters(&json!({"groups": [{"rollout_percentage": null}]})).is_ok());
        for bad in [json!(101), json!(-1), json!("50")] {
            let error =
                validate_filters(&json!({"groups": [{"rollout_percentage": bad}]})).unwrap_err();
            assert_eq!(error.attr.as_deref(), Some("filters"));
        }
    }

    #[test]
    fn variant_percentages_must_sum_to_100() {
        let ok = json!({"groups": [], "multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 50}]}});
        assert!(validate_filters(&ok).is_ok());
        let bad = json!({"multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 40}]}});
        assert_eq!(
            validate_filters(&bad).unwrap_err().detail,
            "Invalid variant definitions: Variant rollout percentages must sum to 100."
        );
    }

    #[test]
    fn missing_groups_are_filled_in_and_non_objects_rejected() {
        assert_eq!(
            validate_filters(&json!({})).unwrap().get("groups"),
            Some(&json!([]))
        );
        assert!(validate_filters(&json!([])).is_err());
        assert!(validate_filters(&json!({"groups": "all"})).is_err());
    }

    #[test]
    fn variant_keys_come_from_multivariate() {
        let flag = FeatureFlag {
            id: FlagId(1),
            project_id: ProjectId(1),
            name: String::new(),
            key: "k".into(),
            filters: json!({"multivariate": {"variants": [{"key": "a"}, {"key": "b"}]}})
                .as_object()
                .unwrap()
                .clone(),
            deleted: false,
            active: true,
            ensure_experience_continuity: false,
            created_at: Utc::now(),
            created_by: None,
        };
        assert_eq!(flag.variant_keys(), vec!["a", "b"]);
    }
}
