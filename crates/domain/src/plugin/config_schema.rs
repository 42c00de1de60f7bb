//! A plugin's config schema: PostHog's list of fields (the current form) or the legacy object
//! keyed by field, as its manifest or a client gave it. The one rule that reads it — a config
//! shows a secret field's value masked — reads the typed fields; everything else stays as sent
//! (`crate::json_fields`), so the schema round-trips unchanged.

use serde_json::{Map, Value};

use crate::json_fields::{put, take};

/// A config schema, typed where Burrow reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigSchema {
    /// The list form: `[{key, name, type, secret, …}, …]`.
    Fields(Vec<ConfigItem>),
    /// The legacy object form (or any other value a client stored): kept, never read; PostHog
    /// masks secrets of list-form schemas only.
    Other(Value),
}

/// One entry of a list-form schema.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigItem {
    Field(ConfigField),
    /// An entry that is not an object: kept as sent, it describes no field.
    Other(Value),
}

/// One field of a plugin's config.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConfigField {
    pub key: Option<String>,
    /// A secret field's value is never shown once set.
    pub secret: Option<bool>,
    pub extra: Map<String, Value>,
}

impl Default for ConfigSchema {
    /// What a plugin has before anything gives it a schema: `{}`, as PostHog stores it.
    fn default() -> Self {
        Self::Other(Value::Object(Map::new()))
    }
}

impl ConfigSchema {
    /// A schema from its JSON.
    pub fn from_json(schema: Value) -> Self {
        match schema {
            Value::Array(items) => Self::Fields(
                items
                    .into_iter()
                    .map(|item| match item {
                        Value::Object(mut field) => ConfigItem::Field(ConfigField {
                            key: take(&mut field, "key"),
                            secret: take(&mut field, "secret"),
                            extra: field,
                        }),
                        other => ConfigItem::Other(other),
                    })
                    .collect(),
            ),
            other => Self::Other(other),
        }
    }

    /// The schema as JSON, as stored and shown.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Fields(items) => Value::Array(
                items
                    .iter()
                    .map(|item| match item {
                        ConfigItem::Field(field) => {
                            let mut json = field.extra.clone();
                            put(&mut json, "key", field.key.as_ref());
                            put(&mut json, "secret", field.secret);
                            Value::Object(json)
                        }
                        ConfigItem::Other(other) => other.clone(),
                    })
                    .collect(),
            ),
            Self::Other(other) => other.clone(),
        }
    }

    /// Whether it describes any field (a stateless plugin may have none).
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Fields(items) => items.is_empty(),
            Self::Other(Value::Object(fields)) => fields.is_empty(),
            Self::Other(_) => true,
        }
    }

    /// The keys of its secret fields (list-form schemas only, as in PostHog).
    pub fn secret_keys(&self) -> Vec<&str> {
        let Self::Fields(items) = self else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| match item {
                ConfigItem::Field(field) if field.secret == Some(true) => field.key.as_deref(),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_form_round_trips_as_sent() {
        for schema in [
            json!([{"key": "token", "secret": true, "name": "Token", "type": "string"}, {"key": 5, "secret": "yes"}, "note"]),
            json!({"token": {"secret": true}}),
            json!([]),
            json!({}),
        ] {
            assert_eq!(ConfigSchema::from_json(schema.clone()).to_json(), schema);
        }
    }

    #[test]
    fn only_list_form_fields_marked_secret_with_a_key_are_secret() {
        let schema = ConfigSchema::from_json(json!([
            {"key": "token", "secret": true},
            {"key": "host"},
            {"key": "odd", "secret": "true"},
            {"secret": true},
            "note"
        ]));
        assert_eq!(schema.secret_keys(), ["token"]);
        let legacy = ConfigSchema::from_json(json!({"token": {"key": "token", "secret": true}}));
        assert!(legacy.secret_keys().is_empty());
    }
}
