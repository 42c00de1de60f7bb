//! Cohorts over the in-memory fakes: their filters as PostHog checks them, the nesting a write
//! may make, what a flag filtering by one is evaluated to, and a cohort in use staying.

use std::sync::Arc;

use chrono::Utc;
use domain::DomainError;
use domain::cohort::{
    CohortChanges, CohortFilters, CohortId, CohortService, MAX_COHORT_DEPTH, NamedPersons,
    NewCohort,
};
use domain::feature_flag::{FeatureFlagService, FlagFilters, FlagKey, NewFlag};
use domain::sdk::{
    Evaluated, FlagsRequest, SdkService, SdkSnapshot, SentProperties, SnapshotSettings,
    SnapshotSources,
};
use domain::survey::SurveyService;
use domain::tenancy::{OrganizationId, Project, ProjectId, UserBasic, UserId};
use domain::testing::{CompiledEachTime, InMemoryStore, InPlaceSlots, TimedMemories, someone};
use serde_json::{Value, json};

const PROJECT: ProjectId = ProjectId(1);

fn user() -> UserBasic {
    someone(UserId(1))
}

struct World {
    store: InMemoryStore,
    cohorts: CohortService,
    flags: FeatureFlagService,
}

impl World {
    fn new() -> Self {
        let store = InMemoryStore::new();
        Self {
            cohorts: CohortService::new(Arc::new(store.clone()), Arc::new(store.clone())),
            flags: FeatureFlagService::new(Arc::new(store.clone()), Arc::new(store.clone())),
            store,
        }
    }

    async fn cohort(&self, properties: Value) -> Result<CohortId, DomainError> {
        let filters = CohortFilters::parse(&json!({"properties": properties}))?;
        let cohort = NewCohort {
            name: "Cohort".into(),
            description: String::new(),
            filters,
            is_static: false,
        };
        Ok(self
            .cohorts
            .create(PROJECT, &user(), cohort, Vec::new())
            .await?
            .cohort
            .id)
    }

    async fn flag(&self, key: &str, filters: Value) -> Result<(), DomainError> {
        let flag = NewFlag {
            key: FlagKey::parse(key).unwrap(),
            name: String::new(),
            filters: FlagFilters::parse(filters)?,
            active: true,
            ensure_experience_continuity: false,
            is_remote_configuration: false,
        };
        self.flags.create(PROJECT, &user(), flag).await.map(|_| ())
    }

    /// Each flag's key and whether it is on for a person with `properties`, as `/flags` answers.
    async fn evaluate(&self, properties: Value) -> Vec<(String, bool)> {
        let sdk = SdkService::<()>::new(
            SnapshotSources {
                tenancy: Arc::new(self.store.clone()),
                flags: Arc::new(self.store.clone()),
                cohorts: Arc::new(self.store.clone()),
                groups: Arc::new(self.store.clone()),
                surveys: Arc::new(SurveyService::new(
                    Arc::new(self.store.clone()),
                    Arc::new(self.store.clone()),
                )),
                persons: Arc::new(self.store.clone()),
                patterns: Arc::new(CompiledEachTime),
                slots: Arc::new(InPlaceSlots),
            },
            SnapshotSettings {
                enabled: false,
                budget_bytes: 0,
            },
            &TimedMemories,
        );
        let project = Project {
            id: PROJECT,
            organization_id: OrganizationId(uuid::Uuid::nil()),
            name: "Project".into(),
            api_token: "phc_1".into(),
            created_at: Utc::now(),
            survey_config: None,
        };
        let snapshot = Arc::new(sdk.build(project).await.unwrap());
        let Value::Object(properties) = properties else {
            panic!("properties are an object")
        };
        let request = FlagsRequest {
            distinct_id: "someone".to_owned(),
            person_properties: SentProperties::parse("person_properties", properties).unwrap(),
            ..FlagsRequest::default()
        };
        let on = |_: &SdkSnapshot<()>, evaluated: Evaluated| {
            evaluated
                .flags
                .into_iter()
                .flatten()
                .map(|e| (e.key.to_owned(), e.enabled))
                .collect()
        };
        sdk.answer_flags(snapshot, request, on).await.unwrap()
    }
}

fn in_cohort(id: CohortId, operator: &str) -> Value {
    json!({"groups": [{"properties": [
        {"key": "id", "type": "cohort", "value": id.0, "operator": operator}]}]})
}

fn person(key: &str, operator: &str, value: Value) -> Value {
    json!({"key": key, "type": "person", "operator": operator, "value": value})
}

