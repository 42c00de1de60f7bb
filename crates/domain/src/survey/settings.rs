//! The settings objects of a survey, `appearance` and `conditions`: each parsed once, from the
//! object as sent or as stored, into a struct with the fields Burrow's rules and PostHog's SDKs
//! read typed and every other key kept as sent (see `json_fields`). A sent known key of another
//! shape is refused with PostHog's message (or one in its words where PostHog has none).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::condition_triggers::{check_actions, check_events};
use super::html::sanitize;
use super::question::ContentType;
use crate::error::{ValidationCode, ValidationError};
use crate::json_fields::{ObjectWriter, Source, WrongShape, json_length, take_as};

/// An appearance's keys by wire name: what its parser reads and the API's schema describes.
pub mod appearance_keys {
    pub const SHUFFLE_QUESTIONS: &str = "shuffleQuestions";
    pub const POPUP_DELAY: &str = "surveyPopupDelaySeconds";
    pub const WHITE_LABEL: &str = "whiteLabel";
    pub const THANK_YOU_HEADER: &str = "thankYouMessageHeader";
    pub const THANK_YOU_DESCRIPTION: &str = "thankYouMessageDescription";
    pub const THANK_YOU_CONTENT_TYPE: &str = "thankYouMessageDescriptionContentType";
    pub const THANK_YOU_CLOSE_BUTTON: &str = "thankYouMessageCloseButtonText";
}

/// The conditions' keys by wire name: what their parser reads and the API's schema describes.
pub mod condition_keys {
    pub const URL: &str = "url";
    pub const URL_MATCH_TYPE: &str = "urlMatchType";
    pub const SELECTOR: &str = "selector";
    pub const SEEN_SURVEY_WAIT_PERIOD: &str = "seenSurveyWaitPeriodInDays";
    pub const LINKED_FLAG_VARIANT: &str = "linkedFlagVariant";
    pub const DEVICE_TYPES: &str = "deviceTypes";
    pub const DEVICE_TYPES_MATCH_TYPE: &str = "deviceTypesMatchType";
    pub const ACTIONS: &str = "actions";
    pub const EVENTS: &str = "events";
    /// Events that call off a showing `events` or `actions` armed (posthog-js's `cancelEvents`).
    pub const CANCEL_EVENTS: &str = "cancelEvents";
    /// The actions or events of `actions`, `events` and `cancelEvents`.
    pub const VALUES: &str = "values";
    /// Whether `events` show the survey each time they happen.
    pub const REPEATED_ACTIVATION: &str = "repeatedActivation";
}

use appearance_keys::{
    POPUP_DELAY, SHUFFLE_QUESTIONS, THANK_YOU_CLOSE_BUTTON, THANK_YOU_CONTENT_TYPE,
    THANK_YOU_DESCRIPTION, THANK_YOU_HEADER, WHITE_LABEL,
};
use condition_keys::{
    ACTIONS, CANCEL_EVENTS, DEVICE_TYPES, DEVICE_TYPES_MATCH_TYPE, EVENTS, LINKED_FLAG_VARIANT,
    REPEATED_ACTIVATION, SEEN_SURVEY_WAIT_PERIOD, SELECTOR, URL, URL_MATCH_TYPE, VALUES,
};

/// A settings object's entries while it is read, with where they come from.
struct Reader {
    object: Map<String, Value>,
    source: Source,
}

impl Reader {
    /// The value under `key` typed; a sent value of another shape is refused with `message`.
    fn take<T: DeserializeOwned>(
        &mut self,
        key: &str,
        message: impl FnOnce() -> String,
    ) -> Result<Option<T>, String> {
        take_as(&mut self.object, key, self.source).map_err(|WrongShape(_)| message())
    }

    fn text(&mut self, key: &str) -> Result<Option<String>, String> {
        self.take(key, || format!("{key} must be a string"))
    }

    fn flag(&mut self, key: &str) -> Result<Option<bool>, String> {
        self.take(key, || format!("{key} must be a boolean"))
    }

