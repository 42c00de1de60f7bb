//! What a write costs PostgreSQL, counted off the statement log (`BEGIN` and `COMMIT`
//! included): the targets for the requests clients make most, each the whole use case
//! as the service runs it (the caller is already authenticated, as a busy client's is; a
//! capture's project token is already resolved).

use std::sync::Arc;

use adapters::testing::{Recorded, TestDatabase, recorded_of, statements_of};
use domain::feature_flag::{FeatureFlag, FlagFiltersPatch, FlagId};
use domain::patch::Patch;
use domain::plugin::{NewPlugin, PluginAccess, PluginFields, PluginService, PluginSettings};
use domain::survey::{
    FlagReferences, NewSurvey, ReferencedFlags, Survey, SurveyChanges, SurveyId, SurveyName,
    SurveyService, SurveyType,
};
use domain::survey_response::{CaptureBatch, CapturedEvent, SurveyResponseService};
use domain::tenancy::PluginsAccessLevel;
use domain::testing::{CannedUpstream, WordAnalyzer, person_properties};
use domain::{DomainError, ValidationError};
use serde_json::json;
use uuid::Uuid;

use crate::stores::Stores;
use crate::survey_writes as writes;

fn targeting_filters() -> FlagFiltersPatch {
    let filters = json!({"groups": [{"properties": [], "rollout_percentage": 50}]});
    FlagFiltersPatch::parse(filters.as_object().expect("an object")).expect("valid filters")
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
        name: Patch::Value(SurveyName::parse(name).unwrap()),
        survey_type: Patch::Value(SurveyType::Popover),
        ..SurveyChanges::default()
    }
}

/// `BEGIN`, the survey with its flag and activity entry in one `WITH … INSERT`, `COMMIT`.
#[tokio::test]
async fn a_survey_create_with_a_targeting_filter_takes_three_statements() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let service = stores.survey_service();
    let changes = SurveyChanges {
        targeting_flag_filters: Some(targeting_filters()),
        ..named("NPS")
    };

    let (survey, statements) =
        statements_of(&db.database, create(&service, &stores, changes)).await;

    at_most(3, &statements);
    assert!(survey.targeting_flag.is_some() && survey.owns_targeting_flag);
    assert_eq!(
        stores.surveys.get(stores.project, survey.id).await.unwrap(),
        Some(survey)
    );
}

/// A transaction begins with its first statement: a create its planner refuses before any read
/// costs PostgreSQL nothing, not even a `BEGIN` and `ROLLBACK`.
#[tokio::test]
async fn a_create_refused_before_any_read_sends_no_statement() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let refuse = |_: &ReferencedFlags| Err(ValidationError::required("name").into());
    let create = writes::create(
        &*stores.surveys,
        stores.project,
        SurveyId::generate(),
        &stores.user,
        FlagReferences::default(),
        &refuse,
    );

    let (refused, statements) = statements_of(&db.database, create).await;

    assert!(
        matches!(refused, Err(DomainError::Invalid(_))),
        "{refused:?}"
    );
    assert_eq!(statements, Vec::<String>::new());
}

/// A survey named "NPS" linking `linked`, with targeting filters (so a targeting flag of its own).
fn linked_and_targeting(linked: FlagId) -> SurveyChanges {
    SurveyChanges {
        linked_flag_id: Patch::Value(linked),
        targeting_flag_filters: Some(targeting_filters()),
        ..named("NPS")
    }
}

/// A survey with a linked flag and a targeting flag of its own, and the flag it links.
async fn linked_and_targeted(service: &SurveyService, stores: &Stores) -> (Survey, FeatureFlag) {
    let linked = stores.flag("linked").await;
    let changes = linked_and_targeting(linked.id);
    (create(service, stores, changes).await, linked)
}

/// The read of the linked flag (sent with `BEGIN`, in one round trip) comes on top.
#[tokio::test]
async fn a_survey_create_with_a_linked_flag_and_targeting_filters_takes_four_statements() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let service = stores.survey_service();

    let linked = stores.flag("linked").await;
    let changes = linked_and_targeting(linked.id);

    let (survey, statements) =
        statements_of(&db.database, create(&service, &stores, changes)).await;

    at_most(4, &statements);
    assert_eq!(survey.linked_flag.map(|flag| flag.id), Some(linked.id));
    assert!(survey.targeting_flag.is_some() && survey.owns_targeting_flag);
}

/// A survey's writes stay prepared on their connection. Prepared afresh (diesel's default for an
/// `UPDATE`, and for an `INSERT` that writes `DEFAULT`), each would cost a round trip more and
/// PostgreSQL a parse and a plan on every run.
#[tokio::test]
async fn a_survey_create_and_rename_write_with_statements_kept_prepared() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let service = stores.survey_service();
    let linked = stores.flag("linked").await;
    let changes = linked_and_targeting(linked.id);

    let (survey, created) = recorded_of(&db.database, create(&service, &stores, changes)).await;
    let rename = SurveyChanges {
        name: Patch::Value(SurveyName::parse("Net promoter score").unwrap()),
        ..SurveyChanges::default()
    };
    let rename = service.update(stores.project, survey.id, stores.user.id, rename);
    let (renamed, renaming) = recorded_of(&db.database, rename).await;
    renamed.expect("renaming the survey");

    for recorded in [created, renaming] {
        let writes: Vec<&String> = recorded
            .statements
            .iter()
            .filter(|statement| statement.starts_with("WITH") || statement.starts_with("UPDATE"))
            .collect();
        assert!(!writes.is_empty(), "{:?}", recorded.statements);
        for write in writes {
            assert!(
                recorded.kept_prepared.contains(write),
                "prepared afresh on every run: {write}"
            );
        }
    }
}

