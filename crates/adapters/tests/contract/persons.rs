//! The person repository's contract: a `$set` merges into what is stored (keys given replace,
//! others stay), per project and distinct id.

use serde_json::{Map, Value, json};

use crate::stores::Stores;

contract!(
    an_unknown_person_has_no_properties,
    merging_replaces_the_keys_given_and_keeps_the_others,
    persons_are_kept_apart_by_project_and_distinct_id,
);

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

async fn an_unknown_person_has_no_properties(stores: Stores) {
    let properties = stores.persons.properties(stores.project, "nobody").await;
    assert_eq!(properties.unwrap(), Map::new());
}

async fn merging_replaces_the_keys_given_and_keeps_the_others(stores: Stores) {
    let persons = &stores.persons;
    let first = object(json!({"$survey_responded/s1": true, "plan": "free", "nested": {"a": 1}}));
    persons
        .merge_properties(stores.project, "person-1", &first)
        .await
        .unwrap();
    assert_eq!(
        persons
            .properties(stores.project, "person-1")
            .await
            .unwrap(),
        first
    );

    let second =
        object(json!({"plan": "pro", "nested": {"b": 2}, "gone": null, "ünï": "\u{1F600}"}));
    persons
        .merge_properties(stores.project, "person-1", &second)
        .await
        .unwrap();
    persons
        .merge_properties(stores.project, "person-1", &Map::new())
        .await
        .unwrap();
    assert_eq!(
        persons
            .properties(stores.project, "person-1")
            .await
            .unwrap(),
        object(json!({
            "$survey_responded/s1": true,
            "plan": "pro",
            "nested": {"b": 2},
            "gone": null,
            "ünï": "\u{1F600}",
        }))
    );
}

async fn persons_are_kept_apart_by_project_and_distinct_id(stores: Stores) {
    let set = object(json!({"plan": "pro"}));
    stores
        .persons
        .merge_properties(stores.project, "person-1", &set)
        .await
        .unwrap();
    for (project, distinct_id) in [
        (stores.other_project, "person-1"),
        (stores.other_organization_project, "person-1"),
        (stores.project, "person-2"),
        (stores.project, "PERSON-1"),
    ] {
        assert_eq!(
            stores
                .persons
                .properties(project, distinct_id)
                .await
                .unwrap(),
            Map::new(),
            "{distinct_id}"
        );
    }
}
