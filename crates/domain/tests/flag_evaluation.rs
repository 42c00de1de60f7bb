//! Feature-flag evaluation: PostHog's own consistency vectors, the rules of condition sets,
//! rollouts, variants and payloads, and `/flags`' evaluation of a project's snapshot over the
//! in-memory fakes.

use std::sync::Arc;

use chrono::Utc;
use domain::cohort::{CohortFilters, CohortId, CohortService, NamedPersons, NewCohort};
use domain::feature_flag::evaluation::{Evaluation, Person, ReasonCode};
use domain::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagFilters, FlagId, FlagKey, NewFlag,
};
use domain::group::GroupSet;
use domain::patch::Patch;
use domain::person::{PersonSet, ProfileSets};
use domain::sdk::{
    Evaluated as Evaluations, FlagsRequest, SdkService, SdkSnapshot, SentProperties,
    SnapshotSettings, SnapshotSources,
};
use domain::survey::{NewSurvey, SurveyChanges, SurveyName, SurveyService, SurveyType};
use domain::survey_response::{
    CaptureBatch, CapturedEvent, SurveyResponseRepository, SurveyResponseService,
};
use domain::tenancy::{OrganizationId, Project};
use domain::tenancy::{ProjectId, UserId};
use domain::testing::{
    CompiledEachTime, InMemoryStore, InPlaceSlots, TimedMemories, person_properties, someone,
};
use serde_json::{Map, Value, json};
use uuid::Uuid;

const PROJECT: ProjectId = ProjectId(1);
const OTHER_PROJECT: ProjectId = ProjectId(2);

fn flag(key: &str, filters: Value) -> FeatureFlag {
    FeatureFlag {
        id: FlagId(1),
        project_id: PROJECT,
        name: String::new(),
        key: key.to_owned(),
        filters: FlagFilters::read(filters).expect("filters of a readable shape"),
        deleted: false,
        active: true,
        ensure_experience_continuity: false,
        is_remote_configuration: false,
        created_at: Utc::now(),
        created_by: None,
    }
}

fn person(distinct_id: &str, properties: Value) -> Person {
    Person {
        distinct_id: distinct_id.to_owned(),
        properties: properties.as_object().unwrap().clone(),
    }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// Merges `properties` into the person as a capture does, with no event (captures are what
/// write persons).
async fn merge(store: &InMemoryStore, distinct_id: &str, properties: Value) {
    let set = PersonSet {
        distinct_id: distinct_id.to_owned(),
        properties: object(properties),
    };
    let sets = ProfileSets {
        persons: vec![set],
        ..ProfileSets::default()
    };
    store.record(PROJECT, vec![], sets).await.unwrap();
}

/// Evaluation as the server does it, but with no memory of patterns: nothing here depends on one.
fn evaluate<'a>(flag: &'a FeatureFlag, person: &Person) -> Evaluation<'a> {
    domain::testing::evaluate(flag, person, &CompiledEachTime)
}

/// posthog-python `posthog/test/test_feature_flags.py`, `test_simple_flag_consistency`
/// (PostHog/posthog-python at c55c9b22): "simple-flag" at 45%, `distinct_id_0`..`distinct_id_999`.
#[test]
fn simple_flag_buckets_persons_exactly_as_posthog() {
    let expected: Vec<bool> =
        serde_json::from_str(include_str!("data/simple_flag_consistency.json")).unwrap();
    assert_eq!(expected.len(), 1000);
    let flag = flag(
        "simple-flag",
        json!({"groups": [{"properties": [], "rollout_percentage": 45}]}),
    );
    for (i, expected) in expected.into_iter().enumerate() {
        let result = evaluate(&flag, &person(&format!("distinct_id_{i}"), json!({})));
        assert_eq!(result.enabled, expected, "distinct_id_{i}");
        let code = if expected {
            ReasonCode::ConditionMatch
        } else {
            ReasonCode::OutOfRolloutBound
        };
        assert_eq!(
            (result.reason.code, result.reason.condition_index),
            (code, Some(0))
        );
    }
}

