//! One survey question, typed by its `type` with the fields PostHog's SDKs read, and its
//! branching. Every other key stays as sent (see `json_fields`), so a question round-trips
//! unchanged; its parser (`question_parser`) and its writer here are the only code that names
//! its keys.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::json_fields::ObjectWriter;

/// A question's keys by wire name: what its parser reads and the API's schema describes.
pub mod question_keys {
    pub const TYPE: &str = "type";
    pub const ID: &str = "id";
    pub const QUESTION: &str = "question";
    pub const DESCRIPTION: &str = "description";
    pub const DESCRIPTION_CONTENT_TYPE: &str = "descriptionContentType";
    pub const OPTIONAL: &str = "optional";
    pub const BUTTON_TEXT: &str = "buttonText";
    pub const BRANCHING: &str = "branching";
    pub const LINK: &str = "link";
    pub const DISPLAY: &str = "display";
    pub const SCALE: &str = "scale";
    pub const LOWER_BOUND_LABEL: &str = "lowerBoundLabel";
    pub const UPPER_BOUND_LABEL: &str = "upperBoundLabel";
    pub const CHOICES: &str = "choices";
    pub const HAS_OPEN_CHOICE: &str = "hasOpenChoice";
    pub const SHUFFLE_OPTIONS: &str = "shuffleOptions";
    /// Answer on the first click, without a submit button: posthog-js does so for ratings and
    /// for single choices without an open choice, and ignores it elsewhere.
    pub const SKIP_SUBMIT_BUTTON: &str = "skipSubmitButton";
    pub const TRANSLATIONS: &str = "translations";
    /// A `specific_question` branching's target.
    pub const INDEX: &str = "index";
    /// A `response_based` branching's targets by answer.
    pub const RESPONSE_VALUES: &str = "responseValues";
}

use super::question_translations::QuestionTranslations;
use question_keys::{
    BRANCHING, BUTTON_TEXT, CHOICES, DESCRIPTION, DESCRIPTION_CONTENT_TYPE, DISPLAY,
    HAS_OPEN_CHOICE, ID, INDEX, LINK, LOWER_BOUND_LABEL, OPTIONAL, QUESTION, RESPONSE_VALUES,
    SCALE, SHUFFLE_OPTIONS, SKIP_SUBMIT_BUTTON, TRANSLATIONS, TYPE, UPPER_BOUND_LABEL,
};

wire_enum! {
    /// How the SDKs render a text that may carry HTML (a description, the thank-you message).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum ContentType {
        Text = "text",
        Html = "html",
    }
}

wire_enum! {
    /// A question's `type`, by its wire name.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum QuestionType {
        Open = "open",
        Link = "link",
        Rating = "rating",
        SingleChoice = "single_choice",
        MultipleChoice = "multiple_choice",
    }
}

/// A survey question: one struct per type, each with what every question has in `base`.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    Open(OpenQuestion),
    Link(LinkQuestion),
    Rating(RatingQuestion),
    SingleChoice(ChoiceQuestion),
    MultipleChoice(ChoiceQuestion),
}

/// What every question has, whatever its type.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionBase {
    /// Answers are keyed by it. `None` only when a client sent an id that is not a string, which
    /// stays in `extra` as sent.
    pub id: Option<String>,
    pub question: String,
    pub description: Option<String>,
    pub description_content_type: Option<ContentType>,
    pub optional: Option<bool>,
    pub button_text: Option<String>,
    pub branching: Option<Branching>,
    /// Its texts in other languages; keys checked against the survey's base language.
    pub translations: Option<QuestionTranslations>,
    /// Every other key as sent, and a known key whose value is null or of another shape.
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OpenQuestion {
    pub base: QuestionBase,
}

/// A question that points the person at a link (`https:` or `mailto:`).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkQuestion {
    pub base: QuestionBase,
    pub link: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RatingQuestion {
    pub base: QuestionBase,
    pub display: Option<RatingDisplay>,
    pub scale: Option<u8>,
    pub lower_bound_label: Option<String>,
    pub upper_bound_label: Option<String>,
    /// Answered on the first click.
    pub skip_submit_button: Option<bool>,
}

