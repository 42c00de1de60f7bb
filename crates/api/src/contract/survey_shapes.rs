//! The schemas of a survey's JSON objects — its questions (one shape per `type`), `conditions`
//! and `appearance` — built from the key names and choice lists the domain's parsers read, so
//! the document describes what the parsers accept. Keys the parsers do not read are allowed and
//! kept as sent (`additionalProperties`).

use domain::survey::{
    BRANCHING_TYPES, ContentType, END, MAX_TRANSLATION_LANGUAGES, MAX_TRANSLATIONS_BYTES,
    MatchType, QuestionType, RatingDisplay, appearance_keys, condition_keys, condition_triggers,
    question_keys, translation_keys,
};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, Discriminator, ObjectBuilder, OneOfBuilder, Schema, Type,
};
use utoipa::{PartialSchema, ToSchema};

use super::schemas::{any, string};

fn one_of(choices: impl IntoIterator<Item = &'static str>) -> ObjectBuilder {
    string().enum_values(Some(choices))
}

fn boolean() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Boolean)
}

fn number() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Number)
}

fn strings() -> ArrayBuilder {
    ArrayBuilder::new().items(string())
}

/// An object of `properties` whose other keys are kept as sent.
fn open_object<'a>(
    properties: impl IntoIterator<Item = (&'a str, RefOr<Schema>)>,
) -> ObjectBuilder {
    properties.into_iter().fold(
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(AdditionalProperties::FreeForm(true))),
        |object, (key, schema)| object.property(key, schema),
    )
}

/// Where a question leads once answered.
fn branching() -> RefOr<Schema> {
    let target = OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(0)),
        )
        .item(string().enum_values(Some([END])))
        .description(Some("A question's index, or `end`."));
    open_object([
        (question_keys::TYPE, one_of(BRANCHING_TYPES).into()),
        (
            question_keys::INDEX,
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(0))
                .description(Some("`specific_question`: the question it leads to."))
                .into(),
        ),
        (
            question_keys::RESPONSE_VALUES,
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some("`response_based`: where each answer leads."))
                .additional_properties(Some(AdditionalProperties::RefOr(target.into())))
                .into(),
        ),
    ])
    .required(question_keys::TYPE)
    .into()
}

/// Translations keyed by language code, each entry an object of `fields`' strings (and
/// `extra` fields), its other fields dropped.
fn by_language<'a>(
    fields: impl IntoIterator<Item = &'a str>,
    extra: impl IntoIterator<Item = (&'a str, RefOr<Schema>)>,
) -> ObjectBuilder {
    let entry = fields
        .into_iter()
        .map(|field| (field, RefOr::from(string())))
        .chain(extra)
        .fold(
            ObjectBuilder::new().schema_type(Type::Object),
            |object, (key, schema)| object.property(key, schema),
        );
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .max_properties(Some(MAX_TRANSLATION_LANGUAGES))
        .additional_properties(Some(AdditionalProperties::RefOr(entry.into())))
        .description(Some(format!(
            "By BCP-47 language code (normalised: lower case, `-`), never the survey's \
             `base_language`; other fields of an entry are dropped, and entries left empty. At \
             most {MAX_TRANSLATION_LANGUAGES} languages and {MAX_TRANSLATIONS_BYTES} bytes as JSON."
        )))
}

/// A question's `translations`: its texts and choices by language.
fn question_translations() -> RefOr<Schema> {
    use question_keys::*;
    by_language(
        [
            QUESTION,
            DESCRIPTION,
            BUTTON_TEXT,
            LOWER_BOUND_LABEL,
            UPPER_BOUND_LABEL,
            LINK,
        ],
        [(
            CHOICES,
            strings()
                .description(Some("As many as the question's choices."))
                .into(),
        )],
    )
    .into()
}