    /// A thank-you text, sanitized when sent.
    fn sanitized_text(&mut self, key: &str) -> Result<Option<String>, String> {
        let text = self.text(key)?;
        Ok(match self.source {
            Source::Sent => text.map(|text| sanitize(&text)),
            Source::Stored => text,
        })
    }
}

/// Reads a sent settings object with `read`, its messages under `attr`.
fn parse_sent<T>(
    value: Value,
    attr: &str,
    not_an_object: &str,
    read: fn(Reader) -> Result<T, String>,
) -> Result<T, ValidationError> {
    let invalid = |detail: String| ValidationError::invalid(attr, detail);
    let Value::Object(object) = value else {
        return Err(invalid(not_an_object.to_owned()));
    };
    read(Reader {
        object,
        source: Source::Sent,
    })
    .map_err(invalid)
}

/// Reads a stored settings object with `read`, which refuses nothing stored.
fn read_stored<T>(
    object: Map<String, Value>,
    read: fn(Reader) -> Result<T, String>,
) -> Result<T, String> {
    read(Reader {
        object,
        source: Source::Stored,
    })
}

/// A survey's `appearance`, its thank-you texts sanitized: the settings Burrow's rules read,
/// typed; the rest (colours, position, …) as sent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct Appearance {
    /// Questions shown in random order, which branching cannot follow.
    pub shuffle_questions: Option<bool>,
    /// How long the SDK waits before showing the survey: any number from 0, as sent.
    pub survey_popup_delay_seconds: Option<Number>,
    pub white_label: Option<bool>,
    pub thank_you_message_header: Option<String>,
    pub thank_you_message_description: Option<String>,
    pub thank_you_message_description_content_type: Option<ContentType>,
    pub thank_you_message_close_button_text: Option<String>,
    /// Every other key as sent, a known key whose value is null, and one of another shape
    /// stored before such values were refused.
    pub extra: Map<String, Value>,
}

impl Appearance {
    /// # Errors
    /// PostHog's messages with `attr: appearance`.
    pub fn parse(value: Value) -> Result<Self, ValidationError> {
        parse_sent(
            value,
            "appearance",
            "Appearance must be an object",
            Self::read,
        )
    }

    fn read(mut read: Reader) -> Result<Self, String> {
        let thank_you_message_header = read.sanitized_text(THANK_YOU_HEADER)?;
        let thank_you_message_description = read.sanitized_text(THANK_YOU_DESCRIPTION)?;
        let thank_you_message_close_button_text = read.sanitized_text(THANK_YOU_CLOSE_BUTTON)?;
        let thank_you_message_description_content_type = read
            .take(THANK_YOU_CONTENT_TYPE, || {
                format!("{THANK_YOU_CONTENT_TYPE} must be one of ['text', 'html']")
            })?;
        let popup_error = || "Survey popup delay seconds must be a positive integer".to_owned();
        let survey_popup_delay_seconds: Option<Number> = read.take(POPUP_DELAY, popup_error)?;
        if read.source == Source::Sent
            && survey_popup_delay_seconds
                .as_ref()
                .is_some_and(|delay| delay.as_f64().is_none_or(|delay| delay < 0.0))
        {
            return Err(popup_error());
        }
        Ok(Self {
            white_label: read.flag(WHITE_LABEL)?,
            shuffle_questions: read.flag(SHUFFLE_QUESTIONS)?,
            survey_popup_delay_seconds,
            thank_you_message_header,
            thank_you_message_description,
            thank_you_message_description_content_type,
            thank_you_message_close_button_text,
            extra: read.object,
        })
    }
}

impl TryFrom<Map<String, Value>> for Appearance {
    type Error = String;

    fn try_from(object: Map<String, Value>) -> Result<Self, String> {
        read_stored(object, Self::read)
    }
}

