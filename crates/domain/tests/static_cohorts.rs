//! Static cohorts over the in-memory fakes: created from a CSV or person UUIDs, added to and
//! removed from by UUID with PostHog's checks, counted, listed, bounded per cohort and per
//! project, and emptied when deleted.

use std::sync::Arc;

use domain::DomainError;
use domain::cohort::{
    CohortChanges, CohortFilters, CohortId, CohortListFilter, CohortService, CountedCohort,
    MAX_COHORT_MEMBERS, MAX_CSV_PERSONS, MAX_PROJECT_MEMBERS, NamedPersons, NewCohort, Removal,
    read_csv,
};
use domain::person::{PersonSet, ProfileSets};
use domain::ports::PageRequest;
use domain::survey_response::SurveyResponseRepository;
use domain::tenancy::{ProjectId, UserBasic, UserId};
use domain::testing::{InMemoryStore, someone};
use serde_json::{Value, json};
use uuid::Uuid;

const PROJECT: ProjectId = ProjectId(1);
const OTHER_PROJECT: ProjectId = ProjectId(2);

fn user() -> UserBasic {
    someone(UserId(1))
}

struct World {
    store: InMemoryStore,
    cohorts: CohortService,
}

impl World {
    fn new() -> Self {
        let store = InMemoryStore::new();
        Self {
            cohorts: CohortService::new(Arc::new(store.clone()), Arc::new(store.clone())),
            store,
        }
    }

    /// A static cohort of `project` listing `persons` from the start.
    async fn static_in(
        &self,
        project: ProjectId,
        persons: Vec<NamedPersons>,
    ) -> Result<CountedCohort, DomainError> {
        let cohort = NewCohort {
            name: "Beta testers".into(),
            description: String::new(),
            filters: CohortFilters::empty(),
            is_static: true,
        };
        self.cohorts.create(project, &user(), cohort, persons).await
    }

    async fn static_cohort(&self, persons: Vec<NamedPersons>) -> CountedCohort {
        self.static_in(PROJECT, persons).await.unwrap()
    }

    /// A person of `project` as capture stores one (a `$set`), and their UUID.
    async fn person_in(&self, project: ProjectId, distinct_id: &str) -> Uuid {
        let set = PersonSet {
            distinct_id: distinct_id.to_owned(),
            properties: json!({"email": format!("{distinct_id}@example.com")})
                .as_object()
                .unwrap()
                .clone(),
        };
        let sets = ProfileSets {
            persons: vec![set],
            ..ProfileSets::default()
        };
        self.store.record(project, vec![], sets).await.unwrap();
        self.uuid_of(project, distinct_id).await
    }

    async fn person(&self, distinct_id: &str) -> Uuid {
        self.person_in(PROJECT, distinct_id).await
    }

    /// The UUID of a captured person, as a static cohort listing them shows it.
    async fn uuid_of(&self, project: ProjectId, distinct_id: &str) -> Uuid {
        let probe = self
            .static_in(project, vec![distinct(&[distinct_id])])
            .await
            .unwrap();
        let page = self
            .cohorts
            .persons(project, probe.cohort.id, all())
            .await
            .unwrap();
        page.items[0].uuid
    }

    async fn count(&self, id: CohortId) -> Option<u64> {
        self.cohorts.get(PROJECT, id).await.unwrap().count
    }

    async fn listed(&self, id: CohortId) -> Vec<String> {
        let page = self.cohorts.persons(PROJECT, id, all()).await.unwrap();
        page.items.into_iter().map(|p| p.distinct_id).collect()
    }
}

fn all() -> PageRequest {
    PageRequest {
        limit: 1000,
        offset: 0,
    }
}

fn distinct(ids: &[&str]) -> NamedPersons {
    NamedPersons::DistinctIds(ids.iter().map(|id| (*id).to_owned()).collect())
}