/// posthog-python `posthog/test/test_feature_flags.py`, `test_multivariate_flag_consistency`
/// (PostHog/posthog-python at c55c9b22): 55% rollout over five variants; `false` = not served.
#[test]
fn multivariate_flag_picks_the_variant_posthog_picks() {
    let expected: Vec<Value> =
        serde_json::from_str(include_str!("data/multivariate_flag_consistency.json")).unwrap();
    assert_eq!(expected.len(), 1000);
    let flag = flag(
        "multivariate-flag",
        json!({
            "groups": [{"properties": [], "rollout_percentage": 55}],
            "multivariate": {"variants": [
                {"key": "first-variant", "name": "First Variant", "rollout_percentage": 50},
                {"key": "second-variant", "name": "Second Variant", "rollout_percentage": 20},
                {"key": "third-variant", "name": "Third Variant", "rollout_percentage": 20},
                {"key": "fourth-variant", "name": "Fourth Variant", "rollout_percentage": 5},
                {"key": "fifth-variant", "name": "Fifth Variant", "rollout_percentage": 5},
            ]},
        }),
    );
    for (i, expected) in expected.into_iter().enumerate() {
        let result = evaluate(&flag, &person(&format!("distinct_id_{i}"), json!({})));
        let actual = match result.variant {
            Some(variant) => Value::String(variant.to_owned()),
            None => Value::Bool(result.enabled),
        };
        assert_eq!(actual, expected, "distinct_id_{i}");
    }
}

#[test]
fn condition_sets_are_ored_in_order_and_the_reason_names_the_deciding_one() {
    let filters = json!({"groups": [
        {"properties": [{"key": "email", "value": "a@x.com", "operator": "exact", "type": "person"}], "rollout_percentage": null},
        {"properties": [{"key": "plan", "value": ["pro", "team"], "operator": "exact", "type": "person"}, {"key": "age", "value": 18, "operator": "gte", "type": "person"}]},
        {"properties": [], "rollout_percentage": 0},
    ]});
    let flag = flag("ordered", filters);
    let cases = [
        // (properties, enabled, code, condition_index, description)
        (
            json!({"email": "A@X.com"}),
            true,
            ReasonCode::ConditionMatch,
            Some(0),
            "Matched condition set 1",
        ),
        (
            json!({"plan": "Team", "age": "21"}),
            true,
            ReasonCode::ConditionMatch,
            Some(1),
            "Matched condition set 2",
        ),
        // Both filters of set 2 must hold.
        (
            json!({"plan": "team", "age": 17}),
            false,
            ReasonCode::OutOfRolloutBound,
            Some(2),
            "Out of rollout bound",
        ),
        (
            json!({}),
            false,
            ReasonCode::OutOfRolloutBound,
            Some(2),
            "Out of rollout bound",
        ),
    ];
    for (properties, enabled, code, index, description) in cases {
        let result = evaluate(&flag, &person("someone", properties.clone()));
        assert_eq!(result.enabled, enabled, "{properties}");
        assert_eq!(result.reason.code, code, "{properties}");
        assert_eq!(result.reason.condition_index, index, "{properties}");
        assert_eq!(
            result.reason.description().to_string(),
            description,
            "{properties}"
        );
        assert_eq!(result.key, "ordered");
        assert_eq!(result.flag_id, FlagId(1));
    }
}

