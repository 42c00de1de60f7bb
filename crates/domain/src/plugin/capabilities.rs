//! A plugin's stored `capabilities`: what its main file exports, as the plugin list shows it.
//! Burrow writes the three lists when it reads a main file ([`Capabilities`]); a client may also
//! write the object, and PostHog's plugin server adds keys of its own, so everything else stays
//! as sent (`crate::json_fields`) and the object round-trips unchanged.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::Capabilities;
use crate::json_fields::{ObjectWriter, take, to_object};

/// `{"methods", "jobs", "scheduled_tasks", …}`; `{}` until anything is known.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginCapabilities {
    /// Exported hooks (`processEvent`, `onEvent`, …).
    pub methods: Option<Vec<String>>,
    /// Names of the exported `jobs`.
    pub jobs: Option<Vec<String>>,
    /// Exported `runEveryMinute` / `runEveryHour` / `runEveryDay`.
    pub scheduled_tasks: Option<Vec<String>>,
    pub extra: Map<String, Value>,
}

impl PluginCapabilities {
    /// The capabilities from their JSON object.
    pub fn from_json(mut capabilities: Map<String, Value>) -> Self {
        Self {
            methods: take(&mut capabilities, "methods"),
            jobs: take(&mut capabilities, "jobs"),
            scheduled_tasks: take(&mut capabilities, "scheduled_tasks"),
            extra: capabilities,
        }
    }

    /// The capabilities as stored and shown.
    pub fn to_json(&self) -> Map<String, Value> {
        to_object(self)
    }
}

impl From<Capabilities> for PluginCapabilities {
    /// What a read of the main file found; a key a client or the plugin server added is
    /// replaced, as PostHog's plugin server replaces the whole object.
    fn from(capabilities: Capabilities) -> Self {
        Self {
            methods: Some(capabilities.methods),
            jobs: Some(capabilities.jobs),
            scheduled_tasks: Some(capabilities.scheduled_tasks),
            extra: Map::new(),
        }
    }
}

impl Serialize for PluginCapabilities {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field("jobs", self.jobs.as_ref())?;
        json.field("methods", self.methods.as_ref())?;
        json.field("scheduled_tasks", self.scheduled_tasks.as_ref())?;
        json.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    #[test]
    fn what_a_client_wrote_round_trips_unchanged() {
        for sent in [
            json!({}),
            json!({"methods": ["processEvent"], "jobs": [], "scheduled_tasks": ["runEveryDay"]}),
            json!({"methods": "processEvent", "jobs": null, "interfaces": ["x"]}),
        ] {
            let capabilities = PluginCapabilities::from_json(object(sent.clone()));
            assert_eq!(Value::Object(capabilities.to_json()), sent);
        }
    }

    #[test]
    fn the_lists_are_typed_and_the_rest_is_kept_aside() {
        let capabilities = PluginCapabilities::from_json(object(
            json!({"methods": ["onEvent"], "jobs": 3, "interfaces": []}),
        ));
        assert_eq!(capabilities.methods, Some(vec!["onEvent".to_owned()]));
        assert_eq!(capabilities.jobs, None);
        assert_eq!(
            Value::Object(capabilities.extra),
            json!({"jobs": 3, "interfaces": []})
        );
    }

    #[test]
    fn a_read_of_the_main_file_gives_all_three_lists() {
        let read = Capabilities {
            methods: vec!["processEvent".into()],
            jobs: vec!["sync".into()],
            scheduled_tasks: Vec::new(),
        };
        assert_eq!(
            Value::Object(PluginCapabilities::from(read).to_json()),
            json!({"methods": ["processEvent"], "jobs": ["sync"], "scheduled_tasks": []})
        );
    }
}