impl Serialize for Appearance {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field(SHUFFLE_QUESTIONS, self.shuffle_questions.as_ref())?;
        json.field(POPUP_DELAY, self.survey_popup_delay_seconds.as_ref())?;
        json.field(
            THANK_YOU_CLOSE_BUTTON,
            self.thank_you_message_close_button_text.as_ref(),
        )?;
        json.field(
            THANK_YOU_DESCRIPTION,
            self.thank_you_message_description.as_ref(),
        )?;
        json.field(
            THANK_YOU_CONTENT_TYPE,
            self.thank_you_message_description_content_type.as_ref(),
        )?;
        json.field(THANK_YOU_HEADER, self.thank_you_message_header.as_ref())?;
        json.field(WHITE_LABEL, self.white_label.as_ref())?;
        json.end()
    }
}

/// Condition keys that name objects of the survey's project; a copy drops them. PostHog's list
/// has the first three: its copies keep `cancelEvents`, which without the events or actions
/// they call off would be stored and never used.
const PROJECT_CONDITIONS: [&str; 4] = [LINKED_FLAG_VARIANT, ACTIONS, EVENTS, CANCEL_EVENTS];

/// PostHog sets no bound on `conditions`; Burrow holds a sent one to this many bytes as JSON
/// (what every SDK feed carries of the survey), before reading any of it.
pub const MAX_CONDITIONS_BYTES: usize = 65_536;

/// A survey's display `conditions`: where, when and to whom the SDK shows it, PostHog's keys
/// typed; the rest as sent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct Conditions {
    pub url: Option<String>,
    pub url_match_type: Option<MatchType>,
    /// A CSS selector the page must have.
    pub selector: Option<String>,
    /// Days since the person last saw a survey: any number, as sent.
    pub seen_survey_wait_period_in_days: Option<Number>,
    /// The variant of the linked flag the person must have.
    pub linked_flag_variant: Option<String>,
    pub device_types: Option<Vec<String>>,
    pub device_types_match_type: Option<MatchType>,
    /// Actions of the project that show the survey.
    pub actions: Option<ConditionValues>,
    /// Events that show the survey.
    pub events: Option<ConditionValues>,
    /// Events that call off a showing the events or actions armed and not yet shown.
    pub cancel_events: Option<ConditionValues>,
    /// Every other key as sent, a known key whose value is null, and one of another shape
    /// stored before such values were refused.
    pub extra: Map<String, Value>,
}

wire_enum! {
    /// How a condition's value is matched, PostHog's `SurveyMatchType`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum MatchType {
        Regex = "regex",
        NotRegex = "not_regex",
        Exact = "exact",
        IsNot = "is_not",
        Icontains = "icontains",
        NotIcontains = "not_icontains",
    }
}

/// The `actions` or `events` a survey is shown after, or the `cancelEvents` that call it off:
/// `{"values": [...], ...}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct ConditionValues {
    /// The actions (`{id, name}`) or events (`{name, propertyFilters}`), in the SDK's shapes,
    /// checked when sent (`condition_triggers`).
    pub values: Option<Vec<Value>>,
    /// Whether the events show the survey each time they happen.
    pub repeated_activation: Option<bool>,
    /// Every other key as sent.
    pub extra: Map<String, Value>,
}

impl Conditions {
    /// # Errors
    /// `Conditions must be an object`, or a known key of another shape, with
    /// `attr: conditions`; past [`MAX_CONDITIONS_BYTES`], `max_length`.
    pub fn parse(value: Value) -> Result<Self, ValidationError> {
        if let Value::Object(object) = &value
            && json_length(object) > MAX_CONDITIONS_BYTES
        {
            return Err(ValidationError::field(
                "conditions",
                ValidationCode::MaxLength,
                format!("Conditions may hold at most {MAX_CONDITIONS_BYTES} bytes as JSON."),
            ));
        }
        parse_sent(
            value,
            "conditions",
            "Conditions must be an object",
            Self::read,
        )
    }