#[test]
fn no_match_reports_the_last_condition_set_and_a_flag_without_sets_none() {
    let flag_with_sets = flag(
        "two-sets",
        json!({"groups": [
            {"properties": [{"key": "a", "value": "1", "type": "person"}]},
            {"properties": [{"key": "b", "value": "1", "type": "person"}]},
        ]}),
    );
    let result = evaluate(&flag_with_sets, &person("p", json!({})));
    assert!(!result.enabled);
    assert_eq!(result.reason.code.as_str(), "no_condition_match");
    assert_eq!(result.reason.condition_index, Some(1));
    assert_eq!(
        result.reason.description().to_string(),
        "No matching condition set"
    );

    let empty_flag = flag("empty", json!({"groups": []}));
    let empty = evaluate(&empty_flag, &person("p", json!({})));
    assert_eq!(
        (
            empty.enabled,
            empty.reason.code,
            empty.reason.condition_index
        ),
        (false, ReasonCode::NoConditionMatch, None)
    );
    let bare_flag = flag("bare", json!({}));
    let bare = evaluate(&bare_flag, &person("p", json!({})));
    assert_eq!(bare.reason.code, ReasonCode::NoConditionMatch);
}

#[test]
fn an_out_of_rollout_set_outranks_a_later_set_without_a_match() {
    let flag = flag(
        "ranked",
        json!({"groups": [
            {"properties": [], "rollout_percentage": 0},
            {"properties": [{"key": "b", "value": "1", "type": "person"}]},
        ]}),
    );
    let result = evaluate(&flag, &person("p", json!({})));
    assert_eq!(result.reason.code, ReasonCode::OutOfRolloutBound);
    assert_eq!(result.reason.condition_index, Some(0));
}

#[test]
fn a_null_rollout_serves_everyone_and_100_too() {
    for rollout in [Value::Null, json!(100)] {
        let flag = flag(
            "everyone",
            json!({"groups": [{"properties": [], "rollout_percentage": rollout}]}),
        );
        for i in 0..50 {
            assert!(evaluate(&flag, &person(&format!("p{i}"), json!({}))).enabled);
        }
    }
    let nobody = flag("nobody", json!({"groups": [{"rollout_percentage": 0}]}));
    assert!((0..50).all(|i| !evaluate(&nobody, &person(&format!("p{i}"), json!({}))).enabled));
}

