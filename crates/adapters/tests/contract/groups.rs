//! The group repository's contract, with the captures that make types and groups: a new type
//! takes the lowest free index in the order a capture names it, a project has at most five
//! types (the sets of a sixth are dropped, not kept for later), `$group_set`s merge into the
//! stored properties, renames are all or none, deleting a type frees its index and removes its
//! groups, and another project's types and groups are out of reach.

use domain::DomainError;
use domain::group::{GroupSet, GroupType, GroupTypeIndex, GroupTypeNames};
use domain::person::ProfileSets;
use domain::tenancy::ProjectId;
use serde_json::{Map, Value, json};

use crate::stores::Stores;

contract! {
    new_types_take_the_lowest_free_indices_in_the_order_captures_name_them,
    a_project_has_at_most_five_types_and_a_sixth_types_sets_are_dropped,
    group_sets_merge_into_the_stored_properties,
    a_group_set_that_would_carry_the_properties_past_their_bound_is_dropped,
    renaming_changes_the_names_given_and_is_all_or_none,
    default_columns_are_set_on_an_existing_type_only,
    deleting_a_type_frees_its_index_and_removes_its_groups,
    another_projects_types_and_groups_are_out_of_reach,
}

fn index(index: u64) -> GroupTypeIndex {
    GroupTypeIndex::new(index).expect("an index a project can have")
}

fn properties(value: Value) -> Map<String, Value> {
    value.as_object().expect("an object").clone()
}

fn set(group_type: &str, group_key: &str, group_set: Value) -> GroupSet {
    GroupSet {
        group_type: group_type.to_owned(),
        group_key: group_key.to_owned(),
        properties: properties(group_set),
    }
}

/// Records a capture of these group sets only, in `project`.
async fn capture(stores: &Stores, project: ProjectId, groups: Vec<GroupSet>) {
    let stored = stores
        .survey_responses
        .record(
            project,
            vec![],
            ProfileSets {
                persons: vec![],
                groups,
            },
        )
        .await
        .expect("recording group sets");
    assert_eq!(stored, 0, "no event to store");
}

/// The project's types as `(index, name)`.
async fn types(stores: &Stores, project: ProjectId) -> Vec<(u8, String)> {
    stores
        .groups
        .types(project)
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.index.get(), t.group_type))
        .collect()
}

/// The stored properties of a group, `None` when the store has no such group.
async fn group_properties(
    stores: &Stores,
    project: ProjectId,
    at: u64,
    key: &str,
) -> Option<Map<String, Value>> {
    stores
        .groups
        .find(project, index(at), key)
        .await
        .unwrap()
        .map(|group| {
            assert_eq!(group.index, index(at));
            assert_eq!(group.group_key, key);
            group.properties
        })
}

fn named(at: u64, singular: Option<Option<&str>>, plural: Option<Option<&str>>) -> GroupTypeNames {
    let owned = |name: Option<Option<&str>>| name.map(|name| name.map(str::to_owned));
    GroupTypeNames {
        index: index(at),
        name_singular: owned(singular),
        name_plural: owned(plural),
    }
}

async fn new_types_take_the_lowest_free_indices_in_the_order_captures_name_them(stores: Stores) {
    let project = stores.project;
    capture(
        &stores,
        project,
        vec![
            set("team", "t1", json!({})),
            set("company", "acme", json!({"name": "Acme"})),
            set("team", "t2", json!({})),
        ],
    )
    .await;
    capture(
        &stores,
        project,
        vec![
            set("company", "globex", json!({})),
            set("project", "p1", json!({})),
        ],
    )
    .await;
    assert_eq!(
        types(&stores, project).await,
        [
            (0, "team".to_owned()),
            (1, "company".to_owned()),
            (2, "project".to_owned())
        ]
    );
    let listed = stores.groups.types(project).await.unwrap();
    let GroupType {
        name_singular,
        name_plural,
        default_columns,
        ..
    } = &listed[0];
    assert_eq!(
        (name_singular, name_plural, default_columns),
        (&None, &None, &None),
        "a captured type has no names or columns"
    );
    assert_eq!(
        group_properties(&stores, project, 1, "acme").await,
        Some(properties(json!({"name": "Acme"})))
    );
    assert_eq!(
        group_properties(&stores, project, 0, "t2").await,
        Some(Map::new())
    );
    // A key is found under its own type only.
    assert_eq!(group_properties(&stores, project, 0, "acme").await, None);
}