    fn read(mut read: Reader) -> Result<Self, String> {
        let match_type = |key: &'static str| {
            move || {
                let names = MatchType::ALL.map(MatchType::as_str);
                format!("{key} must be one of: {}", names.join(", "))
            }
        };
        let source = read.source;
        let mut group = |key: &'static str| -> Result<Option<ConditionValues>, String> {
            let object: Option<Map<String, Value>> =
                read.take(key, || format!("{key} must be an object"))?;
            object
                .map(|object| ConditionValues::read(Reader { object, source }, key))
                .transpose()
        };
        let actions = group(ACTIONS)?;
        let events = group(EVENTS)?;
        let cancel_events = group(CANCEL_EVENTS)?;
        Ok(Self {
            url: read.text(URL)?,
            url_match_type: read.take(URL_MATCH_TYPE, match_type(URL_MATCH_TYPE))?,
            selector: read.text(SELECTOR)?,
            seen_survey_wait_period_in_days: read.take(SEEN_SURVEY_WAIT_PERIOD, || {
                format!("{SEEN_SURVEY_WAIT_PERIOD} must be a number")
            })?,
            linked_flag_variant: read.text(LINKED_FLAG_VARIANT)?,
            device_types: read.take(DEVICE_TYPES, || {
                format!("{DEVICE_TYPES} must be a list of strings")
            })?,
            device_types_match_type: read
                .take(DEVICE_TYPES_MATCH_TYPE, match_type(DEVICE_TYPES_MATCH_TYPE))?,
            actions,
            events,
            cancel_events,
            extra: read.object,
        })
    }

    /// The conditions about the web visit, by wire name, that this survey has: the ones an
    /// external survey may not have. PostHog's test: a condition is had when not null, and an
    /// object only with some `values`; so is one stored in a shape Burrow does not read.
    /// PostHog does not count `cancelEvents`; Burrow does, as an external survey's page never
    /// runs them.
    pub(crate) fn web_targeting(&self) -> Vec<&'static str> {
        let had = |group: &Option<ConditionValues>| {
            group.as_ref().is_some_and(ConditionValues::has_values)
        };
        [
            (URL, self.url.is_some()),
            (URL_MATCH_TYPE, self.url_match_type.is_some()),
            (SELECTOR, self.selector.is_some()),
            (
                SEEN_SURVEY_WAIT_PERIOD,
                self.seen_survey_wait_period_in_days.is_some(),
            ),
            (LINKED_FLAG_VARIANT, self.linked_flag_variant.is_some()),
            (DEVICE_TYPES, self.device_types.is_some()),
            (
                DEVICE_TYPES_MATCH_TYPE,
                self.device_types_match_type.is_some(),
            ),
            (ACTIONS, had(&self.actions)),
            (EVENTS, had(&self.events)),
            (CANCEL_EVENTS, had(&self.cancel_events)),
        ]
        .into_iter()
        .filter(|(key, typed)| *typed || self.extra.get(*key).is_some_and(is_had))
        .map(|(key, _)| key)
        .collect()
    }

    /// The conditions without those naming objects of the survey's project, for a copy in
    /// another project.
    pub(crate) fn without_project_objects(mut self) -> Self {
        self.linked_flag_variant = None;
        self.actions = None;
        self.events = None;
        self.cancel_events = None;
        for key in PROJECT_CONDITIONS {
            self.extra.remove(key);
        }
        self
    }
}

impl TryFrom<Map<String, Value>> for Conditions {
    type Error = String;

    fn try_from(object: Map<String, Value>) -> Result<Self, String> {
        read_stored(object, Self::read)
    }
}

impl Serialize for Conditions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field(ACTIONS, self.actions.as_ref())?;
        json.field(CANCEL_EVENTS, self.cancel_events.as_ref())?;
        json.field(DEVICE_TYPES, self.device_types.as_ref())?;
        json.field(
            DEVICE_TYPES_MATCH_TYPE,
            self.device_types_match_type.as_ref(),
        )?;
        json.field(EVENTS, self.events.as_ref())?;
        json.field(LINKED_FLAG_VARIANT, self.linked_flag_variant.as_ref())?;
        json.field(
            SEEN_SURVEY_WAIT_PERIOD,
            self.seen_survey_wait_period_in_days.as_ref(),
        )?;
        json.field(SELECTOR, self.selector.as_ref())?;
        json.field(URL, self.url.as_ref())?;
        json.field(URL_MATCH_TYPE, self.url_match_type.as_ref())?;
        json.end()
    }
}

