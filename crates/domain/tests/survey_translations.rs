//! A survey's `base_language` and `translations` (survey-level and per question): PostHog's
//! messages, normalisation, the checks against the base language and the stored survey, the
//! bounds, and what the public feed keeps of them. Over the in-memory fakes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use domain::patch::Patch;
use domain::survey::{
    LanguageCode, MAX_TRANSLATION_LANGUAGES, NewSurvey, Questions, SentBaseLanguage, Survey,
    SurveyChanges, SurveyName, SurveyService, SurveyTranslations, SurveyType, is_right_to_left,
};
use domain::tenancy::{ProjectId, UserId};
use domain::testing::{InMemoryStore, someone};
use domain::{DomainError, ValidationError};
use serde_json::{Value, json};

const PROJECT: ProjectId = ProjectId(1);
const USER: UserId = UserId(1);

/// Survey names are unique in a project.
static NAMES: AtomicUsize = AtomicUsize::new(0);

/// The command of a body holding only `name`, `type`, `questions`, `base_language` and
/// `translations`; field errors as the HTTP layer reports them.
fn changes(body: Value) -> Result<SurveyChanges, ValidationError> {
    let field = |name: &str| match body.get(name) {
        None => Patch::Absent,
        Some(Value::Null) => Patch::Null,
        Some(value) => Patch::Value(value.clone()),
    };
    let text = |name: &str| field(name).map(|v| v.as_str().expect("a string").to_owned());
    Ok(SurveyChanges {
        name: text("name").try_map(|name| SurveyName::parse(&name))?,
        survey_type: text("type").map(|t| SurveyType::parse(&t).expect("a type")),
        questions: field("questions").try_map(Questions::parse)?,
        base_language: text("base_language")
            .value()
            .map(SentBaseLanguage::parse)
            .transpose()?,
        translations: field("translations").try_map(SurveyTranslations::parse)?,
        ..SurveyChanges::default()
    })
}

fn service() -> SurveyService {
    let store = InMemoryStore::new();
    SurveyService::new(Arc::new(store.clone()), Arc::new(store))
}

async fn create(surveys: &SurveyService, mut body: Value) -> Result<Survey, DomainError> {
    body["name"] = json!(format!(
        "Languages {}",
        NAMES.fetch_add(1, Ordering::Relaxed)
    ));
    body["type"] = json!("popover");
    let survey = NewSurvey::new(changes(body)?)?;
    surveys.create(PROJECT, &someone(USER), survey).await
}

async fn patch(
    surveys: &SurveyService,
    survey: &Survey,
    body: Value,
) -> Result<Survey, DomainError> {
    surveys
        .update(PROJECT, survey.id, USER, changes(body)?)
        .await
}