/// One question of type `kind`: what every question has, and its type's own keys.
fn question(kind: QuestionType) -> RefOr<Schema> {
    use question_keys::*;
    let text = |description: &str| string().description(Some(description)).into();
    let mut properties: Vec<(&str, RefOr<Schema>)> = vec![
        (TYPE, one_of([kind.as_str()]).into()),
        (
            ID,
            text("Answers are keyed by it; generated when not sent."),
        ),
        (QUESTION, text("The question's text; HTML is sanitized.")),
        (DESCRIPTION, string().into()),
        (
            DESCRIPTION_CONTENT_TYPE,
            one_of(ContentType::ALL.map(ContentType::as_str)).into(),
        ),
        (OPTIONAL, boolean().into()),
        (BUTTON_TEXT, string().into()),
        (BRANCHING, branching()),
        (TRANSLATIONS, question_translations()),
    ];
    match kind {
        QuestionType::Open => {}
        QuestionType::Link => properties.push((LINK, text("An `https:` or `mailto:` link."))),
        QuestionType::Rating => {
            let scales = RatingDisplay::ALL.map(|display| {
                let scales = display.scales().iter().map(u8::to_string);
                format!("{}: {}", display, scales.collect::<Vec<_>>().join(", "))
            });
            properties.extend([
                (
                    DISPLAY,
                    one_of(RatingDisplay::ALL.map(RatingDisplay::as_str)).into(),
                ),
                (
                    SCALE,
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .description(Some(format!("By display: {}.", scales.join("; "))))
                        .into(),
                ),
                (LOWER_BOUND_LABEL, string().into()),
                (UPPER_BOUND_LABEL, string().into()),
                (SKIP_SUBMIT_BUTTON, skip_submit_button("")),
            ]);
        }
        QuestionType::SingleChoice | QuestionType::MultipleChoice => {
            properties.extend([
                (CHOICES, strings().min_items(Some(1)).into()),
                (HAS_OPEN_CHOICE, boolean().into()),
                (SHUFFLE_OPTIONS, boolean().into()),
            ]);
            if kind == QuestionType::SingleChoice {
                properties.push((
                    SKIP_SUBMIT_BUTTON,
                    skip_submit_button("; not with `hasOpenChoice`"),
                ));
            }
        }
    }
    let required = match kind {
        QuestionType::SingleChoice | QuestionType::MultipleChoice => vec![TYPE, QUESTION, CHOICES],
        _ => vec![TYPE, QUESTION],
    };
    required
        .into_iter()
        .fold(open_object(properties), ObjectBuilder::required)
        .title(Some(kind.as_str()))
        .into()
}

/// `skipSubmitButton`, which rating and single choice questions may set (`unless` saying when
/// they may not).
fn skip_submit_button(unless: &str) -> RefOr<Schema> {
    boolean()
        .description(Some(format!(
            "Answer on the first click, without a submit button{unless}."
        )))
        .into()
}

/// A survey question, by its `type`.
pub(crate) struct SurveyQuestion;

impl PartialSchema for SurveyQuestion {
    fn schema() -> RefOr<Schema> {
        QuestionType::ALL
            .into_iter()
            .fold(OneOfBuilder::new(), |one_of, kind| {
                one_of.item(question(kind))
            })
            .discriminator(Some(Discriminator::new(question_keys::TYPE)))
            .into()
    }
}

impl ToSchema for SurveyQuestion {}

/// The `actions` or `events` that show a survey, or the `cancelEvents` that call it off.
fn condition_values(item: &str) -> RefOr<Schema> {
    open_object([
        (
            condition_keys::VALUES,
            ArrayBuilder::new()
                .items(any())
                .description(Some(item))
                .into(),
        ),
        (condition_keys::REPEATED_ACTIVATION, boolean().into()),
    ])
    .into()
}