impl ConditionValues {
    /// The group under `key` (`actions`, `events` or `cancelEvents`), its messages naming it;
    /// sent `values` are held to what the SDK reads of them.
    fn read(mut read: Reader, key: &str) -> Result<Self, String> {
        let values: Option<Vec<Value>> =
            read.take(VALUES, || format!("{key} values must be a list"))?;
        if let Some(values) = values.as_deref().filter(|_| read.source == Source::Sent) {
            match key {
                ACTIONS => check_actions(key, values)?,
                _ => check_events(key, values)?,
            }
        }
        Ok(Self {
            values,
            repeated_activation: read.take(REPEATED_ACTIVATION, || {
                format!("{key} {REPEATED_ACTIVATION} must be a boolean")
            })?,
            extra: read.object,
        })
    }

    fn has_values(&self) -> bool {
        self.values
            .as_ref()
            .is_some_and(|values| !values.is_empty())
    }
}

/// Whether a stored condition Burrow could not read is had: see [`Conditions::web_targeting`].
fn is_had(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Object(group) => group
            .get(VALUES)
            .and_then(Value::as_array)
            .is_some_and(|values| !values.is_empty()),
        _ => true,
    }
}

impl TryFrom<Map<String, Value>> for ConditionValues {
    type Error = String;

    fn try_from(object: Map<String, Value>) -> Result<Self, String> {
        let source = Source::Stored;
        Self::read(Reader { object, source }, "")
    }
}

impl Serialize for ConditionValues {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field(REPEATED_ACTIVATION, self.repeated_activation.as_ref())?;
        json.field(VALUES, self.values.as_ref())?;
        json.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn appearance_error(value: Value) -> String {
        Appearance::parse(value).unwrap_err().detail
    }

    fn conditions_error(value: Value) -> ValidationError {
        Conditions::parse(value).unwrap_err()
    }

    #[test]
    fn appearance_must_be_an_object_with_sane_settings() {
        assert_eq!(
            appearance_error(json!("red")),
            "Appearance must be an object"
        );
        assert_eq!(
            appearance_error(json!({"surveyPopupDelaySeconds": -1})),
            "Survey popup delay seconds must be a positive integer"
        );
        assert_eq!(
            appearance_error(json!({"surveyPopupDelaySeconds": "soon"})),
            "Survey popup delay seconds must be a positive integer"
        );
        assert_eq!(
            appearance_error(json!({"whiteLabel": "yes"})),
            "whiteLabel must be a boolean"
        );
        assert_eq!(
            appearance_error(json!({"thankYouMessageDescriptionContentType": "md"})),
            "thankYouMessageDescriptionContentType must be one of ['text', 'html']"
        );
        assert_eq!(
            appearance_error(json!({"shuffleQuestions": "yes"})),
            "shuffleQuestions must be a boolean"
        );
        assert_eq!(
            appearance_error(json!({"thankYouMessageHeader": ["Thanks"]})),
            "thankYouMessageHeader must be a string"
        );
    }

    #[test]
    fn thank_you_texts_are_sanitized_and_other_values_round_trip() {
        let parsed = serde_json::to_value(
            Appearance::parse(json!({
                "thankYouMessageHeader": "<script>x</script>Thanks!",
                "backgroundColor": " ",
                "surveyPopupDelaySeconds": 0,
                "whiteLabel": null
            }))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            parsed,
            json!({
                "thankYouMessageHeader": "Thanks!",
                "backgroundColor": " ",
                "surveyPopupDelaySeconds": 0,
                "whiteLabel": null
            })
        );
    }