#[test]
fn a_condition_sets_variant_overrides_the_hash_when_it_names_a_variant() {
    let variants = json!({"variants": [
        {"key": "control", "rollout_percentage": 50},
        {"key": "test", "rollout_percentage": 50},
    ]});
    let forced = flag(
        "forced",
        json!({
            "groups": [
                {"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}], "variant": "test"},
                {"properties": [], "variant": "unknown"},
            ],
            "multivariate": variants,
        }),
    );
    for i in 0..30 {
        let id = format!("p{i}");
        let result = evaluate(&forced, &person(&id, json!({"email": "x@y.z"})));
        assert_eq!(result.variant, Some("test"));
        assert_eq!(result.reason.condition_index, Some(0));
        // An unknown override falls back to the hashed variant.
        let fallback = evaluate(&forced, &person(&id, json!({})));
        let unforced = flag(
            "forced",
            json!({"groups": [{"properties": []}], "multivariate": variants}),
        );
        let hashed = evaluate(&unforced, &person(&id, json!({})));
        assert!(fallback.enabled);
        assert_eq!(fallback.variant, hashed.variant);
        assert!(matches!(fallback.variant, Some("control" | "test")));
    }
}

#[test]
fn payloads_follow_the_value_and_are_returned_as_stored() {
    let boolean = flag(
        "with-payload",
        json!({
            "groups": [{"properties": [{"key": "plan", "value": "pro", "type": "person"}]}],
            "payloads": {"true": "{\"color\": \"blue\"}", "false": "never"},
        }),
    );
    let served = evaluate(&boolean, &person("p", json!({"plan": "pro"})));
    assert_eq!(served.payload, Some(&json!("{\"color\": \"blue\"}")));
    let not_served = evaluate(&boolean, &person("p", json!({"plan": "free"})));
    assert_eq!(not_served.payload, None);

    let multivariate = flag(
        "variant-payload",
        json!({
            "groups": [{"properties": [], "variant": "b"}],
            "multivariate": {"variants": [
                {"key": "a", "rollout_percentage": 50},
                {"key": "b", "rollout_percentage": 50},
            ]},
            "payloads": {"a": 1, "b": {"size": 2}, "true": "ignored"},
        }),
    );
    let result = evaluate(&multivariate, &person("p", json!({})));
    assert_eq!(result.variant, Some("b"));
    assert_eq!(result.payload, Some(&json!({"size": 2})));

    let no_payloads = flag(
        "no-payloads",
        json!({"groups": [{"properties": []}], "payloads": {}}),
    );
    let without = evaluate(&no_payloads, &person("p", json!({})));
    assert_eq!((without.enabled, without.payload), (true, None));
}

#[test]
fn inactive_deleted_and_group_flags_are_off_with_their_reason() {
    let everyone =
        json!({"groups": [{"properties": [], "rollout_percentage": 100}], "payloads": {"true": 1}});
    let mut inactive = flag("inactive", everyone.clone());
    inactive.active = false;
    let mut deleted = flag("deleted", everyone.clone());
    deleted.deleted = true;
    for off in [inactive, deleted] {
        let result = evaluate(&off, &person("p", json!({})));
        assert_eq!(
            (result.enabled, result.variant, result.payload),
            (false, None, None)
        );
        assert_eq!(result.reason.code, ReasonCode::Disabled);
        assert_eq!(result.reason.code.as_str(), "flag_disabled");
        assert_eq!(
            result.reason.description().to_string(),
            "Feature flag is disabled"
        );
    }

    let mut group_filters = everyone;
    group_filters["aggregation_group_type_index"] = json!(0);
    let by_company = flag("by-company", group_filters);
    let group = evaluate(&by_company, &person("p", json!({})));
    assert!(!group.enabled);
    assert_eq!(group.reason.code.as_str(), "no_group_type");
    assert_eq!(group.reason.description().to_string(), "No group type");
}

#[test]
fn bad_filters_do_not_match_and_never_panic() {
    let flag = flag(
        "odd",
        json!({"groups": [
            {"properties": [{"key": "email", "value": "([", "operator": "regex", "type": "person"}]},
            {"properties": [{"key": "email", "value": "([", "operator": "not_regex", "type": "person"}]},
            {"properties": [{"key": "age", "value": "ten", "operator": "gt", "type": "person"}]},
            {"properties": [{"key": "id", "value": 3, "operator": "in", "type": "cohort"}]},
            {"properties": [{"key": "email", "value": "x", "operator": "no_such_operator", "type": "person"}]},
            // A property filter that is not an object cannot be stored: FlagFilters refuses it.
        ]}),
    );
    let result = evaluate(&flag, &person("p", json!({"email": "x", "age": 12})));
    assert!(!result.enabled);
    assert_eq!(result.reason.code, ReasonCode::NoConditionMatch);
}

#[test]
fn an_early_access_enrollment_decides_before_the_condition_sets() {
    let flag = flag(
        "early",
        json!({
            "groups": [{"properties": [], "rollout_percentage": 100}],
            "super_groups": [{"properties": [{"key": "$feature_enrollment/early", "value": ["true"], "operator": "exact", "type": "person"}], "rollout_percentage": 100}],
            "payloads": {"true": "p"},
        }),
    );
    let opted_out = evaluate(
        &flag,
        &person("p", json!({"$feature_enrollment/early": false})),
    );
    assert!(!opted_out.enabled);
    assert_eq!(opted_out.reason.code.as_str(), "super_condition_value");
    assert_eq!(opted_out.reason.condition_index, Some(0));
    let opted_in = evaluate(
        &flag,
        &person("p", json!({"$feature_enrollment/early": true})),
    );
    assert!(opted_in.enabled);
    assert_eq!(
        opted_in.reason.description().to_string(),
        "Super condition value"
    );
    let never_asked = evaluate(&flag, &person("p", json!({})));
    assert_eq!(
        (never_asked.enabled, never_asked.reason.code),
        (true, ReasonCode::ConditionMatch)
    );
}

// --- `/flags` over the fakes: a project's snapshot, evaluated ---

async fn stored_flag(
    store: &InMemoryStore,
    project: ProjectId,
    key: &str,
    filters: Value,
) -> FlagId {
    store
        .create(
            project,
            None,
            NewFlag {
                key: FlagKey::parse(key).unwrap(),
                name: key.to_owned(),
                filters: FlagFilters::parse(filters).unwrap(),
                active: true,
                ensure_experience_continuity: false,
                is_remote_configuration: false,
            },
        )
        .await
        .unwrap()
        .id
}

/// Every flag of the project's snapshot, as it is now, evaluated for the person.
async fn evaluate_all(
    store: &InMemoryStore,
    project: ProjectId,
    distinct_id: &str,
    sent_properties: &Map<String, Value>,
) -> Vec<Evaluated> {
    let request = FlagsRequest {
        distinct_id: distinct_id.to_owned(),
        person_properties: SentProperties::parse("person_properties", sent_properties.clone())
            .unwrap(),
        ..FlagsRequest::default()
    };
    evaluate_request(store, project, request).await
}

/// Every flag of the project's snapshot, as it is now, evaluated for what `request` names.
async fn evaluate_request(
    store: &InMemoryStore,
    project: ProjectId,
    request: FlagsRequest,
) -> Vec<Evaluated> {
    let sdk = SdkService::<()>::new(
        SnapshotSources {
            tenancy: Arc::new(store.clone()),
            flags: Arc::new(store.clone()),
            cohorts: Arc::new(store.clone()),
            groups: Arc::new(store.clone()),
            surveys: Arc::new(SurveyService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
            )),
            persons: Arc::new(store.clone()),
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
        id: project,
        organization_id: OrganizationId(Uuid::nil()),
        name: "Project".into(),
        api_token: format!("phc_{}", project.0),
        created_at: Utc::now(),
        survey_config: None,
    };
    let snapshot = Arc::new(sdk.build(project).await.unwrap());
    let owned = |_: &SdkSnapshot<()>, evaluated: Evaluations| {
        evaluated
            .flags
            .into_iter()
            .flatten()
            .map(|e| Evaluated {
                flag_id: e.flag_id,
                key: e.key.to_owned(),
                enabled: e.enabled,
                variant: e.variant.map(str::to_owned),
                reason: e.reason.code,
            })
            .collect()
    };
    sdk.answer_flags(snapshot, request, owned).await.unwrap()
}

/// What these tests read of an evaluation, kept past the snapshot it borrowed from.
struct Evaluated {
    flag_id: FlagId,
    key: String,
    enabled: bool,
    variant: Option<String>,
    reason: ReasonCode,
}

/// The evaluation of the flag `key` among `all`.
fn of<'a>(all: &'a [Evaluated], key: &str) -> &'a Evaluated {
    all.iter()
        .find(|e| e.key == key)
        .expect("the flag is answered")
}