/// `(attr, detail)` of a refusal.
fn refusal(result: Result<Survey, DomainError>) -> (String, String) {
    match result {
        Err(DomainError::Invalid(error)) => (error.attr.unwrap_or_default(), error.detail),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn translations(survey: &Survey) -> Value {
    serde_json::to_value(&survey.state.translations).unwrap()
}

fn question_translations(survey: &Survey) -> Value {
    serde_json::to_value(&survey.state.questions).unwrap()[0]["translations"].clone()
}

#[tokio::test]
async fn the_base_language_defaults_to_en_and_is_normalised() {
    let surveys = service();
    let plain = create(&surveys, json!({})).await.unwrap();
    assert_eq!(plain.state.base_language.as_str(), "en");
    assert_eq!(plain.state.translations, None);
    let blank = create(&surveys, json!({"base_language": "  "}))
        .await
        .unwrap();
    assert_eq!(blank.state.base_language.as_str(), "en");
    let mexican = create(&surveys, json!({"base_language": " es_MX "}))
        .await
        .unwrap();
    assert_eq!(mexican.state.base_language.as_str(), "es-mx");
    let changed = patch(&surveys, &plain, json!({"base_language": "zh-Hant-TW"}))
        .await
        .unwrap();
    assert_eq!(changed.state.base_language.as_str(), "zh-hant-tw");
}

#[test]
fn a_base_language_is_a_bcp47_code_with_posthogs_messages() {
    let refused = |sent: &str| {
        let error = LanguageCode::parse_base(sent).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("base_language"));
        error.detail
    };
    for sentinel in ["default", "Original", "BASE"] {
        assert_eq!(
            refused(sentinel),
            format!(
                "'{sentinel}' is not a valid language code. Use a BCP-47 code like 'en' or 'es'."
            )
        );
    }
    for bad in [
        "english",
        "en US",
        "e",
        "en-",
        "en-a",
        "en-toolongtag",
        "en-aa-bb-cc-dd",
        "1x",
    ] {
        assert_eq!(
            refused(bad),
            format!(
                "'{bad}' is not a valid language code. Use BCP-47 codes like 'en', 'es', or 'es-MX'."
            )
        );
    }
    let long = LanguageCode::parse_base(&"a".repeat(21)).unwrap_err();
    assert_eq!(
        (long.code.as_str(), long.detail.as_str()),
        (
            "max_length",
            "Ensure this field has no more than 20 characters."
        )
    );
    for good in ["en", "fil", "es-419", "zh-hant-tw", "sr-latn-rs-x1"] {
        assert_eq!(LanguageCode::parse_base(good).unwrap().as_str(), good);
    }
}

#[tokio::test]
async fn survey_translations_keep_known_fields_sanitized_and_drop_the_rest() {
    let surveys = service();
    let survey = create(
        &surveys,
        json!({"translations": {
            "Ro_RO": {"name": "Sondaj", "description": "<b>d</b><script>x()</script>",
                      "thankYouMessageHeader": "Mulțumim", "thankYouMessageDescription": "D",
                      "thankYouMessageCloseButtonText": "Închide", "questions": "dropped",
                      "introScreenHeader": "dropped"},
            "fr": {"somethingElse": "dropped"},
            "de": {}
        }}),
    )
    .await
    .unwrap();
    assert_eq!(
        translations(&survey),
        json!({"ro-ro": {"name": "Sondaj", "description": "<b>d</b>",
                         "thankYouMessageHeader": "Mulțumim", "thankYouMessageDescription": "D",
                         "thankYouMessageCloseButtonText": "Închide"}})
    );
    let cleared = patch(&surveys, &survey, json!({"translations": null}))
        .await
        .unwrap();
    assert_eq!(cleared.state.translations, None);
}

#[test]
fn survey_translations_have_posthogs_shape_messages() {
    let refused = |value: Value| {
        let error = SurveyTranslations::parse(value).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("translations"));
        error.detail
    };
    assert_eq!(refused(json!(["es"])), "Translations must be an object");
    assert_eq!(
        refused(json!({"es": "Hola"})),
        "Translation for 'es' must be an object"
    );
    assert_eq!(
        refused(json!({"es": {"name": 5}})),
        "Translation for 'es': 'name' must be a string"
    );
    // A field that is not kept is dropped whatever its value.
    assert!(SurveyTranslations::parse(json!({"es": {"other": 5}})).is_ok());
}

#[tokio::test]
async fn new_translation_keys_are_checked_against_the_base_language() {
    let surveys = service();
    let refused = async |body: Value| refusal(create(&surveys, body).await);
    let entry = json!({"name": "N"});
    for (key, detail) in [
        (
            "",
            "Survey translation: translation language code cannot be empty.".to_owned(),
        ),
        (
            "default",
            "Survey translation: 'default' is not a valid translation language. The untranslated \
             text is the original — set the survey's base language instead of adding it as a \
             translation."
                .to_owned(),
        ),
        (
            "english",
            "Survey translation: 'english' is not a valid language code. Use BCP-47 codes like \
             'en', 'es', or 'es-MX' (not language names like 'english')."
                .to_owned(),
        ),
        (
            "en US",
            "Survey translation: 'en US' is not a valid language code. Use BCP-47 codes like \
             'en', 'es', or 'es-MX' (not language names like 'english')."
                .to_owned(),
        ),
        (
            "custom-customer-locale",
            "Survey translation: 'custom-customer-locale' is not a valid language code. Use \
             BCP-47 codes like 'en', 'es', or 'es-MX' (not language names like 'english')."
                .to_owned(),
        ),
        (
            "EN",
            "Survey translation: 'EN' matches the survey's base language ('en'). The original \
             text already covers this language — translate to a different language."
                .to_owned(),
        ),
    ] {
        assert_eq!(
            refused(json!({"translations": {key: entry}})).await,
            ("translations".to_owned(), detail)
        );
    }
    // The base language as sent is the one compared, and named as sent.
    assert_eq!(
        refused(json!({"base_language": "ES", "translations": {"es": entry}})).await,
        (
            "translations".to_owned(),
            "Survey translation: 'es' matches the survey's base language ('ES'). The original \
             text already covers this language — translate to a different language."
                .to_owned()
        )
    );
    assert!(
        create(
            &surveys,
            json!({"base_language": "es", "translations": {"en": entry}})
        )
        .await
        .is_ok()
    );
    assert_eq!(
        refused(json!({"translations": {"PT_br": entry, "pt-BR": entry}})).await,
        (
            "translations".to_owned(),
            "Survey translation: 'pt-BR' collides with another translation for 'pt-br'.".to_owned()
        )
    );
}

