//! Feature flag rules, over the in-memory fakes.

use std::sync::Arc;

use domain::feature_flag::{FeatureFlagService, FlagError};
use domain::ports::PageRequest;
use domain::tenancy::{ProjectId, UserId};
use domain::testing::InMemoryStore;
use serde_json::{Map, Value, json};

const PROJECT: ProjectId = ProjectId(1);
const USER: UserId = UserId(1);
const PAGE: PageRequest = PageRequest {
    limit: 100,
    offset: 0,
};

fn service() -> FeatureFlagService {
    FeatureFlagService::new(Arc::new(InMemoryStore::new()))
}

fn body(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn invalid(error: FlagError) -> (Option<String>, String, &'static str) {
    match error {
        FlagError::Invalid(e) => (e.attr, e.detail, e.code.as_str()),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_flag_needs_a_valid_key_and_gets_defaults() {
    let flags = service();
    assert_eq!(
        invalid(
            flags
                .create(PROJECT, USER, &body(json!({"name": "x"})))
                .await
                .unwrap_err()
        )
        .1,
        "This field is required."
    );
    let bad = invalid(
        flags
            .create(PROJECT, USER, &body(json!({"key": "has space"})))
            .await
            .unwrap_err(),
    );
    assert_eq!((bad.0.as_deref(), bad.2), (Some("key"), "invalid_key"));
    let flag = flags
        .create(PROJECT, USER, &body(json!({"key": "beta"})))
        .await
        .unwrap();
    assert!(flag.active && !flag.deleted && !flag.ensure_experience_continuity);
    assert_eq!(flag.filters, body(json!({"groups": []})));
}

#[tokio::test]
async fn keys_are_unique_among_live_flags_and_deleting_frees_the_key() {
    let flags = service();
    let first = flags
        .create(PROJECT, USER, &body(json!({"key": "beta"})))
        .await
        .unwrap();
    let taken = invalid(
        flags
            .create(PROJECT, USER, &body(json!({"key": "beta"})))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        taken,
        (
            Some("key".into()),
            "There is already a feature flag with this key.".into(),
            "unique"
        )
    );
    assert!(
        flags
            .create(ProjectId(2), USER, &body(json!({"key": "beta"})))
            .await
            .is_ok()
    );

    flags.delete(PROJECT, first.id).await.unwrap();
    assert!(matches!(
        flags.get(PROJECT, first.id).await,
        Err(FlagError::NotFound)
    ));
    assert_eq!(flags.list(PROJECT, PAGE).await.unwrap().count, 0);
    assert!(
        flags
            .create(PROJECT, USER, &body(json!({"key": "beta"})))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn patch_changes_only_the_fields_sent_and_deleted_true_deletes() {
    let flags = service();
    let flag = flags
        .create(PROJECT, USER, &body(json!({"key": "beta", "name": "Beta"})))
        .await
        .unwrap();
    let patched = flags
        .update(PROJECT, flag.id, &body(json!({"active": false})))
        .await
        .unwrap();
    assert_eq!((patched.name.as_str(), patched.active), ("Beta", false));
    let bad = flags
        .update(
            PROJECT,
            flag.id,
            &body(json!({"filters": {"groups": [{"rollout_percentage": 150}]}})),
        )
        .await
        .unwrap_err();
    assert_eq!(invalid(bad).0.as_deref(), Some("filters"));
    flags
        .update(PROJECT, flag.id, &body(json!({"deleted": true})))
        .await
        .unwrap();
    assert!(matches!(
        flags.get(PROJECT, flag.id).await,
        Err(FlagError::NotFound)
    ));
    assert!(matches!(
        flags
            .update(PROJECT, flag.id, &body(json!({"name": "x"})))
            .await,
        Err(FlagError::NotFound)
    ));
}

#[tokio::test]
async fn renaming_a_key_onto_a_live_key_is_refused() {
    let flags = service();
    flags
        .create(PROJECT, USER, &body(json!({"key": "a"})))
        .await
        .unwrap();
    let b = flags
        .create(PROJECT, USER, &body(json!({"key": "b"})))
        .await
        .unwrap();
    let error = flags
        .update(PROJECT, b.id, &body(json!({"key": "a"})))
        .await
        .unwrap_err();
    assert_eq!(invalid(error).2, "unique");
}

#[tokio::test]
async fn lists_are_newest_first() {
    let flags = service();
    for key in ["one", "two", "three"] {
        flags
            .create(PROJECT, USER, &body(json!({"key": key})))
            .await
            .unwrap();
    }
    let page = flags
        .list(
            PROJECT,
            PageRequest {
                limit: 2,
                offset: 0,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.count, 3);
    let keys: Vec<_> = page.items.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["three", "two"]);
}
