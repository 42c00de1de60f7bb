//! Plugin request bodies read into [`PluginWrite`] and [`PluginUpgrade`] — also their schemas
//! in the OpenAPI document, limits read from the domain constants the readers enforce — and
//! from there into the domain's commands.

use domain::ValidationError;
use domain::patch::Patch;
use domain::plugin::{
    ConfigSchema, MAX_ICON_CHARS, MAX_NAME_CHARS, MAX_TAG_CHARS, NewPlugin, PluginCapabilities,
    PluginFields, PluginType, SourceChanges,
};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::ObjectBuilder;

use crate::contract::schemas::{self, text};
use crate::fields::{Fields, non_null, not_a_choice};

/// A plugin to install (POST: `url` unless `plugin_type` is `source`) or change.
#[derive(ToSchema)]
pub(crate) struct PluginWrite {
    /// Install only: a GitHub, GitLab, npm or `file:` URL.
    url: Option<String>,
    #[schema(value_type = Option<schemas::PluginType>)]
    plugin_type: Option<PluginType>,
    #[schema(schema_with = name_schema, required = false)]
    name: Patch<String>,
    #[schema(value_type = Option<String>)]
    description: Patch<String>,
    #[schema(schema_with = icon_schema, required = false)]
    icon: Patch<String>,
    /// A list or an object.
    #[schema(required = false)]
    config_schema: Option<Value>,
    #[schema(schema_with = tag_schema, required = false)]
    tag: Patch<String>,
    /// Needs the organization's `root` plugin level.
    #[schema(nullable = false)]
    is_global: Option<bool>,
    #[schema(value_type = Object, required = false)]
    capabilities: Option<PluginCapabilities>,
    #[schema(required = false)]
    metrics: Option<Value>,
    #[schema(required = false)]
    public_jobs: Option<Value>,
}

fn name_schema() -> ObjectBuilder {
    text(MAX_NAME_CHARS, true)
}

fn icon_schema() -> ObjectBuilder {
    text(MAX_ICON_CHARS, true)
}

fn tag_schema() -> ObjectBuilder {
    text(MAX_TAG_CHARS, true)
}

impl PluginWrite {
    /// Reads the writable fields; `url` (install only) and `latest_tag` are not among them and
    /// are ignored.
    ///
    /// # Errors
    /// The first invalid field.
    fn change(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        Ok(Self {
            url: None,
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
                    Value::Object(map) => Ok(PluginCapabilities::from_json(map.clone())),
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

    /// Reads an install body: the writable fields, then `url`.
    ///
    /// # Errors
    /// The first invalid field.
    fn install(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let write = Self::change(body)?;
        Ok(Self {
            url: Fields(body).string("url")?.value(),
            ..write
        })
    }

    /// The `url` to install from (none for a change), and the writable fields.
    fn split(self) -> (Option<String>, PluginFields) {
        let fields = PluginFields {
            plugin_type: self.plugin_type,
            name: self.name,
            description: self.description,
            icon: self.icon,
            config_schema: self.config_schema.map(ConfigSchema::from_json),
            tag: self.tag,
            is_global: self.is_global,
            capabilities: self.capabilities,
            metrics: self.metrics,
            public_jobs: self.public_jobs,
        };
        (self.url, fields)
    }
}

/// Reads an install body: `url` (not for `source` plugins) and the writable fields.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_plugin(body: &Map<String, Value>) -> Result<NewPlugin, ValidationError> {
    let (url, fields) = PluginWrite::install(body)?.split();
    Ok(NewPlugin { url, fields })
}

/// Reads a change body: the writable fields.
///
/// # Errors
/// The first invalid field.
pub(super) fn plugin_fields(body: &Map<String, Value>) -> Result<PluginFields, ValidationError> {
    Ok(PluginWrite::change(body)?.split().1)
}

fn parse_type(fields: &Fields<'_>) -> Result<Option<PluginType>, ValidationError> {
    match fields.raw("plugin_type") {
        Patch::Absent | Patch::Null => Ok(None),
        Patch::Value(value) => value
            .as_str()
            .and_then(PluginType::parse)
            .map(Some)
            .ok_or_else(|| not_a_choice("plugin_type", value)),
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

/// `upgrade`: optionally the version to install.
#[derive(ToSchema)]
pub(crate) struct PluginUpgrade {
    /// The version to install instead of the newest; empty is none.
    #[schema(schema_with = tag_schema, required = false)]
    pub(super) tag: Option<String>,
}

impl PluginUpgrade {
    /// Reads an `upgrade` body.
    ///
    /// # Errors
    /// A `tag` that is not a string, or too long.
    pub(super) fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        Ok(Self {
            tag: Fields(body)
                .bounded_string("tag", MAX_TAG_CHARS)?
                .value()
                .filter(|tag| !tag.is_empty()),
        })
    }
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
