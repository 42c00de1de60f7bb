//! `FlagFilters`: who a flag serves (condition sets, variants, payloads), parsed once from the
//! sent object into its types, with PostHog's messages. A known key of another shape is refused
//! when sent and kept as read when stored (`Source`, as survey JSON); every key the types do not
//! read, and a known key sent as `null`, stays as sent in an `extra` map, so what a client sent
//! is written back as sent. Errors carry `attr: filters`.

use chrono::DateTime;
use serde::{Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::evaluation::parse_date;
use super::{Operator, pattern, property_rules, semver};
use crate::error::{ValidationCode, ValidationError};
use crate::json_fields::{ObjectWriter, Source, json_length, to_object};

/// Most condition sets (`groups`, `super_groups`) a flag may be written with: far more than
/// targeting needs, few enough that evaluating every flag of a project for each `/flags`
/// request stays cheap. Checked when written, not when read: flags stored under an older,
/// larger bound are still served (within the project's snapshot share, `crate::sdk`).
pub const MAX_CONDITION_SETS: usize = 50;
/// Most property filters one condition set may be written with.
pub const MAX_PROPERTIES_PER_SET: usize = 50;
/// Most a flag's filters may weigh ([`FlagFilters::weight`]) when written: what one flag may
/// take of a node's memory and of each `/flags` request's time.
pub const MAX_FLAG_WEIGHT: usize = 64 * 1024;
/// What a regex filter weighs beyond its text: its compiled program and match cache are kept
/// with the project's snapshot, so a pattern costs memory its text does not show.
pub const REGEX_WEIGHT: usize = 4 * 1024;
/// Most variants a multivariate flag may have.
pub const MAX_VARIANTS: usize = 100;

/// A flag's checked `filters`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlagFilters {
    /// The release condition sets; the flag serves whoever one of them matches.
    pub groups: Vec<ConditionSet>,
    /// Early-access enrollment: the first set decides for a person who has its property.
    pub super_groups: Option<Vec<ConditionSet>>,
    pub multivariate: Option<Multivariate>,
    /// Payloads by variant key (`"true"` for a boolean flag), returned as stored.
    pub payloads: Option<Map<String, Value>>,
    /// A flag aggregated by a group type; it cannot be evaluated for a person.
    pub aggregation_group_type_index: Option<u64>,
    pub extra: Map<String, Value>,
}

/// One condition set: property filters, all of which must match, and a rollout.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConditionSet {
    /// `None` when not sent as a list (absent, or `null`, which stays in `extra`).
    pub properties: Option<Vec<PropertyFilter>>,
    /// 0–100, as sent (`50` stays `50`, not `50.0`); none serves everyone the set matches.
    pub rollout_percentage: Option<Number>,
    /// Serves this variant instead of the hashed one, when the flag has it.
    pub variant: Option<String>,
    /// A set aggregated by a group type of its own; it cannot be evaluated for a person.
    pub aggregation_group_type_index: Option<u64>,
    pub extra: Map<String, Value>,
}

/// The `type` of a group property filter (its group type in `group_type_index`).
pub const GROUP_FILTER_TYPE: &str = "group";

/// One property filter. A filter evaluation cannot apply (an operator it does not know)
/// matches no one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PropertyFilter {
    pub key: Option<String>,
    pub value: Option<Value>,
    /// `exact` when none is given.
    pub operator: Option<Operator>,
    /// JSON `type`: `person` (or none) is evaluated; cohorts and flags match no one here.
    pub kind: Option<String>,
    pub extra: Map<String, Value>,
}

/// A multivariate flag's variants, in the order their slices of the hash range follow.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Multivariate {
    pub variants: Vec<Variant>,
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub key: String,
    /// 0–100, as sent; the variants' percentages sum to 100.
    pub rollout_percentage: Number,
    pub extra: Map<String, Value>,
}

impl FlagFilters {
    /// Parses a flag's `filters` as a client sent them: their shapes ([`Self::read`]), their
    /// bounds, and that every regex pattern compiles; `groups` is filled in when missing.
    ///
    /// # Errors
    /// As [`Self::read`]; too many condition sets, property filters or variants, too heavy
    /// filters, a pattern that does not compile.
    pub fn parse(filters: Value) -> Result<Self, ValidationError> {
        let filters = Self::read_from(filters, Source::Sent)?;
        for sets in std::iter::once(&filters.groups).chain(&filters.super_groups) {
            if sets.len() > MAX_CONDITION_SETS {
                return Err(filters_error(format!(
                    "A flag may have at most {MAX_CONDITION_SETS} condition sets."
                )));
            }
        }
        for set in filters.condition_sets() {
            if set.properties().len() > MAX_PROPERTIES_PER_SET {
                return Err(filters_error(format!(
                    "A condition set may have at most {MAX_PROPERTIES_PER_SET} property filters."
                )));
            }
        }
        for set in filters.condition_sets() {
            let group_aggregated = filters.aggregates_by_group(set);
            for property in set.properties() {
                property_rules::check(property, group_aggregated)?;
            }
        }
        for property in filters.condition_sets().flat_map(ConditionSet::properties) {
            check_value(property)?;
        }
        let weight = filters.weight();
        if weight > MAX_FLAG_WEIGHT {
            return Err(filters_error(format!(
                "Filters may weigh at most {MAX_FLAG_WEIGHT} bytes (their JSON, and {REGEX_WEIGHT} \
                 more for each regex filter); these weigh {weight}."
            )));
        }
        Ok(filters)
    }