/// What an `events` or `cancelEvents` list holds, the events that `what`.
fn event_values(what: &str) -> String {
    use condition_triggers::trigger_keys::*;
    let operators: Vec<_> = condition_triggers::property_operators().collect();
    format!(
        "Events that {what}: `{{{NAME}, {PROPERTY_FILTERS}}}`, `{NAME}` a non-empty string, \
         `{PROPERTY_FILTERS}` (optional) `{{property: {{{VALUES}: [string], {OPERATOR}}}}}` with \
         `{OPERATOR}` one of {}.",
        operators.join(", ")
    )
}

/// Where, when and to whom a survey is shown.
pub(crate) struct SurveyConditions;

impl PartialSchema for SurveyConditions {
    fn schema() -> RefOr<Schema> {
        use condition_keys::*;
        let match_type = || one_of(MatchType::ALL.map(MatchType::as_str));
        open_object([
            (URL, string().into()),
            (URL_MATCH_TYPE, match_type().into()),
            (
                SELECTOR,
                string()
                    .description(Some("A CSS selector the page must have."))
                    .into(),
            ),
            (
                SEEN_SURVEY_WAIT_PERIOD,
                number()
                    .description(Some("Days since the person last saw a survey."))
                    .into(),
            ),
            (LINKED_FLAG_VARIANT, string().into()),
            (DEVICE_TYPES, strings().into()),
            (DEVICE_TYPES_MATCH_TYPE, match_type().into()),
            (
                ACTIONS,
                condition_values("Actions: objects, `{id, name}`; `id` a whole number."),
            ),
            (EVENTS, condition_values(&event_values("show the survey"))),
            (
                CANCEL_EVENTS,
                condition_values(&event_values(
                    "call off a showing the events or actions armed; not on external surveys",
                )),
            ),
        ])
        .into()
    }
}

impl ToSchema for SurveyConditions {}

/// A survey's `translations`: its own texts by language.
pub(crate) struct SurveyTranslations;

impl PartialSchema for SurveyTranslations {
    fn schema() -> RefOr<Schema> {
        by_language(translation_keys::ALL, []).into()
    }
}

impl ToSchema for SurveyTranslations {}

/// How a survey looks.
pub(crate) struct SurveyAppearance;

impl PartialSchema for SurveyAppearance {
    fn schema() -> RefOr<Schema> {
        use appearance_keys::*;
        let sanitized = || string().description(Some("HTML is sanitized."));
        open_object([
            (
                SHUFFLE_QUESTIONS,
                boolean()
                    .description(Some("Cannot be used with branching."))
                    .into(),
            ),
            (POPUP_DELAY, number().minimum(Some(0)).into()),
            (WHITE_LABEL, boolean().into()),
            (THANK_YOU_HEADER, sanitized().into()),
            (THANK_YOU_DESCRIPTION, sanitized().into()),
            (
                THANK_YOU_CONTENT_TYPE,
                one_of(ContentType::ALL.map(ContentType::as_str)).into(),
            ),
            (THANK_YOU_CLOSE_BUTTON, sanitized().into()),
        ])
        .into()
    }
}

impl ToSchema for SurveyAppearance {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_question_type_has_its_shape_keyed_by_type() {
        let schema = serde_json::to_value(SurveyQuestion::schema()).unwrap();
        let shapes = schema["oneOf"].as_array().unwrap();
        assert_eq!(shapes.len(), QuestionType::ALL.len());
        for (shape, kind) in shapes.iter().zip(QuestionType::ALL) {
            assert_eq!(shape["properties"]["type"]["enum"][0], kind.as_str());
            assert_eq!(shape["additionalProperties"], true);
        }
        assert_eq!(schema["discriminator"]["propertyName"], "type");
    }

    #[test]
    fn match_types_are_posthogs() {
        let schema = serde_json::to_value(SurveyConditions::schema()).unwrap();
        assert_eq!(
            schema["properties"]["urlMatchType"]["enum"],
            serde_json::json!([
                "regex",
                "not_regex",
                "exact",
                "is_not",
                "icontains",
                "not_icontains"
            ])
        );
    }
}