fn refusal(error: DomainError) -> (Option<String>, String) {
    match error {
        DomainError::Invalid(error) => (error.attr, error.detail),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_static_cohort_lists_distinct_ids_captured_or_not_and_counts_them() {
    let world = World::new();
    world.person("alice").await;
    let created = world
        .static_cohort(vec![distinct(&["alice", "not-seen-yet"])])
        .await;
    assert!(created.cohort.is_static);
    assert_eq!(created.cohort.filters, CohortFilters::empty());
    assert_eq!(created.count, Some(2));
    assert_eq!(world.count(created.cohort.id).await, Some(2));
    // Only captured members are persons, with their UUIDs.
    assert_eq!(world.listed(created.cohort.id).await, ["alice"]);

    // Once seen, the listed distinct id is a person of the cohort.
    world.person("not-seen-yet").await;
    assert_eq!(
        world.listed(created.cohort.id).await,
        ["alice", "not-seen-yet"]
    );

    let empty = world.static_cohort(vec![]).await;
    assert_eq!(empty.count, Some(0));
    let page = world
        .cohorts
        .list(PROJECT, &CohortListFilter::default(), all())
        .await
        .unwrap();
    let counts: Vec<Option<u64>> = page.items.iter().map(|c| c.count).collect();
    assert!(
        counts.contains(&Some(2)) && counts.contains(&Some(0)),
        "{counts:?}"
    );
}

#[tokio::test]
async fn a_csv_upload_adds_to_what_the_cohort_lists() {
    let world = World::new();
    let cohort = world
        .static_cohort(vec![read_csv(b"alice\nbob\n").unwrap()])
        .await;
    let more = read_csv(b"distinct_id,plan\nbob,pro\ncarol,free\n").unwrap();
    let updated = world
        .cohorts
        .update(
            PROJECT,
            cohort.cohort.id,
            CohortChanges {
                name: Some("Renamed".into()),
                ..CohortChanges::default()
            },
            vec![more],
        )
        .await
        .unwrap();
    assert_eq!(updated.count, Some(3));
    assert_eq!(updated.cohort.name, "Renamed");
}

#[tokio::test]
async fn persons_are_added_and_removed_by_uuid_within_the_project() {
    let world = World::new();
    let alice = world.person("alice").await;
    let bob = world.person("bob").await;
    let stranger = world.person_in(OTHER_PROJECT, "stranger").await;
    let cohort = world.static_cohort(vec![]).await.cohort.id;

    let ids = json!([alice.to_string(), stranger.to_string(), "garbage"]);
    world
        .cohorts
        .add_persons(PROJECT, cohort, Some(&ids))
        .await
        .unwrap();
    assert_eq!(world.listed(cohort).await, ["alice"]);

    let none_valid = json!([stranger.to_string(), Uuid::new_v4().to_string()]);
    let error = world
        .cohorts
        .add_persons(PROJECT, cohort, Some(&none_valid))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(error),
        (None, "No valid users to add to cohort".into())
    );

    let removed = world
        .cohorts
        .remove_person(PROJECT, cohort, Some(&json!(alice.to_string())))
        .await;
    assert_eq!(removed.unwrap(), Removal::Removed);
    // Idempotent, as PostHog's: a person not listed is removed all the same.
    let again = world
        .cohorts
        .remove_person(PROJECT, cohort, Some(&json!(bob.to_string())))
        .await;
    assert_eq!(again.unwrap(), Removal::Removed);
    for unknown in [stranger, Uuid::new_v4()] {
        let removal = world
            .cohorts
            .remove_person(PROJECT, cohort, Some(&json!(unknown.to_string())))
            .await;
        assert_eq!(removal.unwrap(), Removal::NoSuchPerson);
    }
    assert_eq!(world.count(cohort).await, Some(0));
}

#[tokio::test]
async fn dynamic_cohorts_refuse_what_only_static_ones_take() {
    let world = World::new();
    let filters = CohortFilters::parse(&json!({"properties": {"type": "AND", "values": [
        {"key": "plan", "type": "person", "operator": "exact", "value": "pro"}]}}))
    .unwrap();
    let dynamic = world
        .cohorts
        .create(
            PROJECT,
            &user(),
            NewCohort {
                name: "Pro".into(),
                description: String::new(),
                filters: filters.clone(),
                is_static: false,
            },
            // Ignored, as PostHog ignores a CSV sent with a dynamic cohort.
            vec![distinct(&["alice"])],
        )
        .await
        .unwrap();
    assert_eq!(dynamic.count, None);
    let id = dynamic.cohort.id;
    let uuid = json!([Uuid::new_v4().to_string()]);
    let error = world.cohorts.add_persons(PROJECT, id, Some(&uuid)).await;
    assert_eq!(
        refusal(error.unwrap_err()).1,
        "Can only add users to static cohorts"
    );
    // The cohort's kind comes first, as in PostHog: even an empty list is refused for it.
    let error = world
        .cohorts
        .add_persons(PROJECT, id, Some(&json!([])))
        .await;
    assert_eq!(
        refusal(error.unwrap_err()).1,
        "Can only add users to static cohorts"
    );
    let error = world.cohorts.remove_person(PROJECT, id, None).await;
    assert_eq!(
        refusal(error.unwrap_err()).1,
        "Can only remove users from static cohorts"
    );
    let error = world.cohorts.persons(PROJECT, id, all()).await;
    assert!(
        refusal(error.unwrap_err())
            .1
            .contains("static cohorts only")
    );

    let flip = CohortChanges {
        is_static: Some(true),
        ..CohortChanges::default()
    };
    let error = world.cohorts.update(PROJECT, id, flip, vec![]).await;
    assert_eq!(refusal(error.unwrap_err()).0.as_deref(), Some("is_static"));
    let same = CohortChanges {
        is_static: Some(false),
        ..CohortChanges::default()
    };
    assert!(
        world
            .cohorts
            .update(PROJECT, id, same, vec![])
            .await
            .is_ok()
    );

    // A static cohort takes no criteria, on create or later.
    let with_filters = NewCohort {
        name: "Static".into(),
        description: String::new(),
        filters: filters.clone(),
        is_static: true,
    };
    let error = world
        .cohorts
        .create(PROJECT, &user(), with_filters, vec![])
        .await;
    assert_eq!(refusal(error.unwrap_err()).0.as_deref(), Some("filters"));
    let listed = world.static_cohort(vec![]).await.cohort.id;
    let criteria = CohortChanges {
        filters: Some(filters),
        ..CohortChanges::default()
    };
    let error = world
        .cohorts
        .update(PROJECT, listed, criteria, vec![])
        .await;
    assert_eq!(
        refusal(error.unwrap_err()).1,
        "Editing the criteria of a static cohort is not supported yet. Create a new static \
         cohort instead."
    );
}

#[tokio::test]
async fn missing_deleted_and_foreign_cohorts_are_not_found() {
    let world = World::new();
    let foreign = world
        .static_in(OTHER_PROJECT, vec![])
        .await
        .unwrap()
        .cohort
        .id;
    let deleted = world
        .static_cohort(vec![distinct(&["alice"])])
        .await
        .cohort
        .id;
    let deletion = CohortChanges {
        deleted: Some(true),
        ..CohortChanges::default()
    };
    let gone = world
        .cohorts
        .update(PROJECT, deleted, deletion, vec![])
        .await;
    assert_eq!(gone.unwrap().count, Some(0));
    let uuid = json!(Uuid::new_v4().to_string());
    for id in [foreign, deleted, CohortId(404)] {
        let add = world
            .cohorts
            .add_persons(PROJECT, id, Some(&json!([uuid])))
            .await;
        assert!(matches!(add, Err(DomainError::NotFound)), "{add:?}");
        let remove = world.cohorts.remove_person(PROJECT, id, Some(&uuid)).await;
        assert!(matches!(remove, Err(DomainError::NotFound)), "{remove:?}");
        let persons = world.cohorts.persons(PROJECT, id, all()).await;
        assert!(matches!(persons, Err(DomainError::NotFound)), "{persons:?}");
    }
}

/// Ten CSV-sized uploads fill a cohort; past its bound, or the project's, a write adds nothing.
#[tokio::test]
async fn members_are_bounded_per_cohort_and_per_project() {
    let world = World::new();
    let batch = |cohort: u64, n: u64| -> NamedPersons {
        let ids = (0..MAX_CSV_PERSONS as u64)
            .map(|i| format!("c{cohort}-{}", n * MAX_CSV_PERSONS as u64 + i))
            .collect();
        NamedPersons::DistinctIds(ids)
    };
    let per_cohort = MAX_COHORT_MEMBERS / MAX_CSV_PERSONS as u64;
    let mut full = Vec::new();
    for cohort in 0..MAX_PROJECT_MEMBERS / MAX_COHORT_MEMBERS {
        let id = world.static_cohort(vec![batch(cohort, 0)]).await.cohort.id;
        for n in 1..per_cohort {
            let added = world
                .cohorts
                .update(
                    PROJECT,
                    id,
                    CohortChanges::default(),
                    vec![batch(cohort, n)],
                )
                .await
                .unwrap();
            assert_eq!(added.count, Some((n + 1) * MAX_CSV_PERSONS as u64));
        }
        full.push(id);
    }
    let one_more = || vec![distinct(&["one-more"])];
    let error = world
        .cohorts
        .update(PROJECT, full[0], CohortChanges::default(), one_more())
        .await
        .unwrap_err();
    assert!(
        refusal(error)
            .1
            .starts_with("A static cohort may list at most 50000 persons"),
    );
    assert_eq!(world.count(full[0]).await, Some(MAX_COHORT_MEMBERS));
    // Persons listed already add nothing, so they pass.
    let again = world
        .cohorts
        .update(
            PROJECT,
            full[0],
            CohortChanges::default(),
            vec![batch(0, 0)],
        )
        .await;
    assert_eq!(again.unwrap().count, Some(MAX_COHORT_MEMBERS));

    let error = world.static_in(PROJECT, one_more()).await.unwrap_err();
    assert!(
        refusal(error)
            .1
            .starts_with("A project's static cohorts may list at most 100000"),
    );
    let names: Vec<String> = world
        .cohorts
        .list(PROJECT, &CohortListFilter::default(), all())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.cohort.name)
        .collect();
    assert_eq!(
        names.len(),
        full.len(),
        "the refused cohort was not created"
    );
    // Another project has a budget of its own; deleting a cohort frees the project's.
    assert!(world.static_in(OTHER_PROJECT, one_more()).await.is_ok());
    let deletion = CohortChanges {
        deleted: Some(true),
        ..CohortChanges::default()
    };
    world
        .cohorts
        .update(PROJECT, full[1], deletion, vec![])
        .await
        .unwrap();
    assert!(world.static_in(PROJECT, one_more()).await.is_ok());
}

#[tokio::test]
async fn a_persons_page_is_ordered_by_distinct_id_and_counted() {
    let world = World::new();
    for id in ["d", "b", "a", "c"] {
        world.person(id).await;
    }
    let cohort = world
        .static_cohort(vec![distinct(&["c", "a", "d", "b", "unseen"])])
        .await;
    let page = world
        .cohorts
        .persons(
            PROJECT,
            cohort.cohort.id,
            PageRequest {
                limit: 2,
                offset: 1,
            },
        )
        .await
        .unwrap();
    let ids: Vec<&str> = page.items.iter().map(|p| p.distinct_id.as_str()).collect();
    assert_eq!((page.count, ids), (4, vec!["b", "c"]));
    assert_eq!(
        page.items[0].properties["email"],
        Value::from("b@example.com")
    );
}