#[tokio::test]
async fn a_base_language_sent_alone_may_not_be_a_stored_translation() {
    let surveys = service();
    let survey = create(
        &surveys,
        json!({"translations": {"fr": {"name": "Sondage"}}}),
    )
    .await
    .unwrap();
    assert_eq!(
        refusal(patch(&surveys, &survey, json!({"base_language": "FR"})).await),
        (
            "base_language".to_owned(),
            "'fr' already exists as a translation key on this survey. Remove the translation \
             first, or pick a different base language."
                .to_owned()
        )
    );
    // Sent with new translations, those are checked instead.
    let moved = patch(
        &surveys,
        &survey,
        json!({"base_language": "fr", "translations": {"en": {"name": "Survey"}}}),
    )
    .await
    .unwrap();
    assert_eq!(moved.state.base_language.as_str(), "fr");
    assert_eq!(translations(&moved), json!({"en": {"name": "Survey"}}));
}

#[tokio::test]
async fn a_stored_key_is_kept_unchecked_and_a_new_one_is_checked() {
    let surveys = service();
    let survey = create(
        &surveys,
        json!({"translations": {"es": {"name": "Encuesta"}}}),
    )
    .await
    .unwrap();
    // `es` is stored: kept as it is even once it is the base language.
    let rebased = patch(
        &surveys,
        &survey,
        json!({"base_language": "es", "translations": {"es": {"name": "Otra"}}}),
    )
    .await
    .unwrap();
    assert_eq!(translations(&rebased), json!({"es": {"name": "Otra"}}));
    // `ES` is not the stored key as it is: checked, and refused.
    assert_eq!(
        refusal(
            patch(
                &surveys,
                &rebased,
                json!({"translations": {"ES": {"name": "N"}}})
            )
            .await
        )
        .1,
        "Survey translation: 'ES' matches the survey's base language ('es'). The original text \
         already covers this language — translate to a different language."
    );
}

#[tokio::test]
async fn translations_are_bounded() {
    let surveys = service();
    let many: serde_json::Map<String, Value> = (0..=MAX_TRANSLATION_LANGUAGES)
        .map(|n| (format!("l{n}"), json!({"name": "N"})))
        .collect();
    assert_eq!(many.len(), MAX_TRANSLATION_LANGUAGES + 1);
    let error = SurveyTranslations::parse(Value::Object(many)).unwrap_err();
    assert_eq!(error.code.as_str(), "max_length");
    let huge = json!({"es": {"name": "a".repeat(70_000)}});
    let error = SurveyTranslations::parse(huge).unwrap_err();
    assert_eq!(
        (error.code.as_str(), error.attr.as_deref()),
        ("max_length", Some("translations"))
    );
    let question = json!([{"type": "open", "question": "Q",
                           "translations": {"es": {"question": "a".repeat(70_000)}}}]);
    let refused = refusal(create(&surveys, json!({"questions": question})).await);
    assert_eq!(
        refused,
        (
            "questions".to_owned(),
            "Question 1: Translations may hold at most 100 languages and 65536 bytes as JSON."
                .to_owned()
        )
    );
}

