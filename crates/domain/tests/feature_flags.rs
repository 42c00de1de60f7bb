//! Feature flag rules, over the in-memory fakes.

use std::sync::Arc;

use domain::DomainError;
use domain::feature_flag::{
    FeatureFlagService, FlagChanges, FlagFilters, FlagId, FlagKey, FlagRef, NewFlag,
};
use domain::ports::PageRequest;
use domain::tenancy::{ProjectId, UserBasic, UserId};
use domain::testing::InMemoryStore;
use serde_json::json;

const PROJECT: ProjectId = ProjectId(1);

/// The caller creating flags (the fake knows no users: only a write is given one).
fn user() -> UserBasic {
    UserBasic {
        id: UserId(1),
        uuid: uuid::Uuid::nil(),
        distinct_id: "creator".into(),
        first_name: "Ada".into(),
        last_name: String::new(),
        email: "ada@example.com".into(),
        is_email_verified: true,
    }
}
const PAGE: PageRequest = PageRequest {
    limit: 100,
    offset: 0,
};

fn service() -> FeatureFlagService {
    {
        let store = InMemoryStore::new();
        FeatureFlagService::new(Arc::new(store.clone()), Arc::new(store))
    }
}

fn new_flag(key: &str) -> NewFlag {
    NewFlag {
        key: FlagKey::parse(key).unwrap(),
        name: String::new(),
        filters: FlagFilters::default(),
        active: true,
        ensure_experience_continuity: false,
        is_remote_configuration: false,
    }
}

