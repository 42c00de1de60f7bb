//! Flag dependencies over the in-memory fakes: what a write may make a flag depend on (with
//! PostHog's messages), and `/flags` evaluating each flag after the flags it depends on.

use std::sync::Arc;

use chrono::Utc;
use domain::DomainError;
use domain::feature_flag::{
    DependencyGraph, FeatureFlag, FeatureFlagService, FlagChanges, FlagFilters, FlagId, FlagKey,
    MAX_DEPENDENCY_DEPTH, NewFlag,
};
use domain::sdk::{
    Evaluated, FlagsRequest, SdkService, SdkSnapshot, SnapshotSettings, SnapshotSources,
};
use domain::survey::SurveyService;
use domain::tenancy::{OrganizationId, Project, ProjectId, UserBasic, UserId};
use domain::testing::{CompiledEachTime, InMemoryStore, InPlaceSlots, TimedMemories, someone};
use serde_json::{Value, json};

const PROJECT: ProjectId = ProjectId(1);

fn user() -> UserBasic {
    someone(UserId(1))
}

/// Filters serving whoever `flag` evaluates to `value` for, `rollout` percent of them.
fn depending_on(flag: FlagId, value: Value, rollout: u32) -> FlagFilters {
    FlagFilters::parse(json!({"groups": [{
        "properties": [{"key": flag.0.to_string(), "type": "flag",
                        "operator": "flag_evaluates_to", "value": value}],
        "rollout_percentage": rollout
    }]}))
    .unwrap()
}

fn rollout(percentage: u32) -> FlagFilters {
    FlagFilters::parse(json!({"groups": [{"properties": [], "rollout_percentage": percentage}]}))
        .unwrap()
}

struct World {
    store: InMemoryStore,
    flags: FeatureFlagService,
}

impl World {
    fn new() -> Self {
        let store = InMemoryStore::new();
        Self {
            flags: FeatureFlagService::new(Arc::new(store.clone()), Arc::new(store.clone())),
            store,
        }
    }

    async fn create(&self, key: &str, filters: FlagFilters) -> Result<FlagId, DomainError> {
        let flag = NewFlag {
            key: FlagKey::parse(key).unwrap(),
            name: String::new(),
            filters,
            active: true,
            ensure_experience_continuity: false,
            is_remote_configuration: false,
        };
        Ok(self.flags.create(PROJECT, &user(), flag).await?.id)
    }

    async fn change(&self, id: FlagId, changes: FlagChanges) -> Result<(), DomainError> {
        self.flags.update(PROJECT, id, changes).await.map(|_| ())
    }

    /// Every flag's key and value (`true`, `false` or the variant) for `distinct_id`, as
    /// `/flags` evaluates them.
    async fn evaluate(&self, distinct_id: &str) -> Vec<(String, Value)> {
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
        let values = |_: &SdkSnapshot<()>, evaluated: Evaluated| {
            assert!(!evaluated.errors);
            evaluated
                .flags
                .into_iter()
                .map(|evaluation| {
                    let evaluation = evaluation.expect("every flag is evaluated");
                    let value = match evaluation.variant {
                        Some(variant) => json!(variant),
                        None => json!(evaluation.enabled),
                    };
                    (evaluation.key.to_owned(), value)
                })
                .collect()
        };
        let request = FlagsRequest {
            distinct_id: distinct_id.to_owned(),
            ..FlagsRequest::default()
        };
        sdk.answer_flags(snapshot, request, values).await.unwrap()
    }
}

fn refusal(error: DomainError) -> (Option<String>, String) {
    match error {
        DomainError::Invalid(error) => (error.attr, error.detail),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

fn value_of<'a>(values: &'a [(String, Value)], key: &str) -> &'a Value {
    &values.iter().find(|(k, _)| k == key).unwrap().1
}

