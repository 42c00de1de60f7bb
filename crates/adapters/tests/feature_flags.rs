//! Contract tests of the PostgreSQL feature flag repository against a real database.

mod support;

use adapters::PgFeatureFlagRepository;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use domain::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagError, FlagId, NewFlag,
};
use domain::ports::PageRequest;
use serde_json::{Map, Value, json};
use support::Tenant;

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn new_flag(tenant: &Tenant, key: &str) -> NewFlag {
    NewFlag {
        project_id: tenant.project,
        name: format!("Flag {key}"),
        key: key.into(),
        filters: object(json!({"groups": [{"properties": [], "rollout_percentage": 50}]})),
        active: true,
        ensure_experience_continuity: false,
        created_by: Some(tenant.user_id()),
    }
}

fn all() -> PageRequest {
    PageRequest {
        limit: 100,
        offset: 0,
    }
}

fn keys(flags: &[FeatureFlag]) -> Vec<&str> {
    flags.iter().map(|flag| flag.key.as_str()).collect()
}

#[tokio::test]
async fn a_created_flag_is_stored_with_its_creator_and_found_by_get() {
    let tenant = Tenant::create().await;
    let flags = PgFeatureFlagRepository::new(tenant.db.database.clone());
    let mut flag = new_flag(&tenant, "beta");
    flag.ensure_experience_continuity = true;
    flag.active = false;

    let created = flags.create(flag.clone()).await.unwrap();
    assert_eq!(created.project_id, tenant.project);
    assert_eq!(created.name, "Flag beta");
    assert_eq!(created.key, "beta");
    assert_eq!(created.filters, flag.filters);
    assert!(!created.active);
    assert!(created.ensure_experience_continuity);
    assert!(!created.deleted);
    assert_eq!(created.created_by, Some(tenant.user.clone()));

    let found = flags.get(tenant.project, created.id).await.unwrap();
    assert_eq!(found, Some(created.clone()));
    assert_eq!(
        flags.get(tenant.other_project, created.id).await.unwrap(),
        None
    );
    assert_eq!(
        flags
            .get(tenant.project, FlagId(created.id.0 + 1000))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn a_flag_without_a_creator_has_no_created_by() {
    let tenant = Tenant::create().await;
    let flags = PgFeatureFlagRepository::new(tenant.db.database.clone());
    let mut flag = new_flag(&tenant, "anonymous");
    flag.created_by = None;
    let created = flags.create(flag).await.unwrap();
    assert_eq!(created.created_by, None);
    let listed = flags.list(tenant.project, all()).await.unwrap();
    assert_eq!(listed.items[0].created_by, None);
}

#[tokio::test]
async fn live_flags_of_the_project_are_listed_newest_first_in_pages() {
    let tenant = Tenant::create().await;
    let flags = PgFeatureFlagRepository::new(tenant.db.database.clone());
    for key in ["first", "second", "third", "fourth"] {
        flags.create(new_flag(&tenant, key)).await.unwrap();
    }
    let gone = flags.create(new_flag(&tenant, "gone")).await.unwrap();
    flags
        .update(
            tenant.project,
            gone.id,
            FlagChanges {
                deleted: Some(true),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    let mut elsewhere = new_flag(&tenant, "elsewhere");
    elsewhere.project_id = tenant.other_project;
    flags.create(elsewhere).await.unwrap();

    let page = flags.list(tenant.project, all()).await.unwrap();
    assert_eq!(page.count, 4);
    assert_eq!(keys(&page.items), ["fourth", "third", "second", "first"]);
    assert_eq!(page.items[0].created_by, Some(tenant.user.clone()));

    let window = flags
        .list(
            tenant.project,
            PageRequest {
                limit: 2,
                offset: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(window.count, 4);
    assert_eq!(keys(&window.items), ["third", "second"]);

    let past_the_end = flags
        .list(
            tenant.project,
            PageRequest {
                limit: 2,
                offset: 10,
            },
        )
        .await
        .unwrap();
    assert_eq!((past_the_end.count, past_the_end.items.len()), (4, 0));

    let other = flags.list(tenant.other_project, all()).await.unwrap();
    assert_eq!(keys(&other.items), ["elsewhere"]);
}

#[tokio::test]
async fn a_key_is_unique_among_live_flags_and_deleting_a_flag_frees_it() {
    let tenant = Tenant::create().await;
    let flags = PgFeatureFlagRepository::new(tenant.db.database.clone());
    let original = flags.create(new_flag(&tenant, "beta")).await.unwrap();

    let again = flags.create(new_flag(&tenant, "beta")).await;
    assert!(matches!(again, Err(FlagError::KeyTaken)), "{again:?}");
    assert_eq!(tenant.db.count_rows("feature_flags").await, 1);

    let mut elsewhere = new_flag(&tenant, "beta");
    elsewhere.project_id = tenant.other_project;
    let elsewhere = flags.create(elsewhere).await.unwrap();
    assert_eq!(elsewhere.project_id, tenant.other_project);

    let other = flags.create(new_flag(&tenant, "gamma")).await.unwrap();
    let renamed = flags
        .update(
            tenant.project,
            other.id,
            FlagChanges {
                key: Some("beta".into()),
                ..FlagChanges::default()
            },
        )
        .await;
    assert!(matches!(renamed, Err(FlagError::KeyTaken)), "{renamed:?}");

    let deleted = flags
        .update(
            tenant.project,
            original.id,
            FlagChanges {
                deleted: Some(true),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    assert!(deleted.deleted);
    assert!(!deleted.active, "a deleted flag is switched off");
    assert_eq!(flags.get(tenant.project, original.id).await.unwrap(), None);

    let reused = flags.create(new_flag(&tenant, "beta")).await.unwrap();
    assert_ne!(reused.id, original.id);
    assert_eq!(reused.key, "beta");
}

#[tokio::test]
async fn an_update_changes_only_the_given_fields() {
    let tenant = Tenant::create().await;
    let flags = PgFeatureFlagRepository::new(tenant.db.database.clone());
    let created = flags.create(new_flag(&tenant, "beta")).await.unwrap();
    let filters = object(json!({"groups": [], "payloads": {"true": "{}"}}));

    let updated = flags
        .update(
            tenant.project,
            created.id,
            FlagChanges {
                name: Some("Renamed".into()),
                filters: Some(filters.clone()),
                active: Some(false),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.name, "Renamed");
    assert_eq!(updated.filters, filters);
    assert!(!updated.active);
    assert_eq!(updated.key, "beta");
    assert!(!updated.ensure_experience_continuity);
    assert!(!updated.deleted);
    assert_eq!(updated.created_at, created.created_at);
    assert_eq!(updated.created_by, Some(tenant.user.clone()));
    assert_eq!(
        flags.get(tenant.project, created.id).await.unwrap(),
        Some(updated.clone())
    );

    let unchanged = flags
        .update(tenant.project, created.id, FlagChanges::default())
        .await
        .unwrap();
    assert_eq!(unchanged, updated);
}

#[tokio::test]
async fn updating_another_projects_or_a_deleted_or_a_missing_flag_is_not_found() {
    let tenant = Tenant::create().await;
    let flags = PgFeatureFlagRepository::new(tenant.db.database.clone());
    let created = flags.create(new_flag(&tenant, "beta")).await.unwrap();
    let rename = FlagChanges {
        name: Some("Hijacked".into()),
        ..FlagChanges::default()
    };

    let foreign = flags
        .update(tenant.other_project, created.id, rename.clone())
        .await;
    assert!(matches!(foreign, Err(FlagError::NotFound)), "{foreign:?}");
    let foreign_noop = flags
        .update(tenant.other_project, created.id, FlagChanges::default())
        .await;
    assert!(matches!(foreign_noop, Err(FlagError::NotFound)));
    let missing = flags
        .update(tenant.project, FlagId(created.id.0 + 1000), rename.clone())
        .await;
    assert!(matches!(missing, Err(FlagError::NotFound)));
    assert_eq!(
        flags
            .get(tenant.project, created.id)
            .await
            .unwrap()
            .unwrap()
            .name,
        "Flag beta"
    );

    flags
        .update(
            tenant.project,
            created.id,
            FlagChanges {
                deleted: Some(true),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    let deleted = flags.update(tenant.project, created.id, rename).await;
    assert!(matches!(deleted, Err(FlagError::NotFound)), "{deleted:?}");
}

#[tokio::test]
async fn a_stored_flag_whose_filters_are_not_an_object_is_unexpected_not_a_panic() {
    let tenant = Tenant::create().await;
    let flags = PgFeatureFlagRepository::new(tenant.db.database.clone());
    let flag = flags.create(new_flag(&tenant, "broken")).await.unwrap();
    let mut conn = AsyncPgConnection::establish(&tenant.db.url).await.unwrap();
    diesel::sql_query("UPDATE feature_flags SET filters = '[]' WHERE id = $1")
        .bind::<diesel::sql_types::Integer, _>(flag.id.0)
        .execute(&mut conn)
        .await
        .unwrap();
    assert!(flags.get(tenant.project, flag.id).await.is_err());
    assert!(flags.list(tenant.project, all()).await.is_err());
    let touched = flags
        .update(
            tenant.project,
            flag.id,
            FlagChanges {
                name: Some("Renamed".into()),
                ..FlagChanges::default()
            },
        )
        .await;
    assert!(
        matches!(touched, Err(FlagError::Unexpected(_))),
        "{touched:?}"
    );
}
