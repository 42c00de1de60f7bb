//! The person repository's contract: a `$set` merges into what is stored (keys given replace,
//! others stay), per project and distinct id. Persons are written the one way Burrow writes
//! them: as a capture's person sets (`SurveyResponseRepository::record`).

use domain::person::PersonSet;
use domain::tenancy::ProjectId;
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

/// Merges `properties` into the person as a capture without events does.
async fn merge(stores: &Stores, project: ProjectId, distinct_id: &str, properties: &Value) {
    let set = PersonSet {
        distinct_id: distinct_id.to_owned(),
        properties: object(properties.clone()),
    };
    let stored = stores
        .survey_responses
        .record(project, vec![], vec![set])
        .await;
    assert_eq!(stored.unwrap(), 0, "no event to store");
}

async fn an_unknown_person_has_no_properties(stores: Stores) {
    let properties = stores.persons.properties(stores.project, "nobody").await;
    assert_eq!(properties.unwrap(), Map::new());
}

async fn merging_replaces_the_keys_given_and_keeps_the_others(stores: Stores) {
    let persons = &stores.persons;
    let first = json!({"$survey_responded/s1": true, "plan": "free", "nested": {"a": 1}});
    merge(&stores, stores.project, "person-1", &first).await;
    assert_eq!(
        persons
            .properties(stores.project, "person-1")
            .await
            .unwrap(),
        object(first)
    );

    let second = json!({"plan": "pro", "nested": {"b": 2}, "gone": null, "ünï": "\u{1F600}"});
    merge(&stores, stores.project, "person-1", &second).await;
    merge(&stores, stores.project, "person-1", &json!({})).await;
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
    merge(&stores, stores.project, "person-1", &json!({"plan": "pro"})).await;
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