/// Stores a group's properties as a `$groupidentify` capture does, naming its type.
async fn identify_group(store: &InMemoryStore, group_type: &str, key: &str, set: Value) {
    let sets = ProfileSets {
        groups: vec![GroupSet {
            group_type: group_type.to_owned(),
            group_key: key.to_owned(),
            properties: object(set),
        }],
        ..ProfileSets::default()
    };
    store.record(PROJECT, vec![], sets).await.unwrap();
}

#[tokio::test]
async fn a_group_flag_is_evaluated_for_the_requests_group_of_its_type() {
    let store = InMemoryStore::new();
    identify_group(&store, "team", "t1", json!({})).await;
    identify_group(&store, "company", "acme", json!({"tier": "enterprise"})).await;
    stored_flag(
        &store,
        PROJECT,
        "enterprise",
        json!({"aggregation_group_type_index": 1, "groups": [{"properties": [
            {"key": "tier", "value": "enterprise", "type": "group", "group_type_index": 1}]}]}),
    )
    .await;
    let asked = async |groups: Value, group_properties: Value| {
        let request = FlagsRequest {
            distinct_id: "p".to_owned(),
            groups: FlagsRequest::groups_of(&object(groups)),
            group_properties: FlagsRequest::group_properties_of(object(group_properties)).unwrap(),
            ..FlagsRequest::default()
        };
        let all = evaluate_request(&store, PROJECT, request).await;
        let flag = of(&all, "enterprise");
        (flag.enabled, flag.reason)
    };

    let stored = asked(json!({"company": "acme"}), json!({})).await;
    assert_eq!(stored, (true, ReasonCode::ConditionMatch));
    let sent = asked(
        json!({"company": "acme"}),
        json!({"company": {"tier": "free"}}),
    )
    .await;
    assert_eq!(sent, (false, ReasonCode::NoConditionMatch), "sent ones win");
    let unknown = asked(json!({"company": "bolt"}), json!({})).await;
    assert_eq!(unknown, (false, ReasonCode::NoConditionMatch));
    for no_company in [
        json!({}),
        json!({"team": "t1"}),
        json!({"company": ["acme"]}),
    ] {
        let alone = asked(no_company, json!({})).await;
        assert_eq!(alone, (false, ReasonCode::NoGroupType));
    }
}

