//! The survey activity log and copies into other projects, over the in-memory fakes: every write
//! records who did what in the log of the survey's project, and a copy into several projects
//! is made everywhere or nowhere.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use domain::DomainError;
use domain::access::{AccessService, KeyLocation, PresentedKey, ProjectAccess};
use domain::admin::{AdminService, BootstrapRequest};
use domain::feature_flag::{FeatureFlagService, FlagFilters, FlagFiltersPatch, FlagKey, NewFlag};
use domain::patch::Patch;
use domain::ports::PageRequest;
use domain::survey::{
    Conditions, NewSurvey, Questions, Survey, SurveyChanges, SurveyName, SurveyRepository,
    SurveyService, SurveyType,
};
use domain::tenancy::{PluginsAccessLevel, ProjectId, TenantRef, UserBasic};
use domain::testing::{InMemoryStore, TimedMemories};
use serde_json::{Map, Value, json};

struct World {
    store: InMemoryStore,
    surveys: SurveyService,
    flags: FeatureFlagService,
    /// Ada's first project, as her key reaches it.
    home: ProjectAccess,
    /// A second project of Ada's organization.
    second: ProjectAccess,
    /// A third one.
    third: ProjectAccess,
    user: UserBasic,
}

async fn world() -> World {
    let store = InMemoryStore::new();
    let access = AccessService::new(
        Arc::new(store.clone()),
        Arc::new(store.clone()),
        Duration::ZERO,
        &TimedMemories,
    );
    let admin = AdminService::new(Arc::new(store.clone()), Arc::new(store.clone()));
    let ada = admin
        .bootstrap(BootstrapRequest {
            email: "ada@example.com".into(),
            first_name: "Ada".into(),
            organization_name: "Org".into(),
            project_name: "Home".into(),
            scopes: vec!["*".into()],
            plugins_access_level: PluginsAccessLevel::Root,
        })
        .await
        .unwrap();
    let organization = ada.record.organization.id;
    let mut ids = vec![ada.record.project.id];
    for name in ["Second", "Third"] {
        ids.push(admin.create_project(organization, name).await.unwrap().id);
    }
    let principal = access
        .authenticate(Some(PresentedKey {
            key: ada.key,
            location: KeyLocation::Header,
        }))
        .await
        .unwrap();
    let mut cleared = access.projects(&principal, &ids).await.unwrap();
    let third = cleared.pop().unwrap();
    let second = cleared.pop().unwrap();
    let home = cleared.pop().unwrap();
    assert_eq!(
        home.project.id,
        access
            .project(principal.clone(), TenantRef::Id(ids[0]))
            .await
            .unwrap()
            .project
            .id
    );
    World {
        surveys: SurveyService::new(Arc::new(store.clone()), Arc::new(store.clone())),
        flags: FeatureFlagService::new(Arc::new(store.clone()), Arc::new(store.clone())),
        store,
        home,
        second,
        third,
        user: UserBasic::from(&ada.record.user),
    }
}

