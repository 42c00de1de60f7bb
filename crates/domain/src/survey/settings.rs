//! The settings objects of a survey: `appearance` (checked and its thank-you texts sanitized)
//! and `conditions` (must be an object), each read into a struct with the fields Burrow's rules
//! read typed and every other key kept as sent (see `json_fields`).

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::html::sanitize;
use super::question::ContentType;
use crate::error::{ValidationCode, ValidationError};
use crate::json_fields::{ObjectWriter, take};

const THANK_YOU_HEADER: &str = "thankYouMessageHeader";
const THANK_YOU_DESCRIPTION: &str = "thankYouMessageDescription";
const THANK_YOU_CLOSE_BUTTON: &str = "thankYouMessageCloseButtonText";
const SANITIZED_APPEARANCE_TEXTS: [&str; 3] = [
    THANK_YOU_HEADER,
    THANK_YOU_DESCRIPTION,
    THANK_YOU_CLOSE_BUTTON,
];
const THANK_YOU_CONTENT_TYPE: &str = "thankYouMessageDescriptionContentType";
const POPUP_DELAY: &str = "surveyPopupDelaySeconds";
const WHITE_LABEL: &str = "whiteLabel";

/// A survey's checked `appearance`, its thank-you texts sanitized: the settings Burrow's rules
/// read, typed; the rest (colours, position, …) as sent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "Map<String, Value>")]
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
    /// Every other key as sent, and a known key whose value is null or of another shape.
    pub extra: Map<String, Value>,
}

impl Appearance {
    /// # Errors
    /// PostHog's messages with `attr: appearance`.
    pub fn parse(value: &Value) -> Result<Self, ValidationError> {
        parse_appearance(value).map(Self::from)
    }
}

impl From<Map<String, Value>> for Appearance {
    fn from(mut object: Map<String, Value>) -> Self {
        Self {
            shuffle_questions: take(&mut object, "shuffleQuestions"),
            survey_popup_delay_seconds: take(&mut object, POPUP_DELAY),
            white_label: take(&mut object, WHITE_LABEL),
            thank_you_message_header: take(&mut object, THANK_YOU_HEADER),
            thank_you_message_description: take(&mut object, THANK_YOU_DESCRIPTION),
            thank_you_message_description_content_type: take(&mut object, THANK_YOU_CONTENT_TYPE),
            thank_you_message_close_button_text: take(&mut object, THANK_YOU_CLOSE_BUTTON),
            extra: object,
        }
    }
}

impl Serialize for Appearance {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field("shuffleQuestions", self.shuffle_questions.as_ref())?;
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

const LINKED_FLAG_VARIANT: &str = "linkedFlagVariant";
const ACTIONS: &str = "actions";
const EVENTS: &str = "events";
/// Condition keys that name objects of the survey's project; a copy drops them (PostHog's
/// list).
const PROJECT_CONDITIONS: [&str; 3] = [LINKED_FLAG_VARIANT, ACTIONS, EVENTS];

/// A survey's display `conditions`: where, when and to whom the SDK shows it. What Burrow's
/// rules read is typed; the rest as sent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "Map<String, Value>")]
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
    /// Every other key as sent, and a known key whose value is null or of another shape.
    pub extra: Map<String, Value>,
}

/// How a condition's value is matched, PostHog's `SurveyMatchType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchType {
    Regex,
    NotRegex,
    Exact,
    IsNot,
    Icontains,
    NotIcontains,
}

/// The `actions` or `events` a survey is shown after: `{"values": [...], ...}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "Map<String, Value>")]
pub struct ConditionValues {
    /// The actions (`{id, name}`) or events (`{name}`), in the SDK's shapes.
    pub values: Option<Vec<Value>>,
    /// Every other key as sent (`repeatedActivation`, …).
    pub extra: Map<String, Value>,
}

impl Conditions {
    /// # Errors
    /// `Conditions must be an object` with `attr: conditions`.
    pub fn parse(value: &Value) -> Result<Self, ValidationError> {
        parse_conditions(value).map(Self::from)
    }

    /// The conditions about the web visit, by wire name, that this survey has: the ones an
    /// external survey may not have. PostHog's test: a condition is had when not null, and an
    /// object only with some `values`; so is one sent in a shape Burrow does not read.
    pub(crate) fn web_targeting(&self) -> Vec<&'static str> {
        let had = |group: &Option<ConditionValues>| {
            group.as_ref().is_some_and(ConditionValues::has_values)
        };
        [
            ("url", self.url.is_some()),
            ("urlMatchType", self.url_match_type.is_some()),
            ("selector", self.selector.is_some()),
            (
                "seenSurveyWaitPeriodInDays",
                self.seen_survey_wait_period_in_days.is_some(),
            ),
            (LINKED_FLAG_VARIANT, self.linked_flag_variant.is_some()),
            ("deviceTypes", self.device_types.is_some()),
            (
                "deviceTypesMatchType",
                self.device_types_match_type.is_some(),
            ),
            (ACTIONS, had(&self.actions)),
            (EVENTS, had(&self.events)),
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
        for key in PROJECT_CONDITIONS {
            self.extra.remove(key);
        }
        self
    }
}