    #[test]
    fn conditions_must_be_an_object_with_posthogs_shapes() {
        let error = conditions_error(json!([]));
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (Some("conditions"), "Conditions must be an object")
        );
        for (sent, message) in [
            (json!({"url": 5}), "url must be a string"),
            (
                json!({"urlMatchType": "fuzzy"}),
                "urlMatchType must be one of: regex, not_regex, exact, is_not, icontains, not_icontains",
            ),
            (
                json!({"seenSurveyWaitPeriodInDays": "a week"}),
                "seenSurveyWaitPeriodInDays must be a number",
            ),
            (
                json!({"deviceTypes": "Mobile"}),
                "deviceTypes must be a list of strings",
            ),
            (json!({"actions": [1]}), "actions must be an object"),
            (
                json!({"events": {"values": 1}}),
                "events values must be a list",
            ),
            (
                json!({"events": {"values": [], "repeatedActivation": "often"}}),
                "events repeatedActivation must be a boolean",
            ),
            (
                json!({"cancelEvents": "x"}),
                "cancelEvents must be an object",
            ),
            (
                json!({"cancelEvents": {"values": {"name": "x"}}}),
                "cancelEvents values must be a list",
            ),
            (
                json!({"cancelEvents": {"values": [{"event": "x"}]}}),
                "cancelEvents values must be objects with a name",
            ),
            (
                json!({"events": {"values": [{"name": "x", "propertyFilters": {"a": {"values": ["1"], "operator": "in"}}}]}}),
                "events propertyFilters operator must be one of: regex, not_regex, exact, is_not, icontains, not_icontains, gt, lt",
            ),
            (
                json!({"actions": {"values": [{"id": "first"}]}}),
                "actions value id must be an integer",
            ),
        ] {
            let error = conditions_error(sent.clone());
            assert_eq!(
                (error.attr.as_deref(), error.detail.as_str()),
                (Some("conditions"), message),
                "{sent}"
            );
        }
    }

    #[test]
    fn sent_conditions_past_their_bound_are_refused_before_they_are_read() {
        let error = conditions_error(json!({
            "url": "a".repeat(MAX_CONDITIONS_BYTES), "urlMatchType": "fuzzy"
        }));
        assert_eq!(
            (error.attr.as_deref(), error.code, error.detail.as_str()),
            (
                Some("conditions"),
                ValidationCode::MaxLength,
                "Conditions may hold at most 65536 bytes as JSON."
            )
        );
        let events: Vec<Value> = (0..10_000)
            .map(|i| json!({"name": format!("e{i}")}))
            .collect();
        let error = conditions_error(json!({"cancelEvents": {"values": events}}));
        assert_eq!(error.code, ValidationCode::MaxLength);
        let within = Conditions::parse(json!({"url": "a".repeat(MAX_CONDITIONS_BYTES - 20)}));
        assert!(within.is_ok());
    }

    #[test]
    fn sent_cancel_events_are_typed_like_events_and_round_trip() {
        let sent = json!({
            "events": {"values": [{"name": "opened", "propertyFilters": {
                "plan": {"values": ["pro"], "operator": "exact"}}}], "repeatedActivation": true},
            "cancelEvents": {"values": [{"name": "left"}], "note": 1}
        });
        let parsed = Conditions::parse(sent.clone()).unwrap();
        assert_eq!(
            parsed.cancel_events.as_ref().unwrap().values,
            Some(vec![json!({"name": "left"})])
        );
        assert_eq!(parsed.web_targeting(), ["events", "cancelEvents"]);
        assert_eq!(serde_json::to_value(parsed).unwrap(), sent);
    }

    #[test]
    fn stored_trigger_values_are_read_as_stored_whatever_their_shape() {
        let conditions: Conditions = round_trips(json!({
            "cancelEvents": {"values": ["left", {"name": ""}]},
            "actions": {"values": [7]}
        }));
        assert_eq!(conditions.web_targeting(), ["actions", "cancelEvents"]);
    }

    #[test]
    fn sent_conditions_keep_unknown_keys_and_nulls_as_sent() {
        let sent = json!({
            "url": "x", "selector": null, "wait": {"days": 3},
            "events": {"values": [{"name": "x"}], "repeatedActivation": true, "note": 1}
        });
        let parsed = Conditions::parse(sent.clone()).unwrap();
        assert_eq!(
            parsed.events.as_ref().unwrap().repeated_activation,
            Some(true)
        );
        assert_eq!(serde_json::to_value(parsed).unwrap(), sent);
    }

    /// Reads `value` as `T` and writes it back: the same JSON.
    fn round_trips<T: serde::de::DeserializeOwned + Serialize>(value: Value) -> T {
        let typed: T = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&typed).unwrap(), value);
        typed
    }

    #[test]
    fn appearance_reads_the_settings_rules_use_and_keeps_the_rest_as_sent() {
        let appearance: Appearance = round_trips(json!({
            "shuffleQuestions": true, "surveyPopupDelaySeconds": 2.5, "whiteLabel": false,
            "thankYouMessageHeader": "Thanks", "thankYouMessageDescriptionContentType": "text",
            "position": "left", "thankYouMessageDescription": 7, "thankYouMessageCloseButtonText": null
        }));
        assert_eq!(
            (
                appearance.shuffle_questions,
                appearance
                    .survey_popup_delay_seconds
                    .as_ref()
                    .and_then(Number::as_f64),
                appearance.white_label,
                appearance.thank_you_message_header.as_deref(),
                appearance.thank_you_message_description_content_type,
            ),
            (
                Some(true),
                Some(2.5),
                Some(false),
                Some("Thanks"),
                Some(ContentType::Text)
            )
        );
        assert_eq!(
            Value::Object(appearance.extra),
            json!({"position": "left", "thankYouMessageDescription": 7, "thankYouMessageCloseButtonText": null})
        );
        let whole: Appearance = round_trips(json!({"surveyPopupDelaySeconds": 3}));
        assert_eq!(whole.survey_popup_delay_seconds, Some(Number::from(3)));
    }

    #[test]
    fn conditions_read_the_targeting_and_keep_the_rest_as_sent() {
        let conditions: Conditions = round_trips(json!({
            "url": "/pricing", "urlMatchType": "icontains", "selector": ".buy",
            "seenSurveyWaitPeriodInDays": 7, "linkedFlagVariant": "b",
            "deviceTypes": ["Mobile"], "deviceTypesMatchType": "exact",
            "actions": {"values": [{"id": 1, "name": "Signed up"}]},
            "events": {"values": [], "repeatedActivation": true},
            "wait": {"days": 3}
        }));
        assert_eq!(
            (
                conditions.url.as_deref(),
                conditions.url_match_type,
                conditions.linked_flag_variant.as_deref(),
                conditions.device_types_match_type,
            ),
            (
                Some("/pricing"),
                Some(MatchType::Icontains),
                Some("b"),
                Some(MatchType::Exact)
            )
        );
        let events = conditions.events.clone().unwrap();
        assert_eq!(
            (events.repeated_activation, events.extra),
            (Some(true), Map::new())
        );
        assert_eq!(
            Value::Object(conditions.extra.clone()),
            json!({"wait": {"days": 3}})
        );
        assert_eq!(
            conditions.web_targeting(),
            [
                "url",
                "urlMatchType",
                "selector",
                "seenSurveyWaitPeriodInDays",
                "linkedFlagVariant",
                "deviceTypes",
                "deviceTypesMatchType",
                "actions"
            ]
        );
    }

    #[test]
    fn a_condition_in_a_shape_burrow_does_not_read_still_targets_as_posthog_says() {
        let conditions: Conditions = round_trips(json!({
            "url": 5, "urlMatchType": "fuzzy", "selector": {"values": []},
            "deviceTypes": {"values": ["Mobile"]}, "events": null
        }));
        assert_eq!(
            (conditions.url.clone(), conditions.url_match_type),
            (None, None)
        );
        assert_eq!(
            conditions.web_targeting(),
            ["url", "urlMatchType", "deviceTypes"]
        );
    }

    #[test]
    fn a_copy_drops_the_conditions_naming_project_objects_whatever_their_shape() {
        let conditions: Conditions = round_trips(json!({
            "url": "/welcome", "linkedFlagVariant": "b", "actions": [1],
            "events": {"values": [{"name": "x"}]}, "cancelEvents": {"values": [{"name": "y"}]}
        }));
        assert_eq!(
            serde_json::to_value(conditions.without_project_objects()).unwrap(),
            json!({"url": "/welcome"})
        );
    }
}
