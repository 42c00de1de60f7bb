//! A project's `survey_config` over the in-memory fakes: PATCH's merge, its bound and its
//! activity entry, and the project-wide wait it sets reaching every survey's internal
//! targeting flag, enforced across a person's devices by the last-seen date capture stores.

use std::sync::Arc;

use chrono::{Duration, Utc};
use domain::DomainError;
use domain::patch::Patch;
use domain::ports::PageRequest;
use domain::sdk::{
    Evaluated, FlagsRequest, SdkService, SdkSnapshot, SnapshotSettings, SnapshotSources,
};
use domain::survey::{
    NewSurvey, Questions, Survey, SurveyChanges, SurveyName, SurveyService, SurveyType,
};
use domain::survey_response::{CapturedEvent, SurveyResponseService};
use domain::tenancy::{
    MAX_SURVEY_CONFIG_BYTES, ProjectChanges, ProjectId, ProjectService, SurveyConfig, UserId,
};
use domain::testing::{InMemoryStore, InPlaceSlots, TimedMemories, someone};
use serde_json::{Value, json};

#[path = "support/bootstrap_ada.rs"]
mod bootstrap_ada;
#[path = "support/capture_batch.rs"]
mod capture_batch;

use bootstrap_ada::bootstrap_ada;
use capture_batch::capture_batch;

struct World {
    projects: ProjectService,
    surveys: Arc<SurveyService>,
    responses: SurveyResponseService,
    sdk: SdkService<()>,
    project: ProjectId,
    user: UserId,
    token: String,
}

async fn world() -> World {
    let store = InMemoryStore::new();
    let made = bootstrap_ada(&store).await;
    let surveys = Arc::new(SurveyService::new(
        Arc::new(store.clone()),
        Arc::new(store.clone()),
    ));
    let sdk = SdkService::new(
        SnapshotSources {
            tenancy: Arc::new(store.clone()),
            flags: Arc::new(store.clone()),
            cohorts: Arc::new(store.clone()),
            groups: Arc::new(store.clone()),
            surveys: surveys.clone(),
            persons: Arc::new(store.clone()),
            patterns: Arc::new(domain::testing::CompiledEachTime),
            slots: Arc::new(InPlaceSlots),
        },
        // Storage read on every request, as a node that cannot hear changes does.
        SnapshotSettings {
            enabled: false,
            budget_bytes: 0,
        },
        &TimedMemories,
    );
    World {
        projects: ProjectService::new(Arc::new(store.clone())),
        responses: SurveyResponseService::new(Arc::new(store.clone()), surveys.clone()),
        surveys,
        sdk,
        project: made.record.project.id,
        user: made.record.user.id,
        token: made.record.project.api_token,
    }
}

fn config(value: Value) -> SurveyConfig {
    SurveyConfig::parse(value).unwrap()
}

impl World {
    async fn set(&self, survey_config: Patch<SurveyConfig>) -> Result<Value, DomainError> {
        let project = self
            .projects
            .update(self.project, self.user, ProjectChanges { survey_config })
            .await?;
        Ok(project
            .survey_config
            .map_or(Value::Null, |config| Value::Object(config.into_map())))
    }

    /// The project's survey activity, newest first: each entry's item, activity and detail.
    async fn activity(&self) -> Vec<(String, String, Value)> {
        let page = PageRequest {
            limit: 100,
            offset: 0,
        };
        self.surveys
            .activity(self.project, None, page)
            .await
            .unwrap()
            .entries
            .into_iter()
            .map(|entry| (entry.item_id, entry.activity, entry.detail))
            .collect()
    }

    /// A running popover survey, with `conditions` if any.
    async fn survey(&self, name: &str, conditions: Option<Value>) -> Survey {
        let changes = SurveyChanges {
            name: Patch::Value(SurveyName::parse(name).unwrap()),
            survey_type: Patch::Value(SurveyType::Popover),
            questions: Patch::Value(
                Questions::parse(json!([{"type": "open", "question": "Why?"}])).unwrap(),
            ),
            conditions: conditions.map_or(Patch::Absent, |conditions| {
                Patch::Value(domain::survey::Conditions::parse(conditions).unwrap())
            }),
            start_date: Patch::Value(Utc::now() - Duration::days(1)),
            ..SurveyChanges::default()
        };
        self.surveys
            .create(
                self.project,
                &someone(self.user),
                NewSurvey::new(changes).unwrap(),
            )
            .await
            .unwrap()
    }

    /// `survey shown` for `survey`, captured from `person`'s device `days_ago`.
    async fn shown(&self, person: &str, survey: &Survey, days_ago: i64) {
        let event = CapturedEvent {
            event: "survey shown".into(),
            distinct_id: Some(person.into()),
            timestamp: Some(Utc::now() - Duration::days(days_ago)),
            properties: json!({"$survey_id": survey.id.0.to_string()})
                .as_object()
                .unwrap()
                .clone(),
            ..CapturedEvent::default()
        };
        capture_batch(&self.responses, self.project, vec![event]).await;
    }