wire_enum! {
    /// How a rating is shown.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum RatingDisplay {
        Number = "number",
        Emoji = "emoji",
    }
}

impl RatingDisplay {
    /// The scales a rating shown this way may have.
    pub fn scales(self) -> &'static [u8] {
        match self {
            Self::Number => &[2, 3, 4, 5, 6, 7, 8, 9, 10],
            Self::Emoji => &[3, 5],
        }
    }
}

/// A single or multiple choice question.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceQuestion {
    pub base: QuestionBase,
    pub choices: Vec<String>,
    pub has_open_choice: Option<bool>,
    pub shuffle_options: Option<bool>,
    /// Answered on the first click: sent `true` only on a single choice without an open choice.
    pub skip_submit_button: Option<bool>,
}

/// Where a question leads once answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Branching {
    pub rule: BranchingRule,
    /// Every other key of the branching object as sent.
    pub extra: Map<String, Value>,
}

/// A branching's `type` with what it needs.
#[derive(Debug, Clone, PartialEq)]
pub enum BranchingRule {
    NextQuestion,
    End,
    SpecificQuestion {
        index: usize,
    },
    /// Keyed by the answer (a choice's index, a rating, or a rating bucket).
    ResponseBased {
        response_values: BTreeMap<String, BranchTarget>,
    },
}

pub(crate) const NEXT_QUESTION: &str = "next_question";
/// A branching type, and the target of an answer that ends the survey.
pub const END: &str = "end";
pub(crate) const SPECIFIC_QUESTION: &str = "specific_question";
pub(crate) const RESPONSE_BASED: &str = "response_based";

/// Branching types by wire name.
pub const BRANCHING_TYPES: [&str; 4] = [NEXT_QUESTION, END, SPECIFIC_QUESTION, RESPONSE_BASED];

/// Where an answer leads: the end of the survey or the question at an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BranchTarget {
    End,
    Question(usize),
}

impl Question {
    pub fn question_type(&self) -> QuestionType {
        match self {
            Self::Open(_) => QuestionType::Open,
            Self::Link(_) => QuestionType::Link,
            Self::Rating(_) => QuestionType::Rating,
            Self::SingleChoice(_) => QuestionType::SingleChoice,
            Self::MultipleChoice(_) => QuestionType::MultipleChoice,
        }
    }

    pub fn base(&self) -> &QuestionBase {
        match self {
            Self::Open(question) => &question.base,
            Self::Link(question) => &question.base,
            Self::Rating(question) => &question.base,
            Self::SingleChoice(question) | Self::MultipleChoice(question) => &question.base,
        }
    }

    pub(super) fn base_mut(&mut self) -> &mut QuestionBase {
        match self {
            Self::Open(question) => &mut question.base,
            Self::Link(question) => &mut question.base,
            Self::Rating(question) => &mut question.base,
            Self::SingleChoice(question) | Self::MultipleChoice(question) => &mut question.base,
        }
    }

    /// Replaces the question's id, whatever was sent as one.
    pub(crate) fn set_id(&mut self, id: String) {
        let base = self.base_mut();
        base.extra.remove(ID);
        base.id = Some(id);
    }
}

