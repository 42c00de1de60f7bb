//! Where, in which iteration of its survey and in which language a response was given: the
//! properties PostHog's responses list shows as `extra` (with `session_id`), kept with each
//! response so a list reads them from its row.

use serde_json::{Map, Value};

/// The properties a survey event is kept with besides its `$survey_*` ones: where it was
/// answered, as the SDKs (and PostHog's GeoIP enrichment, when a client sends its result) name
/// it.
pub const CONTEXT_PROPERTIES: [&str; 8] = [
    "$session_id",
    "$device_type",
    "$browser",
    "$os",
    "$geoip_country_code",
    "$geoip_country_name",
    "$geoip_city_name",
    "$current_url",
];

/// Each field's stored name and the event property it is read from.
const FIELDS: [(&str, &str); 10] = [
    ("session_id", "$session_id"),
    ("device_type", "$device_type"),
    ("browser", "$browser"),
    ("os", "$os"),
    ("geoip_country_code", "$geoip_country_code"),
    ("geoip_country_name", "$geoip_country_name"),
    ("geoip_city_name", "$geoip_city_name"),
    ("current_url", "$current_url"),
    ("iteration", "$survey_iteration"),
    ("language", "$survey_language"),
];

/// A response's context, each value as text (a number as written: iteration `2` is `"2"`, as
/// PostHog's serializer renders it); `None` where no event of the response gave one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseContext {
    pub session_id: Option<String>,
    pub device_type: Option<String>,
    pub browser: Option<String>,
    pub os: Option<String>,
    pub geoip_country_code: Option<String>,
    pub geoip_country_name: Option<String>,
    pub geoip_city_name: Option<String>,
    pub current_url: Option<String>,
    /// `$survey_iteration`: which run of a recurring survey it answered.
    pub iteration: Option<String>,
    /// `$survey_language`: the translation the person was shown (none: the base language).
    pub language: Option<String>,
}

impl ResponseContext {
    /// What one event's properties say: a non-empty string as it is, a number as written;
    /// anything else is no value.
    pub fn of(properties: &Map<String, Value>) -> Self {
        let mut context = Self::default();
        for (name, property) in FIELDS {
            *context.slot(name) = match properties.get(property) {
                Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
                Some(Value::Number(number)) => Some(number.to_string()),
                _ => None,
            };
        }
        context
    }

    /// This context's values, with `earlier`'s where this one has none: a later event's value
    /// wins, an earlier one fills in.
    #[must_use]
    pub fn or(mut self, earlier: Self) -> Self {
        let Self {
            session_id,
            device_type,
            browser,
            os,
            geoip_country_code,
            geoip_country_name,
            geoip_city_name,
            current_url,
            iteration,
            language,
        } = earlier;
        for (slot, value) in [
            (&mut self.session_id, session_id),
            (&mut self.device_type, device_type),
            (&mut self.browser, browser),
            (&mut self.os, os),
            (&mut self.geoip_country_code, geoip_country_code),
            (&mut self.geoip_country_name, geoip_country_name),
            (&mut self.geoip_city_name, geoip_city_name),
            (&mut self.current_url, current_url),
            (&mut self.iteration, iteration),
            (&mut self.language, language),
        ] {
            if slot.is_none() {
                *slot = value;
            }
        }
        self
    }

    /// As stored: an object of the values there are, by field name (so storage merges two
    /// contexts as [`Self::or`] does by merging objects, the later one's keys winning).
    pub fn to_stored(&self) -> Map<String, Value> {
        let mut stored = Map::new();
        for (name, _) in FIELDS {
            if let Some(value) = self.get(name) {
                stored.insert(name.to_owned(), Value::String(value.clone()));
            }
        }
        stored
    }

    /// Read back from storage; values of another shape read as none.
    pub fn from_stored(stored: &Value) -> Self {
        let mut context = Self::default();
        for (name, _) in FIELDS {
            *context.slot(name) = stored.get(name).and_then(Value::as_str).map(str::to_owned);
        }
        context
    }

    fn get(&self, name: &str) -> Option<&String> {
        match name {
            "session_id" => self.session_id.as_ref(),
            "device_type" => self.device_type.as_ref(),
            "browser" => self.browser.as_ref(),
            "os" => self.os.as_ref(),
            "geoip_country_code" => self.geoip_country_code.as_ref(),
            "geoip_country_name" => self.geoip_country_name.as_ref(),
            "geoip_city_name" => self.geoip_city_name.as_ref(),
            "current_url" => self.current_url.as_ref(),
            "iteration" => self.iteration.as_ref(),
            "language" => self.language.as_ref(),
            _ => None,
        }
    }

    fn slot(&mut self, name: &str) -> &mut Option<String> {
        match name {
            "session_id" => &mut self.session_id,
            "device_type" => &mut self.device_type,
            "browser" => &mut self.browser,
            "os" => &mut self.os,
            "geoip_country_code" => &mut self.geoip_country_code,
            "geoip_country_name" => &mut self.geoip_country_name,
            "geoip_city_name" => &mut self.geoip_city_name,
            "current_url" => &mut self.current_url,
            "iteration" => &mut self.iteration,
            _ => &mut self.language,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_events_context_takes_texts_and_numbers_as_written() {
        let properties = json!({"$session_id": "s-1", "$survey_iteration": 2, "$browser": "",
                                "$os": true, "$current_url": "https://site.example/"});
        let context = ResponseContext::of(properties.as_object().unwrap());
        assert_eq!(
            context,
            ResponseContext {
                session_id: Some("s-1".into()),
                iteration: Some("2".into()),
                current_url: Some("https://site.example/".into()),
                ..ResponseContext::default()
            }
        );
    }

    #[test]
    fn a_later_value_wins_and_an_earlier_one_fills_in() {
        let later = ResponseContext {
            os: Some("Mac OS X".into()),
            ..ResponseContext::default()
        };
        let earlier = ResponseContext {
            os: Some("Windows".into()),
            language: Some("fr".into()),
            ..ResponseContext::default()
        };
        let merged = later.or(earlier);
        assert_eq!(merged.os.as_deref(), Some("Mac OS X"));
        assert_eq!(merged.language.as_deref(), Some("fr"));
    }

    #[test]
    fn it_is_stored_as_an_object_of_its_values_and_read_back() {
        let context = ResponseContext {
            session_id: Some("s".into()),
            language: Some("es".into()),
            ..ResponseContext::default()
        };
        let stored = context.to_stored();
        assert_eq!(
            Value::Object(stored.clone()),
            json!({"session_id": "s", "language": "es"})
        );
        assert_eq!(
            ResponseContext::from_stored(&Value::Object(stored)),
            context
        );
        assert_eq!(
            ResponseContext::from_stored(&json!({"os": 1})),
            ResponseContext::default()
        );
    }
}