async fn a_project_has_at_most_five_types_and_a_sixth_types_sets_are_dropped(stores: Stores) {
    let project = stores.project;
    let sets = (0..7)
        .map(|n| set(&format!("type-{n}"), "k", json!({"n": n})))
        .collect();
    capture(&stores, project, sets).await;
    assert_eq!(
        types(&stores, project).await,
        (0..5).map(|n| (n, format!("type-{n}"))).collect::<Vec<_>>()
    );
    assert_eq!(
        group_properties(&stores, project, 4, "k").await,
        Some(properties(json!({"n": 4})))
    );

    // A freed index goes to the next new type; what its sets said while it had none was not
    // kept.
    stores.groups.delete_type(project, index(2)).await.unwrap();
    capture(
        &stores,
        project,
        vec![set("type-5", "later", json!({"n": 50}))],
    )
    .await;
    assert_eq!(types(&stores, project).await[2], (2, "type-5".to_owned()));
    assert_eq!(group_properties(&stores, project, 2, "k").await, None);
    assert_eq!(
        group_properties(&stores, project, 2, "later").await,
        Some(properties(json!({"n": 50})))
    );
}

async fn group_sets_merge_into_the_stored_properties(stores: Stores) {
    let project = stores.project;
    capture(
        &stores,
        project,
        vec![set(
            "company",
            "acme",
            json!({"name": "Acme", "plan": "free", "seats": 3}),
        )],
    )
    .await;
    let first = stores
        .groups
        .find(project, index(0), "acme")
        .await
        .unwrap()
        .unwrap();
    capture(
        &stores,
        project,
        vec![
            set("company", "acme", json!({"plan": "pro"})),
            set("company", "acme", json!({"seats": 5, "region": "eu"})),
        ],
    )
    .await;
    let merged = stores
        .groups
        .find(project, index(0), "acme")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        Value::Object(merged.properties),
        json!({"name": "Acme", "plan": "pro", "seats": 5, "region": "eu"})
    );
    assert_eq!(merged.created_at, first.created_at, "created once");
    // An identify without `$group_set` changes nothing.
    capture(&stores, project, vec![set("company", "acme", json!({}))]).await;
    assert_eq!(
        group_properties(&stores, project, 0, "acme")
            .await
            .unwrap()
            .len(),
        4
    );
}

async fn a_group_set_that_would_carry_the_properties_past_their_bound_is_dropped(stores: Stores) {
    let project = stores.project;
    let heavy = |kib: usize| Value::String("x".repeat(kib * 1024));
    capture(
        &stores,
        project,
        vec![set("company", "acme", json!({"a": heavy(400)}))],
    )
    .await;
    capture(
        &stores,
        project,
        vec![set(
            "company",
            "acme",
            json!({"b": heavy(400), "plan": "pro"}),
        )],
    )
    .await;
    let stored = group_properties(&stores, project, 0, "acme").await.unwrap();
    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        ["a"],
        "the set past the bound is dropped"
    );
    // Two sets in one capture are weighed together.
    capture(
        &stores,
        project,
        vec![
            set("company", "globex", json!({"a": heavy(400)})),
            set("company", "globex", json!({"b": heavy(400)})),
        ],
    )
    .await;
    assert_eq!(
        group_properties(&stores, project, 0, "globex").await,
        Some(Map::new()),
        "identified, without the sets past the bound"
    );
    capture(
        &stores,
        project,
        vec![set("company", "acme", json!({"plan": "pro"}))],
    )
    .await;
    let stored = group_properties(&stores, project, 0, "acme").await.unwrap();
    assert_eq!(stored["plan"], "pro", "a set within the bound still merges");
}