#[tokio::test]
async fn a_condition_set_of_its_own_group_type_is_evaluated_for_that_group() {
    let store = InMemoryStore::new();
    identify_group(&store, "company", "acme", json!({"tier": "enterprise"})).await;
    stored_flag(
        &store,
        PROJECT,
        "mixed",
        json!({"groups": [
            {"properties": [{"key": "plan", "value": "pro", "type": "person", "operator": "exact"}]},
            {"aggregation_group_type_index": 0, "properties": [
                {"key": "tier", "value": "enterprise", "type": "group", "group_type_index": 0,
                 "operator": "exact"}]}]}),
    )
    .await;
    let asked = async |plan: &str, groups: Value| {
        let request = FlagsRequest {
            distinct_id: "p".to_owned(),
            person_properties: SentProperties::parse(
                "person_properties",
                object(json!({"plan": plan})),
            )
            .unwrap(),
            groups: FlagsRequest::groups_of(&object(groups)),
            ..FlagsRequest::default()
        };
        let all = evaluate_request(&store, PROJECT, request).await;
        let flag = of(&all, "mixed");
        (flag.enabled, flag.reason)
    };
    assert_eq!(
        asked("pro", json!({})).await,
        (true, ReasonCode::ConditionMatch)
    );
    assert_eq!(
        asked("free", json!({"company": "acme"})).await,
        (true, ReasonCode::ConditionMatch),
        "the company's set"
    );
    assert_eq!(
        asked("free", json!({})).await,
        (false, ReasonCode::NoConditionMatch),
        "no company: its set matches no one"
    );
    assert_eq!(
        asked("free", json!({"company": "bolt"})).await,
        (false, ReasonCode::NoConditionMatch)
    );
}

#[tokio::test]
async fn a_persons_continuity_flags_hash_the_anonymous_id_they_had_before_identify() {
    let store = InMemoryStore::new();
    let flags: Arc<dyn FeatureFlagRepository> = Arc::new(store.clone());
    flags
        .create(
            PROJECT,
            None,
            NewFlag {
                key: FlagKey::parse("continuous").unwrap(),
                name: String::new(),
                filters: FlagFilters::parse(json!({"groups": [{"rollout_percentage": 100}],
                    "multivariate": {"variants": [
                        {"key": "a", "rollout_percentage": 50},
                        {"key": "b", "rollout_percentage": 50}]}}))
                .unwrap(),
                active: true,
                ensure_experience_continuity: true,
                is_remote_configuration: false,
            },
        )
        .await
        .unwrap();
    let variant = async |distinct_id: &str, anonymous: Option<&str>| {
        let request = FlagsRequest {
            distinct_id: distinct_id.to_owned(),
            anon_distinct_id: anonymous.map(str::to_owned),
            ..FlagsRequest::default()
        };
        let all = evaluate_request(&store, PROJECT, request).await;
        of(&all, "continuous").variant.clone()
    };
    let anonymous = variant("anon", None).await;
    let mut identified = None;
    for n in 0..50 {
        let candidate = format!("user-{n}");
        if variant(&candidate, None).await != anonymous {
            identified = Some(candidate);
            break;
        }
    }
    let identified = identified.expect("one of 50 ids lands in the other variant");

    assert_eq!(variant(&identified, Some("anon")).await, anonymous);
    assert_eq!(variant(&identified, None).await, anonymous, "remembered");
    assert_eq!(
        variant(&identified, Some("other")).await,
        anonymous,
        "never replaced"
    );
}

