//! A cohort's `filters`: `{"properties": {"type": "AND"|"OR", "values": [...]}}`, groups of person
//! property filters and other cohorts, nested, parsed once with PostHog's messages and bounded.
//! Burrow keeps persons' properties, not their events, so only person and cohort filters are
//! taken: a behavioral filter is refused rather than never matched.

use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::CohortId;
use crate::error::ValidationError;
use crate::feature_flag::evaluation::property_matches;
use crate::feature_flag::pattern::Patterns;
use crate::feature_flag::{Operator, PropertyFilter};
use crate::json_fields::json_length;

/// Most groups may nest inside one another.
pub const MAX_GROUP_DEPTH: usize = 5;
/// Most filters (person and cohort) one cohort may hold, all groups together.
pub const MAX_COHORT_FILTERS: usize = 100;
/// Most a cohort's filters may weigh as JSON: each `/flags` request over a flag targeting the
/// cohort evaluates them.
pub const MAX_COHORT_FILTERS_BYTES: usize = 64 * 1024;

/// A cohort's checked filters.
#[derive(Debug, Clone, PartialEq)]
pub struct CohortFilters {
    pub properties: CohortGroup,
}

/// `{"type": "AND"|"OR", "values": [...]}`.
#[derive(Debug, Clone, PartialEq)]
pub struct CohortGroup {
    /// Every value must match (`AND`), or one (`OR`).
    pub all: bool,
    pub values: Vec<CohortNode>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CohortNode {
    Group(CohortGroup),
    /// A person property filter, negated when `negation` is true.
    Person {
        filter: PropertyFilter,
        negation: bool,
    },
    /// Membership of another cohort of the project.
    Cohort {
        id: CohortId,
        negation: bool,
    },
}

/// A cohort as one evaluation knows it.
#[derive(Debug, Clone, Copy)]
pub enum KnownCohort<'a> {
    /// Evaluated from the person's properties.
    Dynamic(&'a CohortFilters),
    /// A list of persons, looked up for the person asking.
    Static { member: bool },
}

/// The cohorts an evaluation may meet: `None` for one not known (deleted since), which matches
/// no one.
pub trait CohortLookup {
    fn cohort(&self, cohort: CohortId) -> Option<KnownCohort<'_>>;
}

/// Whether a person with `properties` is in `cohort`, as `cohorts` knows it; `depth` counts the
/// cohorts entered (1 for one a flag names), so a loop stored by a race ends.
pub fn contains(
    cohorts: &dyn CohortLookup,
    cohort: CohortId,
    properties: &Map<String, Value>,
    now: DateTime<Utc>,
    patterns: &dyn Patterns,
    depth: usize,
) -> bool {
    if depth > super::MAX_COHORT_DEPTH {
        return false;
    }
    match cohorts.cohort(cohort) {
        None => false,
        Some(KnownCohort::Static { member }) => member,
        Some(KnownCohort::Dynamic(filters)) => {
            filters.matches(properties, now, patterns, cohorts, depth)
        }
    }
}

impl CohortFilters {
    /// Parses `filters` as a client sent them.
    ///
    /// # Errors
    /// PostHog's messages (`attr: filters`) where it has one, Burrow's for the rest.
    pub fn parse(filters: &Value) -> Result<Self, ValidationError> {
        let Some(properties) = filters.as_object().and_then(|f| f.get("properties")) else {
            return Err(invalid(
                "Must contain a 'properties' key with type and values",
            ));
        };
        let mut count = 0;
        let properties = group(properties, 1, &mut count)?;
        let parsed = Self { properties };
        let weight = json_length(&parsed);
        if weight > MAX_COHORT_FILTERS_BYTES {
            return Err(invalid(format!(
                "A cohort's filters may weigh at most {MAX_COHORT_FILTERS_BYTES} bytes as JSON; \
                 these weigh {weight}."
            )));
        }
        Ok(parsed)
    }

    /// What a static cohort holds: an `AND` group of nothing. It is never evaluated (a static
    /// cohort's members are its list, `KnownCohort::Static`), since it would match everyone.
    pub fn empty() -> Self {
        Self {
            properties: CohortGroup {
                all: true,
                values: Vec::new(),
            },
        }
    }

    /// Whether any group holds a filter (PostHog's `cohort_filters_have_values`): what a static
    /// cohort may not have.
    pub fn has_values(&self) -> bool {
        !self.person_filters().is_empty() || !self.cohort_ids().is_empty()
    }

    /// The cohorts these filters name, each as often as named.
    pub fn cohort_ids(&self) -> Vec<CohortId> {
        let mut ids = Vec::new();
        self.properties.collect_cohorts(&mut ids);
        ids
    }

    /// Every person filter, in any group.
    pub fn person_filters(&self) -> Vec<&PropertyFilter> {
        let mut filters = Vec::new();
        self.properties.collect_person_filters(&mut filters);
        filters
    }

    /// Whether a person with `properties` is in the cohort, nested cohorts looked up in
    /// `cohorts`; `depth` counts the cohorts entered, so a loop stored by a race ends.
    pub fn matches(
        &self,
        properties: &Map<String, Value>,
        now: DateTime<Utc>,
        patterns: &dyn Patterns,
        cohorts: &dyn CohortLookup,
        depth: usize,
    ) -> bool {
        self.properties
            .matches(properties, now, patterns, cohorts, depth)
    }
}

impl CohortGroup {
    fn collect_person_filters<'a>(&'a self, filters: &mut Vec<&'a PropertyFilter>) {
        for value in &self.values {
            match value {
                CohortNode::Group(group) => group.collect_person_filters(filters),
                CohortNode::Person { filter, .. } => filters.push(filter),
                CohortNode::Cohort { .. } => {}
            }
        }
    }