async fn renaming_changes_the_names_given_and_is_all_or_none(stores: Stores) {
    let project = stores.project;
    capture(
        &stores,
        project,
        vec![set("company", "a", json!({})), set("team", "b", json!({}))],
    )
    .await;
    stores
        .groups
        .rename(
            project,
            vec![
                named(0, Some(Some("Company")), Some(Some("Companies"))),
                named(1, Some(Some("Team")), None),
            ],
        )
        .await
        .unwrap();
    let names = |listed: Vec<GroupType>| {
        listed
            .into_iter()
            .map(|t| (t.name_singular, t.name_plural))
            .collect::<Vec<_>>()
    };
    let some = |name: &str| Some(name.to_owned());
    assert_eq!(
        names(stores.groups.types(project).await.unwrap()),
        [(some("Company"), some("Companies")), (some("Team"), None)]
    );

    // One type missing: nothing is renamed.
    let refused = stores
        .groups
        .rename(
            project,
            vec![
                named(0, Some(Some("Firm")), None),
                named(3, Some(Some("x")), None),
            ],
        )
        .await;
    assert!(matches!(refused, Err(DomainError::NotFound)), "{refused:?}");
    assert_eq!(
        names(stores.groups.types(project).await.unwrap())[0],
        (some("Company"), some("Companies"))
    );

    // `Some(None)` clears a name; `None` leaves it.
    stores
        .groups
        .rename(project, vec![named(0, Some(None), None)])
        .await
        .unwrap();
    assert_eq!(
        names(stores.groups.types(project).await.unwrap())[0],
        (None, some("Companies"))
    );
}

async fn default_columns_are_set_on_an_existing_type_only(stores: Stores) {
    let project = stores.project;
    capture(&stores, project, vec![set("company", "a", json!({}))]).await;
    let columns = vec!["name".to_owned(), "plan".to_owned()];
    let written = stores
        .groups
        .set_default_columns(project, index(0), columns.clone())
        .await
        .unwrap();
    assert_eq!(
        (
            written.group_type.as_str(),
            written.default_columns.as_ref()
        ),
        ("company", Some(&columns))
    );
    assert_eq!(stores.groups.types(project).await.unwrap(), vec![written]);
    for (on, at) in [(project, 1), (stores.other_project, 0)] {
        let refused = stores
            .groups
            .set_default_columns(on, index(at), columns.clone())
            .await;
        assert!(matches!(refused, Err(DomainError::NotFound)), "{refused:?}");
    }
}

async fn deleting_a_type_frees_its_index_and_removes_its_groups(stores: Stores) {
    let project = stores.project;
    capture(
        &stores,
        project,
        vec![
            set("company", "acme", json!({"old": true})),
            set("team", "t", json!({})),
        ],
    )
    .await;
    stores.groups.delete_type(project, index(0)).await.unwrap();
    assert_eq!(types(&stores, project).await, [(1, "team".to_owned())]);
    assert_eq!(group_properties(&stores, project, 0, "acme").await, None);
    let again = stores.groups.delete_type(project, index(0)).await;
    assert!(matches!(again, Err(DomainError::NotFound)), "{again:?}");

    // Named again, the type takes the freed index, and its groups start afresh.
    capture(
        &stores,
        project,
        vec![set("company", "acme", json!({"new": true}))],
    )
    .await;
    assert_eq!(types(&stores, project).await[0], (0, "company".to_owned()));
    assert_eq!(
        group_properties(&stores, project, 0, "acme").await,
        Some(properties(json!({"new": true})))
    );
    // The other type's groups are untouched.
    assert_eq!(
        group_properties(&stores, project, 1, "t").await,
        Some(Map::new())
    );
}

async fn another_projects_types_and_groups_are_out_of_reach(stores: Stores) {
    capture(
        &stores,
        stores.other_project,
        vec![set("company", "acme", json!({"secret": true}))],
    )
    .await;
    assert_eq!(types(&stores, stores.project).await, []);
    assert_eq!(
        group_properties(&stores, stores.project, 0, "acme").await,
        None
    );
    let refused = stores.groups.delete_type(stores.project, index(0)).await;
    assert!(matches!(refused, Err(DomainError::NotFound)), "{refused:?}");
    let refused = stores
        .groups
        .rename(stores.project, vec![named(0, Some(Some("x")), None)])
        .await;
    assert!(matches!(refused, Err(DomainError::NotFound)), "{refused:?}");

    // The same type in this project gets its own index and groups.
    capture(&stores, stores.project, vec![set("team", "t", json!({}))]).await;
    capture(
        &stores,
        stores.project,
        vec![set("company", "acme", json!({}))],
    )
    .await;
    assert_eq!(
        types(&stores, stores.project).await,
        [(0, "team".to_owned()), (1, "company".to_owned())]
    );
    assert_eq!(
        group_properties(&stores, stores.project, 1, "acme").await,
        Some(Map::new())
    );
    assert_eq!(
        group_properties(&stores, stores.other_project, 0, "acme").await,
        Some(properties(json!({"secret": true})))
    );
}