async fn static_cohort(cohorts: &CohortService, distinct_ids: &[&str]) -> CohortId {
    let cohort = NewCohort {
        name: "Listed".to_owned(),
        description: String::new(),
        filters: CohortFilters::empty(),
        is_static: true,
    };
    let named = NamedPersons::DistinctIds(distinct_ids.iter().map(|&id| id.to_owned()).collect());
    let created = cohorts
        .create(PROJECT, &someone(UserId(1)), cohort, vec![named])
        .await;
    created.unwrap().cohort.id
}

fn dynamic_cohort(properties: Value) -> NewCohort {
    NewCohort {
        name: "Dynamic".to_owned(),
        description: String::new(),
        filters: CohortFilters::parse(&json!({"properties": properties})).unwrap(),
        is_static: false,
    }
}

#[tokio::test]
async fn a_static_cohort_holds_the_persons_it_lists() {
    let store = InMemoryStore::new();
    let cohorts = CohortService::new(Arc::new(store.clone()), Arc::new(store.clone()));
    let listed = static_cohort(&cohorts, &["ada"]).await;
    let dynamic_naming_it = cohorts
        .create(
            PROJECT,
            &someone(UserId(1)),
            dynamic_cohort(json!({"type": "AND", "values": [
                {"key": "id", "type": "cohort", "value": listed.0, "negation": true}]})),
            Vec::new(),
        )
        .await
        .unwrap();
    let cohort_filter = |id: CohortId| {
        json!({"groups": [{"properties": [
        {"key": "id", "type": "cohort", "value": id.0, "operator": "in"}]}]})
    };
    stored_flag(&store, PROJECT, "listed", cohort_filter(listed)).await;
    stored_flag(
        &store,
        PROJECT,
        "unlisted",
        cohort_filter(dynamic_naming_it.cohort.id),
    )
    .await;

    let ada = evaluate_all(&store, PROJECT, "ada", &Map::new()).await;
    assert!(of(&ada, "listed").enabled);
    assert!(!of(&ada, "unlisted").enabled);
    let bob = evaluate_all(&store, PROJECT, "bob", &Map::new()).await;
    assert!(
        !of(&bob, "listed").enabled,
        "an empty filter group is no one"
    );
    assert!(of(&bob, "unlisted").enabled);
}

fn plan_is(plan: &str) -> Value {
    json!({"groups": [{"properties": [{"key": "plan", "value": plan, "operator": "exact", "type": "person"}]}]})
}