#[tokio::test]
async fn renaming_a_survey_with_a_linked_and_a_targeting_flag_takes_four_statements() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let service = stores.survey_service();
    let (survey, linked) = linked_and_targeted(&service, &stores).await;
    let rename = SurveyChanges {
        name: Patch::Value(SurveyName::parse("Net promoter score").unwrap()),
        ..SurveyChanges::default()
    };

    let update = service.update(stores.project, survey.id, stores.user.id, rename);
    let (renamed, statements) = statements_of(&db.database, update).await;

    at_most(4, &statements);
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

#[tokio::test]
async fn a_patch_of_targeting_filters_takes_five_statements() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let service = stores.survey_service();
    let (survey, _) = linked_and_targeted(&service, &stores).await;
    let sent = json!({"groups": [{"properties": [], "rollout_percentage": 20}]});
    let retarget = SurveyChanges {
        targeting_flag_filters: Some(
            FlagFiltersPatch::parse(sent.as_object().expect("an object")).expect("valid"),
        ),
        ..SurveyChanges::default()
    };

    let update = service.update(stores.project, survey.id, stores.user.id, retarget);
    let (retargeted, statements) = statements_of(&db.database, update).await;

    at_most(5, &statements);
    let retargeted = retargeted.expect("changing the targeting filters");
    let flag = retargeted
        .targeting_flag
        .as_ref()
        .expect("the kept targeting flag");
    assert_eq!(Some(flag.id), survey.targeting_flag.map(|f| f.id));
    assert_eq!(flag.filters.groups[0].rollout(), 20.0);
    let stored = stores.surveys.get(stores.project, survey.id).await.unwrap();
    assert_eq!(stored, Some(retargeted));
}

/// A cold write, in plain diesel: the activity entry is a statement of its own after the files
/// (no `WITH` joining them), which is one more than the five the joined write took.
#[tokio::test]
async fn a_plugin_install_from_a_url_takes_six_statements() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let upstream = CannedUpstream::new();
    let manifest = json!({"name": "Hello", "config": [{"key": "greeting"}]}).to_string();
    upstream.publish(
        "v1.0.0",
        &[
            ("plugin.json", manifest.as_str()),
            (
                "index.js",
                "export function processEvent(event) { return event }",
            ),
            ("README.md", "# hi"),
        ],
    );
    let service = PluginService::new(
        Arc::clone(&stores.plugins),
        Arc::new(upstream),
        Arc::new(WordAnalyzer),
        PluginSettings::default(),
    );
    let access = PluginAccess {
        organization: stores.organization,
        organization_name: "Org".into(),
        level: PluginsAccessLevel::Install,
        user: stores.user.id,
    };
    let plugin = NewPlugin {
        url: Some("https://github.com/posthog/hello".into()),
        fields: PluginFields::default(),
    };

    let (installed, statements) =
        statements_of(&db.database, service.install(&access, plugin)).await;

    // The check that the URL is not installed yet, before the download; then the install.
    let (check, install) = statements.split_first().expect("statements were logged");
    assert!(
        check.starts_with("SELECT EXISTS"),
        "{}",
        statements.join("\n")
    );
    at_most(5, install);
    let installed = installed.expect("installing the plugin");
    assert_eq!(
        stores
            .plugins
            .get(stores.organization, installed.id)
            .await
            .unwrap(),
        Some(installed.clone())
    );
    let files = stores.plugins.source(installed.id).await.unwrap();
    assert_eq!(
        files.keys().map(String::as_str).collect::<Vec<_>>(),
        ["index.ts", "plugin.json"]
    );
}

/// What capturing `answers` survey answers in one batch costs, each from its own person and
/// `$set` on them, through the service; checks that all of them were stored.
async fn capture_statements(answers: usize) -> Recorded {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let surveys = Arc::new(stores.survey_service());
    let service = SurveyResponseService::new(Arc::clone(&stores.survey_responses), surveys);
    let events = (0..answers)
        .map(|n| CapturedEvent {
            event: "survey sent".into(),
            uuid: Some(Uuid::now_v7()),
            properties: json!({
                "distinct_id": format!("person-{n}"),
                "$survey_id": "survey",
                "$survey_response": n,
                "$set": {"$survey_responded/survey": true},
            })
            .as_object()
            .cloned()
            .expect("an object"),
            ..CapturedEvent::default()
        })
        .collect();
    let batch = CaptureBatch {
        events,
        sent_at: None,
    };

    let (stored, recorded) =
        recorded_of(&db.database, service.capture(stores.project, batch)).await;

    assert_eq!(stored.expect("capturing the batch"), answers);
    let last = person_properties(
        &*stores.persons,
        stores.project,
        &format!("person-{}", answers - 1),
    )
    .await
    .unwrap();
    assert_eq!(
        last,
        json!({"$survey_responded/survey": true})
            .as_object()
            .cloned()
            .unwrap()
    );
    recorded
}

#[tokio::test]
async fn capturing_one_event_takes_one_statement_without_begin_or_commit() {
    let Recorded {
        statements,
        kept_prepared,
    } = capture_statements(1).await;

    assert_eq!(statements.len(), 1, "{}", statements.join("\n"));
    // The whole capture is the one statement that writes events, kept prepared (so one round
    // trip: no `Parse` of its own).
    assert!(
        statements[0]
            .trim_start()
            .starts_with("WITH inserted AS (\n    INSERT INTO survey_events"),
        "{}",
        statements[0]
    );
    assert_eq!(kept_prepared, statements);
}

#[tokio::test]
async fn capturing_a_hundred_events_takes_one_statement() {
    let statements = capture_statements(100).await.statements;

    assert_eq!(statements.len(), 1, "{}", statements.join("\n"));
}
