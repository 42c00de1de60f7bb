//! Groups over the in-memory fakes: `$groupidentify` captures making group types and groups
//! (through `SurveyResponseService::capture`, as the SDK edge calls it), and the group types
//! API's use cases: names and default columns bounded as PostHog's columns, a type deleted with
//! its groups, a group found by key.

use std::sync::Arc;

use domain::group::{GroupService, GroupTypeIndex, GroupTypeNames, MAX_DEFAULT_COLUMNS};
use domain::survey::SurveyService;
use domain::survey_response::{CapturedEvent, SurveyResponseService};
use domain::tenancy::ProjectId;
use domain::testing::InMemoryStore;
use domain::{DomainError, ValidationError};
use serde_json::{Value, json};

#[path = "support/capture_batch.rs"]
mod capture_batch;

use capture_batch::capture_batch;

const PROJECT: ProjectId = ProjectId(1);

struct World {
    groups: GroupService,
    capture: SurveyResponseService,
}

impl World {
    fn new() -> Self {
        let store = InMemoryStore::new();
        let surveys = Arc::new(SurveyService::new(
            Arc::new(store.clone()),
            Arc::new(store.clone()),
        ));
        Self {
            groups: GroupService::new(Arc::new(store.clone())),
            capture: SurveyResponseService::new(Arc::new(store), surveys),
        }
    }

    /// Captures `$groupidentify` events with these properties, as posthog-js sends them.
    async fn identify(&self, identifies: &[Value]) -> usize {
        let events = identifies
            .iter()
            .map(|properties| {
                let mut properties = properties.as_object().unwrap().clone();
                properties.insert("distinct_id".into(), json!("person-1"));
                CapturedEvent {
                    event: "$groupidentify".into(),
                    properties,
                    ..CapturedEvent::default()
                }
            })
            .collect();
        capture_batch(&self.capture, PROJECT, events).await
    }
}

fn index(index: u64) -> GroupTypeIndex {
    GroupTypeIndex::new(index).unwrap()
}

fn invalid(error: DomainError) -> ValidationError {
    match error {
        DomainError::Invalid(invalid) => invalid,
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_batch_of_group_identifies_alone_makes_types_and_groups() {
    let world = World::new();
    let stored = world
        .identify(&[
            json!({"$group_type": "company", "$group_key": "acme", "$group_set": {"name": "Acme"}}),
            json!({"$group_type": "company", "$group_key": "acme", "$group_set": {"plan": "pro"}}),
            json!({"$group_type": "team", "$group_key": 7}),
            json!({"$group_type": "x".repeat(401), "$group_key": "dropped"}),
        ])
        .await;
    assert_eq!(stored, 0, "no survey event");
    let types = world.groups.types(PROJECT).await.unwrap();
    assert_eq!(
        types
            .iter()
            .map(|t| (t.index.get(), t.group_type.as_str()))
            .collect::<Vec<_>>(),
        [(0, "company"), (1, "team")]
    );
    let acme = world.groups.find(PROJECT, index(0), "acme").await.unwrap();
    assert_eq!(
        Value::Object(acme.properties),
        json!({"name": "Acme", "plan": "pro"})
    );
    assert!(world.groups.find(PROJECT, index(1), "7").await.is_ok());
    let missing = world.groups.find(PROJECT, index(1), "8").await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
}

#[tokio::test]
async fn update_metadata_renames_and_answers_every_type() {
    let world = World::new();
    world
        .identify(&[
            json!({"$group_type": "company", "$group_key": "a"}),
            json!({"$group_type": "team", "$group_key": "b"}),
        ])
        .await;
    let types = world
        .groups
        .update_metadata(
            PROJECT,
            vec![GroupTypeNames {
                index: index(1),
                name_singular: Some(Some("Squad".into())),
                name_plural: Some(Some("Squads".into())),
            }],
        )
        .await
        .unwrap();
    assert_eq!(types.len(), 2);
    assert_eq!(
        (
            types[1].name_singular.as_deref(),
            types[1].name_plural.as_deref()
        ),
        (Some("Squad"), Some("Squads"))
    );
    assert_eq!(types[0].name_singular, None);
    // Nothing to rename answers the list as it is.
    assert_eq!(
        world.groups.update_metadata(PROJECT, vec![]).await.unwrap(),
        types
    );
}

#[tokio::test]
async fn names_past_400_characters_are_refused_naming_their_field() {
    let world = World::new();
    world
        .identify(&[json!({"$group_type": "company", "$group_key": "a"})])
        .await;
    let error = world
        .groups
        .update_metadata(
            PROJECT,
            vec![GroupTypeNames {
                index: index(0),
                name_singular: Some(Some("x".repeat(400))),
                name_plural: Some(Some("x".repeat(401))),
            }],
        )
        .await
        .unwrap_err();
    let error = invalid(error);
    assert_eq!(
        (error.attr.as_deref(), error.detail.as_str()),
        (
            Some("name_plural"),
            "Ensure this field has no more than 400 characters."
        )
    );
    let types = world.groups.types(PROJECT).await.unwrap();
    assert_eq!(types[0].name_singular, None, "nothing was renamed");
}

#[tokio::test]
async fn default_columns_are_bounded_in_number_and_length() {
    let world = World::new();
    world
        .identify(&[json!({"$group_type": "company", "$group_key": "a"})])
        .await;
    let set = |columns: Vec<String>| world.groups.set_default_columns(PROJECT, index(0), columns);

    let most = vec!["c".to_owned(); MAX_DEFAULT_COLUMNS];
    let written = set(most.clone()).await.unwrap();
    assert_eq!(written.default_columns, Some(most));

    let too_many = invalid(
        set(vec!["c".to_owned(); MAX_DEFAULT_COLUMNS + 1])
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (too_many.attr.as_deref(), too_many.detail.as_str()),
        (
            Some("default_columns"),
            "Ensure this field has no more than 100 elements."
        )
    );
    let too_long = invalid(set(vec!["x".repeat(401)]).await.unwrap_err());
    assert_eq!(too_long.attr.as_deref(), Some("default_columns"));

    let missing = world
        .groups
        .set_default_columns(PROJECT, index(3), vec![])
        .await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
}

#[tokio::test]
async fn deleting_a_type_removes_its_groups_and_frees_its_index() {
    let world = World::new();
    world
        .identify(&[
            json!({"$group_type": "company", "$group_key": "acme", "$group_set": {"old": 1}}),
            json!({"$group_type": "team", "$group_key": "t"}),
        ])
        .await;
    world.groups.delete_type(PROJECT, index(0)).await.unwrap();
    let gone = world.groups.find(PROJECT, index(0), "acme").await;
    assert!(matches!(gone, Err(DomainError::NotFound)), "{gone:?}");
    let again = world.groups.delete_type(PROJECT, index(0)).await;
    assert!(matches!(again, Err(DomainError::NotFound)), "{again:?}");

    world
        .identify(&[json!({"$group_type": "project", "$group_key": "p"})])
        .await;
    let types = world.groups.types(PROJECT).await.unwrap();
    assert_eq!(
        types
            .iter()
            .map(|t| (t.index.get(), t.group_type.as_str()))
            .collect::<Vec<_>>(),
        [(0, "project"), (1, "team")]
    );
}