    /// Whether `/flags` has `survey`'s internal targeting flag on for `person`, sending no
    /// person property (another device of theirs).
    async fn targeted(&self, survey: &Survey, person: &str) -> bool {
        let snapshot = self.sdk.snapshot(Some(&self.token)).await.unwrap();
        let key = survey.internal_targeting_flag_key();
        let request = FlagsRequest {
            distinct_id: person.to_owned(),
            ..FlagsRequest::default()
        };
        let on = move |_: &SdkSnapshot<()>, evaluated: Evaluated| {
            evaluated
                .flags
                .into_iter()
                .flatten()
                .find(|flag| flag.key == key)
                .map(|flag| flag.enabled)
        };
        self.sdk
            .answer_flags(snapshot, request, on)
            .await
            .unwrap()
            .expect("the survey's flag is answered")
    }
}

#[tokio::test]
async fn a_sent_config_is_merged_onto_the_stored_one_and_null_clears_it() {
    let world = world().await;
    assert_eq!(world.set(Patch::Absent).await.unwrap(), Value::Null);
    assert_eq!(
        world
            .set(Patch::Value(config(json!({"appearance": {"a": 1}}))))
            .await
            .unwrap(),
        json!({"appearance": {"a": 1}})
    );
    assert_eq!(
        world
            .set(Patch::Value(config(
                json!({"seenSurveyWaitPeriodInDays": 7})
            )))
            .await
            .unwrap(),
        json!({"appearance": {"a": 1}, "seenSurveyWaitPeriodInDays": 7})
    );
    assert_eq!(
        world.set(Patch::Absent).await.unwrap(),
        json!({"appearance": {"a": 1}, "seenSurveyWaitPeriodInDays": 7}),
        "nothing sent, nothing changed"
    );
    assert_eq!(world.set(Patch::Null).await.unwrap(), Value::Null);
}

#[tokio::test]
async fn a_change_is_logged_in_the_survey_activity_as_posthog_logs_it() {
    let world = world().await;
    world
        .set(Patch::Value(config(json!({"appearance": {"a": 1}}))))
        .await
        .unwrap();
    world
        .set(Patch::Value(config(
            json!({"appearance": {"a": 2}, "seenSurveyWaitPeriodInDays": 7}),
        )))
        .await
        .unwrap();
    // The same config again, and a clear: PostHog logs neither.
    world
        .set(Patch::Value(config(
            json!({"seenSurveyWaitPeriodInDays": 7}),
        )))
        .await
        .unwrap();
    world.set(Patch::Null).await.unwrap();
    let change = |action: &str, field: &str, before: Value, after: Value| {
        json!({"type": "Survey", "action": action, "field": field,
               "before": before, "after": after})
    };
    assert_eq!(
        world.activity().await,
        vec![
            (
                String::new(),
                "updated".to_owned(),
                json!({"name": "global survey appearance", "changes": [
                    change("changed", "appearance", json!({"a": 1}), json!({"a": 2})),
                    change("created", "seenSurveyWaitPeriodInDays", Value::Null, json!(7)),
                ]})
            ),
            (
                String::new(),
                "updated".to_owned(),
                json!({"name": "global survey appearance", "changes": [
                    change("created", "appearance", Value::Null, json!({"a": 1})),
                ]})
            ),
        ]
    );
}

#[tokio::test]
async fn a_merged_config_past_its_bound_is_refused_and_nothing_is_written() {
    let world = world().await;
    let half = "x".repeat(MAX_SURVEY_CONFIG_BYTES / 2);
    world
        .set(Patch::Value(config(json!({"a": half}))))
        .await
        .unwrap();
    let refused = world
        .set(Patch::Value(config(json!({"b": half}))))
        .await
        .unwrap_err();
    let DomainError::Invalid(error) = refused else {
        panic!("a validation error, not {refused:?}");
    };
    assert_eq!(
        (error.attr.as_deref(), error.code.as_str()),
        (Some("survey_config"), "max_length")
    );
    assert_eq!(world.set(Patch::Absent).await.unwrap(), json!({"a": half}));
    assert_eq!(world.activity().await.len(), 1);
}

#[tokio::test]
async fn a_missing_project_is_not_found() {
    let world = world().await;
    let missing = world
        .projects
        .update(
            ProjectId(404),
            world.user,
            ProjectChanges {
                survey_config: Patch::Null,
            },
        )
        .await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
}

#[tokio::test]
async fn a_survey_seen_on_one_device_holds_the_others_on_another_for_the_projects_wait() {
    let world = world().await;
    let seen = world.survey("Seen first", None).await;
    let next = world.survey("Asked next", None).await;
    world.shown("p", &seen, 2).await;
    assert!(
        world.targeted(&next, "p").await,
        "no wait: having seen a survey does not matter"
    );

    world
        .set(Patch::Value(config(
            json!({"seenSurveyWaitPeriodInDays": 14}),
        )))
        .await
        .unwrap();
    assert!(!world.targeted(&next, "p").await, "seen 2 days ago");
    assert!(!world.targeted(&seen, "p").await);
    assert!(world.targeted(&next, "q").await, "never saw a survey");
    world.shown("q", &seen, 20).await;
    assert!(world.targeted(&next, "q").await, "seen 20 days ago");
    // An older event arriving later does not move the date back.
    world.shown("p", &seen, 30).await;
    assert!(!world.targeted(&next, "p").await);

    // A survey's own longer wait holds past the project's.
    let patient = world
        .survey("Patient", Some(json!({"seenSurveyWaitPeriodInDays": 30})))
        .await;
    assert!(!world.targeted(&patient, "q").await, "20 days is not 30");

    world.set(Patch::Null).await.unwrap();
    assert!(world.targeted(&next, "p").await, "the wait cleared");
    assert!(!world.targeted(&patient, "q").await, "its own wait stays");
}
