//! The one parser of a question: from the object as sent, or as stored, into its [`Question`].
//! A sent question is also sanitized and held to PostHog's rules for one question (texts,
//! choices, link, rating scale, branching shape, validation rules, `skipSubmitButton`), each
//! broken rule with PostHog's message; a stored one was held to them when written, and a known
//! key of another shape in it (kept by earlier versions) stays in `extra`
//! (`json_fields::Source`).

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::html::sanitize;
use super::question::question_keys::{
    BRANCHING, BUTTON_TEXT, CHOICES, DESCRIPTION, DESCRIPTION_CONTENT_TYPE, DISPLAY,
    HAS_OPEN_CHOICE, ID, INDEX, LINK, LOWER_BOUND_LABEL, OPTIONAL, QUESTION, RESPONSE_VALUES,
    SCALE, SHUFFLE_OPTIONS, SKIP_SUBMIT_BUTTON, TRANSLATIONS, TYPE, UPPER_BOUND_LABEL,
};
use super::question::{
    BRANCHING_TYPES, BranchTarget, Branching, BranchingRule, ChoiceQuestion, END, LinkQuestion,
    NEXT_QUESTION, OpenQuestion, Question, QuestionBase, QuestionType, RESPONSE_BASED,
    RatingDisplay, RatingQuestion, SPECIFIC_QUESTION,
};
use super::question_translations::QuestionTranslations;
use super::validation_rules::{VALIDATION, check_validation_rules};
use crate::json_fields::{Fields, Source, WrongShape};

/// The keys a question's types read: set apart while a question is read (`Fields`).
const QUESTION_KEYS: [&str; 18] = [
    TYPE,
    ID,
    QUESTION,
    DESCRIPTION,
    DESCRIPTION_CONTENT_TYPE,
    OPTIONAL,
    BUTTON_TEXT,
    BRANCHING,
    LINK,
    DISPLAY,
    SCALE,
    LOWER_BOUND_LABEL,
    UPPER_BOUND_LABEL,
    CHOICES,
    HAS_OPEN_CHOICE,
    SHUFFLE_OPTIONS,
    SKIP_SUBMIT_BUTTON,
    TRANSLATIONS,
];

const BRANCHING_KEYS: [&str; 3] = [TYPE, INDEX, RESPONSE_VALUES];

/// A question's entries while it is read, with where they come from and the question's 1-based
/// number, which some of PostHog's messages name.
struct Reader {
    fields: Fields<18>,
    source: Source,
    number: usize,
}

impl Reader {
    /// The value under `key` typed; a sent value of another shape is refused with `message`.
    fn take<T: DeserializeOwned>(
        &mut self,
        key: &str,
        message: impl FnOnce(&Value) -> String,
    ) -> Result<Option<T>, String> {
        self.fields
            .take_as(key, self.source)
            .map_err(|WrongShape(sent)| message(&sent))
    }

    /// An optional text an SDK may show as HTML: a string, sanitized when sent.
    fn text(&mut self, key: &str) -> Result<Option<String>, String> {
        let text: Option<String> =
            self.take(key, |_| format!("Question {key} must be a string"))?;
        Ok(text.map(|text| self.sanitized(&text)))
    }

    fn flag(&mut self, key: &str) -> Result<Option<bool>, String> {
        self.take(key, |_| format!("Question {key} must be a boolean"))
    }

    fn sanitized(&self, text: &str) -> String {
        match self.source {
            Source::Sent => sanitize(text),
            Source::Stored => text.to_owned(),
        }
    }

    fn sent(&self) -> bool {
        self.source == Source::Sent
    }
}

impl Question {
    /// Reads the question `object` as sent; `number` (1-based) names it in messages.
    ///
    /// # Errors
    /// The first broken rule, with PostHog's message where PostHog has one.
    pub(crate) fn parse_sent(object: Map<String, Value>, number: usize) -> Result<Self, String> {
        if let Some(rules) = object.get(VALIDATION).filter(|rules| !rules.is_null()) {
            check_validation_rules(rules)?;
        }
        Self::read(Reader {
            fields: Fields::from_map(object, &QUESTION_KEYS),
            source: Source::Sent,
            number,
        })
    }