#[tokio::test]
async fn every_active_flag_of_the_project_is_evaluated_in_id_order() {
    let store = InMemoryStore::new();
    let pro = stored_flag(&store, PROJECT, "pro", plan_is("pro")).await;
    let off = stored_flag(&store, PROJECT, "off", plan_is("pro")).await;
    let gone = stored_flag(&store, PROJECT, "gone", plan_is("pro")).await;
    let free = stored_flag(&store, PROJECT, "free", plan_is("free")).await;
    stored_flag(&store, OTHER_PROJECT, "elsewhere", plan_is("pro")).await;
    store
        .update(
            PROJECT,
            off,
            domain::feature_flag::FlagChanges {
                active: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    store
        .update(PROJECT, gone, domain::feature_flag::FlagChanges::deletion())
        .await
        .unwrap();

    let results = evaluate_all(&store, PROJECT, "p", &object(json!({"plan": "pro"}))).await;
    let summary: Vec<_> = results
        .iter()
        .map(|r| (r.flag_id, r.key.as_str(), r.enabled))
        .collect();
    assert_eq!(summary, [(pro, "pro", true), (free, "free", false)]);
    assert!(
        evaluate_all(&store, ProjectId(3), "p", &Map::new())
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn stored_properties_count_and_sent_ones_win() {
    let store = InMemoryStore::new();
    stored_flag(&store, PROJECT, "pro", plan_is("pro")).await;
    merge(&store, "p", json!({"plan": "pro", "email": "a@b.c"})).await;
    let evaluate_with =
        async |sent: Value| evaluate_all(&store, PROJECT, "p", &object(sent)).await[0].enabled;
    assert!(evaluate_with(json!({})).await, "stored plan");
    assert!(
        !evaluate_with(json!({"plan": "free"})).await,
        "sent plan wins"
    );
    let other_person = evaluate_all(&store, PROJECT, "q", &Map::new()).await;
    assert!(!other_person[0].enabled);
    let other_project = person_properties(&store, OTHER_PROJECT, "p").await.unwrap();
    assert!(other_project.is_empty());
}

#[tokio::test]
async fn merging_properties_keeps_the_keys_not_set_again() {
    let store = InMemoryStore::new();
    merge(&store, "p", json!({"a": 1, "b": {"x": 1}})).await;
    merge(&store, "p", json!({"b": {"y": 2}, "c": null})).await;
    assert_eq!(
        person_properties(&store, PROJECT, "p").await.unwrap(),
        object(json!({"a": 1, "b": {"y": 2}, "c": null}))
    );
}

#[tokio::test]
async fn answering_a_survey_turns_its_internal_targeting_flag_off_for_that_person() {
    let store = InMemoryStore::new();
    let surveys = Arc::new(SurveyService::new(
        Arc::new(store.clone()),
        Arc::new(store.clone()),
    ));
    let survey = surveys
        .create(
            PROJECT,
            &someone(UserId(1)),
            NewSurvey::new(SurveyChanges {
                name: Patch::Value(SurveyName::parse("NPS").unwrap()),
                survey_type: Patch::Value(SurveyType::Popover),
                start_date: Patch::Value(Utc::now()),
                ..SurveyChanges::default()
            })
            .unwrap(),
        )
        .await
        .unwrap();
    let key = survey.internal_targeting_flag_key();
    let enabled_for = async |distinct_id: &str| {
        let evaluations = evaluate_all(&store, PROJECT, distinct_id, &Map::new()).await;
        let internal: Vec<_> = evaluations.iter().filter(|e| e.key == key).collect();
        assert_eq!(internal.len(), 1, "the survey's flag is evaluated once");
        internal[0].enabled
    };
    assert!(enabled_for("person-1").await);

    let responses = SurveyResponseService::new(Arc::new(store.clone()), surveys);
    // As posthog-js sends it: distinct_id and `$set` only in properties.
    let id = survey.id.0;
    let answer = CapturedEvent {
        event: "survey sent".into(),
        uuid: Some(Uuid::now_v7()),
        properties: object(json!({
            "distinct_id": "person-1",
            "$survey_id": id.to_string(),
            "$survey_response": "Fast",
            "$set": {format!("$survey_responded/{id}"): true},
        })),
        ..CapturedEvent::default()
    };
    let batch = CaptureBatch {
        events: vec![answer],
        sent_at: None,
    };
    assert_eq!(responses.capture(PROJECT, batch.clone()).await.unwrap(), 1);

    assert!(!enabled_for("person-1").await);
    assert!(
        enabled_for("person-2").await,
        "only the person who answered"
    );
    // The same batch again (an SDK retry) stores nothing new and changes nothing.
    assert_eq!(responses.capture(PROJECT, batch).await.unwrap(), 0);
    assert!(!enabled_for("person-1").await);
}