fn invalid(error: DomainError) -> (Option<String>, String, &'static str) {
    match error {
        DomainError::Invalid(e) => (e.attr, e.detail, e.code.as_str()),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_new_flag_is_stored_as_given() {
    let flags = service();
    let flag = flags
        .create(PROJECT, &user(), new_flag("beta"))
        .await
        .unwrap();
    assert!(flag.active && !flag.deleted && !flag.ensure_experience_continuity);
    assert_eq!(flag.key, "beta");
    assert_eq!(flag.filters, FlagFilters::default());
    assert_eq!(
        flag.created_by,
        Some(user()),
        "the creator the caller holds, not read back"
    );
}

#[tokio::test]
async fn keys_are_unique_among_live_flags_and_deleting_frees_the_key() {
    let flags = service();
    let first = flags
        .create(PROJECT, &user(), new_flag("beta"))
        .await
        .unwrap();
    let taken = invalid(
        flags
            .create(PROJECT, &user(), new_flag("beta"))
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
            .create(ProjectId(2), &user(), new_flag("beta"))
            .await
            .is_ok()
    );

    flags.delete(PROJECT, first.id).await.unwrap();
    assert!(matches!(
        flags.get(PROJECT, first.id).await,
        Err(DomainError::NotFound)
    ));
    assert_eq!(flags.list(PROJECT, PAGE).await.unwrap().count, 0);
    assert!(
        flags
            .create(PROJECT, &user(), new_flag("beta"))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn changes_touch_only_the_fields_given_and_deleted_true_deletes() {
    let flags = service();
    let flag = flags
        .create(
            PROJECT,
            &user(),
            NewFlag {
                name: "Beta".into(),
                ..new_flag("beta")
            },
        )
        .await
        .unwrap();
    let patched = flags
        .update(
            PROJECT,
            flag.id,
            FlagChanges {
                active: Some(false),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((patched.name.as_str(), patched.active), ("Beta", false));
    let reactivated = flags
        .update(
            PROJECT,
            flag.id,
            FlagChanges {
                active: Some(true),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    assert!(reactivated.active);

    let deleting = FlagChanges {
        deleted: Some(true),
        active: Some(true),
        ..FlagChanges::default()
    };
    let store_view = flags.update(PROJECT, flag.id, deleting).await;
    assert!(
        matches!(store_view, Ok(ref f) if f.deleted && !f.active),
        "a deleted flag never serves, even when asked to: {store_view:?}"
    );
    assert!(matches!(
        flags.get(PROJECT, flag.id).await,
        Err(DomainError::NotFound)
    ));
    assert!(matches!(
        flags
            .update(
                PROJECT,
                flag.id,
                FlagChanges {
                    name: Some("x".into()),
                    ..FlagChanges::default()
                }
            )
            .await,
        Err(DomainError::NotFound)
    ));
}

#[tokio::test]
async fn renaming_a_key_onto_a_live_key_is_refused() {
    let flags = service();
    flags.create(PROJECT, &user(), new_flag("a")).await.unwrap();
    let b = flags.create(PROJECT, &user(), new_flag("b")).await.unwrap();
    let error = flags
        .update(
            PROJECT,
            b.id,
            FlagChanges {
                key: Some(FlagKey::parse("a").unwrap()),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(invalid(error).2, "unique");
}

#[tokio::test]
async fn lists_are_newest_first() {
    let flags = service();
    for key in ["one", "two", "three"] {
        flags.create(PROJECT, &user(), new_flag(key)).await.unwrap();
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

#[tokio::test]
async fn filters_must_be_valid_to_become_a_command() {
    let error = FlagFilters::parse(json!({"groups": [{"rollout_percentage": 150}]})).unwrap_err();
    assert_eq!(error.attr.as_deref(), Some("filters"));
}

/// Filters of about `bytes` of JSON: one substring filter of that long a value.
fn filters_of(bytes: usize) -> FlagFilters {
    FlagFilters::parse(json!({"groups": [{"properties": [
        {"key": "email", "type": "person", "operator": "icontains", "value": "v".repeat(bytes)}
    ]}]}))
    .unwrap()
}

#[tokio::test]
async fn a_projects_active_flags_are_bounded_by_their_weight_together() {
    let flags = service();
    let heavy = |key: &str| NewFlag {
        filters: filters_of(60_000),
        ..new_flag(key)
    };
    for n in 0..8 {
        flags
            .create(PROJECT, &user(), heavy(&format!("heavy-{n}")))
            .await
            .unwrap();
    }
    let (attr, detail, code) = invalid(
        flags
            .create(PROJECT, &user(), heavy("one-more"))
            .await
            .unwrap_err(),
    );
    assert_eq!((attr.as_deref(), code), (Some("filters"), "invalid_input"));
    assert!(
        detail.starts_with("A project's active flags may weigh at most 524288 bytes together"),
        "{detail}"
    );
    // An inactive flag weighs nothing until it is activated; another project is not counted.
    let inactive = NewFlag {
        active: false,
        ..heavy("inactive")
    };
    let parked = flags.create(PROJECT, &user(), inactive).await.unwrap();
    let activate = FlagChanges {
        active: Some(true),
        ..FlagChanges::default()
    };
    assert!(flags.update(PROJECT, parked.id, activate).await.is_err());
    assert!(
        flags
            .create(ProjectId(2), &user(), heavy("elsewhere"))
            .await
            .is_ok()
    );
    // A flag's own weight is replaced, not added, when its filters change.
    let first = flags.list(PROJECT, PAGE).await.unwrap().items[0].id;
    let lighter = FlagChanges {
        filters: Some(filters_of(50_000)),
        ..FlagChanges::default()
    };
    assert!(flags.update(PROJECT, first, lighter).await.is_ok());
}

#[tokio::test]
async fn a_remote_configuration_payload_is_read_by_id_or_key_and_other_flags_are_not_found() {
    let flags = service();
    let mut remote = new_flag("checkout-config");
    remote.is_remote_configuration = true;
    remote.filters = FlagFilters::parse(json!({"payloads": {"true": "{\"a\": 1}"}})).unwrap();
    let remote = flags.create(PROJECT, &user(), remote).await.unwrap();
    let bare = new_flag("bare-config");
    let bare = flags
        .create(
            PROJECT,
            &user(),
            NewFlag {
                is_remote_configuration: true,
                ..bare
            },
        )
        .await
        .unwrap();
    let plain = flags
        .create(PROJECT, &user(), new_flag("plain"))
        .await
        .unwrap();

    for named in [FlagRef::Id(remote.id), FlagRef::parse("checkout-config")] {
        let payload = flags.remote_config_payload(PROJECT, &named).await;
        assert_eq!(payload.unwrap(), json!("{\"a\": 1}"), "{named:?}");
    }
    let none = flags
        .remote_config_payload(PROJECT, &FlagRef::Id(bare.id))
        .await;
    assert_eq!(none.unwrap(), serde_json::Value::Null);
    for named in [
        FlagRef::Id(plain.id),
        FlagRef::parse("nothing"),
        FlagRef::parse(&remote.id.0.to_string()),
    ] {
        let project = if matches!(named, FlagRef::Id(id) if id == remote.id) {
            ProjectId(2)
        } else {
            PROJECT
        };
        let refused = flags.remote_config_payload(project, &named).await;
        assert!(matches!(refused, Err(DomainError::NotFound)), "{named:?}");
    }
}

#[test]
fn a_path_segment_of_digits_names_a_flag_by_id_and_anything_else_by_key() {
    assert_eq!(FlagRef::parse("42"), FlagRef::Id(FlagId(42)));
    for key in ["beta", "-1", "4a", "99999999999", ""] {
        assert_eq!(FlagRef::parse(key), FlagRef::Key(key.into()), "{key}");
    }
}