    fn read(mut read: Reader) -> Result<Self, String> {
        let required = || "Question text is required".to_owned();
        let question = read
            .take::<String>(QUESTION, |sent| {
                if is_truthy(sent) {
                    "Question text must be a string".to_owned()
                } else {
                    required()
                }
            })?
            .map(|text| read.sanitized(&text))
            .filter(|text| !(read.sent() && text.is_empty()))
            .ok_or_else(required)?;
        let type_error = || {
            format!(
                "Question type must be one of: {}",
                QuestionType::ALL.map(QuestionType::as_str).join(", ")
            )
        };
        let kind = read
            .take::<String>(TYPE, |_| type_error())?
            .as_deref()
            .and_then(QuestionType::parse)
            .ok_or_else(type_error)?;
        let description = read.text(DESCRIPTION)?;
        let button_text = read.text(BUTTON_TEXT)?;
        let lower_bound_label = read.text(LOWER_BOUND_LABEL)?;
        let upper_bound_label = read.text(UPPER_BOUND_LABEL)?;
        let description_content_type = read.take(DESCRIPTION_CONTENT_TYPE, |_| {
            "Question descriptionContentType must be one of ['text', 'html']".to_owned()
        })?;
        let choices = read_choices(&mut read, kind)?;
        let link = read_link(&mut read)?;
        let rating = match kind {
            QuestionType::Rating => Some(read_rating(&mut read)?),
            _ => None,
        };
        let choice_options = match kind {
            QuestionType::SingleChoice | QuestionType::MultipleChoice => {
                Some((read.flag(HAS_OPEN_CHOICE)?, read.flag(SHUFFLE_OPTIONS)?))
            }
            _ => None,
        };
        let skip_submit_button = read_skip_submit_button(&mut read, kind, choice_options)?;
        let id = read.take(ID, |_| "Question id must be a string".to_owned())?;
        let optional = read.flag(OPTIONAL)?;
        let branching = read_branching(&mut read)?;
        let translations = read_translations(&mut read, choice_options.is_some())?;
        let mut base = QuestionBase {
            id,
            question,
            description,
            description_content_type,
            optional,
            button_text,
            branching,
            translations,
            extra: read.fields.into_extra(),
        };
        // What every question is checked for but only some types hold stays with the rest.
        let mut keep = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                base.extra.insert(key.to_owned(), value);
            }
        };
        if rating.is_none() {
            keep(
                LOWER_BOUND_LABEL,
                lower_bound_label.clone().map(Value::from),
            );
            keep(
                UPPER_BOUND_LABEL,
                upper_bound_label.clone().map(Value::from),
            );
        }
        if kind != QuestionType::Link {
            keep(LINK, link.clone().map(Value::from));
        }
        if choice_options.is_none() {
            keep(CHOICES, choices.clone().map(Value::from));
        }
        if rating.is_none() && choice_options.is_none() {
            keep(SKIP_SUBMIT_BUTTON, skip_submit_button.map(Value::from));
        }
        Ok(match (kind, rating, choice_options) {
            (QuestionType::Rating, Some((display, scale)), _) => Self::Rating(RatingQuestion {
                base,
                display,
                scale,
                lower_bound_label,
                upper_bound_label,
                skip_submit_button,
            }),
            (QuestionType::Link, ..) => Self::Link(LinkQuestion { base, link }),
            (
                QuestionType::SingleChoice | QuestionType::MultipleChoice,
                _,
                Some((has_open_choice, shuffle_options)),
            ) => {
                let choice = ChoiceQuestion {
                    base,
                    choices: choices.ok_or("a choice question has no choices")?,
                    has_open_choice,
                    shuffle_options,
                    skip_submit_button,
                };
                if kind == QuestionType::SingleChoice {
                    Self::SingleChoice(choice)
                } else {
                    Self::MultipleChoice(choice)
                }
            }
            _ => Self::Open(OpenQuestion { base }),
        })
    }
}

/// Read straight from the JSON, without a `Map` of the whole question (stored questions are
/// read by the hundred).
impl<'de> Deserialize<'de> for Question {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::read(Reader {
            fields: Fields::deserialize(deserializer, &QUESTION_KEYS)?,
            source: Source::Stored,
            number: 0,
        })
        .map_err(D::Error::custom)
    }
}

