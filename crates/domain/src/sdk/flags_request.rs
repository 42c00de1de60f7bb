//! Whom a `/flags` request asks about, as the SDK sent it, checked once on the way in: the
//! person (`distinct_id`, `person_properties`, and `$anon_distinct_id` after identify) and the
//! groups it belongs to (`groups`, `group_properties`).

use serde_json::{Map, Value};

use super::SentProperties;
use crate::error::ValidationError;
use crate::group::GroupKey;

/// One `/flags` request's subjects.
#[derive(Debug, Clone, Default)]
pub struct FlagsRequest {
    pub distinct_id: String,
    /// The id the person had before they were identified: their flags that ensure experience
    /// continuity keep hashing it.
    pub anon_distinct_id: Option<String>,
    pub person_properties: SentProperties,
    /// `groups`: each group type's name with the key of the request's group of it.
    pub groups: Vec<GroupKey>,
    /// `group_properties`: by group type name, an object of properties each.
    pub group_properties: SentProperties,
}

impl FlagsRequest {
    /// `groups` as the SDKs send them, `{"company": "acme"}`: keys are strings or numbers (as
    /// text); other values name no group, as PostHog's service skips them.
    pub fn groups_of(groups: &Map<String, Value>) -> Vec<GroupKey> {
        groups
            .iter()
            .filter_map(|(group_type, key)| {
                let group_key = match key {
                    Value::String(key) => key.clone(),
                    Value::Number(key) => key.to_string(),
                    _ => return None,
                };
                Some(GroupKey {
                    group_type: group_type.clone(),
                    group_key,
                })
            })
            .collect()
    }

    /// `group_properties` as sent: an object of objects, bounded as `person_properties` are.
    ///
    /// # Errors
    /// `invalid` for a group's properties that are not an object; `max_length` past the bound.
    pub fn group_properties_of(
        sent: Map<String, Value>,
    ) -> Result<SentProperties, ValidationError> {
        if sent.values().any(|properties| !properties.is_object()) {
            return Err(ValidationError::invalid(
                "group_properties",
                "group_properties must map each group type to an object of properties.",
            ));
        }
        SentProperties::parse("group_properties", sent)
    }

    /// The bytes of properties sent, which scale what evaluating them costs.
    pub fn sent_bytes(&self) -> usize {
        self.person_properties.bytes() + self.group_properties.bytes()
    }
}
