//! A survey's `base_language` and `translations` over HTTP: PostHog's write errors, the shape
//! every survey answer carries, the bounds, and what the public feed serves of them.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app};
use crate::survey_requests::{create, patch, survey_id, survey_path, surveys_path};

/// Creates a popover survey from `body`: the status and the answer.
async fn create_popover(app: &TestApp, tenant: &Tenant, mut body: Value) -> (u16, Value) {
    body["type"] = json!("popover");
    create(app, tenant, body).await
}

/// Asserts a 400 validation error with these `code`, `detail` and `attr`.
fn assert_refused((status, body): (u16, Value), code: &str, detail: &str, attr: &str) {
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body,
        json!({"type": "validation_error", "code": code, "detail": detail, "attr": attr})
    );
}

#[tokio::test]
async fn every_survey_answer_carries_its_languages() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, plain) = create_popover(&app, &ada, json!({"name": "Plain"})).await;
    assert_eq!(status, 201, "{plain}");
    assert_eq!(
        (&plain["base_language"], &plain["translations"]),
        (&json!("en"), &Value::Null)
    );
    let (status, created) = create_popover(
        &app,
        &ada,
        json!({
            "name": "Encuesta",
            "base_language": "es_MX",
            "translations": {"EN": {"name": "Survey", "thankYouMessageHeader": "<b>Thanks</b><script>x()</script>", "introScreenHeader": "dropped"}},
            "questions": [{"type": "single_choice", "question": "¿Cuál?", "choices": ["a", "b"],
                           "translations": {"en": {"question": "Which?", "choices": ["A", "B"]}}}]
        }),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let languages = |survey: &Value| {
        (
            survey["base_language"].clone(),
            survey["translations"].clone(),
            survey["questions"][0]["translations"].clone(),
        )
    };
    let expected = (
        json!("es-mx"),
        json!({"en": {"name": "Survey", "thankYouMessageHeader": "<b>Thanks</b>"}}),
        json!({"en": {"question": "Which?", "choices": ["A", "B"]}}),
    );
    assert_eq!(languages(&created), expected);
    let (status, read) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&created)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(languages(&read), expected);
    let (_, list) = parts(app.get(&surveys_path(ada.project_id), &ada.key).await).await;
    let listed = list["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|survey| survey["id"] == created["id"])
        .unwrap();
    assert_eq!(languages(listed), expected);
}

#[tokio::test]
async fn language_errors_are_posthogs() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let refused = async |body: Value| create_popover(&app, &ada, body).await;
    assert_refused(
        refused(json!({"name": "A", "base_language": null})).await,
        "null",
        "This field may not be null.",
        "base_language",
    );
    assert_refused(
        refused(json!({"name": "A", "base_language": 5})).await,
        "invalid_input",
        "Not a valid string.",
        "base_language",
    );
    assert_refused(
        refused(json!({"name": "A", "base_language": "x".repeat(21)})).await,
        "max_length",
        "Ensure this field has no more than 20 characters.",
        "base_language",
    );
    assert_refused(
        refused(json!({"name": "A", "base_language": "default"})).await,
        "invalid_input",
        "'default' is not a valid language code. Use a BCP-47 code like 'en' or 'es'.",
        "base_language",
    );
    assert_refused(
        refused(json!({"name": "A", "base_language": "english"})).await,
        "invalid_input",
        "'english' is not a valid language code. Use BCP-47 codes like 'en', 'es', or 'es-MX'.",
        "base_language",
    );
    assert_refused(
        refused(json!({"name": "A", "translations": "es"})).await,
        "invalid_input",
        "Translations must be an object",
        "translations",
    );
    assert_refused(
        refused(json!({"name": "A", "translations": {"en": {"name": "A"}}})).await,
        "invalid_input",
        "Survey translation: 'en' matches the survey's base language ('en'). The original text \
         already covers this language — translate to a different language.",
        "translations",
    );
    assert_refused(
        refused(json!({"name": "A", "questions": [{"type": "open", "question": "Q", "translations": {"es": {"question": 1}}}]}))
            .await,
        "invalid_input",
        "Question 1: Translation 'es' field 'question' must be a string",
        "questions",
    );
    assert_refused(
        refused(json!({"name": "A", "questions": [{"type": "single_choice", "question": "Q", "choices": ["a", "b"], "translations": {"es": {"choices": ["a"]}}}]}))
            .await,
        "invalid_input",
        "Question 1: Translation 'es' has 1 choices but question has 2 choices. Array lengths \
         must match to avoid partial translations.",
        "questions",
    );

    let (status, survey) = create_popover(
        &app,
        &ada,
        json!({"name": "B", "translations": {"fr": {"name": "Sondage"}}}),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    assert_refused(
        patch(&app, &ada, &survey, json!({"base_language": "fr"})).await,
        "invalid_input",
        "'fr' already exists as a translation key on this survey. Remove the translation first, \
         or pick a different base language.",
        "base_language",
    );
}