    /// What the filters cost a node that serves them: their JSON text's length, and
    /// [`REGEX_WEIGHT`] for each regex filter. Bounded per flag ([`MAX_FLAG_WEIGHT`]) and per
    /// project (`FeatureFlagService`).
    pub fn weight(&self) -> usize {
        let regexes = self
            .condition_sets()
            .flat_map(ConditionSet::properties)
            .filter(|filter| matches!(filter.operator(), Operator::Regex | Operator::NotRegex))
            .count();
        json_length(self).saturating_add(regexes.saturating_mul(REGEX_WEIGHT))
    }

    /// Whether `set` aggregates by a group type: its own index, or the flag's when the set
    /// does not say (an explicit `null` makes it a person condition, as PostHog reads it).
    pub fn aggregates_by_group(&self, set: &ConditionSet) -> bool {
        set.aggregation_group_type_index.is_some()
            || (self.aggregation_group_type_index.is_some()
                && !set.extra.contains_key("aggregation_group_type_index"))
    }

    /// Every condition set: the release ones, then the early-access ones.
    pub fn condition_sets(&self) -> impl Iterator<Item = &ConditionSet> {
        self.groups.iter().chain(self.super_groups.iter().flatten())
    }

    /// Reads stored filters into their types. They were checked when written, so bounds and
    /// patterns are not checked again, and a known key of another shape (taken by a release
    /// before shapes were checked) stays in `extra`, as read.
    ///
    /// # Errors
    /// A non-object, `groups` not a list, or a list whose elements are not objects, with
    /// PostHog's message.
    pub fn read(filters: Value) -> Result<Self, ValidationError> {
        Self::read_from(filters, Source::Stored)
    }

    /// The one reader of the filters' shape, for what a client sent and what was stored.
    fn read_from(filters: Value, source: Source) -> Result<Self, ValidationError> {
        let Value::Object(mut filters) = filters else {
            return Err(filters_error("Filters must be an object."));
        };
        let read = Reader(source);
        // Always written back, so never kept in `extra`: of another shape it is refused, stored too.
        let groups = match filters.remove("groups") {
            None => Vec::new(),
            Some(Value::Array(sets)) => read.condition_sets(sets)?,
            Some(_) => return Err(filters_error("Filter groups must be a list.")),
        };
        Ok(Self {
            groups,
            super_groups: read.known(&mut filters, "super_groups", |sets| match sets {
                Value::Array(sets) => Ok(read.condition_sets(sets)?),
                other => Err(Refused::shape(other, "Filter super groups must be a list.")),
            })?,
            multivariate: read.known(&mut filters, "multivariate", |multivariate| {
                match multivariate {
                    Value::Object(multivariate) => Ok(variants(multivariate)?),
                    other => Err(Refused::shape(other, "Multivariate must be an object.")),
                }
            })?,
            payloads: read.known(&mut filters, "payloads", |payloads| match payloads {
                Value::Object(payloads) => Ok(payloads),
                other => Err(Refused::shape(
                    other,
                    "Payloads must be passed as a dictionary",
                )),
            })?,
            aggregation_group_type_index: read.group_type_index(&mut filters)?,
            extra: filters,
        })
    }

    /// The filters as JSON, as they are stored and shown.
    pub fn to_json(&self) -> Map<String, Value> {
        to_object(self)
    }

    /// These filters with the top-level keys `patch` was sent with put over theirs, as PostHog
    /// merges a survey's `targeting_flag_filters` into its flag's.
    ///
    /// # Errors
    /// As [`FlagFilters::read`]; both halves were checked, so only a broken invariant fails.
    pub fn merged_with(&self, patch: &FlagFiltersPatch) -> Result<Self, ValidationError> {
        let mut merged = self.to_json();
        let mut sent = patch.filters.to_json();
        for key in &patch.sent_keys {
            if let Some(value) = sent.remove(key) {
                merged.insert(key.clone(), value);
            }
        }
        Self::read_from(Value::Object(merged), Source::Sent)
    }

    /// Whether a condition set serves everyone: no property filters and a full rollout.
    pub fn serves_everyone(&self) -> bool {
        self.groups
            .iter()
            .any(|set| set.properties().is_empty() && set.rollout() >= 100.0)
    }