impl From<Map<String, Value>> for Conditions {
    fn from(mut object: Map<String, Value>) -> Self {
        Self {
            url: take(&mut object, "url"),
            url_match_type: take(&mut object, "urlMatchType"),
            selector: take(&mut object, "selector"),
            seen_survey_wait_period_in_days: take(&mut object, "seenSurveyWaitPeriodInDays"),
            linked_flag_variant: take(&mut object, LINKED_FLAG_VARIANT),
            device_types: take(&mut object, "deviceTypes"),
            device_types_match_type: take(&mut object, "deviceTypesMatchType"),
            actions: take(&mut object, ACTIONS),
            events: take(&mut object, EVENTS),
            extra: object,
        }
    }
}

impl Serialize for Conditions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field(ACTIONS, self.actions.as_ref())?;
        json.field("deviceTypes", self.device_types.as_ref())?;
        json.field(
            "deviceTypesMatchType",
            self.device_types_match_type.as_ref(),
        )?;
        json.field(EVENTS, self.events.as_ref())?;
        json.field(LINKED_FLAG_VARIANT, self.linked_flag_variant.as_ref())?;
        json.field(
            "seenSurveyWaitPeriodInDays",
            self.seen_survey_wait_period_in_days.as_ref(),
        )?;
        json.field("selector", self.selector.as_ref())?;
        json.field("url", self.url.as_ref())?;
        json.field("urlMatchType", self.url_match_type.as_ref())?;
        json.end()
    }
}

impl ConditionValues {
    fn has_values(&self) -> bool {
        self.values
            .as_ref()
            .is_some_and(|values| !values.is_empty())
    }
}

/// Whether a condition Burrow could not read is had: see [`Conditions::web_targeting`].
fn is_had(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Object(group) => ConditionValues::from(group.clone()).has_values(),
        _ => true,
    }
}

impl From<Map<String, Value>> for ConditionValues {
    fn from(mut object: Map<String, Value>) -> Self {
        Self {
            values: take(&mut object, "values"),
            extra: object,
        }
    }
}

impl Serialize for ConditionValues {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field("values", self.values.as_ref())?;
        json.end()
    }
}

fn parse_appearance(value: &Value) -> Result<Map<String, Value>, ValidationError> {
    let invalid =
        |detail: &str| ValidationError::field("appearance", ValidationCode::Invalid, detail);
    let Value::Object(appearance) = value else {
        return Err(invalid("Appearance must be an object"));
    };
    let mut appearance = appearance.clone();
    for field in SANITIZED_APPEARANCE_TEXTS {
        if let Some(Value::String(text)) = appearance.get(field) {
            let clean = sanitize(text);
            appearance.insert(field.into(), Value::String(clean));
        }
    }
    match appearance.get(THANK_YOU_CONTENT_TYPE) {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "text" || t == "html" => {}
        Some(_) => {
            return Err(invalid(
                "thankYouMessageDescriptionContentType must be one of ['text', 'html']",
            ));
        }
    }
    match appearance.get(POPUP_DELAY) {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.as_f64().is_some_and(|s| s >= 0.0) => {}
        Some(_) => {
            return Err(invalid(
                "Survey popup delay seconds must be a positive integer",
            ));
        }
    }
    match appearance.get(WHITE_LABEL) {
        None | Some(Value::Null) | Some(Value::Bool(_)) => {}
        Some(_) => return Err(invalid("whiteLabel must be a boolean")),
    }
    Ok(appearance)
}

fn parse_conditions(value: &Value) -> Result<Map<String, Value>, ValidationError> {
    match value {
        Value::Object(conditions) => Ok(conditions.clone()),
        _ => Err(ValidationError::field(
            "conditions",
            ValidationCode::Invalid,
            "Conditions must be an object",
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn appearance_must_be_an_object_with_sane_settings() {
        assert_eq!(
            parse_appearance(&json!("red")).unwrap_err().detail,
            "Appearance must be an object"
        );
        assert_eq!(
            parse_appearance(&json!({"surveyPopupDelaySeconds": -1}))
                .unwrap_err()
                .detail,
            "Survey popup delay seconds must be a positive integer"
        );
        assert_eq!(
            parse_appearance(&json!({"whiteLabel": "yes"}))
                .unwrap_err()
                .detail,
            "whiteLabel must be a boolean"
        );
        assert_eq!(
            parse_appearance(&json!({"thankYouMessageDescriptionContentType": "md"}))
                .unwrap_err()
                .detail,
            "thankYouMessageDescriptionContentType must be one of ['text', 'html']"
        );
    }

    #[test]
    fn thank_you_texts_are_sanitized_and_other_values_round_trip() {
        let parsed = parse_appearance(&json!({
            "thankYouMessageHeader": "<script>x</script>Thanks!",
            "backgroundColor": " ",
            "surveyPopupDelaySeconds": 0
        }))
        .unwrap();
        assert_eq!(parsed["thankYouMessageHeader"], "Thanks!");
        assert_eq!(parsed["backgroundColor"], " ");
    }

    #[test]
    fn conditions_must_be_an_object() {
        assert_eq!(
            parse_conditions(&json!([])).unwrap_err().detail,
            "Conditions must be an object"
        );
        assert!(parse_conditions(&json!({"url": "x"})).is_ok());
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
        assert_eq!(
            Value::Object(conditions.events.clone().unwrap().extra),
            json!({"repeatedActivation": true})
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
            "events": {"values": [{"name": "x"}]}
        }));
        assert_eq!(
            serde_json::to_value(conditions.without_project_objects()).unwrap(),
            json!({"url": "/welcome"})
        );
    }
}