/// Written as the object it was read from: the typed fields of its type and of every question,
/// in key order among the kept keys.
impl Serialize for Question {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let base = self.base();
        let (link, rating, choice) = match self {
            Self::Open(_) => (None, None, None),
            Self::Link(question) => (question.link.as_ref(), None, None),
            Self::Rating(question) => (None, Some(question), None),
            Self::SingleChoice(question) | Self::MultipleChoice(question) => {
                (None, None, Some(question))
            }
        };
        let mut json = ObjectWriter::new(serializer, &base.extra)?;
        json.field(BRANCHING, base.branching.as_ref())?;
        json.field(BUTTON_TEXT, base.button_text.as_ref())?;
        json.field(CHOICES, choice.map(|question| &question.choices))?;
        json.field(DESCRIPTION, base.description.as_ref())?;
        json.field(
            DESCRIPTION_CONTENT_TYPE,
            base.description_content_type.as_ref(),
        )?;
        json.field(
            DISPLAY,
            rating.and_then(|question| question.display.as_ref()),
        )?;
        json.field(
            HAS_OPEN_CHOICE,
            choice.and_then(|question| question.has_open_choice.as_ref()),
        )?;
        json.field(ID, base.id.as_ref())?;
        json.field(LINK, link)?;
        json.field(
            LOWER_BOUND_LABEL,
            rating.and_then(|question| question.lower_bound_label.as_ref()),
        )?;
        json.field(OPTIONAL, base.optional.as_ref())?;
        json.field(QUESTION, Some(&base.question))?;
        json.field(SCALE, rating.and_then(|question| question.scale.as_ref()))?;
        json.field(
            SHUFFLE_OPTIONS,
            choice.and_then(|question| question.shuffle_options.as_ref()),
        )?;
        json.field(
            SKIP_SUBMIT_BUTTON,
            rating
                .and_then(|question| question.skip_submit_button.as_ref())
                .or_else(|| choice.and_then(|question| question.skip_submit_button.as_ref())),
        )?;
        json.field(TRANSLATIONS, base.translations.as_ref())?;
        json.field(TYPE, Some(self.question_type().as_str()))?;
        json.field(
            UPPER_BOUND_LABEL,
            rating.and_then(|question| question.upper_bound_label.as_ref()),
        )?;
        json.end()
    }
}

impl Serialize for Branching {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (kind, index, response_values) = match &self.rule {
            BranchingRule::NextQuestion => (NEXT_QUESTION, None, None),
            BranchingRule::End => (END, None, None),
            BranchingRule::SpecificQuestion { index } => (SPECIFIC_QUESTION, Some(index), None),
            BranchingRule::ResponseBased { response_values } => {
                (RESPONSE_BASED, None, Some(response_values))
            }
        };
        let mut json = ObjectWriter::new(serializer, &self.extra)?;
        json.field(INDEX, index)?;
        json.field(RESPONSE_VALUES, response_values)?;
        json.field(TYPE, Some(kind))?;
        json.end()
    }
}

impl Serialize for BranchTarget {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::End => serializer.serialize_str(END),
            Self::Question(index) => index.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn question(value: Value) -> Question {
        serde_json::from_value(value).unwrap()
    }

    /// Reads `value` as a question and writes it back: the same JSON.
    fn round_trips(value: Value) -> Question {
        let typed = question(value.clone());
        assert_eq!(serde_json::to_value(&typed).unwrap(), value);
        typed
    }

    #[test]
    fn an_open_question_reads_the_fields_every_question_has() {
        let Question::Open(open) = round_trips(json!({
            "type": "open", "id": "q1", "question": "Why?", "description": "<b>Tell us</b>",
            "descriptionContentType": "html", "optional": true, "buttonText": "Next"
        })) else {
            panic!("an open question");
        };
        assert_eq!(
            open.base,
            QuestionBase {
                id: Some("q1".into()),
                question: "Why?".into(),
                description: Some("<b>Tell us</b>".into()),
                description_content_type: Some(ContentType::Html),
                optional: Some(true),
                button_text: Some("Next".into()),
                branching: None,
                translations: None,
                extra: Map::new(),
            }
        );
    }

    #[test]
    fn a_link_question_reads_its_link() {
        let typed = round_trips(
            json!({"type": "link", "id": "q", "question": "Docs?", "link": "https://posthog.com"}),
        );
        let Question::Link(link) = typed else {
            panic!("a link question");
        };
        assert_eq!(link.link.as_deref(), Some("https://posthog.com"));
    }