#[tokio::test]
async fn question_translations_are_read_checked_and_normalised() {
    let surveys = service();
    let survey = create(
        &surveys,
        json!({"questions": [{
            "type": "single_choice", "question": "Which?", "choices": ["a", "b"],
            "translations": {
                "Es_MX": {"question": "¿Cuál?<script>x()</script>", "description": "D",
                          "buttonText": "Sigue", "choices": ["A", "B"], "link": "",
                          "other": "dropped"},
                "fr": {"other": "dropped"}
            }
        }, {
            "type": "open", "question": "Why?",
            "translations": {"de": {"question": "Warum?", "choices": ["dropped"]}}
        }, {
            "type": "link", "question": "Docs?", "link": "https://posthog.com",
            "translations": {"de": {"link": "https://posthog.com/de"}}
        }]}),
    )
    .await
    .unwrap();
    let questions = serde_json::to_value(&survey.state.questions).unwrap();
    assert_eq!(
        questions[0]["translations"],
        json!({"es-mx": {"question": "¿Cuál?", "description": "D", "buttonText": "Sigue",
                         "choices": ["A", "B"]}})
    );
    assert_eq!(
        questions[1]["translations"],
        json!({"de": {"question": "Warum?"}})
    );
    assert_eq!(
        questions[2]["translations"],
        json!({"de": {"link": "https://posthog.com/de"}})
    );
}

#[tokio::test]
async fn question_translations_have_posthogs_messages() {
    let surveys = service();
    let refused = async |translations: Value| {
        let question = json!({"type": "single_choice", "question": "Q", "choices": ["a", "b"],
                              "translations": translations});
        let (attr, detail) = refusal(create(&surveys, json!({"questions": [question]})).await);
        assert_eq!(attr, "questions");
        detail
    };
    assert_eq!(
        refused(json!(["es"])).await,
        "Question 1: translations must be an object"
    );
    assert_eq!(
        refused(json!({"es": "x"})).await,
        "Question 1: Translation for 'es' must be an object"
    );
    for field in [
        "question",
        "description",
        "buttonText",
        "lowerBoundLabel",
        "upperBoundLabel",
        "link",
    ] {
        assert_eq!(
            refused(json!({"es": {field: 1}})).await,
            format!("Question 1: Translation 'es' field '{field}' must be a string")
        );
    }
    assert_eq!(
        refused(json!({"es": {"choices": "a"}})).await,
        "Question 1: Translation 'es' field 'choices' must be a list of strings"
    );
    assert_eq!(
        refused(json!({"es": {"choices": ["a", 1]}})).await,
        "Question choices must be strings"
    );
    assert_eq!(
        refused(json!({"es": {"choices": ["a", " "]}})).await,
        "Question choices cannot be empty"
    );
    assert_eq!(
        refused(json!({"ES_ES": {"choices": ["a"]}})).await,
        "Question 1: Translation 'es-es' has 1 choices but question has 2 choices. Array \
         lengths must match to avoid partial translations."
    );
    assert_eq!(
        refused(json!({"es": {"link": "http://example.com"}})).await,
        "Link must be a URL with one of these schemes: [https, mailto]"
    );
    assert_eq!(
        refused(json!({"EN": {"question": "Q"}})).await,
        "Question 1 translation: 'EN' matches the survey's base language ('en'). The original \
         text already covers this language — translate to a different language."
    );
    assert_eq!(
        refused(json!({"base": {"question": "Q"}})).await,
        "Question 1 translation: 'base' is not a valid translation language. The untranslated \
         text is the original — set the survey's base language instead of adding it as a \
         translation."
    );
    assert_eq!(
        refused(json!({"es": {"question": "Q"}, "ES": {"question": "Q"}})).await,
        "Question 1 translation: 'es' collides with another translation for 'es'."
    );
}