#[tokio::test]
async fn a_flag_is_evaluated_after_the_flags_it_depends_on_whatever_their_ids() {
    let world = World::new();
    let gate = world.create("gate", rollout(100)).await.unwrap();
    let base = world.create("base", rollout(50)).await.unwrap();
    // The gate, created first, comes to depend on a later flag.
    world
        .change(
            gate,
            FlagChanges {
                filters: Some(depending_on(base, json!(true), 100)),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    let off = world
        .create("off-when-base-off", depending_on(base, json!(false), 100))
        .await
        .unwrap();
    assert!(off.0 > base.0);

    let (mut on, mut off_count) = (0, 0);
    for n in 0..200 {
        let values = world.evaluate(&format!("person-{n}")).await;
        let base = value_of(&values, "base");
        assert_eq!(value_of(&values, "gate"), base, "person-{n}");
        assert_eq!(
            value_of(&values, "off-when-base-off"),
            &json!(!base.as_bool().unwrap())
        );
        if base == &json!(true) {
            on += 1;
        } else {
            off_count += 1;
        }
    }
    assert!(on > 60 && off_count > 60, "{on} on, {off_count} off");
}

#[tokio::test]
async fn a_dependency_on_a_variant_matches_that_variant_or_true() {
    let world = World::new();
    let experiment = world
        .create(
            "experiment",
            FlagFilters::parse(json!({
                "groups": [{"properties": [], "rollout_percentage": 100}],
                "multivariate": {"variants": [
                    {"key": "control", "rollout_percentage": 50},
                    {"key": "test", "rollout_percentage": 50}
                ]}
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    world
        .create("for-test", depending_on(experiment, json!("test"), 100))
        .await
        .unwrap();
    world
        .create("for-anyone", depending_on(experiment, json!(true), 100))
        .await
        .unwrap();
    for n in 0..50 {
        let values = world.evaluate(&format!("person-{n}")).await;
        let variant = value_of(&values, "experiment");
        assert_eq!(
            value_of(&values, "for-test"),
            &json!(variant == "test"),
            "person-{n}"
        );
        assert_eq!(value_of(&values, "for-anyone"), &json!(true));
    }
}

#[tokio::test]
async fn a_dependency_must_name_an_active_flag_of_the_project() {
    let world = World::new();
    let (attr, detail) = refusal(
        world
            .create("dependent", depending_on(FlagId(4242), json!(true), 100))
            .await
            .unwrap_err(),
    );
    assert_eq!(attr.as_deref(), Some("filters"));
    assert_eq!(
        detail,
        "Flag dependency references non-existent flag with ID 4242"
    );

    let off = world.create("off", rollout(100)).await.unwrap();
    world
        .change(
            off,
            FlagChanges {
                active: Some(false),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    let (_, detail) = refusal(
        world
            .create("dependent", depending_on(off, json!(true), 100))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        detail,
        format!(
            "Cannot create dependency on disabled flag 'off' (ID: {}). Flag dependencies must \
             reference active flags only.",
            off.0
        )
    );
}

#[tokio::test]
async fn a_flag_cannot_depend_on_itself_or_close_a_cycle() {
    let world = World::new();
    let a = world.create("a", rollout(100)).await.unwrap();
    let b = world
        .create("b", depending_on(a, json!(true), 100))
        .await
        .unwrap();
    let c = world
        .create("c", depending_on(b, json!(true), 100))
        .await
        .unwrap();

    let onto = |on| FlagChanges {
        filters: Some(depending_on(on, json!(true), 100)),
        ..FlagChanges::default()
    };
    let (attr, detail) = refusal(world.change(a, onto(a)).await.unwrap_err());
    assert_eq!(attr.as_deref(), Some("filters"));
    assert_eq!(detail, "Feature flag 'a' cannot depend on itself");

    let (_, detail) = refusal(world.change(a, onto(c)).await.unwrap_err());
    assert_eq!(detail, "Circular dependency detected: a → c → b → a");
    // Nothing changed: `a` still serves everyone, and so do the flags that depend on it.
    let values = world.evaluate("someone").await;
    assert!(values.iter().all(|(_, value)| value == &json!(true)));
}

#[tokio::test]
async fn chains_are_bounded_in_depth() {
    let world = World::new();
    let mut last = world.create("flag-1", rollout(100)).await.unwrap();
    for n in 2..=MAX_DEPENDENCY_DEPTH {
        last = world
            .create(&format!("flag-{n}"), depending_on(last, json!(true), 100))
            .await
            .unwrap();
    }
    let values = world.evaluate("someone").await;
    assert_eq!(values.len(), MAX_DEPENDENCY_DEPTH);
    assert!(values.iter().all(|(_, value)| value == &json!(true)));

    let (attr, detail) = refusal(
        world
            .create("one-too-deep", depending_on(last, json!(true), 100))
            .await
            .unwrap_err(),
    );
    assert_eq!(attr.as_deref(), Some("filters"));
    assert_eq!(
        detail,
        format!(
            "A flag dependency chain may hold at most {MAX_DEPENDENCY_DEPTH} flags; with these \
             filters the chain of 'one-too-deep' would hold {}.",
            MAX_DEPENDENCY_DEPTH + 1
        )
    );
}

#[tokio::test]
async fn a_flag_active_flags_depend_on_stays_on_and_undeleted() {
    let world = World::new();
    let base = world.create("base", rollout(100)).await.unwrap();
    let dependent = world
        .create("dependent", depending_on(base, json!(true), 100))
        .await
        .unwrap();
    let switch_off = FlagChanges {
        active: Some(false),
        ..FlagChanges::default()
    };
    let in_the_way = format!("dependent (ID: {})", dependent.0);

    let (attr, detail) = refusal(world.change(base, switch_off.clone()).await.unwrap_err());
    assert_eq!(attr, None);
    assert_eq!(
        detail,
        format!(
            "Cannot disable this feature flag because other flags depend on it: {in_the_way}. \
             Please update or disable the dependent flags first."
        )
    );
    let (_, detail) = refusal(world.flags.delete(PROJECT, base).await.unwrap_err());
    assert!(
        detail.starts_with("Cannot delete this feature flag because other flags depend on it"),
        "{detail}"
    );

    // Switched off first, the dependent no longer holds the base on; switched back on, it
    // needs the base on.
    world.change(dependent, switch_off.clone()).await.unwrap();
    world.change(base, switch_off).await.unwrap();
    let (attr, detail) = refusal(
        world
            .change(
                dependent,
                FlagChanges {
                    active: Some(true),
                    ..FlagChanges::default()
                },
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(attr, None);
    assert_eq!(
        detail,
        format!(
            "Cannot enable this feature flag because it depends on disabled flags: base (ID: {}). \
             Please enable the dependency flags first.",
            base.0
        )
    );
    world.flags.delete(PROJECT, base).await.unwrap();
}

fn flag(id: i32, filters: FlagFilters) -> FeatureFlag {
    FeatureFlag {
        id: FlagId(id),
        project_id: PROJECT,
        name: String::new(),
        key: format!("flag-{id}"),
        filters,
        deleted: false,
        active: true,
        ensure_experience_continuity: false,
        is_remote_configuration: false,
        created_at: Utc::now(),
        created_by: None,
    }
}

#[test]
fn a_chain_lists_what_to_evaluate_first_and_is_empty_when_it_cannot_be_evaluated() {
    // 1 depends on 2 and 3; 3 depends on 2; 4 on a flag not there; 5 and 6 on each other
    // (stored by a race: writes refuse cycles).
    let flags = vec![
        flag(1, {
            let mut filters = depending_on(FlagId(2), json!(true), 100);
            let mut on_three = depending_on(FlagId(3), json!(true), 100);
            filters.groups.append(&mut on_three.groups);
            filters
        }),
        flag(2, rollout(100)),
        flag(3, depending_on(FlagId(2), json!(true), 100)),
        flag(4, depending_on(FlagId(99), json!(true), 100)),
        flag(5, depending_on(FlagId(6), json!(true), 100)),
        flag(6, depending_on(FlagId(5), json!(true), 100)),
    ];
    let graph = DependencyGraph::of(&flags);
    let ids = |positions: Vec<usize>| -> Vec<i32> {
        positions.into_iter().map(|p| flags[p].id.0).collect()
    };
    assert_eq!(ids(graph.chain(FlagId(1))), vec![2, 3, 1]);
    assert_eq!(ids(graph.chain(FlagId(3))), vec![2, 3]);
    assert_eq!(ids(graph.chain(FlagId(2))), vec![2]);
    assert!(graph.chain(FlagId(4)).is_empty());
    assert!(graph.chain(FlagId(5)).is_empty());
    assert!(graph.chain(FlagId(99)).is_empty());

    let order = ids(graph.evaluation_order());
    let at = |id: i32| order.iter().position(|&o| o == id).unwrap();
    assert_eq!(order.len(), flags.len());
    assert!(at(2) < at(3) && at(3) < at(1));
}