    #[test]
    fn a_rating_question_reads_its_scale_display_and_labels() {
        let typed = round_trips(json!({
            "type": "rating", "id": "q", "question": "How likely?", "display": "emoji",
            "scale": 5, "lowerBoundLabel": "No", "upperBoundLabel": "Yes", "skipSubmitButton": true
        }));
        let Question::Rating(rating) = typed else {
            panic!("a rating question");
        };
        assert_eq!(
            (
                rating.display,
                rating.scale,
                rating.lower_bound_label.as_deref(),
                rating.upper_bound_label.as_deref(),
                rating.skip_submit_button,
            ),
            (
                Some(RatingDisplay::Emoji),
                Some(5),
                Some("No"),
                Some("Yes"),
                Some(true)
            )
        );
    }

    #[test]
    fn choice_questions_read_their_choices_and_need_some() {
        for kind in ["single_choice", "multiple_choice"] {
            let typed = round_trips(json!({
                "type": kind, "id": "q", "question": "Which?", "choices": ["a", "b"],
                "hasOpenChoice": true, "shuffleOptions": false, "skipSubmitButton": false
            }));
            assert_eq!(typed.question_type().as_str(), kind);
            let (Question::SingleChoice(choice) | Question::MultipleChoice(choice)) = typed else {
                panic!("a choice question");
            };
            assert_eq!(
                (
                    choice.choices,
                    choice.has_open_choice,
                    choice.shuffle_options,
                    choice.skip_submit_button
                ),
                (
                    vec!["a".to_owned(), "b".to_owned()],
                    Some(true),
                    Some(false),
                    Some(false)
                )
            );
            assert!(
                serde_json::from_value::<Question>(json!({"type": kind, "question": "Which?"}))
                    .is_err()
            );
        }
    }

    #[test]
    fn every_branching_rule_is_typed() {
        let with = |branching: Value| {
            question(json!({"type": "open", "question": "Q", "branching": branching}))
                .base()
                .branching
                .clone()
                .unwrap()
                .rule
        };
        assert_eq!(
            with(json!({"type": "next_question"})),
            BranchingRule::NextQuestion
        );
        assert_eq!(with(json!({"type": "end"})), BranchingRule::End);
        assert_eq!(
            with(json!({"type": "specific_question", "index": 2})),
            BranchingRule::SpecificQuestion { index: 2 }
        );
        assert_eq!(
            with(json!({"type": "response_based", "responseValues": {"0": 1, "1": "end"}})),
            BranchingRule::ResponseBased {
                response_values: BTreeMap::from([
                    ("0".into(), BranchTarget::Question(1)),
                    ("1".into(), BranchTarget::End),
                ])
            }
        );
    }

    #[test]
    fn a_stored_question_keeps_unknown_keys_and_values_of_another_shape_unchanged() {
        let typed = round_trips(json!({
            "type": "open", "id": 5, "question": "Which?", "choices": ["a"],
            "optional": "yes", "description": null, "skipSubmitButton": true,
            "branching": {"type": "response_based", "responseValues": {"0": "end"}, "note": [1]}
        }));
        let base = typed.base();
        assert_eq!(
            (&base.id, base.optional, &base.description),
            (&None, None, &None)
        );
        assert_eq!(
            Value::Object(base.extra.clone()),
            json!({"id": 5, "optional": "yes", "description": null, "skipSubmitButton": true,
                   "choices": ["a"]})
        );
        assert_eq!(
            Value::Object(base.branching.clone().unwrap().extra),
            json!({"note": [1]})
        );
    }

    #[test]
    fn a_new_id_replaces_whatever_was_sent_as_one() {
        let mut typed = question(json!({"type": "open", "id": 5, "question": "Q"}));
        typed.set_id("fresh".into());
        assert_eq!(
            serde_json::to_value(&typed).unwrap(),
            json!({"type": "open", "id": "fresh", "question": "Q"})
        );
    }

    #[test]
    fn an_unknown_type_or_a_missing_text_is_not_a_question() {
        assert!(
            serde_json::from_value::<Question>(json!({"type": "essay", "question": "Q"})).is_err()
        );
        assert!(serde_json::from_value::<Question>(json!({"type": "open"})).is_err());
    }
}