    /// The keys of the flag's variants (empty for a boolean flag).
    pub fn variant_keys(&self) -> Vec<String> {
        self.variants().map(|variant| variant.key.clone()).collect()
    }

    /// The flag's variants, in order (none for a boolean flag).
    pub fn variants(&self) -> impl Iterator<Item = &Variant> {
        self.multivariate
            .iter()
            .flat_map(|multivariate| &multivariate.variants)
    }
}

/// A survey's `targeting_flag_filters`: flag filters checked as sent, and which top-level keys
/// were sent. A new targeting flag gets the filters; a kept one gets exactly the sent keys put
/// over its own ([`FlagFilters::merged_with`]), so a key left out keeps the flag's value.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagFiltersPatch {
    filters: FlagFilters,
    sent_keys: Vec<String>,
}

impl FlagFiltersPatch {
    /// # Errors
    /// As [`FlagFilters::parse`].
    pub fn parse(filters: &Map<String, Value>) -> Result<Self, ValidationError> {
        Ok(Self {
            filters: FlagFilters::parse(Value::Object(filters.clone()))?,
            sent_keys: filters.keys().cloned().collect(),
        })
    }

    /// The filters as sent (`groups` filled in when missing): a new targeting flag's.
    pub fn filters(&self) -> &FlagFilters {
        &self.filters
    }
}

impl Serialize for FlagFilters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field(
            "aggregation_group_type_index",
            self.aggregation_group_type_index.as_ref(),
        )?;
        json.field("groups", Some(&self.groups))?;
        json.field("multivariate", self.multivariate.as_ref())?;
        json.field("payloads", self.payloads.as_ref())?;
        json.field("super_groups", self.super_groups.as_ref())?;
        json.end()
    }
}

impl Serialize for ConditionSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field(
            "aggregation_group_type_index",
            self.aggregation_group_type_index.as_ref(),
        )?;
        json.field("properties", self.properties.as_ref())?;
        json.field("rollout_percentage", self.rollout_percentage.as_ref())?;
        json.field("variant", self.variant.as_ref())?;
        json.end()
    }
}

impl Serialize for PropertyFilter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field("key", self.key.as_ref())?;
        json.field("operator", self.operator.as_ref())?;
        json.field("type", self.kind.as_ref())?;
        json.field("value", self.value.as_ref())?;
        json.end()
    }
}

impl Serialize for Multivariate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field("variants", Some(&self.variants))?;
        json.end()
    }
}

impl Serialize for Variant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field("key", Some(&self.key))?;
        json.field("rollout_percentage", Some(&self.rollout_percentage))?;
        json.end()
    }
}

impl ConditionSet {
    /// Its property filters (none when not sent).
    pub fn properties(&self) -> &[PropertyFilter] {
        self.properties.as_deref().unwrap_or_default()
    }

    /// Its rollout, 0–100; a set without one serves everyone it matches.
    pub fn rollout(&self) -> f64 {
        self.rollout_percentage
            .as_ref()
            .and_then(Number::as_f64)
            .unwrap_or(100.0)
    }
}

/// The checks of a filter's value that need no storage: a regex that compiles, a version, a
/// date; shared with cohorts' person filters, which are evaluated the same way.
fn check_value(property: &PropertyFilter) -> Result<(), ValidationError> {
    validate_pattern(property)?;
    validate_version(property)?;
    validate_date(property)
}

impl PropertyFilter {
    /// Checks a person filter sent outside a flag (a cohort's): the kinds, operators and values
    /// a flag's person condition takes.
    ///
    /// # Errors
    /// PostHog's messages, `attr: filters`.
    pub fn check_person_filter(&self) -> Result<(), ValidationError> {
        property_rules::check(self, false)?;
        check_value(self)
    }

    /// The operator, as PostHog reads it: `exact` unless a string says otherwise.
    pub fn operator(&self) -> Operator {
        self.operator.clone().unwrap_or(Operator::Exact)
    }

    /// Whether it is about the person's properties (no `type`, or `person`).
    pub fn about_persons(&self) -> bool {
        self.kind.as_deref().is_none_or(|kind| kind == "person")
    }

    /// Reads one filter into its types, as sent.
    ///
    /// # Errors
    /// A non-object, or a known key of another shape, with PostHog's message.
    pub fn read(filter: Value) -> Result<Self, ValidationError> {
        Reader(Source::Sent).property_filter(filter)
    }
}

/// PostHog's answer to a property filter it cannot read as one.
const NOT_VALID_PROPERTIES: &str =
    "Filters are not valid (can only use person, cohort, and flag properties)";

/// A known key's value `read` could not take.
enum Refused {
    /// Not of the key's shape: handed back, with PostHog's message.
    Shape(Value, String),
    /// Of the key's shape, with something within it refused.
    Within(ValidationError),
}

impl Refused {
    fn shape(value: Value, message: impl Into<String>) -> Self {
        Self::Shape(value, message.into())
    }
}

impl From<ValidationError> for Refused {
    fn from(error: ValidationError) -> Self {
        Self::Within(error)
    }
}

