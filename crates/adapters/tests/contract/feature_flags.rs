//! The feature flag repository's contract: flags are stored exactly as given, keys are unique
//! among a project's live flags, and deleted or foreign flags are out of reach.

use domain::DomainError;
use domain::feature_flag::{
    FeatureFlag, FlagChanges, FlagFilters, FlagId, FlagKey, REGEX_WEIGHT, ServingFlags,
};
use domain::ports::PageRequest;
use serde_json::json;

use crate::stores::{StoredFlag, Stores, all, at};

contract! {
    a_created_flag_is_stored_as_given_and_found_by_get_in_its_project_only,
    a_flag_without_a_creator_has_no_created_by,
    a_live_flag_is_found_by_its_key_in_its_project_only,
    live_flags_are_listed_newest_first_in_pages_with_their_count,
    flags_created_at_the_same_instant_are_listed_by_id_descending,
    a_key_is_unique_among_the_live_flags_of_a_project,
    deleting_a_flag_hides_it_and_frees_its_key,
    an_update_applies_exactly_the_given_changes,
    an_update_that_only_deletes_leaves_active_as_it_was,
    updating_a_deleted_a_foreign_or_a_missing_flag_is_not_found,
    updating_a_flag_out_of_reach_to_a_taken_key_is_not_found_rather_than_a_conflict,
    active_lists_the_projects_serving_flags_by_id_without_their_creators,
    serving_loads_the_active_flags_within_the_bound_and_only_weighs_them_past_it,
}

fn keys(flags: &[FeatureFlag]) -> Vec<&str> {
    flags.iter().map(|flag| flag.key.as_str()).collect()
}

/// A flag as writes and serving reads return it: no creator is read for them.
fn without_creator(flag: FeatureFlag) -> FeatureFlag {
    FeatureFlag {
        created_by: None,
        ..flag
    }
}

fn rename(name: &str) -> FlagChanges {
    FlagChanges {
        name: Some(name.into()),
        ..FlagChanges::default()
    }
}

/// A create returns the flag as written, created by the user it was given (nothing read back);
/// `get` reads the same creator from storage.
async fn a_created_flag_is_stored_as_given_and_found_by_get_in_its_project_only(stores: Stores) {
    let mut flag = stores.new_flag("beta");
    flag.active = false;
    flag.ensure_experience_continuity = true;
    flag.is_remote_configuration = true;

    let created = stores
        .flags
        .create(stores.project, Some(stores.user.clone()), flag.clone())
        .await
        .unwrap();
    assert_eq!(created.project_id, stores.project);
    assert_eq!(created.name, "Flag beta");
    assert_eq!(created.key, "beta");
    assert_eq!(created.filters, flag.filters);
    assert!(!created.active);
    assert!(created.ensure_experience_continuity);
    assert!(created.is_remote_configuration);
    assert!(!created.deleted);
    assert_eq!(created.created_by, Some(stores.user.clone()));

    let found = stores.flags.get(stores.project, created.id).await.unwrap();
    assert_eq!(found, Some(created.clone()));
    let foreign = stores.flags.get(stores.other_project, created.id).await;
    assert_eq!(foreign.unwrap(), None);
    let missing = stores
        .flags
        .get(stores.project, FlagId(created.id.0 + 1000));
    assert_eq!(missing.await.unwrap(), None);
}

/// `get_by_key` finds the live flag with the key, with its creator; a deleted one, another
/// project's or an unknown key is none.
async fn a_live_flag_is_found_by_its_key_in_its_project_only(stores: Stores) {
    let deleted = stores.flag("beta").await;
    stores.delete_flag(deleted.id).await;
    let live = stores.flag("beta").await;

    let found = stores.flags.get_by_key(stores.project, "beta").await;
    assert_eq!(
        found.unwrap(),
        stores.flags.get(stores.project, live.id).await.unwrap()
    );
    for (project, key) in [(stores.other_project, "beta"), (stores.project, "Beta")] {
        let found = stores.flags.get_by_key(project, key).await;
        assert_eq!(found.unwrap(), None, "{key}");
    }
}

