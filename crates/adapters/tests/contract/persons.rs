//! The person repository's contract: a `$set` merges into what is stored (keys given replace,
//! others stay), per project and distinct id. Persons are written the one way Burrow writes
//! them: as a capture's person sets (`SurveyResponseRepository::record`). A profile read gives,
//! beside the person's properties, the properties of the groups asked for and the person's hash
//! key overrides, which are kept once and never replaced.

use std::collections::HashMap;

use domain::group::{GroupKey, GroupSet};
use domain::person::{PersonSet, Profile, ProfileQuery, ProfileSets};
use domain::tenancy::ProjectId;
use domain::testing::person_properties;
use serde_json::{Map, Value, json};

use crate::stores::{Stores, person_sets};

contract!(
    an_unknown_person_has_no_properties,
    merging_replaces_the_keys_given_and_keeps_the_others,
    a_set_that_would_carry_the_properties_past_their_bound_is_dropped,
    persons_are_kept_apart_by_project_and_distinct_id,
    a_profile_holds_the_groups_asked_for_in_their_order,
    hash_key_overrides_are_kept_once_per_flag_and_read_when_asked,
    the_last_seen_survey_date_only_moves_forward,
);

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// Merges `properties` into the person as a capture without events does.
async fn merge(stores: &Stores, project: ProjectId, distinct_id: &str, properties: &Value) {
    let set = PersonSet {
        distinct_id: distinct_id.to_owned(),
        properties: object(properties.clone()),
    };
    let stored = stores
        .survey_responses
        .record(project, vec![], person_sets(vec![set]))
        .await;
    assert_eq!(stored.unwrap(), 0, "no event to store");
}

/// The properties stored for `distinct_id` in `project`.
async fn properties_of(
    stores: &Stores,
    project: ProjectId,
    distinct_id: &str,
) -> Map<String, Value> {
    person_properties(&*stores.persons, project, distinct_id)
        .await
        .unwrap()
}

async fn an_unknown_person_has_no_properties(stores: Stores) {
    let properties = person_properties(&*stores.persons, stores.project, "nobody").await;
    assert_eq!(properties.unwrap(), Map::new());
}

async fn merging_replaces_the_keys_given_and_keeps_the_others(stores: Stores) {
    let first = json!({"$survey_responded/s1": true, "plan": "free", "nested": {"a": 1}});
    merge(&stores, stores.project, "person-1", &first).await;
    assert_eq!(
        properties_of(&stores, stores.project, "person-1").await,
        object(first)
    );

    let second = json!({"plan": "pro", "nested": {"b": 2}, "gone": null, "ünï": "\u{1F600}"});
    merge(&stores, stores.project, "person-1", &second).await;
    merge(&stores, stores.project, "person-1", &json!({})).await;
    assert_eq!(
        properties_of(&stores, stores.project, "person-1").await,
        object(json!({
            "$survey_responded/s1": true,
            "plan": "pro",
            "nested": {"b": 2},
            "gone": null,
            "ünï": "\u{1F600}",
        }))
    );
}

/// A string property weighing about `kib` KiB.
fn heavy(kib: usize) -> Value {
    Value::String("x".repeat(kib * 1024))
}

async fn a_set_that_would_carry_the_properties_past_their_bound_is_dropped(stores: Stores) {
    let project = stores.project;
    let heavy_and_small = json!({"b": heavy(400), "plan": "pro"});
    merge(&stores, project, "big", &json!({"a": heavy(400)})).await;
    // 800 KiB together: past 640 KiB, so the whole set is dropped, its small key too.
    merge(&stores, project, "big", &heavy_and_small).await;
    let stored = properties_of(&stores, project, "big").await;
    assert_eq!(stored.keys().collect::<Vec<_>>(), ["a"]);
    // Replacing a heavy key with a light one keeps within the bound, and later sets merge.
    merge(&stores, project, "big", &json!({"a": "light"})).await;
    merge(&stores, project, "big", &heavy_and_small).await;
    let stored = properties_of(&stores, project, "big").await;
    assert_eq!(stored["a"], "light");
    assert_eq!(stored["plan"], "pro");
    // A new person whose first set is past the bound is stored without it.
    merge(&stores, project, "born-big", &json!({"a": heavy(700)})).await;
    assert_eq!(
        properties_of(&stores, project, "born-big").await,
        Map::new()
    );
    // Another person of the project is not held back by these.
    merge(&stores, project, "small", &json!({"plan": "free"})).await;
    assert_eq!(
        properties_of(&stores, project, "small").await,
        object(json!({"plan": "free"}))
    );
}

async fn persons_are_kept_apart_by_project_and_distinct_id(stores: Stores) {
    merge(&stores, stores.project, "person-1", &json!({"plan": "pro"})).await;
    for (project, distinct_id) in [
        (stores.other_project, "person-1"),
        (stores.other_organization_project, "person-1"),
        (stores.project, "person-2"),
        (stores.project, "PERSON-1"),
    ] {
        assert_eq!(
            properties_of(&stores, project, distinct_id).await,
            Map::new(),
            "{distinct_id}"
        );
    }
}

fn group(group_type: &str, group_key: &str) -> GroupKey {
    GroupKey {
        group_type: group_type.to_owned(),
        group_key: group_key.to_owned(),
    }
}

