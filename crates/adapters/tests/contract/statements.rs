//! What a write costs PostgreSQL, counted off the statement log (`BEGIN` and `COMMIT`
//! included): the targets for the requests clients make most, each the whole use case
//! as the service runs it (the caller is already authenticated, as a busy client's is).

use std::sync::Arc;

use adapters::testing::statements_of;
use domain::patch::Patch;
use domain::survey::{NewSurvey, Survey, SurveyChanges, SurveyService, SurveyType};
use serde_json::json;

use crate::stores::Stores;

fn targeting_filters() -> serde_json::Map<String, serde_json::Value> {
    let filters = json!({"groups": [{"properties": [], "rollout_percentage": 50}]});
    filters.as_object().cloned().expect("an object")
}

/// Fails with the statements listed when there are more than `most`, or when they are not one
/// transaction (which would also mean the log recorded nothing).
fn at_most(most: usize, statements: &[String]) {
    let keyword = |statement: Option<&String>| {
        statement.and_then(|s| s.split_whitespace().next().map(str::to_owned))
    };
    assert_eq!(
        (keyword(statements.first()), keyword(statements.last())),
        (Some("BEGIN".into()), Some("COMMIT".into())),
        "one transaction expected:\n{}",
        statements.join("\n")
    );
    assert!(
        statements.len() <= most,
        "{} statements, at most {most} expected:\n{}",
        statements.len(),
        statements.join("\n")
    );
}

async fn create(service: &SurveyService, stores: &Stores, changes: SurveyChanges) -> Survey {
    let survey = NewSurvey::new(changes).expect("a valid survey");
    service
        .create(stores.project, &stores.user, survey)
        .await
        .expect("creating a survey")
}

fn named(name: &str) -> SurveyChanges {
    SurveyChanges {
        name: Patch::Value(name.into()),
        survey_type: Patch::Value(SurveyType::Popover),
        ..SurveyChanges::default()
    }
}

#[tokio::test]
async fn a_survey_create_with_a_targeting_filter_takes_four_statements() {
    let stores = Stores::postgres().await;
    let service = SurveyService::new(Arc::clone(&stores.surveys));
    let changes = SurveyChanges {
        targeting_flag_filters: Some(targeting_filters()),
        ..named("NPS")
    };

    let (survey, statements) = statements_of(create(&service, &stores, changes)).await;

    at_most(4, &statements);
    assert!(survey.targeting_flag.is_some() && survey.owns_targeting_flag);
    assert_eq!(
        stores.surveys.get(stores.project, survey.id).await.unwrap(),
        Some(survey)
    );
}

#[tokio::test]
async fn renaming_a_survey_with_a_linked_and_a_targeting_flag_takes_five_statements() {
    let stores = Stores::postgres().await;
    let service = SurveyService::new(Arc::clone(&stores.surveys));
    let linked = stores.flag("linked").await;
    let changes = SurveyChanges {
        linked_flag_id: Patch::Value(linked.id),
        targeting_flag_filters: Some(targeting_filters()),
        ..named("NPS")
    };
    let survey = create(&service, &stores, changes).await;
    let rename = SurveyChanges {
        name: Patch::Value("Net promoter score".into()),
        ..SurveyChanges::default()
    };

    let update = service.update(stores.project, survey.id, stores.user.id, rename);
    let (renamed, statements) = statements_of(update).await;

    at_most(5, &statements);
    let renamed = renamed.expect("renaming the survey");
    assert_eq!(renamed.state.name, "Net promoter score");
    assert_eq!(
        (
            renamed.linked_flag.map(|f| f.id),
            renamed.targeting_flag.map(|f| f.id)
        ),
        (Some(linked.id), survey.targeting_flag.map(|f| f.id))
    );
    let stored = stores.surveys.get(stores.project, survey.id).await.unwrap();
    assert_eq!(stored.unwrap().state.name, "Net promoter score");
}
