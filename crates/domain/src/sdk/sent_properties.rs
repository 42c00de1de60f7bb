//! The `person_properties` a `/flags` request sent, checked once on the way in: every filter of
//! every flag may scan them, so their size is bounded, and it is kept, since it also decides
//! whether the request's evaluation is costly.

use serde_json::{Map, Value};

use crate::error::{ValidationCode, ValidationError};
use crate::json_fields::json_length;

/// The most `person_properties` one `/flags` request may send, as JSON text.
pub const MAX_PERSON_PROPERTIES_BYTES: usize = 64 * 1024;

/// Properties a `/flags` request sent, within [`MAX_PERSON_PROPERTIES_BYTES`].
#[derive(Debug, Clone, Default)]
pub struct SentProperties {
    properties: Map<String, Value>,
    bytes: usize,
}

impl SentProperties {
    /// # Errors
    /// `max_length` (`attr: person_properties`) past [`MAX_PERSON_PROPERTIES_BYTES`].
    pub fn parse(properties: Map<String, Value>) -> Result<Self, ValidationError> {
        let bytes = json_length(&properties);
        if bytes > MAX_PERSON_PROPERTIES_BYTES {
            return Err(ValidationError::field(
                "person_properties",
                ValidationCode::MaxLength,
                format!(
                    "Ensure person_properties has no more than {MAX_PERSON_PROPERTIES_BYTES} bytes."
                ),
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
}
