//! Plugin request bodies read into the domain's commands.

use domain::ValidationError;
use domain::error::ValidationCode;
use domain::patch::Patch;
use domain::plugin::{
    MAX_ICON_CHARS, MAX_NAME_CHARS, MAX_TAG_CHARS, NewPlugin, PluginFields, PluginType,
    SourceChanges,
};
use serde_json::{Map, Value};

use crate::fields::{Fields, non_null};

/// Reads an install body: `url` (not for `source` plugins) and the writable fields.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_plugin(body: &Map<String, Value>) -> Result<NewPlugin, ValidationError> {
    let fields = plugin_fields(body)?;
    Ok(NewPlugin {
        url: Fields(body).string("url")?.value(),
        fields,
    })
}

/// Reads the writable fields (`url` and `latest_tag` are not among them and are ignored).
///
/// # Errors
/// The first invalid field.
pub(super) fn plugin_fields(body: &Map<String, Value>) -> Result<PluginFields, ValidationError> {
    let fields = Fields(body);
    Ok(PluginFields {
        plugin_type: parse_type(&fields)?,
        name: fields.bounded_string("name", MAX_NAME_CHARS)?,
        description: fields.string("description")?,
        icon: fields.bounded_string("icon", MAX_ICON_CHARS)?,
        config_schema: non_null(fields.raw("config_schema"), "config_schema")?
            .map(|schema| match schema {
                Value::Array(_) | Value::Object(_) => Ok(schema.clone()),
                _ => Err(ValidationError::invalid(
                    "config_schema",
                    "The config schema must be a list or an object.",
                )),
            })
            .transpose()?,
        tag: fields.bounded_string("tag", MAX_TAG_CHARS)?,
        is_global: non_null(fields.boolean("is_global")?, "is_global")?,
        capabilities: non_null(fields.raw("capabilities"), "capabilities")?
            .map(|capabilities| match capabilities {
                Value::Object(map) => Ok(map.clone()),
                _ => Err(ValidationError::invalid(
                    "capabilities",
                    "Capabilities must be an object.",
                )),
            })
            .transpose()?,
        metrics: non_null(fields.raw("metrics"), "metrics")?.cloned(),
        public_jobs: non_null(fields.raw("public_jobs"), "public_jobs")?.cloned(),
    })
}

fn parse_type(fields: &Fields<'_>) -> Result<Option<PluginType>, ValidationError> {
    match fields.raw("plugin_type") {
        Patch::Absent | Patch::Null => Ok(None),
        Patch::Value(value) => {
            let raw = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            PluginType::parse(&raw).map(Some).ok_or_else(|| {
                ValidationError::field(
                    "plugin_type",
                    ValidationCode::InvalidChoice,
                    format!("\"{raw}\" is not a valid choice."),
                )
            })
        }
    }
}

/// Reads an `update_source` body: `{filename: content | null}`.
///
/// # Errors
/// A value that is neither a string nor `null`, naming the file.
pub(super) fn source_changes(body: &Map<String, Value>) -> Result<SourceChanges, ValidationError> {
    body.iter()
        .map(|(name, content)| match content {
            Value::String(text) => Ok((name.clone(), Some(text.clone()))),
            Value::Null => Ok((name.clone(), None)),
            _ => Err(ValidationError::invalid(name, "Not a valid string.")),
        })
        .collect()
}

/// Reads an `upgrade` body: an optional `tag` to install instead of the newest.
///
/// # Errors
/// A `tag` that is not a string.
pub(super) fn upgrade_tag(body: &Map<String, Value>) -> Result<Option<String>, ValidationError> {
    Ok(Fields(body)
        .bounded_string("tag", MAX_TAG_CHARS)?
        .value()
        .filter(|tag| !tag.is_empty()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn plugin_types_are_a_closed_list() {
        let error = plugin_fields(&body(json!({"plugin_type": "foo"}))).unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (Some("plugin_type"), "\"foo\" is not a valid choice.")
        );
        assert_eq!(
            plugin_fields(&body(json!({"plugin_type": "source"})))
                .unwrap()
                .plugin_type,
            Some(PluginType::Source)
        );
    }

    #[test]
    fn source_changes_set_strings_and_delete_nulls() {
        let changes = source_changes(&body(json!({"index.ts": "x", "old.ts": null}))).unwrap();
        assert_eq!(changes["index.ts"].as_deref(), Some("x"));
        assert_eq!(changes["old.ts"], None);
        let error = source_changes(&body(json!({"index.ts": 5}))).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("index.ts"));
    }

    #[test]
    fn latest_tag_and_url_are_not_writable_fields() {
        let fields =
            plugin_fields(&body(json!({"url": "x", "latest_tag": "y", "name": "n"}))).unwrap();
        assert_eq!(fields.name, Patch::Value("n".into()));
        assert_eq!(
            new_plugin(&body(json!({"url": "https://github.com/a/b"})))
                .unwrap()
                .url
                .as_deref(),
            Some("https://github.com/a/b")
        );
    }
}
