//! Plugin config request bodies read into the domain's commands.

use domain::ValidationError;
use domain::patch::Patch;
use domain::plugin::PluginId;
use domain::plugin_config::{
    MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, NewPluginConfig, PluginConfigChanges, PluginConfigState,
};
use serde_json::{Map, Value};

use crate::fields::{Fields, non_null};

/// Reads a create body: `plugin` required, the rest defaulted.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_config(body: &Map<String, Value>) -> Result<NewPluginConfig, ValidationError> {
    let changes = config_changes(body)?;
    let plugin = match Fields(body).integer("plugin")? {
        Patch::Value(id) => PluginId(i32::try_from(id).unwrap_or(-1)),
        Patch::Absent | Patch::Null => return Err(ValidationError::required("plugin")),
    };
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
    let fields = Fields(body);
    Ok(PluginConfigChanges {
        enabled: non_null(fields.boolean("enabled")?, "enabled")?,
        order: non_null(
            fields.bounded_integer("order", i64::from(i32::MIN), i64::from(i32::MAX))?,
            "order",
        )?,
        config: non_null(fields.raw("config"), "config")?
            .map(|config| {
                config
                    .as_object()
                    .cloned()
                    .ok_or_else(|| ValidationError::invalid("config", "Config must be an object."))
            })
            .transpose()?,
        name: fields.bounded_string("name", MAX_NAME_CHARS)?,
        description: fields.bounded_string("description", MAX_DESCRIPTION_CHARS)?,
    })
}
