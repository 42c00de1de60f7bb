//! Early access features over the in-memory fakes: the flag a feature gets or takes (PostHog's
//! rules), enrollment served by the flag while the feature is in a release stage, and a
//! person's enrollment, captured, turning the flag on for them.

use std::sync::Arc;

use domain::DomainError;
use domain::early_access::{EarlyAccessChanges, EarlyAccessRequest, EarlyAccessService, Stage};
use domain::feature_flag::{FeatureFlagService, FlagFilters, FlagId, FlagKey, NewFlag, Person};
use domain::survey_response::{CaptureBatch, CapturedEvent};
use domain::tenancy::{ProjectId, UserBasic, UserId};
use domain::testing::{CompiledEachTime, InMemoryStore, evaluate, someone};
use serde_json::{Map, Value, json};

const PROJECT: ProjectId = ProjectId(1);

fn user() -> UserBasic {
    someone(UserId(1))
}

fn world() -> (Arc<FeatureFlagService>, EarlyAccessService) {
    let store = InMemoryStore::new();
    let flags = Arc::new(FeatureFlagService::new(
        Arc::new(store.clone()),
        Arc::new(store.clone()),
    ));
    let features = EarlyAccessService::new(Arc::new(store), Arc::clone(&flags));
    (flags, features)
}

fn request(name: &str, stage: Stage, flag_id: Option<FlagId>) -> EarlyAccessRequest {
    EarlyAccessRequest {
        name: name.into(),
        description: String::new(),
        stage,
        documentation_url: String::new(),
        flag_id,
    }
}

/// Whether the flag is on for a person with these properties.
async fn on_for(flags: &FeatureFlagService, id: FlagId, properties: Value) -> bool {
    let flag = flags.get(PROJECT, id).await.unwrap();
    let Value::Object(properties) = properties else {
        panic!("an object")
    };
    let person = Person {
        distinct_id: "someone".into(),
        properties,
    };
    evaluate(&flag, &person, &CompiledEachTime).enabled
}

#[tokio::test]
async fn a_feature_in_a_release_stage_serves_its_flag_to_the_enrolled_only() {
    let (flags, features) = world();
    let feature = features
        .create(PROJECT, &user(), request("Dark Mode", Stage::Beta, None))
        .await
        .unwrap();
    assert_eq!(feature.flag_key, "dark-mode");
    let flag = flags.get(PROJECT, feature.flag_id).await.unwrap();
    assert_eq!(flag.name, "Feature Flag for Feature Dark Mode");
    let enrolled = json!({"$feature_enrollment/dark-mode": true});
    assert!(on_for(&flags, flag.id, enrolled.clone()).await);
    assert!(
        !on_for(
            &flags,
            flag.id,
            json!({"$feature_enrollment/dark-mode": false})
        )
        .await
    );
    assert!(!on_for(&flags, flag.id, json!({})).await);

    // Out of a release stage, enrollment no longer serves; back in, it does again.
    let to = |stage| EarlyAccessChanges {
        stage: Some(stage),
        ..EarlyAccessChanges::default()
    };
    features
        .update(PROJECT, feature.id, to(Stage::Draft))
        .await
        .unwrap();
    assert!(!on_for(&flags, flag.id, enrolled.clone()).await);
    features
        .update(PROJECT, feature.id, to(Stage::Alpha))
        .await
        .unwrap();
    assert!(on_for(&flags, flag.id, enrolled.clone()).await);

    // Listed for posthog-js by stage.
    let listed = features.in_stages(PROJECT, &[]).await.unwrap();
    assert!(
        listed.is_empty(),
        "beta by default; the feature is in alpha"
    );
    let listed = features.in_stages(PROJECT, &[Stage::Alpha]).await.unwrap();
    assert_eq!(listed.len(), 1);

    // Deleted, the feature leaves its flag without enrollment.
    features.delete(PROJECT, feature.id).await.unwrap();
    assert!(!on_for(&flags, flag.id, enrolled).await);
}

#[tokio::test]
async fn an_existing_flag_is_taken_only_as_posthog_allows() {
    let (flags, features) = world();
    let create = |key: &str, filters: Value| {
        let flags = Arc::clone(&flags);
        let key = key.to_owned();
        async move {
            flags
                .create(
                    PROJECT,
                    &user(),
                    NewFlag {
                        key: FlagKey::parse(&key).unwrap(),
                        name: String::new(),
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
    };
    let refused = |error: DomainError| match error {
        DomainError::Invalid(error) => error.detail,
        other => panic!("{other:?}"),
    };
    let plain = create("plain", json!({"groups": [{"rollout_percentage": 10}]})).await;
    let variants = create(
        "variants",
        json!({"groups": [{"rollout_percentage": 100}], "multivariate": {"variants": [
            {"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 50}]}}),
    )
    .await;
    let group = create(
        "group",
        json!({"aggregation_group_type_index": 0, "groups": [{"rollout_percentage": 100}]}),
    )
    .await;

    let feature = features
        .create(PROJECT, &user(), request("Plain", Stage::Beta, Some(plain)))
        .await
        .unwrap();
    assert_eq!(
        (feature.flag_id, feature.flag_key.as_str()),
        (plain, "plain")
    );
    // Its own conditions still serve 10 %; enrollment serves the rest who opt in.
    assert!(on_for(&flags, plain, json!({"$feature_enrollment/plain": true})).await);

    let cases = [
        (
            Some(plain),
            "Linked feature flag plain already has a feature attached to it.",
        ),
        (
            Some(variants),
            "Multivariate feature flags are not supported for Early Access Features.",
        ),
        (
            Some(group),
            "Group-based feature flags are not supported for Early Access Features.",
        ),
        (
            Some(FlagId(999)),
            "Feature Flag with this ID does not exist",
        ),
    ];
    for (flag_id, detail) in cases {
        let error = features
            .create(PROJECT, &user(), request("Another", Stage::Beta, flag_id))
            .await
            .unwrap_err();
        assert_eq!(refused(error), detail);
    }
}

#[test]
fn an_enrollment_event_sets_only_its_enrollment_on_the_person() {
    let event = |name: &str, properties: Value| {
        let Value::Object(properties) = properties else {
            panic!("an object")
        };
        CapturedEvent {
            event: name.into(),
            uuid: None,
            distinct_id: Some("p".into()),
            timestamp: None,
            offset_ms: None,
            properties,
        }
    };
    let batch = CaptureBatch {
        events: vec![
            event(
                "$feature_enrollment_update",
                json!({"$feature_flag": "dark-mode", "$feature_enrollment": true,
                       "$set": {"$feature_enrollment/dark-mode": true, "email": "x@y.z"}}),
            ),
            event("$pageview", json!({"$set": {"plan": "pro"}})),
        ],
        sent_at: None,
    };
    let sets = batch.person_sets(chrono::Utc::now());
    assert_eq!(sets.len(), 1);
    let mut expected = Map::new();
    expected.insert("$feature_enrollment/dark-mode".into(), json!(true));
    assert_eq!(
        (sets[0].distinct_id.as_str(), &sets[0].properties),
        ("p", &expected)
    );
}