/// Reads filters from where they come from ([`Source`]).
#[derive(Clone, Copy)]
struct Reader(Source);

impl Reader {
    /// Reads the value under a known `key` with `read`. A value of another shape is refused
    /// when sent and stays in `object` when stored. Absent or `null` it is `None`, and a `null`
    /// stays in `object`, so it is written back as sent.
    fn known<T>(
        self,
        object: &mut Map<String, Value>,
        key: &str,
        read: impl FnOnce(Value) -> Result<T, Refused>,
    ) -> Result<Option<T>, ValidationError> {
        let Some((sent_key, value)) = object.remove_entry(key) else {
            return Ok(None);
        };
        if value.is_null() {
            object.insert(sent_key, value);
            return Ok(None);
        }
        match (read(value), self.0) {
            (Ok(typed), _) => Ok(Some(typed)),
            (Err(Refused::Shape(value, _)), Source::Stored) => {
                object.insert(sent_key, value);
                Ok(None)
            }
            (Err(Refused::Shape(_, message)), Source::Sent) => Err(filters_error(message)),
            (Err(Refused::Within(error)), _) => Err(error),
        }
    }

    /// `aggregation_group_type_index`, of the filters or of a condition set.
    fn group_type_index(
        self,
        object: &mut Map<String, Value>,
    ) -> Result<Option<u64>, ValidationError> {
        self.known(
            object,
            "aggregation_group_type_index",
            |index| match index {
                Value::Number(ref n) if n.is_u64() => Ok(n.as_u64().unwrap_or_default()),
                other => Err(Refused::shape(
                    other,
                    "aggregation_group_type_index must be an integer or null.",
                )),
            },
        )
    }

    fn condition_sets(self, sets: Vec<Value>) -> Result<Vec<ConditionSet>, ValidationError> {
        sets.into_iter()
            .map(|set| self.condition_set(set))
            .collect()
    }

    fn condition_set(self, set: Value) -> Result<ConditionSet, ValidationError> {
        let Value::Object(mut set) = set else {
            return Err(filters_error("Each filter group must be an object."));
        };
        Ok(ConditionSet {
            properties: self.known(&mut set, "properties", |properties| match properties {
                Value::Array(properties) => Ok(properties
                    .into_iter()
                    .map(|filter| self.property_filter(filter))
                    .collect::<Result<_, _>>()?),
                other => Err(Refused::shape(other, "Group properties must be a list.")),
            })?,
            rollout_percentage: self.known(&mut set, "rollout_percentage", |rollout| {
                percentage(rollout).map_err(|rollout| {
                    Refused::shape(
                        rollout,
                        "Rollout percentage must be a number between 0 and 100.",
                    )
                })
            })?,
            variant: self.known(&mut set, "variant", |variant| match variant {
                Value::String(variant) => Ok(variant),
                other => Err(Refused::shape(
                    other,
                    "Group variant must be a string or null.",
                )),
            })?,
            aggregation_group_type_index: self.group_type_index(&mut set)?,
            extra: set,
        })
    }

    fn property_filter(self, filter: Value) -> Result<PropertyFilter, ValidationError> {
        let Value::Object(mut filter) = filter else {
            return Err(filters_error(NOT_VALID_PROPERTIES));
        };
        Ok(PropertyFilter {
            key: self.known(&mut filter, "key", |key| match key {
                Value::String(key) => Ok(key),
                other => Err(Refused::shape(
                    other,
                    "Filters are not valid (a property key must be a string)",
                )),
            })?,
            value: self.known(&mut filter, "value", Ok)?,
            operator: self.known(&mut filter, "operator", |operator| match operator {
                Value::String(name) => match self.0 {
                    Source::Sent => Ok(Operator::parse(&name)?),
                    Source::Stored => Ok(Operator::stored(name)),
                },
                other => {
                    let message = format!("Invalid operator: {other}");
                    Err(Refused::Shape(other, message))
                }
            })?,
            kind: self.known(&mut filter, "type", |kind| match kind {
                Value::String(kind) => Ok(kind),
                other => Err(Refused::shape(other, NOT_VALID_PROPERTIES)),
            })?,
            extra: filter,
        })
    }
}

fn filters_error(detail: impl Into<String>) -> ValidationError {
    ValidationError::invalid("filters", detail)
}

/// A number from 0 to 100, as sent; anything else is handed back.
fn percentage(value: Value) -> Result<Number, Value> {
    match value {
        Value::Number(n) if n.as_f64().is_some_and(|p| (0.0..=100.0).contains(&p)) => Ok(n),
        other => Err(other),
    }
}