/// `choices`, each sanitized when sent; a sent choice question needs some, none blank.
fn read_choices(read: &mut Reader, kind: QuestionType) -> Result<Option<Vec<String>>, String> {
    let choices: Option<Vec<String>> = read.take(CHOICES, |sent| {
        if sent.is_array() {
            "Question choices must be strings".to_owned()
        } else {
            "Question choices must be a list of strings".to_owned()
        }
    })?;
    if !read.sent() {
        return Ok(choices);
    }
    let choices: Option<Vec<String>> =
        choices.map(|choices| choices.iter().map(|choice| sanitize(choice)).collect());
    let needs_choices = matches!(
        kind,
        QuestionType::SingleChoice | QuestionType::MultipleChoice
    );
    match &choices {
        Some(choices) if choices.iter().any(|choice| choice.trim().is_empty()) => {
            Err("Question choices cannot be empty".to_owned())
        }
        Some(choices) if !choices.is_empty() => Ok(Some(choices.clone())),
        _ if needs_choices => Err(format!(
            "Question choices must be a non-empty list for {} questions",
            kind.as_str()
        )),
        _ => Ok(choices),
    }
}

/// `link`: when sent and not empty, an `https:` URL with a host or a valid `mailto:`.
fn read_link(read: &mut Reader) -> Result<Option<String>, String> {
    let number = read.number;
    let link: Option<String> = read.take(LINK, |_| {
        format!("Question {number}: link must be a string")
    })?;
    if let Some(link) = link
        .as_deref()
        .filter(|link| read.sent() && !link.is_empty())
    {
        check_link(link)?;
    }
    Ok(link)
}

pub(super) fn check_link(link: &str) -> Result<(), String> {
    let scheme = link
        .split_once(':')
        .map(|(scheme, _)| scheme.to_ascii_lowercase())
        .filter(|scheme| {
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
        });
    match scheme.as_deref() {
        Some("mailto") if !is_valid_mailto(link) => Err(
            "Invalid mailto link. Please enter a valid mailto link (e.g., mailto:example@domain.com)."
                .to_owned(),
        ),
        Some("https") => {
            let host = link["https:".len()..]
                .strip_prefix("//")
                .map_or("", |after| after.split(['/', '?', '#']).next().unwrap_or(""));
            if host.is_empty() {
                return Err("Invalid HTTPS URL. Please enter a valid HTTPS link.".to_owned());
            }
            Ok(())
        }
        Some("mailto") => Ok(()),
        _ => Err("Link must be a URL with one of these schemes: [https, mailto]".to_owned()),
    }
}

/// `^mailto:[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$`, PostHog's rule.
fn is_valid_mailto(link: &str) -> bool {
    let Some(address) = link.strip_prefix("mailto:") else {
        return false;
    };
    let Some((local, domain)) = address.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._%+-".contains(c));
    let Some((host, tld)) = domain.rsplit_once('.') else {
        return false;
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c));
    let tld_ok = tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic());
    local_ok && host_ok && tld_ok
}

/// A rating's `display` and `scale`; a sent scale must be one its display allows.
fn read_rating(read: &mut Reader) -> Result<(Option<RatingDisplay>, Option<u8>), String> {
    let number = read.number;
    let display: Option<RatingDisplay> = read.take(DISPLAY, |_| {
        format!("Question {number}: rating display must be one of: number, emoji")
    })?;
    let shown = display.unwrap_or(RatingDisplay::Number);
    let scale_error = || match shown {
        RatingDisplay::Emoji => format!("Question {number}: an emoji rating scale must be 3 or 5"),
        RatingDisplay::Number => {
            format!("Question {number}: a number rating scale must be a whole number from 2 to 10")
        }
    };
    let scale: Option<u8> = read.take(SCALE, |_| scale_error())?;
    if read.sent() && scale.is_some_and(|scale| !shown.scales().contains(&scale)) {
        return Err(scale_error());
    }
    Ok((display, scale))
}