fn all() -> PageRequest {
    PageRequest {
        limit: 100,
        offset: 0,
    }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn targeting() -> Map<String, Value> {
    object(
        json!({"groups": [{"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}], "rollout_percentage": 50}]}),
    )
}

impl World {
    async fn create_in(&self, project: ProjectId, name: &str) -> Survey {
        self.create_with(project, name, SurveyChanges::default())
            .await
    }

    async fn create_with(&self, project: ProjectId, name: &str, changes: SurveyChanges) -> Survey {
        let survey = NewSurvey::new(SurveyChanges {
            name: Patch::Value(SurveyName::parse(name).unwrap()),
            survey_type: Patch::Value(SurveyType::Popover),
            ..changes
        })
        .unwrap();
        self.surveys
            .create(project, &self.user, survey)
            .await
            .unwrap()
    }

    /// The `(activity, item_id)` of the project's log, newest first.
    async fn log(&self, project: ProjectId) -> Vec<(String, String)> {
        self.surveys
            .activity(project, None, all())
            .await
            .unwrap()
            .entries
            .into_iter()
            .map(|entry| (entry.activity, entry.item_id))
            .collect()
    }

    async fn names(&self, project: ProjectId) -> Vec<String> {
        let mut names: Vec<String> =
            SurveyRepository::list(&self.store, project, &Default::default(), all())
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|survey| survey.state.name)
                .collect();
        names.sort();
        names
    }
}

#[tokio::test]
async fn create_update_and_delete_are_logged_newest_first_with_the_user_and_the_changes() {
    let world = world().await;
    let home = world.home.project.id;
    let survey = world.create_in(home, "Onboarding").await;
    let id = survey.id.0.to_string();
    world
        .surveys
        .update(
            home,
            survey.id,
            world.user.id,
            SurveyChanges {
                name: Patch::Value(SurveyName::parse("Renamed").unwrap()),
                archived: Some(true),
                ..SurveyChanges::default()
            },
        )
        .await
        .unwrap();
    world
        .surveys
        .update(
            home,
            survey.id,
            world.user.id,
            SurveyChanges {
                archived: Some(true),
                ..SurveyChanges::default()
            },
        )
        .await
        .unwrap();
    world
        .surveys
        .delete(home, survey.id, world.user.id)
        .await
        .unwrap();

    let page = world.surveys.activity(home, None, all()).await.unwrap();
    assert_eq!(
        page.total, 3,
        "an update that changes nothing is not logged"
    );
    let shown: Vec<(&str, &str)> = page
        .entries
        .iter()
        .map(|e| (e.activity.as_str(), e.item_id.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("deleted", id.as_str()),
            ("updated", id.as_str()),
            ("created", id.as_str())
        ]
    );
    for entry in &page.entries {
        assert_eq!(entry.scope, "Survey");
        assert_eq!(
            entry.user,
            Some(("Ada".to_owned(), "ada@example.com".to_owned()))
        );
    }
    let [deleted, updated, created] = &page.entries[..] else {
        panic!("three entries");
    };
    assert_eq!(
        created.detail,
        json!({"name": "Onboarding", "changes": null})
    );
    assert_eq!(
        updated.detail,
        json!({"name": "Renamed", "changes": [
            {"type": "Survey", "action": "changed", "field": "name", "before": "Onboarding", "after": "Renamed"},
            {"type": "Survey", "action": "changed", "field": "archived", "before": false, "after": true},
        ]})
    );
    assert_eq!(deleted.detail, json!({"name": "Renamed", "changes": null}));
}

#[tokio::test]
async fn a_failed_write_logs_nothing() {
    let world = world().await;
    let home = world.home.project.id;
    world.create_in(home, "Taken").await;
    let other = world.create_in(home, "Other").await;
    let refused = world
        .surveys
        .update(
            home,
            other.id,
            world.user.id,
            SurveyChanges {
                name: Patch::Value(SurveyName::parse("Taken").unwrap()),
                ..SurveyChanges::default()
            },
        )
        .await;
    assert!(matches!(refused, Err(DomainError::Invalid(_))));
    let missing = world
        .surveys
        .delete(home, domain::survey::SurveyId::generate(), world.user.id)
        .await;
    assert!(matches!(missing, Err(DomainError::NotFound)));
    assert_eq!(world.log(home).await.len(), 2, "two creates only");
}

#[tokio::test]
async fn a_surveys_log_is_its_own_entries_and_a_projects_log_is_its_own_surveys() {
    let world = world().await;
    let (home, second) = (world.home.project.id, world.second.project.id);
    let first = world.create_in(home, "First").await;
    let other = world.create_in(home, "Other").await;
    let elsewhere = world.create_in(second, "Elsewhere").await;

    let own = world
        .surveys
        .activity(home, Some(first.id), all())
        .await
        .unwrap();
    assert_eq!(own.total, 1);
    assert_eq!(own.entries[0].item_id, first.id.0.to_string());
    assert_eq!(world.log(home).await.len(), 2);
    assert_eq!(
        world.log(second).await,
        [("created".to_owned(), elsewhere.id.0.to_string())]
    );
    let foreign = world
        .surveys
        .activity(home, Some(elsewhere.id), all())
        .await;
    assert!(matches!(foreign, Err(DomainError::NotFound)));

    world
        .surveys
        .delete(home, other.id, world.user.id)
        .await
        .unwrap();
    let gone = world.surveys.activity(home, Some(other.id), all()).await;
    assert!(
        matches!(gone, Err(DomainError::NotFound)),
        "a deleted survey's own log is not found"
    );
    assert_eq!(
        world.log(home).await,
        [
            ("deleted".to_owned(), other.id.0.to_string()),
            ("created".to_owned(), other.id.0.to_string()),
            ("created".to_owned(), first.id.0.to_string()),
        ],
        "but its entries stay in the project's log"
    );
}

#[tokio::test]
async fn the_log_is_paged_with_its_total() {
    let world = world().await;
    let home = world.home.project.id;
    for n in 0..5 {
        world.create_in(home, &format!("Survey {n}")).await;
    }
    let page = world
        .surveys
        .activity(
            home,
            None,
            PageRequest {
                limit: 2,
                offset: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.total, 5);
    let names: Vec<&Value> = page.entries.iter().map(|e| &e.detail["name"]).collect();
    assert_eq!(names, [&json!("Survey 2"), &json!("Survey 1")]);
}

#[tokio::test]
async fn a_survey_is_copied_into_every_target_as_a_draft_created_by_the_caller() {
    let world = world().await;
    let home = world.home.project.id;
    let linked = world
        .flags
        .create(
            home,
            &world.user,
            NewFlag {
                key: FlagKey::parse("linked").unwrap(),
                name: String::new(),
                filters: FlagFilters::default(),
                active: true,
                ensure_experience_continuity: false,
                is_remote_configuration: false,
            },
        )
        .await
        .unwrap();
    let source = world
        .create_with(
            home,
            "Onboarding",
            SurveyChanges {
                description: Patch::Value("Why we ask".into()),
                linked_flag_id: Patch::Value(linked.id),
                targeting_flag_filters: Some(FlagFiltersPatch::parse(&targeting()).unwrap()),
                questions: Patch::Value(
                    Questions::parse(json!([{"type": "open", "question": "Why?"}])).unwrap(),
                ),
                conditions: Patch::Value(
                    Conditions::parse(
                        json!({"url": "/welcome", "events": {"values": [{"name": "x"}]}}),
                    )
                    .unwrap(),
                ),
                start_date: Patch::Value(Utc::now()),
                iteration_count: Patch::Value(2),
                iteration_frequency_days: Patch::Value(7),
                ..SurveyChanges::default()
            },
        )
        .await;
    let copies = world
        .surveys
        .duplicate_to_projects(
            &source,
            &world.user,
            &[
                world.second.clone(),
                world.third.clone(),
                world.second.clone(),
            ],
        )
        .await
        .unwrap();
    assert_eq!(copies.len(), 2, "a target named twice gets one copy");
    let projects: Vec<ProjectId> = copies.iter().map(|c| c.project_id).collect();
    assert_eq!(projects, [world.second.project.id, world.third.project.id]);
    for copy in &copies {
        let stored = world.surveys.get(copy.project_id, copy.id).await.unwrap();
        assert_eq!(&stored, copy);
        assert!(
            copy.state.name.starts_with("Onboarding (duplicated at "),
            "{}",
            copy.state.name
        );
        assert_ne!(copy.id, source.id);
        assert_eq!(copy.state.description, "Why we ask");
        assert_eq!(copy.state.start_date, None);
        assert_eq!(copy.state.linked_flag_id, None);
        assert_eq!(copy.state.iteration_count, Some(2));
        assert_eq!(
            serde_json::to_value(&copy.state.conditions).unwrap(),
            json!({"url": "/welcome"})
        );
        assert_eq!(copy.created_by.as_ref().unwrap().id, world.user.id);
        let flag = copy.targeting_flag.as_ref().expect("a targeting flag");
        assert_eq!(flag.project_id, copy.project_id);
        assert_ne!(Some(flag.id), source.targeting_flag.as_ref().map(|f| f.id));
        assert_eq!(
            flag.filters,
            source.targeting_flag.as_ref().unwrap().filters
        );
        assert!(copy.owns_targeting_flag);
        assert!(!flag.active, "a draft's flag does not serve");

        let log = world
            .surveys
            .activity(copy.project_id, None, all())
            .await
            .unwrap();
        assert_eq!(log.total, 1);
        assert_eq!(log.entries[0].activity, "created");
        assert_eq!(log.entries[0].item_id, copy.id.0.to_string());
        assert_eq!(
            log.entries[0].detail["changes"][0]["after"],
            source.id.0.to_string()
        );
    }
    assert_eq!(
        world.names(home).await,
        ["Onboarding"],
        "the source project is untouched"
    );
}

#[tokio::test]
async fn a_copy_whose_name_is_taken_gets_a_counter() {
    let world = world().await;
    let (home, second) = (world.home.project.id, world.second.project.id);
    let source = world.create_in(home, "Onboarding").await;
    let now = Utc::now();
    // PostHog's name for a copy made within the next seconds, all taken.
    for seconds in 0..3 {
        let at = now + TimeDelta::seconds(seconds);
        world
            .create_in(
                second,
                &format!(
                    "Onboarding (duplicated at {})",
                    at.format("%Y-%m-%d %H:%M:%S")
                ),
            )
            .await;
    }
    let copies = world
        .surveys
        .duplicate_to_projects(&source, &world.user, std::slice::from_ref(&world.second))
        .await
        .unwrap();
    let name = &copies[0].state.name;
    assert!(
        name.starts_with("Onboarding (duplicated at ") && name.ends_with(") (2)"),
        "{name}"
    );
    assert_eq!(world.names(second).await.len(), 4);
}

#[tokio::test]
async fn copying_into_the_source_project_adds_a_copy_beside_it() {
    let world = world().await;
    let home = world.home.project.id;
    let source = world.create_in(home, "Onboarding").await;
    let copies = world
        .surveys
        .duplicate_to_projects(&source, &world.user, std::slice::from_ref(&world.home))
        .await
        .unwrap();
    assert_eq!(copies.len(), 1);
    assert_eq!(world.names(home).await.len(), 2);
    assert_eq!(
        world.log(home).await[0],
        ("created".to_owned(), copies[0].id.0.to_string())
    );
}