async fn a_flag_without_a_creator_has_no_created_by(stores: Stores) {
    let created = stores
        .flags
        .create(stores.project, None, stores.new_flag("anonymous"))
        .await
        .unwrap();
    assert_eq!(created.created_by, None);
    let listed = stores.flags.list(stores.project, all()).await.unwrap();
    assert_eq!(listed.items, [created]);
}

async fn live_flags_are_listed_newest_first_in_pages_with_their_count(stores: Stores) {
    for key in ["first", "second", "third", "fourth"] {
        stores.flag(key).await;
    }
    let gone = stores.flag("gone").await;
    stores.delete_flag(gone.id).await;
    stores.flag_in(stores.other_project, "elsewhere").await;

    let page = stores.flags.list(stores.project, all()).await.unwrap();
    assert_eq!(page.count, 4);
    assert_eq!(keys(&page.items), ["fourth", "third", "second", "first"]);
    assert_eq!(page.items[0].created_by, Some(stores.user.clone()));

    let window = PageRequest {
        limit: 2,
        offset: 1,
    };
    let window = stores.flags.list(stores.project, window).await.unwrap();
    assert_eq!(window.count, 4);
    assert_eq!(keys(&window.items), ["third", "second"]);

    let past_the_end = PageRequest {
        limit: 2,
        offset: 10,
    };
    let past_the_end = stores.flags.list(stores.project, past_the_end).await;
    let past_the_end = past_the_end.unwrap();
    assert_eq!((past_the_end.count, past_the_end.items.len()), (4, 0));

    let other = stores
        .flags
        .list(stores.other_project, all())
        .await
        .unwrap();
    assert_eq!((other.count, keys(&other.items)), (1, vec!["elsewhere"]));
}

async fn flags_created_at_the_same_instant_are_listed_by_id_descending(stores: Stores) {
    let ids: Vec<FlagId> = [
        stores.flag("first").await,
        stores.flag("second").await,
        stores.flag("third").await,
    ]
    .iter()
    .map(|flag| flag.id)
    .collect();
    stores
        .set_every_created_at(at("2026-01-01T00:00:00Z"))
        .await;

    let page = stores.flags.list(stores.project, all()).await.unwrap();
    let listed: Vec<FlagId> = page.items.iter().map(|flag| flag.id).collect();
    assert_eq!(listed, [ids[2], ids[1], ids[0]]);
}

async fn a_key_is_unique_among_the_live_flags_of_a_project(stores: Stores) {
    let original = stores.flag("beta").await;

    let again = stores
        .flags
        .create(
            stores.project,
            Some(stores.user.clone()),
            stores.new_flag("beta"),
        )
        .await;
    assert!(matches!(again, Err(DomainError::Conflict)), "{again:?}");
    assert_eq!(stores.all_flags().await.len(), 1, "nothing was stored");

    let elsewhere = stores.flag_in(stores.other_project, "beta").await;
    assert_eq!(elsewhere.project_id, stores.other_project);

    let other = stores.flag("gamma").await;
    let taken = FlagChanges {
        key: Some(FlagKey::parse("beta").unwrap()),
        ..FlagChanges::default()
    };
    let renamed = stores.flags.update(stores.project, other.id, taken).await;
    assert!(matches!(renamed, Err(DomainError::Conflict)), "{renamed:?}");
    let unchanged = stores.flags.get(stores.project, other.id).await.unwrap();
    assert_eq!(unchanged, Some(other.clone()));

    let own_key = FlagChanges {
        key: Some(FlagKey::parse("beta").unwrap()),
        ..FlagChanges::default()
    };
    let kept = stores
        .flags
        .update(stores.project, original.id, own_key)
        .await;
    assert_eq!(
        kept.unwrap(),
        without_creator(original),
        "a flag's own key is not taken"
    );
}