    fn collect_cohorts(&self, ids: &mut Vec<CohortId>) {
        for value in &self.values {
            match value {
                CohortNode::Group(group) => group.collect_cohorts(ids),
                CohortNode::Cohort { id, .. } => ids.push(*id),
                CohortNode::Person { .. } => {}
            }
        }
    }

    /// As the SDKs match a property group: an empty group matches everyone.
    fn matches(
        &self,
        properties: &Map<String, Value>,
        now: DateTime<Utc>,
        patterns: &dyn Patterns,
        cohorts: &dyn CohortLookup,
        depth: usize,
    ) -> bool {
        let each = |value: &CohortNode| match value {
            CohortNode::Group(group) => group.matches(properties, now, patterns, cohorts, depth),
            CohortNode::Person { filter, negation } => {
                property_matches(filter, properties, now, patterns) != *negation
            }
            CohortNode::Cohort { id, negation } => {
                contains(cohorts, *id, properties, now, patterns, depth + 1) != *negation
            }
        };
        if self.all {
            self.values.iter().all(each)
        } else {
            self.values.is_empty() || self.values.iter().any(each)
        }
    }
}

fn group(value: &Value, depth: usize, count: &mut usize) -> Result<CohortGroup, ValidationError> {
    if depth > MAX_GROUP_DEPTH {
        return Err(invalid(format!(
            "Cohort filter groups may nest at most {MAX_GROUP_DEPTH} deep."
        )));
    }
    let Value::Object(object) = value else {
        return Err(invalid(
            "A cohort filter group must be an object with type and values.",
        ));
    };
    let all = match object.get("type").and_then(Value::as_str) {
        Some("AND") => true,
        Some("OR") => false,
        _ => return Err(invalid("A cohort filter group's type must be AND or OR.")),
    };
    let Some(Value::Array(values)) = object.get("values") else {
        return Err(invalid("A cohort filter group's values must be a list."));
    };
    let values = values
        .iter()
        .map(|value| node(value, depth, count))
        .collect::<Result<_, _>>()?;
    Ok(CohortGroup { all, values })
}

fn node(value: &Value, depth: usize, count: &mut usize) -> Result<CohortNode, ValidationError> {
    let kind = value.get("type").and_then(Value::as_str);
    if matches!(kind, Some("AND" | "OR")) {
        return Ok(CohortNode::Group(group(value, depth + 1, count)?));
    }
    *count += 1;
    if *count > MAX_COHORT_FILTERS {
        return Err(invalid(format!(
            "A cohort may hold at most {MAX_COHORT_FILTERS} filters."
        )));
    }
    let negation = match value.get("negation") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(negation)) => *negation,
        Some(_) => return Err(invalid("A cohort filter's negation must be a boolean.")),
    };
    match kind {
        Some("person") => {
            let missing: Vec<&str> = [
                (value.get("value").is_none_or(Value::is_null)
                    && !matches!(
                        value.get("operator").and_then(Value::as_str),
                        Some("is_set" | "is_not_set")
                    ))
                .then_some("value"),
                value
                    .get("operator")
                    .is_none_or(Value::is_null)
                    .then_some("operator"),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !missing.is_empty() {
                return Err(invalid(format!(
                    "Missing required keys for person filter: {}",
                    missing.join(", ")
                )));
            }
            if !value.get("key").is_some_and(Value::is_string) {
                return Err(invalid("Missing required keys for person filter: key"));
            }
            let mut filter = value.clone();
            if let Some(object) = filter.as_object_mut() {
                object.remove("negation");
            }
            let filter = PropertyFilter::read(filter).map_err(|error| invalid(error.detail))?;
            filter.check_person_filter()?;
            if matches!(
                filter.operator(),
                Operator::In | Operator::NotIn | Operator::FlagEvaluatesTo | Operator::Other(_)
            ) {
                return Err(invalid(format!(
                    "A person filter of a cohort cannot use the '{}' operator.",
                    filter.operator().name()
                )));
            }
            Ok(CohortNode::Person { filter, negation })
        }
        Some("cohort") => {
            let id = value
                .get("value")
                .and_then(Value::as_i64)
                .and_then(|id| i32::try_from(id).ok())
                .ok_or_else(|| invalid("Missing required keys for cohort filter: value"))?;
            Ok(CohortNode::Cohort {
                id: CohortId(id),
                negation,
            })
        }
        Some("behavioral") => Err(invalid(
            "Burrow keeps persons' properties, not their events: a cohort may filter on person \
             properties and other cohorts only.",
        )),
        _ => Err(invalid(
            "A cohort filter's type must be person, cohort, AND or OR.",
        )),
    }
}

fn invalid(detail: impl Into<String>) -> ValidationError {
    ValidationError::invalid("filters", detail)
}

impl Serialize for CohortFilters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = Map::new();
        map.insert("properties".into(), self.properties.to_json());
        map.serialize(serializer)
    }
}

impl CohortGroup {
    /// The group as PostHog's `PropertyGroup.to_dict()` writes it (what the definitions serve).
    pub fn to_json(&self) -> Value {
        let values: Vec<Value> = self
            .values
            .iter()
            .map(|value| match value {
                CohortNode::Group(group) => group.to_json(),
                CohortNode::Person { filter, negation } => {
                    let mut json = serde_json::to_value(filter).unwrap_or(Value::Null);
                    if let Some(object) = json.as_object_mut() {
                        object.insert("type".into(), "person".into());
                        object.insert("negation".into(), (*negation).into());
                    }
                    json
                }
                CohortNode::Cohort { id, negation } => serde_json::json!({
                    "key": "id", "type": "cohort", "value": id.0, "negation": negation
                }),
            })
            .collect();
        serde_json::json!({"type": if self.all { "AND" } else { "OR" }, "values": values})
    }
}