/// A `regex` or `not_regex` filter's pattern must compile: one that cannot would never match,
/// silently.
fn validate_pattern(filter: &PropertyFilter) -> Result<(), ValidationError> {
    if !matches!(filter.operator(), Operator::Regex | Operator::NotRegex) {
        return Ok(());
    }
    let text = match &filter.value {
        None => return Ok(()),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
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

/// An `is_date_*` filter's value must be a date, absolute or relative (`-30d`), as PostHog
/// checks when a flag is written: one that is not would never match, silently.
fn validate_date(filter: &PropertyFilter) -> Result<(), ValidationError> {
    let operator = filter.operator();
    if !matches!(
        operator,
        Operator::IsDateBefore | Operator::IsDateAfter | Operator::IsDateExact
    ) {
        return Ok(());
    }
    // Whether the text reads as a date does not depend on the moment relative ones count from.
    let read = match &filter.value {
        Some(Value::String(text)) => parse_date(text, DateTime::UNIX_EPOCH).is_some(),
        _ => false,
    };
    if read {
        return Ok(());
    }
    let shown = match &filter.value {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "None".to_owned(),
    };
    Err(ValidationError::field(
        "filters",
        ValidationCode::InvalidDate,
        format!("Invalid date value: {shown}"),
    ))
}

/// A `semver_*` filter's value must be a version (a pattern for `semver_wildcard`), as PostHog
/// checks when a flag is written: one that is not would never match, silently.
fn validate_version(filter: &PropertyFilter) -> Result<(), ValidationError> {
    let operator = filter.operator();
    if !operator.is_semver() {
        return Ok(());
    }
    let name = operator.name();
    let Some(Value::String(text)) = &filter.value else {
        return Err(ValidationError::field(
            "filters",
            ValidationCode::InvalidValue,
            format!("Invalid value for operator {name}: expected a semver string"),
        ));
    };
    let read = match operator {
        Operator::SemverWildcard => semver::wildcard(text).is_some(),
        _ => semver::parse(text).is_some(),
    };
    if read {
        return Ok(());
    }
    Err(ValidationError::field(
        "filters",
        ValidationCode::InvalidValue,
        format!("Invalid semver value for operator {name}: {text}"),
    ))
}

/// A multivariate object's variants: their keys, and percentages summing to 100.
fn variants(mut multivariate: Map<String, Value>) -> Result<Multivariate, ValidationError> {
    let variants = multivariate.remove("variants");
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
    let mut read = Vec::with_capacity(variants.len());
    for variant in variants {
        let Value::Object(mut variant) = variant else {
            return Err(invalid());
        };
        let key = match variant.remove("key") {
            Some(Value::String(key)) if !key.is_empty() => key,
            _ => return Err(invalid()),
        };
        let rollout_percentage = variant
            .remove("rollout_percentage")
            .and_then(|rollout| percentage(rollout).ok())
            .ok_or_else(invalid)?;
        total += rollout_percentage.as_f64().unwrap_or_default();
        read.push(Variant {
            key,
            rollout_percentage,
            extra: variant,
        });
    }
    if !read.is_empty() && (total - 100.0).abs() > f64::EPSILON * 100.0 {
        return Err(filters_error(
            "Invalid variant definitions: Variant rollout percentages must sum to 100.",
        ));
    }
    Ok(Multivariate {
        variants: read,
        extra: multivariate,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rollouts_must_be_between_0_and_100() {
        assert!(
            FlagFilters::parse(json!({"groups": [{"properties": [], "rollout_percentage": 50}]}))
                .is_ok()
        );
        assert!(FlagFilters::parse(json!({"groups": [{"rollout_percentage": null}]})).is_ok());
        for bad in [json!(101), json!(-1), json!("50")] {
            let error =
                FlagFilters::parse(json!({"groups": [{"rollout_percentage": bad}]})).unwrap_err();
            assert_eq!(error.attr.as_deref(), Some("filters"));
        }
    }

    #[test]
    fn variant_percentages_must_sum_to_100() {
        let ok = json!({"groups": [], "multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 50}]}});
        assert!(FlagFilters::parse(ok).is_ok());
        let bad = json!({"multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 40}]}});
        assert_eq!(
            FlagFilters::parse(bad).unwrap_err().detail,
            "Invalid variant definitions: Variant rollout percentages must sum to 100."
        );
    }

    #[test]
    fn regex_filters_must_compile_when_written() {
        let filter = |pattern: &str| json!({"groups": [{"properties": [{"key": "email", "operator": "regex", "value": pattern}]}]});
        assert!(FlagFilters::parse(filter(r"@example\.com$")).is_ok());
        for bad in ["(unclosed", "(?=look-around)"] {
            let error = FlagFilters::parse(filter(bad)).unwrap_err();
            assert!(
                error.detail.starts_with("Invalid regular expression"),
                "{}",
                error.detail
            );
        }
        let huge = "a{1000}".repeat(100);
        assert_eq!(
            FlagFilters::parse(filter(&huge)).unwrap_err().detail,
            "Invalid regular expression in a property filter: it is too large"
        );
    }

    #[test]
    fn condition_sets_properties_and_variants_are_capped() {
        let set = json!({"properties": [], "rollout_percentage": 10});
        let sets = json!({"groups": vec![set.clone(); MAX_CONDITION_SETS + 1]});
        assert!(FlagFilters::parse(sets).is_err());
        let supers = json!({"groups": [], "super_groups": vec![set; MAX_CONDITION_SETS + 1]});
        assert!(FlagFilters::parse(supers).is_err());
        let property = json!({"key": "a", "value": "b"});
        let properties =
            json!({"groups": [{"properties": vec![property; MAX_PROPERTIES_PER_SET + 1]}]});
        assert_eq!(
            FlagFilters::parse(properties).unwrap_err().detail,
            "A condition set may have at most 50 property filters."
        );
        let variants: Vec<Value> = (0..=MAX_VARIANTS)
            .map(|i| json!({"key": format!("v{i}"), "rollout_percentage": 0}))
            .collect();
        let multivariate = json!({"groups": [], "multivariate": {"variants": variants}});
        assert!(FlagFilters::parse(multivariate).is_err());
    }

    #[test]
    fn filters_weigh_their_json_and_each_regex_and_are_capped_by_weight() {
        let filter = |operator: &str, value: &str| json!({"key": "email", "value": value, "operator": operator, "type": "person"});
        let light = json!({"groups": [{"properties": [filter("exact", "a")]}]});
        let parsed = FlagFilters::parse(light).unwrap();
        assert_eq!(parsed.weight(), serde_json::to_vec(&parsed).unwrap().len());
        let regex = json!({"groups": [{"properties": [filter("regex", "a")]}]});
        let parsed_regex = FlagFilters::parse(regex).unwrap();
        assert_eq!(
            parsed_regex.weight(),
            serde_json::to_vec(&parsed_regex).unwrap().len() + REGEX_WEIGHT
        );

        // Sixteen patterns fit in a flag's weight; twenty do not, however short their text.
        let regexes = |n: usize| json!({"groups": [{"properties": vec![filter("regex", "a"); n]}]});
        assert!(FlagFilters::parse(regexes(15)).is_ok());
        let error = FlagFilters::parse(regexes(20)).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("filters"));
        assert!(
            error
                .detail
                .starts_with("Filters may weigh at most 65536 bytes"),
            "{}",
            error.detail
        );
        // Nor does JSON text past the weight, in few filters.
        let long = "x".repeat(MAX_FLAG_WEIGHT);
        let heavy = json!({"groups": [{"properties": [filter("icontains", &long)]}]});
        assert!(FlagFilters::parse(heavy).is_err());
    }

    #[test]
    fn filters_stored_under_larger_bounds_are_still_read() {
        let property = json!({"key": "a", "value": "b"});
        let set = json!({"properties": vec![property; 100]});
        let stored = json!({"groups": vec![set; 100]});
        assert!(FlagFilters::parse(stored.clone()).is_err());
        let read = FlagFilters::read(stored).unwrap();
        assert_eq!(read.groups.len(), 100);
        assert_eq!(read.groups[0].properties().len(), 100);
    }

    #[test]
    fn what_a_client_sent_is_written_back_as_sent() {
        let sent = json!({
            "groups": [{
                "properties": [{"key": "email", "value": ["a"], "operator": "exact", "type": "person", "negation": false}],
                "rollout_percentage": 50,
                "variant": null,
                "description": "beta users"
            }],
            "super_groups": null,
            "multivariate": {"variants": [{"key": "a", "name": "A", "rollout_percentage": 100}], "note": 1},
            "payloads": {"a": "{\"x\": 1}"},
            "aggregation_group_type_index": null,
            "holdout_groups": []
        });
        let filters = FlagFilters::parse(sent.clone()).unwrap();
        assert_eq!(Value::Object(filters.to_json()), sent);
        assert_eq!(filters.variant_keys(), ["a"]);
        assert_eq!(
            filters.groups[0].properties()[0].operator(),
            Operator::Exact
        );
    }

    #[test]
    fn operators_are_read_as_posthog_does() {
        let operator = |raw: Value| {
            let filters = FlagFilters::parse(
                json!({"groups": [{"properties": [{"key": "k", "operator": raw, "value": "1.0"}]}]}),
            )
            .unwrap();
            filters.groups[0].properties()[0].operator()
        };
        assert_eq!(operator(json!("icontains")), Operator::IContains);
        assert_eq!(operator(json!(null)), Operator::Exact);
        assert_eq!(operator(json!("semver_caret")), Operator::SemverCaret);
        assert_eq!(operator(json!("min")), Operator::Gte);
        let refused = |raw: &str| {
            let error = FlagFilters::parse(
                json!({"groups": [{"properties": [{"key": "k", "operator": raw, "value": "1"}]}]}),
            )
            .unwrap_err();
            (error.code.as_str(), error.detail)
        };
        assert_eq!(
            refused("between"),
            (
                "unsupported_operator",
                "Unsupported operator for feature flags: between".into()
            )
        );
        assert_eq!(
            refused("fuzzy"),
            ("invalid_operator", "Invalid operator: fuzzy".into())
        );
        // Stored before operators were checked: kept, and it matches no one.
        let stored = json!({"groups": [{"properties": [{"key": "k", "operator": "fuzzy"}]}]});
        let read = FlagFilters::read(stored.clone()).unwrap();
        assert_eq!(
            read.groups[0].properties()[0].operator(),
            Operator::Other("fuzzy".into())
        );
        assert_eq!(Value::Object(read.to_json()), stored);
    }

    #[test]
    fn date_values_must_be_dates_when_written() {
        let filter = |operator: &str, value: Value| {
            FlagFilters::parse(json!({"groups": [{"properties": [
                {"key": "signed_up", "operator": operator, "value": value}]}]}))
        };
        for date in [
            "-30d",
            "2026-01-31",
            "2026-01-31T10:00:00Z",
            "2026-01-31 10:00",
        ] {
            assert!(filter("is_date_before", json!(date)).is_ok(), "{date}");
        }
        for (value, shown) in [
            (json!("yesterday"), "yesterday"),
            (json!("-10000d"), "-10000d"),
            (json!(5), "5"),
        ] {
            let error = filter("is_date_after", value).unwrap_err();
            assert_eq!(
                (error.code.as_str(), error.detail),
                ("invalid_date", format!("Invalid date value: {shown}"))
            );
        }
    }

    #[test]
    fn semver_values_must_be_versions_when_written() {
        let filter = |operator: &str, value: Value| {
            FlagFilters::parse(json!({"groups": [{"properties": [
                {"key": "app_version", "operator": operator, "value": value}]}]}))
        };
        assert!(filter("semver_gte", json!("v1.2.0-beta")).is_ok());
        assert!(filter("semver_wildcard", json!("1.2.*")).is_ok());
        let refused = |operator, value| {
            let error = filter(operator, value).unwrap_err();
            (error.code.as_str(), error.detail)
        };
        assert_eq!(
            refused("semver_eq", json!(1)),
            (
                "invalid_value",
                "Invalid value for operator semver_eq: expected a semver string".into()
            )
        );
        assert_eq!(
            refused("semver_tilde", json!("1.02")),
            (
                "invalid_value",
                "Invalid semver value for operator semver_tilde: 1.02".into()
            )
        );
        assert!(filter("semver_wildcard", json!("*")).is_err());
    }

    #[test]
    fn a_known_key_of_another_shape_is_refused_with_posthogs_message() {
        let refused = [
            (json!({"groups": {}}), "Filter groups must be a list."),
            (json!({"groups": null}), "Filter groups must be a list."),
            (
                json!({"super_groups": {"a": 1}}),
                "Filter super groups must be a list.",
            ),
            (
                json!({"groups": [{"rollout_percentage": "x"}]}),
                "Rollout percentage must be a number between 0 and 100.",
            ),
            (
                json!({"groups": [{"properties": 3}]}),
                "Group properties must be a list.",
            ),
            (
                json!({"groups": [{"variant": 1}]}),
                "Group variant must be a string or null.",
            ),
            (
                json!({"groups": [{"aggregation_group_type_index": "0"}]}),
                "aggregation_group_type_index must be an integer or null.",
            ),
            (
                json!({"aggregation_group_type_index": -1}),
                "aggregation_group_type_index must be an integer or null.",
            ),
            (
                json!({"groups": [{"properties": [{"key": "k", "operator": 7}]}]}),
                "Invalid operator: 7",
            ),
            (
                json!({"groups": [{"properties": [{"key": ["k"]}]}]}),
                "Filters are not valid (a property key must be a string)",
            ),
            (
                json!({"groups": [{"properties": [{"key": "k", "type": {}}]}]}),
                "Filters are not valid (can only use person, cohort, and flag properties)",
            ),
            (
                json!({"multivariate": {"variants": {}}}),
                "Invalid variant definitions: Variants must be a list of objects with a key and a rollout_percentage.",
            ),
            (
                json!({"multivariate": 1}),
                "Multivariate must be an object.",
            ),
            (
                json!({"payloads": []}),
                "Payloads must be passed as a dictionary",
            ),
        ];
        for (sent, detail) in refused {
            let error = FlagFilters::parse(sent.clone()).unwrap_err();
            assert_eq!(
                (error.attr.as_deref(), error.detail.as_str()),
                (Some("filters"), detail),
                "{sent}"
            );
            // Stored (by a release before shapes were checked), such a key stays as read, except
            // where it cannot: `groups` is always written back, and a refusal within a value of
            // the right shape refuses the whole value.
            let kept_as_read = !(sent.get("groups").is_some_and(|groups| !groups.is_array())
                || sent["multivariate"]["variants"].is_object());
            let mut written_back = sent.clone();
            if written_back["groups"].is_null() {
                written_back["groups"] = json!([]);
            }
            match FlagFilters::read(sent.clone()) {
                Ok(read) if kept_as_read => assert_eq!(Value::Object(read.to_json()), written_back),
                Err(_) if !kept_as_read => {}
                other => panic!("{sent} stored read as {other:?}"),
            }
        }
    }

    #[test]
    fn a_stored_key_of_another_shape_is_kept_as_read_and_not_applied() {
        let stored = json!({"groups": [{
            "properties": [{"key": "plan", "operator": ["exact"], "value": "pro"}],
            "rollout_percentage": "50",
        }]});
        let read = FlagFilters::read(stored.clone()).unwrap();
        let set = &read.groups[0];
        assert_eq!(set.rollout(), 100.0);
        assert_eq!(set.properties()[0].operator(), Operator::Exact);
        assert_eq!(set.extra["rollout_percentage"], json!("50"));
        assert_eq!(Value::Object(read.to_json()), stored);
    }

    #[test]
    fn known_keys_sent_as_null_and_unknown_keys_are_written_back_as_sent() {
        let sent = json!({
            "groups": [{
                "properties": [{"key": null, "value": null, "operator": null, "type": null, "x": {}}],
                "rollout_percentage": null,
                "variant": null,
                "aggregation_group_type_index": null
            }, {"properties": null}],
            "super_groups": null,
            "multivariate": null,
            "payloads": null,
            "aggregation_group_type_index": null,
            "unknown": [1, {"deep": true}]
        });
        let filters = FlagFilters::parse(sent.clone()).unwrap();
        assert_eq!(Value::Object(filters.to_json()), sent);
        assert_eq!(
            filters.groups[0].properties()[0].operator(),
            Operator::Exact
        );
        assert_eq!(filters.groups[0].rollout(), 100.0);
        assert_eq!(
            (filters.super_groups, filters.multivariate, filters.payloads),
            (None, None, None)
        );
        let typed = json!({"aggregation_group_type_index": 1, "groups": [
            {"aggregation_group_type_index": 0, "properties": [{"key": "k", "type": "group"}]}
        ]});
        let filters = FlagFilters::parse(typed.clone()).unwrap();
        assert_eq!(filters.aggregation_group_type_index, Some(1));
        assert_eq!(Value::Object(filters.to_json()), typed);
    }

    #[test]
    fn missing_groups_are_filled_in_and_non_objects_rejected() {
        assert_eq!(
            FlagFilters::parse(json!({}))
                .unwrap()
                .to_json()
                .get("groups"),
            Some(&json!([]))
        );
        assert_eq!(
            FlagFilters::default(),
            FlagFilters::parse(json!({})).unwrap()
        );
        assert!(FlagFilters::parse(json!([])).is_err());
        assert!(FlagFilters::parse(json!({"groups": "all"})).is_err());
        assert!(FlagFilters::parse(json!({"groups": [{"properties": [1]}]})).is_err());
    }

    fn patch(sent: Value) -> FlagFiltersPatch {
        FlagFiltersPatch::parse(sent.as_object().expect("an object")).unwrap()
    }

    #[test]
    fn a_patch_puts_exactly_the_keys_it_was_sent_with_over_the_flags() {
        let flag = FlagFilters::parse(json!({
            "groups": [{"properties": [], "rollout_percentage": 20}],
            "payloads": {"true": "a"},
            "super_groups": [{"rollout_percentage": 5}],
            "custom": 1
        }))
        .unwrap();

        let payloads_only = flag.merged_with(&patch(json!({"payloads": {"true": "b"}})));
        assert_eq!(
            Value::Object(payloads_only.unwrap().to_json()),
            json!({
                "groups": [{"properties": [], "rollout_percentage": 20}],
                "payloads": {"true": "b"},
                "super_groups": [{"rollout_percentage": 5}],
                "custom": 1
            })
        );

        let cleared = flag
            .merged_with(&patch(
                json!({"super_groups": null, "custom": 2, "groups": []}),
            ))
            .unwrap();
        assert_eq!(cleared.super_groups, None);
        assert_eq!(
            Value::Object(cleared.to_json()),
            json!({"groups": [], "payloads": {"true": "a"}, "super_groups": null, "custom": 2})
        );
    }

    #[test]
    fn a_set_without_properties_at_full_rollout_serves_everyone() {
        let serves = |filters: Value| FlagFilters::parse(filters).unwrap().serves_everyone();
        assert!(serves(json!({"groups": [{"properties": []}]})));
        assert!(serves(json!({"groups": [{"rollout_percentage": 100}]})));
        assert!(serves(
            json!({"groups": [{"rollout_percentage": 10}, {"properties": null}]})
        ));
        assert!(!serves(json!({"groups": [{"rollout_percentage": 99}]})));
        assert!(!serves(
            json!({"groups": [{"properties": [{"key": "email", "value": "x"}]}]})
        ));
        assert!(!serves(json!({})));
    }
}