async fn deleting_a_flag_hides_it_and_frees_its_key(stores: Stores) {
    let original = stores.flag("beta").await;

    let deleted = stores.delete_flag(original.id).await;
    assert_eq!((deleted.deleted, deleted.active), (true, false));
    assert_eq!(
        stores.flags.get(stores.project, original.id).await.unwrap(),
        None
    );
    assert_eq!(
        stores
            .flags
            .list(stores.project, all())
            .await
            .unwrap()
            .count,
        0
    );

    let reused = stores.flag("beta").await;
    assert_ne!(reused.id, original.id);
    assert_eq!(
        stores.all_flags().await,
        [
            StoredFlag {
                id: original.id,
                key: "beta".into(),
                active: false,
                deleted: true,
            },
            StoredFlag {
                id: reused.id,
                key: "beta".into(),
                active: true,
                deleted: false,
            },
        ]
    );
}

async fn an_update_applies_exactly_the_given_changes(stores: Stores) {
    let created = stores.flag("beta").await;
    let filters = FlagFilters::parse(json!({"groups": [], "payloads": {"true": "{}"}})).unwrap();

    let updated = stores
        .flags
        .update(
            stores.project,
            created.id,
            FlagChanges {
                name: Some("Renamed".into()),
                key: Some(FlagKey::parse("beta-2").unwrap()),
                filters: Some(filters.clone()),
                active: Some(false),
                ensure_experience_continuity: Some(true),
                is_remote_configuration: Some(true),
                deleted: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        updated,
        FeatureFlag {
            name: "Renamed".into(),
            key: "beta-2".into(),
            filters,
            active: false,
            ensure_experience_continuity: true,
            is_remote_configuration: true,
            created_by: None,
            ..created.clone()
        },
        "as written, without the creator its caller holds"
    );
    let found = stores.flags.get(stores.project, created.id).await.unwrap();
    assert_eq!(
        found,
        Some(FeatureFlag {
            created_by: created.created_by.clone(),
            ..updated.clone()
        })
    );

    let unchanged = stores
        .flags
        .update(stores.project, created.id, FlagChanges::default())
        .await
        .unwrap();
    assert_eq!(unchanged, updated);
}

/// The rule that a deleted flag never serves is the domain's (`FlagChanges::deletion`); a store
/// writes what it is given.
async fn an_update_that_only_deletes_leaves_active_as_it_was(stores: Stores) {
    let created = stores.flag("beta").await;
    let only_deleted = FlagChanges {
        deleted: Some(true),
        ..FlagChanges::default()
    };
    let updated = stores
        .flags
        .update(stores.project, created.id, only_deleted)
        .await
        .unwrap();
    assert_eq!((updated.deleted, updated.active), (true, true));
    let stored = stores.all_flags().await;
    assert_eq!((stored[0].deleted, stored[0].active), (true, true));
}

async fn updating_a_deleted_a_foreign_or_a_missing_flag_is_not_found(stores: Stores) {
    let created = stores.flag("beta").await;
    let flags = &stores.flags;

    let foreign = flags.update(stores.other_project, created.id, rename("Hijacked"));
    assert!(matches!(foreign.await, Err(DomainError::NotFound)));
    let foreign_noop = flags.update(stores.other_project, created.id, FlagChanges::default());
    assert!(matches!(foreign_noop.await, Err(DomainError::NotFound)));
    let missing = flags.update(stores.project, FlagId(created.id.0 + 1000), rename("Ghost"));
    assert!(matches!(missing.await, Err(DomainError::NotFound)));
    let found = flags.get(stores.project, created.id).await.unwrap();
    assert_eq!(found, Some(created.clone()));

    stores.delete_flag(created.id).await;
    let renamed = flags.update(stores.project, created.id, rename("Renamed"));
    assert!(matches!(renamed.await, Err(DomainError::NotFound)));
    let revive = FlagChanges {
        deleted: Some(false),
        active: Some(true),
        ..FlagChanges::default()
    };
    let revived = flags.update(stores.project, created.id, revive).await;
    assert!(matches!(revived, Err(DomainError::NotFound)), "{revived:?}");
    let noop = flags.update(stores.project, created.id, FlagChanges::default());
    assert!(matches!(noop.await, Err(DomainError::NotFound)));
    let stored = stores.all_flags().await;
    assert_eq!((stored[0].deleted, stored[0].active), (true, false));
}

async fn updating_a_flag_out_of_reach_to_a_taken_key_is_not_found_rather_than_a_conflict(
    stores: Stores,
) {
    let beta = stores.flag("beta").await;
    stores.flag_in(stores.other_project, "taken").await;
    let to_taken = || FlagChanges {
        key: Some(FlagKey::parse("taken").unwrap()),
        ..FlagChanges::default()
    };
    let foreign = stores
        .flags
        .update(stores.other_project, beta.id, to_taken())
        .await;
    assert!(matches!(foreign, Err(DomainError::NotFound)), "{foreign:?}");

    stores.flag("live").await;
    stores.delete_flag(beta.id).await;
    let to_live = FlagChanges {
        key: Some(FlagKey::parse("live").unwrap()),
        ..FlagChanges::default()
    };
    let deleted = stores.flags.update(stores.project, beta.id, to_live).await;
    assert!(matches!(deleted, Err(DomainError::NotFound)), "{deleted:?}");
}

async fn active_lists_the_projects_serving_flags_by_id_without_their_creators(stores: Stores) {
    let first = stores.flag("first").await;
    let off = stores.flag("off").await;
    let gone = stores.flag("gone").await;
    let last = stores.flag("last").await;
    stores.flag_in(stores.other_project, "elsewhere").await;
    stores
        .flags
        .update(
            stores.project,
            off.id,
            FlagChanges {
                active: Some(false),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    stores.delete_flag(gone.id).await;

    let active = stores.flags.active(stores.project).await.unwrap();
    assert_eq!(active, vec![without_creator(first), without_creator(last)]);
    assert!(
        stores
            .flags
            .active(stores.other_organization_project)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn serving_loads_the_active_flags_within_the_bound_and_only_weighs_them_past_it(
    stores: Stores,
) {
    let none = stores.flags.serving(stores.project, 0).await.unwrap();
    assert!(
        matches!(none, ServingFlags::Loaded(ref flags) if flags.is_empty()),
        "{none:?}"
    );

    let mut patterned = stores.new_flag("patterned");
    patterned.filters = FlagFilters::parse(json!({"groups": [{"properties": [
        {"key": "email", "type": "person", "operator": "regex", "value": "@example\\.com$"},
        {"key": "name", "type": "person", "operator": "not_regex", "value": "^bot"},
    ]}]}))
    .unwrap();
    let patterned = stores
        .flags
        .create(stores.project, Some(stores.user.clone()), patterned)
        .await
        .unwrap();
    let plain = stores.flag("plain").await;
    stores.flag_in(stores.other_project, "elsewhere").await;

    let loaded = stores
        .flags
        .serving(stores.project, u64::MAX)
        .await
        .unwrap();
    let ServingFlags::Loaded(loaded) = loaded else {
        panic!("{loaded:?}")
    };
    assert_eq!(loaded, stores.flags.active(stores.project).await.unwrap());
    assert_eq!(keys(&loaded), ["patterned", "plain"]);

    // Weighed as `FlagFilters::weight` counts: text (storage's may be spaced) and each pattern.
    let weight = patterned.filters.weight() + plain.filters.weight();
    let weighed = stores.flags.serving(stores.project, 100).await.unwrap();
    let ServingFlags::TooLarge(bytes) = weighed else {
        panic!("{weighed:?}")
    };
    let bytes = usize::try_from(bytes).unwrap();
    assert!(
        bytes >= weight && bytes < weight + weight / 4,
        "{bytes} for {weight}"
    );
    assert!(bytes > 2 * REGEX_WEIGHT);
}
