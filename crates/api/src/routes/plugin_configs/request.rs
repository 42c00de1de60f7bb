//! Plugin config request bodies read into [`PluginConfigWrite`] — also their schema in the
//! OpenAPI document, limits read from the domain constants the reader enforces — and from there
//! into the domain's commands.

use domain::ValidationError;
use domain::patch::Patch;
use domain::plugin::PluginId;
use domain::plugin_config::{
    MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, NewPluginConfig, PluginConfigChanges, PluginConfigState,
};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::ObjectBuilder;

use crate::contract::schemas::text;
use crate::fields::{Fields, non_null};

/// A plugin config to create (`plugin` required) or change.
#[derive(ToSchema)]
pub(crate) struct PluginConfigWrite {
    /// The plugin's id (create only).
    #[schema(value_type = Option<i32>, nullable = false)]
    plugin: Option<PluginId>,
    #[schema(nullable = false)]
    enabled: Option<bool>,
    #[schema(nullable = false)]
    order: Option<i32>,
    /// Values of the plugin's config fields; a secret sent as `null` keeps the stored one.
    #[schema(value_type = Object, required = false)]
    config: Option<Map<String, Value>>,
    #[schema(schema_with = name_schema, required = false)]
    name: Patch<String>,
    #[schema(schema_with = description_schema, required = false)]
    description: Patch<String>,
}

fn name_schema() -> ObjectBuilder {
    text(MAX_NAME_CHARS, true)
}

fn description_schema() -> ObjectBuilder {
    text(MAX_DESCRIPTION_CHARS, true)
}

impl PluginConfigWrite {
    /// Reads the changeable fields; `plugin` (create only) is not among them and is ignored.
    ///
    /// # Errors
    /// The first invalid field.
    fn change(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        Ok(Self {
            plugin: None,
            enabled: non_null(fields.boolean("enabled")?, "enabled")?,
            order: non_null(
                fields.bounded_integer("order", i32::MIN.into(), i32::MAX.into())?,
                "order",
            )?,
            config: non_null(fields.raw("config"), "config")?
                .map(|config| {
                    config.as_object().cloned().ok_or_else(|| {
                        ValidationError::invalid("config", "Config must be an object.")
                    })
                })
                .transpose()?,
            name: fields.bounded_string("name", MAX_NAME_CHARS)?,
            description: fields.bounded_string("description", MAX_DESCRIPTION_CHARS)?,
        })
    }

    /// Reads a create body: the changeable fields, then `plugin`.
    ///
    /// # Errors
    /// The first invalid field.
    fn create(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let write = Self::change(body)?;
        Ok(Self {
            plugin: Fields(body)
                .integer("plugin")?
                .value()
                .map(|id| PluginId(i32::try_from(id).unwrap_or(-1))),
            ..write
        })
    }

    fn into_changes(self) -> PluginConfigChanges {
        PluginConfigChanges {
            enabled: self.enabled,
            order: self.order,
            config: self.config,
            name: self.name,
            description: self.description,
        }
    }
}

/// Reads a create body: `plugin` required, the rest defaulted.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_config(body: &Map<String, Value>) -> Result<NewPluginConfig, ValidationError> {
    let write = PluginConfigWrite::create(body)?;
    let plugin = write
        .plugin
        .ok_or_else(|| ValidationError::required("plugin"))?;
    let changes = write.into_changes();
    Ok(NewPluginConfig {
        plugin,
        state: PluginConfigState {
            enabled: changes.enabled.unwrap_or(false),
            order: changes.order.unwrap_or(0),
            config: changes.config.unwrap_or_default(),
            name: changes.name.value(),
            description: changes.description.value(),
        },
    })
}

/// Reads a PATCH body.
///
/// # Errors
/// The first invalid field.
pub(super) fn config_changes(
    body: &Map<String, Value>,
) -> Result<PluginConfigChanges, ValidationError> {
    PluginConfigWrite::change(body).map(PluginConfigWrite::into_changes)
}
