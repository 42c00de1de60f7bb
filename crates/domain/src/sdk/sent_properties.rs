//! The `person_properties` (or `group_properties`) a `/flags` request sent, checked once on the
//! way in: every filter of every flag may scan them, so their size is bounded, and it is kept,
//! since it also decides whether the request's evaluation is costly.

use serde_json::{Map, Value};

use crate::error::{ValidationCode, ValidationError};
use crate::json_fields::json_length;

/// The most `person_properties` one `/flags` request may send, as JSON text; and the most
/// `group_properties`, all groups together.
pub const MAX_PERSON_PROPERTIES_BYTES: usize = 64 * 1024;

/// Properties a `/flags` request sent, within [`MAX_PERSON_PROPERTIES_BYTES`].
#[derive(Debug, Clone, Default)]
pub struct SentProperties {
    properties: Map<String, Value>,
    bytes: usize,
}

impl SentProperties {
    /// The properties sent as the field `attr`.
    ///
    /// # Errors
    /// `max_length` (`attr`) past [`MAX_PERSON_PROPERTIES_BYTES`].
    pub fn parse(
        attr: &'static str,
        properties: Map<String, Value>,
    ) -> Result<Self, ValidationError> {
        let bytes = json_length(&properties);
        if bytes > MAX_PERSON_PROPERTIES_BYTES {
            return Err(ValidationError::field(
                attr,
                ValidationCode::MaxLength,
                format!("Ensure {attr} has no more than {MAX_PERSON_PROPERTIES_BYTES} bytes."),
            ));
        }
        Ok(Self { properties, bytes })
    }

    /// Their JSON text's length.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.properties
    }

    /// The properties sent under `key` (a group type's, in `group_properties`).
    pub fn take(&mut self, key: &str) -> Option<Value> {
        self.properties.remove(key)
    }
}