async fn profile(stores: &Stores, project: ProjectId, query: ProfileQuery<'_>) -> Profile {
    stores.persons.profile(project, &query).await.unwrap()
}

fn query<'a>(distinct_id: &'a str, groups: &'a [GroupKey], overrides: bool) -> ProfileQuery<'a> {
    ProfileQuery {
        distinct_id,
        groups,
        hash_key_overrides: overrides,
        static_cohorts: &[],
    }
}

async fn a_profile_holds_the_groups_asked_for_in_their_order(stores: Stores) {
    merge(&stores, stores.project, "p", &json!({"plan": "pro"})).await;
    let sets = ProfileSets {
        persons: Vec::new(),
        groups: vec![
            GroupSet {
                group_type: "company".to_owned(),
                group_key: "acme".to_owned(),
                properties: object(json!({"tier": "enterprise"})),
            },
            GroupSet {
                group_type: "team".to_owned(),
                group_key: "t\u{0}1".to_owned(),
                properties: object(json!({"size": 3})),
            },
        ],
    };
    stores
        .survey_responses
        .record(stores.project, vec![], sets)
        .await
        .unwrap();

    let asked = [
        group("team", "t\u{0}1"),
        group("company", "bolt"),
        group("company", "acme"),
    ];
    let read = profile(&stores, stores.project, query("p", &asked, false)).await;
    assert_eq!(read.properties, object(json!({"plan": "pro"})));
    assert_eq!(
        read.groups,
        [
            object(json!({"size": 3})),
            Map::new(),
            object(json!({"tier": "enterprise"}))
        ]
    );
    assert!(read.hash_key_overrides.is_empty());
    let elsewhere = profile(&stores, stores.other_project, query("p", &asked, false)).await;
    assert_eq!(elsewhere.groups, [Map::new(), Map::new(), Map::new()]);
    assert_eq!(elsewhere.properties, Map::new());
}

async fn hash_key_overrides_are_kept_once_per_flag_and_read_when_asked(stores: Stores) {
    let persons = &stores.persons;
    persons
        .keep_hash_keys(stores.project, "user", "anon-1", &["a", "b"])
        .await
        .unwrap();
    persons
        .keep_hash_keys(stores.project, "user", "anon-2", &["b", "c"])
        .await
        .unwrap();
    let read = profile(&stores, stores.project, query("user", &[], true)).await;
    let expected: HashMap<String, String> = [("a", "anon-1"), ("b", "anon-1"), ("c", "anon-2")]
        .into_iter()
        .map(|(flag, key)| (flag.to_owned(), key.to_owned()))
        .collect();
    assert_eq!(read.hash_key_overrides, expected);
    let unasked = profile(&stores, stores.project, query("user", &[], false)).await;
    assert!(unasked.hash_key_overrides.is_empty());
    for (project, distinct_id) in [(stores.other_project, "user"), (stores.project, "anon-1")] {
        let other = profile(&stores, project, query(distinct_id, &[], true)).await;
        assert!(other.hash_key_overrides.is_empty(), "{distinct_id}");
    }
}

/// `$last_seen_survey_date` as capture writes it, `seconds` past a fixed moment.
fn seen(seconds: i64) -> Value {
    let moment = chrono::DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap();
    domain::person::last_seen_survey_date(moment)
}

async fn the_last_seen_survey_date_only_moves_forward(stores: Stores) {
    let read = async || properties_of(&stores, stores.project, "p").await;
    merge(
        &stores,
        stores.project,
        "p",
        &json!({"$last_seen_survey_date": seen(60), "$survey_last_seen_date": "as sent"}),
    )
    .await;
    // An older date arriving later is dropped; the set's other keys still replace.
    merge(
        &stores,
        stores.project,
        "p",
        &json!({"$last_seen_survey_date": seen(0), "$survey_last_seen_date": "newer text"}),
    )
    .await;
    assert_eq!(
        read().await,
        object(json!({"$last_seen_survey_date": seen(60), "$survey_last_seen_date": "newer text"}))
    );
    merge(
        &stores,
        stores.project,
        "p",
        &json!({"$last_seen_survey_date": seen(120)}),
    )
    .await;
    assert_eq!(read().await["$last_seen_survey_date"], seen(120));
    // Two sets of one person written together, out of order: the later date stays.
    let set = |seconds| PersonSet {
        distinct_id: "p".to_owned(),
        properties: object(json!({"$last_seen_survey_date": seen(seconds)})),
    };
    stores
        .survey_responses
        .record(
            stores.project,
            vec![],
            person_sets(vec![set(240), set(180)]),
        )
        .await
        .unwrap();
    assert_eq!(read().await["$last_seen_survey_date"], seen(240));
    // A value of another shape, either side, is set as any key is.
    merge(
        &stores,
        stores.project,
        "p",
        &json!({"$last_seen_survey_date": "2099-01-01"}),
    )
    .await;
    assert_eq!(read().await["$last_seen_survey_date"], json!("2099-01-01"));
    merge(
        &stores,
        stores.project,
        "p",
        &json!({"$last_seen_survey_date": seen(0)}),
    )
    .await;
    assert_eq!(read().await["$last_seen_survey_date"], seen(0));
}
