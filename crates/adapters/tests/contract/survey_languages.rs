//! A survey's `base_language` and `translations` (its own and its questions') are stored as
//! the domain plans them and read back the same by a get and by a list, on both stores.

use domain::patch::Patch;
use domain::survey::{
    NewSurvey, Questions, SentBaseLanguage, SurveyChanges, SurveyFilter, SurveyName,
    SurveyTranslations, SurveyType,
};
use serde_json::json;

use crate::stores::{Stores, all};

contract! {
    a_surveys_languages_round_trip_through_create_update_get_and_list,
}

async fn a_surveys_languages_round_trip_through_create_update_get_and_list(stores: Stores) {
    let service = stores.survey_service();
    let changes = SurveyChanges {
        name: Patch::Value(SurveyName::parse("Languages").unwrap()),
        survey_type: Patch::Value(SurveyType::Popover),
        base_language: Some(SentBaseLanguage::parse("es_MX".into()).unwrap()),
        translations: Patch::Value(
            SurveyTranslations::parse(json!({"Fr": {"name": "Sondage"}, "en": {"name": "Survey"}}))
                .unwrap(),
        ),
        questions: Patch::Value(
            Questions::parse(json!([{"type": "single_choice", "question": "¿Cuál?",
                "choices": ["a", "b"], "translations": {"EN": {"question": "Which?", "choices": ["A", "B"]}}}]))
            .unwrap(),
        ),
        ..SurveyChanges::default()
    };
    let created = service
        .create(
            stores.project,
            &stores.user,
            NewSurvey::new(changes).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(created.state.base_language.as_str(), "es-mx");
    assert_eq!(
        serde_json::to_value(&created.state.translations).unwrap(),
        json!({"fr": {"name": "Sondage"}, "en": {"name": "Survey"}})
    );
    assert_eq!(
        serde_json::to_value(&created.state.questions).unwrap()[0]["translations"],
        json!({"en": {"question": "Which?", "choices": ["A", "B"]}})
    );
    let read = service.get(stores.project, created.id).await.unwrap();
    assert_eq!(read.state, created.state);

    let cleared = service
        .update(
            stores.project,
            created.id,
            stores.user.id,
            SurveyChanges {
                base_language: Some(SentBaseLanguage::parse(String::new()).unwrap()),
                translations: Patch::Null,
                ..SurveyChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (
            cleared.state.base_language.as_str(),
            &cleared.state.translations
        ),
        ("en", &None)
    );
    let listed = stores
        .surveys
        .list(stores.project, &SurveyFilter::default(), all())
        .await
        .unwrap();
    assert_eq!(listed.items[0].state, cleared.state);
}