#[tokio::test]
async fn a_questions_stored_keys_are_kept_at_the_same_index() {
    let surveys = service();
    let survey = create(
        &surveys,
        json!({"questions": [{"type": "open", "question": "Q",
                              "translations": {"es": {"question": "P"}}}]}),
    )
    .await
    .unwrap();
    // A key stored as it is stays, even once the base language is that language.
    let rebased = patch(
        &surveys,
        &survey,
        json!({"base_language": "es", "translations": {},
               "questions": [{"type": "open", "question": "Q",
                              "translations": {"es": {"question": "P2"}}}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        question_translations(&rebased),
        json!({"es": {"question": "P2"}})
    );
    // At another index it is a new key, checked.
    let moved = patch(
        &surveys,
        &rebased,
        json!({"questions": [{"type": "open", "question": "First"},
                             {"type": "open", "question": "Q",
                              "translations": {"es": {"question": "P3"}}}]}),
    )
    .await;
    assert_eq!(
        refusal(moved).1,
        "Question 2 translation: 'es' matches the survey's base language ('es'). The original \
         text already covers this language — translate to a different language."
    );
}

#[test]
fn the_feed_keeps_valid_keys_other_than_the_base_and_the_fields_the_sdks_show() {
    let stored: SurveyTranslations = serde_json::from_value(json!({
        "default": {"name": "Kept by grandfathering"},
        "ES": {"name": "Encuesta", "description": "Not in the feed"},
        "en": {"name": "The base"},
        "de": {"description": "Only a description"}
    }))
    .unwrap();
    let base = LanguageCode::default();
    assert_eq!(
        serde_json::to_value(stored.for_feed(&base)).unwrap(),
        json!({"es": {"name": "Encuesta"}})
    );
    let questions: Questions = serde_json::from_value(json!([
        {"type": "open", "question": "Q", "translations": {"Fr": {"question": "F"}, "en": {"question": "E"}}},
        {"type": "open", "question": "Q", "translations": {"default": {"question": "D"}}}
    ]))
    .unwrap();
    let feed = serde_json::to_value(questions.for_feed(&base)).unwrap();
    assert_eq!(feed[0]["translations"], json!({"fr": {"question": "F"}}));
    assert_eq!(feed[1].get("translations"), None);
}

#[test]
fn a_stored_question_translation_of_another_shape_stays_as_it_was() {
    let questions: Questions = serde_json::from_value(json!([
        {"type": "open", "question": "Q", "translations": {"es": {"question": 5}}}
    ]))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&questions).unwrap()[0]["translations"],
        json!({"es": {"question": 5}})
    );
}

#[test]
fn right_to_left_follows_the_script_then_the_language() {
    for rtl in [
        "ar", "ar-eg", "he", "fa-ir", "ur", "ps", "sd", "ug", "yi", "dv", "ckb", "ku-arab",
        "az-arab",
    ] {
        assert!(is_right_to_left(rtl), "{rtl}");
    }
    for ltr in ["en", "es-mx", "ku", "ku-latn", "sd-deva", "tr", "zh-hant"] {
        assert!(!is_right_to_left(ltr), "{ltr}");
    }
}

#[tokio::test]
async fn a_visitor_sees_the_best_translation_of_their_languages_or_the_survey_itself() {
    let surveys = service();
    let survey = create(
        &surveys,
        json!({"base_language": "en",
               "translations": {"es": {"name": "Encuesta"}, "pt-br": {"name": "Pesquisa"}},
               "questions": [{"type": "open", "question": "Why?",
                              "translations": {"fr": {"question": "Pourquoi ?"}}}]}),
    )
    .await
    .unwrap();
    let state = &survey.state;
    let shown = |accept: &str| state.display_language(accept);
    assert_eq!(
        shown("es-MX,en;q=0.5").as_deref(),
        Some("es"),
        "by primary subtag"
    );
    assert_eq!(shown("pt-BR").as_deref(), Some("pt-br"), "exactly");
    assert_eq!(
        shown("de, fr;q=0.7").as_deref(),
        Some("fr"),
        "a question's language"
    );
    assert_eq!(
        shown("fr;q=0.2, es;q=0.9").as_deref(),
        Some("es"),
        "by weight"
    );
    assert_eq!(shown("en-GB, es"), None, "the base language first");
    assert_eq!(shown("es;q=0, de"), None, "refused or missing");
    assert_eq!(shown(""), None);

    let spanish = state.in_language(Some("es"));
    assert_eq!(spanish.name, "Encuesta");
    assert_eq!(spanish.translations, None);
    let french = serde_json::to_value(&state.in_language(Some("fr")).questions).unwrap();
    assert_eq!(
        french,
        json!([{"id": french[0]["id"], "type": "open", "question": "Pourquoi ?"}])
    );
    let own = state.in_language(None);
    assert_eq!(
        (own.name.as_str(), &own.translations),
        (state.name.as_str(), &None)
    );
}