#[tokio::test]
async fn hostile_translations_are_refused_at_their_bounds() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bound_message = "Translations may hold at most 100 languages and 65536 bytes as JSON.";
    let languages = |count: usize| -> serde_json::Map<String, Value> {
        (0..count)
            .map(|n| {
                let code = format!(
                    "{}{}",
                    char::from(b'a' + (n / 26) as u8),
                    char::from(b'a' + (n % 26) as u8)
                );
                (code, json!({"name": "N"}))
            })
            .collect()
    };
    let (status, at_bound) = create_popover(
        &app,
        &ada,
        json!({"name": "At", "base_language": "zz", "translations": languages(100)}),
    )
    .await;
    assert_eq!(status, 201, "{at_bound}");
    assert_refused(
        create_popover(
            &app,
            &ada,
            json!({"name": "Over", "base_language": "zz", "translations": languages(101)}),
        )
        .await,
        "max_length",
        bound_message,
        "translations",
    );
    assert_refused(
        create_popover(
            &app,
            &ada,
            json!({"name": "Huge", "translations": {"es": {"name": "a".repeat(70_000)}}}),
        )
        .await,
        "max_length",
        bound_message,
        "translations",
    );
    let (status, body) = create_popover(
        &app,
        &ada,
        json!({"name": "Huge question", "questions": [{"type": "open", "question": "Q",
               "translations": {"es": {"question": "a".repeat(70_000)}}}]}),
    )
    .await;
    assert_eq!(
        (status, &body["attr"]),
        (400, &json!("questions")),
        "{body}"
    );
}

#[tokio::test]
async fn the_feed_serves_translations_as_posthogs_survey_api_serializer() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, translated) = create_popover(
        &app,
        &ada,
        json!({
            "name": "Translated",
            "start_date": "2026-01-01T00:00:00Z",
            "translations": {"ES": {"name": "Encuesta", "description": "Not in the feed",
                                    "thankYouMessageHeader": "Gracias"},
                             "de": {"description": "Only a description"}},
            "questions": [{"type": "open", "question": "Why?",
                           "translations": {"Es_mx": {"question": "¿Por qué?"}}},
                          {"type": "open", "question": "How?"}]
        }),
    )
    .await;
    assert_eq!(status, 201, "{translated}");
    let (status, plain) = create_popover(
        &app,
        &ada,
        json!({"name": "Plain", "start_date": "2026-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(status, 201, "{plain}");
    let token = app.project_token(&ada).await;
    let (status, feed) = parts(
        app.request(Method::GET, &format!("/api/surveys/?token={token}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{feed}");
    let shown = |id: &Value| {
        feed["surveys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|survey| &survey["id"] == id)
            .unwrap()
            .clone()
    };
    let translated = shown(&translated["id"]);
    assert_eq!(
        translated["translations"],
        json!({"es": {"name": "Encuesta", "thankYouMessageHeader": "Gracias"}})
    );
    assert_eq!(
        translated["questions"][0]["translations"],
        json!({"es-mx": {"question": "¿Por qué?"}})
    );
    assert!(translated["questions"][1].get("translations").is_none());
    assert!(
        translated.get("base_language").is_none(),
        "PostHog removed it"
    );
    let plain = shown(&plain["id"]);
    assert!(plain.get("translations").is_none(), "{plain}");
}

#[tokio::test]
async fn a_hosted_page_is_in_the_visitors_language_with_its_direction() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, survey) = create_popover(
        &app,
        &ada,
        json!({
            "name": "Feedback",
            "start_date": "2026-01-01T00:00:00Z",
            "translations": {"es": {"name": "Encuesta", "thankYouMessageHeader": "Gracias"},
                             "ar": {"name": "Istibyan"}},
            "questions": [{"type": "single_choice", "question": "Which one", "choices": ["a", "b"],
                           "translations": {"es": {"question": "Cual", "choices": ["A es", "B es"]}}}]
        }),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let (status, survey) = patch(&app, &ada, &survey, json!({"type": "external_survey"})).await;
    assert_eq!(status, 200, "{survey}");
    let page = async |accept: Option<&str>| {
        let mut request = app.request(
            Method::GET,
            &format!("/external_surveys/{}/", survey["id"].as_str().unwrap()),
        );
        if let Some(accept) = accept {
            request = request.header("accept-language", accept);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        response.text().await.unwrap()
    };

    let spanish = page(Some("es-MX,es;q=0.9,en;q=0.5")).await;
    assert!(
        spanish.contains(r#"<html lang="es" dir="ltr">"#),
        "{spanish}"
    );
    assert!(spanish.contains("<title>Encuesta</title>"), "{spanish}");
    for shown in [
        r#""question":"Cual""#,
        r#""choices":["A es","B es"]"#,
        r#""thankYouMessageHeader":"Gracias""#,
        r#""language":"es""#,
    ] {
        assert!(spanish.contains(shown), "{shown} in {spanish}");
    }
    assert!(
        !spanish.contains("\"translations\""),
        "one language embedded"
    );

    let arabic = page(Some("ar-EG")).await;
    assert!(arabic.contains(r#"<html lang="ar" dir="rtl">"#), "{arabic}");
    assert!(arabic.contains("<title>Istibyan</title>"), "{arabic}");
    assert!(
        arabic.contains(r#""question":"Which one""#),
        "no question translation: its own"
    );

    for (accept, why) in [
        (None, "no header"),
        (Some("de-DE,fr;q=0.8"), "no translation for them"),
        (Some("en-US,es;q=0.9"), "the base language comes first"),
        (Some("es;q=0"), "refused"),
    ] {
        let own = page(accept).await;
        assert!(
            own.contains(r#"<html lang="en" dir="ltr">"#),
            "{why}: {own}"
        );
        assert!(own.contains("<title>Feedback</title>"), "{why}: {own}");
        assert!(own.contains(r#""language":null"#), "{why}: {own}");
    }
}