/// `skipSubmitButton`, a boolean. PostHog checks nothing of it; posthog-js honours it only on a
/// rating and on a single choice without an open choice, so a sent `true` anywhere else, which
/// would be stored and ignored, is refused.
fn read_skip_submit_button(
    read: &mut Reader,
    kind: QuestionType,
    choice_options: Option<(Option<bool>, Option<bool>)>,
) -> Result<Option<bool>, String> {
    let skip = read.flag(SKIP_SUBMIT_BUTTON)?;
    if !(read.sent() && skip == Some(true)) {
        return Ok(skip);
    }
    let number = read.number;
    let has_open_choice = choice_options.and_then(|(has_open_choice, _)| has_open_choice);
    match kind {
        QuestionType::Rating => Ok(skip),
        QuestionType::SingleChoice if has_open_choice == Some(true) => Err(format!(
            "Question {number}: {SKIP_SUBMIT_BUTTON} cannot be used with {HAS_OPEN_CHOICE}"
        )),
        QuestionType::SingleChoice => Ok(skip),
        _ => Err(format!(
            "Question {number}: {SKIP_SUBMIT_BUTTON} is only available for {} and {} questions",
            QuestionType::Rating.as_str(),
            QuestionType::SingleChoice.as_str()
        )),
    }
}

/// `translations`: a stored value that does not read stays in `extra`; a sent one must.
fn read_translations(
    read: &mut Reader,
    has_choices: bool,
) -> Result<Option<QuestionTranslations>, String> {
    if !read.sent() {
        return Ok(read
            .fields
            .take_as(TRANSLATIONS, Source::Stored)
            .unwrap_or(None));
    }
    // Any value is a `Value`: a null stays in `extra`, anything else is read.
    let sent: Option<Value> = read
        .fields
        .take_as(TRANSLATIONS, Source::Sent)
        .unwrap_or(None);
    sent.map(|value| QuestionTranslations::parse_sent(value, read.number, has_choices))
        .transpose()
}

/// `branching`: a stored one that does not read stays in `extra`; a sent one must.
fn read_branching(read: &mut Reader) -> Result<Option<Branching>, String> {
    let number = read.number;
    if !read.sent() {
        return Ok(read
            .fields
            .take_as(BRANCHING, Source::Stored)
            .unwrap_or(None));
    }
    match read.take::<Map<String, Value>>(BRANCHING, |_| branching_type_error(number))? {
        Some(object) => {
            let fields = Fields::from_map(object, &BRANCHING_KEYS);
            Branching::read(fields, Source::Sent, number).map(Some)
        }
        None => Ok(None),
    }
}

fn branching_type_error(number: usize) -> String {
    format!(
        "Question {number}: branching type must be one of: {}",
        BRANCHING_TYPES.join(", ")
    )
}

impl Branching {
    fn read(mut fields: Fields<3>, source: Source, number: usize) -> Result<Self, String> {
        let off_target = |target: &Value| {
            format!(
                "Question {number}: branching target {target} does not point at another question"
            )
        };
        let kind: String = fields
            .take_as(TYPE, source)
            .ok()
            .flatten()
            .ok_or_else(|| branching_type_error(number))?;
        let rule = match kind.as_str() {
            NEXT_QUESTION => BranchingRule::NextQuestion,
            END => BranchingRule::End,
            SPECIFIC_QUESTION => BranchingRule::SpecificQuestion {
                index: fields
                    .take_as(INDEX, source)
                    .map_err(|WrongShape(sent)| off_target(&sent))?
                    .ok_or_else(|| off_target(&Value::Null))?,
            },
            RESPONSE_BASED => {
                let values: Map<String, Value> = fields
                    .take_as(RESPONSE_VALUES, source)
                    .ok()
                    .flatten()
                    .ok_or_else(|| {
                        format!(
                            "Question {number}: response_based branching needs a responseValues object"
                        )
                    })?;
                let response_values = values
                    .into_iter()
                    .map(|(answer, target)| {
                        BranchTarget::read(&target)
                            .map(|target| (answer, target))
                            .ok_or_else(|| off_target(&target))
                    })
                    .collect::<Result<BTreeMap<_, _>, _>>()?;
                BranchingRule::ResponseBased { response_values }
            }
            _ => return Err(branching_type_error(number)),
        };
        Ok(Self {
            rule,
            extra: fields.into_extra(),
        })
    }
}

impl<'de> Deserialize<'de> for Branching {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = Fields::deserialize(deserializer, &BRANCHING_KEYS)?;
        Self::read(fields, Source::Stored, 0).map_err(D::Error::custom)
    }
}

impl BranchTarget {
    /// `"end"` or a question's index.
    fn read(value: &Value) -> Option<Self> {
        match value {
            Value::String(end) if end == END => Some(Self::End),
            other => other
                .as_u64()
                .and_then(|index| usize::try_from(index).ok())
                .map(Self::Question),
        }
    }
}

/// Python's truthiness, which PostHog's checks test.
fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}