fn refusal(error: DomainError) -> (Option<String>, String, &'static str) {
    match error {
        DomainError::Invalid(error) => (error.attr, error.detail, error.code.as_str()),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_flag_filtering_by_a_cohort_serves_its_members_nested_cohorts_and_negations_included() {
    let world = World::new();
    let paying = world
        .cohort(json!({"type": "OR", "values": [
            {"type": "AND", "values": [person("plan", "exact", json!(["pro", "team"]))]},
            {"type": "AND", "values": [person("seats", "gt", json!("10"))]}]}))
        .await
        .unwrap();
    // Paying, and not staff (a negated filter), and not in a cohort of testers.
    let testers = world
        .cohort(json!({"type": "AND", "values": [person("email", "icontains", json!("test"))]}))
        .await
        .unwrap();
    let customers = world
        .cohort(json!({"type": "AND", "values": [
            {"key": "id", "type": "cohort", "value": paying.0},
            {"key": "id", "type": "cohort", "value": testers.0, "negation": true},
            {"key": "email", "type": "person", "operator": "icontains", "value": "@staff.", "negation": true}]}))
        .await
        .unwrap();
    world
        .flag("for-customers", in_cohort(customers, "in"))
        .await
        .unwrap();
    world
        .flag("not-for-customers", in_cohort(customers, "not_in"))
        .await
        .unwrap();

    let cases = [
        (json!({"plan": "pro", "email": "a@shop.example"}), true),
        (
            json!({"plan": "free", "seats": "12", "email": "b@shop.example"}),
            true,
        ),
        (
            json!({"plan": "free", "seats": "3", "email": "c@shop.example"}),
            false,
        ),
        (json!({"plan": "pro", "email": "test@shop.example"}), false),
        (json!({"plan": "team", "email": "d@staff.example"}), false),
    ];
    for (properties, member) in cases {
        let values = world.evaluate(properties.clone()).await;
        assert_eq!(
            values,
            vec![
                ("for-customers".to_owned(), member),
                ("not-for-customers".to_owned(), !member)
            ],
            "{properties}"
        );
    }
}

#[tokio::test]
async fn filters_are_checked_with_posthogs_messages() {
    let parse = |filters: Value| {
        CohortFilters::parse(&filters)
            .map(|_| ())
            .map_err(|e| e.detail)
    };
    assert_eq!(
        parse(json!({"groups": []})).unwrap_err(),
        "Must contain a 'properties' key with type and values"
    );
    assert_eq!(
        parse(json!({"properties": {"type": "AND", "values": [
            {"type": "person", "key": "plan", "value": "pro"}]}}))
        .unwrap_err(),
        "Missing required keys for person filter: operator"
    );
    assert_eq!(
        parse(json!({"properties": {"type": "AND", "values": [
            {"type": "person", "key": "plan"}]}}))
        .unwrap_err(),
        "Missing required keys for person filter: value, operator"
    );
    assert!(
        parse(json!({"properties": {"type": "AND", "values": [
        {"type": "person", "key": "plan", "operator": "is_set"}]}}))
        .is_ok()
    );
    assert!(
        parse(json!({"properties": {"type": "AND", "values": [
            {"type": "behavioral", "key": "$pageview", "value": "performed_event", "event_type": "events"}]}}))
        .unwrap_err()
        .contains("not their events")
    );
    // Person filters are checked as a flag's are: a regex that cannot compile, or a number
    // where text is compared, would never match.
    assert!(
        parse(json!({"properties": {"type": "AND", "values": [
            {"type": "person", "key": "email", "operator": "regex", "value": "(unclosed"}]}}))
        .unwrap_err()
        .starts_with("Invalid regular expression")
    );
    assert_eq!(
        parse(json!({"properties": {"type": "AND", "values": [
            {"type": "person", "key": "seats", "operator": "gt", "value": 3}]}}))
        .unwrap_err(),
        "Invalid value for operator gt: 3"
    );
    // Bounded: nesting, and filters in all.
    let mut deep = json!({"type": "AND", "values": []});
    for _ in 0..6 {
        deep = json!({"type": "AND", "values": [deep]});
    }
    assert!(
        parse(json!({"properties": deep}))
            .unwrap_err()
            .contains("nest at most")
    );
    let many: Vec<Value> = (0..101)
        .map(|n| person("p", "exact", json!(n.to_string())))
        .collect();
    assert!(
        parse(json!({"properties": {"type": "OR", "values": many}}))
            .unwrap_err()
            .contains("at most 100 filters")
    );
}

#[tokio::test]
async fn nested_cohorts_must_exist_and_never_loop() {
    let world = World::new();
    let (attr, detail, code) = refusal(
        world
            .cohort(
                json!({"type": "AND", "values": [{"key": "id", "type": "cohort", "value": 77}]}),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (attr.as_deref(), code),
        (Some("filters"), "cohort_does_not_exist")
    );
    assert_eq!(detail, "Cohort with id 77 does not exist");

    let base = world
        .cohort(json!({"type": "AND", "values": [person("plan", "exact", json!("pro"))]}))
        .await
        .unwrap();
    let outer = world
        .cohort(
            json!({"type": "AND", "values": [{"key": "id", "type": "cohort", "value": base.0}]}),
        )
        .await
        .unwrap();
    let back_to_outer = CohortFilters::parse(&json!({"properties": {"type": "AND", "values": [
        {"key": "id", "type": "cohort", "value": outer.0}]}}))
    .unwrap();
    let (_, detail, _) = refusal(
        world
            .cohorts
            .update(
                PROJECT,
                base,
                CohortChanges {
                    filters: Some(back_to_outer),
                    ..CohortChanges::default()
                },
                Vec::new(),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(detail, "Cohorts cannot reference other cohorts in a loop.");

    let mut last = base;
    for _ in 1..MAX_COHORT_DEPTH {
        last = world
            .cohort(json!({"type": "AND", "values": [{"key": "id", "type": "cohort", "value": last.0}]}))
            .await
            .unwrap();
    }
    let (_, detail, _) = refusal(
        world
            .cohort(json!({"type": "AND", "values": [{"key": "id", "type": "cohort", "value": last.0}]}))
            .await
            .unwrap_err(),
    );
    assert!(
        detail.starts_with("Cohorts may nest at most 10 deep"),
        "{detail}"
    );
}

#[tokio::test]
async fn a_flag_names_cohorts_of_its_project_and_a_cohort_in_use_is_not_deleted() {
    let world = World::new();
    let (attr, detail, code) = refusal(
        world
            .flag("vip", in_cohort(CohortId(404), "in"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (attr.as_deref(), code),
        (Some("filters"), "cohort_does_not_exist")
    );
    assert_eq!(detail, "Cohort with id 404 does not exist");

    let vips = world
        .cohort(json!({"type": "AND", "values": [person("plan", "exact", json!("vip"))]}))
        .await
        .unwrap();
    world.flag("vip", in_cohort(vips, "in")).await.unwrap();
    let deletion = CohortChanges {
        deleted: Some(true),
        ..CohortChanges::default()
    };
    let (attr, detail, _) = refusal(
        world
            .cohorts
            .update(PROJECT, vips, deletion.clone(), Vec::new())
            .await
            .unwrap_err(),
    );
    assert_eq!(attr, None);
    assert_eq!(
        detail,
        "This cohort is used in 1 active feature flag(s): vip. Please remove the cohort from \
         these feature flags before deleting it."
    );
    assert!(world.cohorts.get(PROJECT, vips).await.is_ok());
}

/// A static cohort's filters are empty, which would match everyone: a flag naming it, directly
/// or through a dynamic cohort, is on for the persons it lists only.
#[tokio::test]
async fn a_flag_filtering_by_a_static_cohort_is_on_for_its_members_only() {
    let world = World::new();
    let listed = |ids: &[&str]| {
        vec![NamedPersons::DistinctIds(
            ids.iter().map(|id| (*id).to_owned()).collect(),
        )]
    };
    let beta = NewCohort {
        name: "Beta".into(),
        description: String::new(),
        filters: CohortFilters::empty(),
        is_static: true,
    };
    let beta = world
        .cohorts
        .create(PROJECT, &user(), beta, listed(&["someone-else"]))
        .await
        .unwrap()
        .cohort
        .id;
    let nesting = world
        .cohort(
            json!({"type": "AND", "values": [{"key": "id", "type": "cohort", "value": beta.0}]}),
        )
        .await
        .unwrap();
    world.flag("beta", in_cohort(beta, "in")).await.unwrap();
    world
        .flag("nested", in_cohort(nesting, "in"))
        .await
        .unwrap();
    let mut answers = world.evaluate(json!({})).await;
    answers.sort();
    assert_eq!(answers, [("beta".into(), false), ("nested".into(), false)]);

    world
        .cohorts
        .update(
            PROJECT,
            beta,
            CohortChanges::default(),
            listed(&["someone"]),
        )
        .await
        .unwrap();
    let mut answers = world.evaluate(json!({})).await;
    answers.sort();
    assert_eq!(answers, [("beta".into(), true), ("nested".into(), true)]);
}

/// What one project's cohorts may weigh together is its own: the next cohort past it is refused
/// for that project only, so a tenant with huge cohorts never grows another's snapshot.
#[tokio::test]
async fn a_projects_cohorts_weigh_at_most_a_mebibyte_together() {
    let world = World::new();
    let heavy = |n: usize| {
        let filters = json!({"properties": {"type": "AND", "values": [
            person("email", "exact", json!(format!("{n}{}", "x".repeat(62_000))))]}});
        NewCohort {
            name: format!("Heavy {n}"),
            description: String::new(),
            filters: CohortFilters::parse(&filters).unwrap(),
            is_static: false,
        }
    };
    for n in 0..16 {
        world
            .cohorts
            .create(PROJECT, &user(), heavy(n), Vec::new())
            .await
            .unwrap();
    }
    let refused = world
        .cohorts
        .create(PROJECT, &user(), heavy(16), Vec::new())
        .await
        .unwrap_err();
    let (attr, detail, code) = refusal(refused);
    assert_eq!((attr.as_deref(), code), (Some("filters"), "invalid_input"));
    assert!(
        detail.starts_with("A project's cohorts may weigh at most 1048576 bytes of filters"),
        "{detail}"
    );
    let other_project = ProjectId(PROJECT.0 + 1);
    world
        .cohorts
        .create(other_project, &user(), heavy(16), Vec::new())
        .await
        .expect("another project's cohorts weigh apart");
}
