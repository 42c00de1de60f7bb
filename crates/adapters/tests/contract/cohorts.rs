//! The cohort repository's contract: cohorts are stored exactly as given (their filters read back
//! as they were parsed), listed newest first, and deleted or foreign cohorts are out of reach.
//!
//! `Stores` holds no cohort port, so these tests open their own tenant beside the repository,
//! through each store's own ports, as `Stores` does; `cohort_contract!` runs each once per store
//! as `contract!` does. The last tests are PostgreSQL's alone: rows no port could have written.

use std::sync::Arc;

use adapters::testing::TestDatabase;
use adapters::{PgApiKeyRepository, PgCohortRepository, PgTenancyRepository};
use chrono::{DateTime, Utc};
use diesel::sql_types::{Integer, Jsonb, Timestamptz};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use domain::DomainError;
use domain::admin::bootstrap_tenant;
use domain::api_key::ApiKeyRepository;
use domain::cohort::{Cohort, CohortChanges, CohortFilters, CohortId, CohortRepository, NewCohort};
use domain::ports::PageRequest;
use domain::tenancy::{ProjectId, TenancyRepository, UserBasic, generate_project_api_token};
use domain::testing::InMemoryStore;
use serde_json::{Value, json};

use crate::stores::{all, at, bootstrap_plan};

/// Runs each named test, an `async fn(Tenant)` in this module, once per store.
macro_rules! cohort_contract {
    ($($test:ident),+ $(,)?) => {$(
        mod $test {
            #[tokio::test]
            async fn in_memory() {
                super::$test(super::Tenant::in_memory().await).await;
            }

            #[tokio::test]
            async fn postgres() {
                super::$test(super::Tenant::postgres().await).await;
            }
        }
    )+};
}

cohort_contract! {
    a_created_cohort_is_stored_as_given_and_found_by_get_in_its_project_only,
    a_cohort_without_a_creator_has_no_created_by,
    live_cohorts_are_listed_newest_first_in_pages_with_their_count,
    an_update_applies_exactly_the_given_changes,
    an_update_without_changes_returns_the_cohort_as_it_is,
    deleting_a_cohort_hides_it_from_get_list_and_live,
    updating_a_deleted_a_foreign_or_a_missing_cohort_is_not_found,
    live_lists_the_projects_cohorts_by_id_without_their_creators,
    nested_filters_read_back_as_they_were_parsed,
}

/// One store's cohort port and the tenant these tests write as: a user owning two projects of
/// one organization (the second to check that nothing leaks across).
pub struct Tenant {
    cohorts: Arc<dyn CohortRepository>,
    project: ProjectId,
    other_project: ProjectId,
    user: UserBasic,
    /// The database the PostgreSQL store runs on (dropped with the tenant); `None` in memory.
    db: Option<TestDatabase>,
}

impl Tenant {
    async fn in_memory() -> Self {
        let store = InMemoryStore::new();
        Self::open(&store, &store, Arc::new(store.clone()), None).await
    }

    async fn postgres() -> Self {
        let db = TestDatabase::create().await;
        let database = &db.database;
        Self::open(
            &PgApiKeyRepository::new(database.clone()),
            &PgTenancyRepository::new(database.clone()),
            Arc::new(PgCohortRepository::new(database.clone())),
            Some(db.clone()),
        )
        .await
    }

    /// Bootstraps the tenant through the store's own ports, so both stores hold the same user
    /// and projects.
    async fn open(
        keys: &dyn ApiKeyRepository,
        tenancy: &dyn TenancyRepository,
        cohorts: Arc<dyn CohortRepository>,
        db: Option<TestDatabase>,
    ) -> Self {
        let (_, plan) = bootstrap_plan("ada@example.com", "Org");
        let record = bootstrap_tenant(keys, plan)
            .await
            .expect("bootstrapping a tenant");
        let other = tenancy
            .create_project(
                record.organization.id,
                "Other",
                &generate_project_api_token(),
            )
            .await
            .expect("creating a second project");
        Self {
            cohorts,
            project: record.project.id,
            other_project: other.id,
            user: UserBasic::from(&record.user),
            db,
        }
    }

    /// A live cohort of `project`, created by the user, with plain filters.
    async fn cohort_in(&self, project: ProjectId, name: &str) -> Cohort {
        self.cohorts
            .create(project, Some(self.user.clone()), new_cohort(name))
            .await
            .expect("creating a cohort")
    }

    /// A live cohort of the main project, created by the user.
    async fn cohort(&self, name: &str) -> Cohort {
        self.cohort_in(self.project, name).await
    }

    /// Soft-deletes a cohort of the main project as the cohorts API does.
    async fn delete(&self, id: CohortId) -> Cohort {
        let deletion = CohortChanges {
            deleted: Some(true),
            ..CohortChanges::default()
        };
        self.cohorts
            .update(self.project, id, deletion)
            .await
            .expect("deleting a cohort")
    }

    /// A connection of its own to the PostgreSQL store, for writes no port makes.
    async fn connection(&self) -> AsyncPgConnection {
        let db = self.db.as_ref().expect("a PostgreSQL store");
        AsyncPgConnection::establish(&db.url)
            .await
            .expect("connecting to the test database")
    }
}

fn filters(json: Value) -> CohortFilters {
    CohortFilters::parse(&json).expect("valid cohort filters")
}

/// A cohort on one person property, named `name` so lists can be read by name.
fn new_cohort(name: &str) -> NewCohort {
    NewCohort {
        name: name.into(),
        description: format!("About {name}"),
        filters: filters(json!({"properties": {"type": "AND", "values": [
            {"key": "email", "type": "person", "value": "@example.com", "operator": "icontains"}
        ]}})),
    }
}

fn names(cohorts: &[Cohort]) -> Vec<&str> {
    cohorts.iter().map(|cohort| cohort.name.as_str()).collect()
}

/// A cohort as writes and `live` return it: no creator is read for them.
fn without_creator(cohort: Cohort) -> Cohort {
    Cohort {
        created_by: None,
        ..cohort
    }
}

/// A create returns the cohort as written, created by the user it was given (nothing read
/// back); `get` reads the same creator from storage.
async fn a_created_cohort_is_stored_as_given_and_found_by_get_in_its_project_only(tenant: Tenant) {
    let cohort = new_cohort("Customers");
    let created = tenant
        .cohorts
        .create(tenant.project, Some(tenant.user.clone()), cohort.clone())
        .await
        .unwrap();
    assert_eq!(created.project_id, tenant.project);
    assert_eq!(created.name, "Customers");
    assert_eq!(created.description, "About Customers");
    assert_eq!(created.filters, cohort.filters);
    assert!(!created.deleted);
    assert_eq!(created.created_by, Some(tenant.user.clone()));

    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap(), Some(created.clone()));
    let foreign = tenant.cohorts.get(tenant.other_project, created.id).await;
    assert_eq!(foreign.unwrap(), None);
    let missing = tenant
        .cohorts
        .get(tenant.project, CohortId(created.id.0 + 1000))
        .await;
    assert_eq!(missing.unwrap(), None);
}

async fn a_cohort_without_a_creator_has_no_created_by(tenant: Tenant) {
    let created = tenant
        .cohorts
        .create(tenant.project, None, new_cohort("Anonymous"))
        .await
        .unwrap();
    assert_eq!(created.created_by, None);
    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap().as_ref(), Some(&created));
    let listed = tenant.cohorts.list(tenant.project, all()).await.unwrap();
    assert_eq!(listed.items, [created]);
}

async fn live_cohorts_are_listed_newest_first_in_pages_with_their_count(tenant: Tenant) {
    for name in ["first", "second", "third", "fourth"] {
        tenant.cohort(name).await;
    }
    let gone = tenant.cohort("gone").await;
    tenant.delete(gone.id).await;
    tenant.cohort_in(tenant.other_project, "elsewhere").await;

    let page = tenant.cohorts.list(tenant.project, all()).await.unwrap();
    assert_eq!(page.count, 4);
    assert_eq!(names(&page.items), ["fourth", "third", "second", "first"]);
    assert!(
        page.items
            .iter()
            .all(|cohort| cohort.created_by == Some(tenant.user.clone()))
    );

    let window = PageRequest {
        limit: 2,
        offset: 1,
    };
    let window = tenant.cohorts.list(tenant.project, window).await.unwrap();
    assert_eq!(window.count, 4);
    assert_eq!(names(&window.items), ["third", "second"]);

    let past_the_end = PageRequest {
        limit: 2,
        offset: 10,
    };
    let past_the_end = tenant.cohorts.list(tenant.project, past_the_end).await;
    let past_the_end = past_the_end.unwrap();
    assert_eq!((past_the_end.count, past_the_end.items.len()), (4, 0));

    let other = tenant.cohorts.list(tenant.other_project, all()).await;
    let other = other.unwrap();
    assert_eq!((other.count, names(&other.items)), (1, vec!["elsewhere"]));
}

/// `cohort` with `changes` applied: each given field replaced, the others left.
fn applied(cohort: Cohort, changes: &CohortChanges) -> Cohort {
    let changes = changes.clone();
    Cohort {
        name: changes.name.unwrap_or(cohort.name),
        description: changes.description.unwrap_or(cohort.description),
        filters: changes.filters.unwrap_or(cohort.filters),
        deleted: changes.deleted.unwrap_or(cohort.deleted),
        ..cohort
    }
}

/// Each field changes alone; the cohort comes back as written, without its creator, and `get`
/// then reads it so, with its creator.
async fn an_update_applies_exactly_the_given_changes(tenant: Tenant) {
    let original = tenant.cohort("Customers").await;
    let new_filters = filters(json!({"properties": {"type": "OR", "values": [
        {"key": "plan", "type": "person", "value": ["pro", "team"], "operator": "exact"},
        {"key": "plan", "type": "person", "value": "free", "operator": "exact", "negation": true}
    ]}}));
    let changes = [
        CohortChanges {
            name: Some("Buyers".into()),
            ..CohortChanges::default()
        },
        CohortChanges {
            description: Some(String::new()),
            ..CohortChanges::default()
        },
        CohortChanges {
            filters: Some(new_filters.clone()),
            ..CohortChanges::default()
        },
    ];
    let mut expected = original.clone();
    for change in changes {
        expected = applied(expected, &change);
        let updated = tenant
            .cohorts
            .update(tenant.project, original.id, change)
            .await
            .unwrap();
        assert_eq!(updated, without_creator(expected.clone()));
        let found = tenant.cohorts.get(tenant.project, original.id).await;
        assert_eq!(found.unwrap(), Some(expected.clone()));
    }
    assert_eq!(
        (expected.name.as_str(), expected.description.as_str()),
        ("Buyers", "")
    );
    assert_eq!(expected.filters, new_filters);
}

async fn an_update_without_changes_returns_the_cohort_as_it_is(tenant: Tenant) {
    let original = tenant.cohort("Customers").await;
    let updated = tenant
        .cohorts
        .update(tenant.project, original.id, CohortChanges::default())
        .await
        .unwrap();
    assert_eq!(updated, without_creator(original.clone()));
    let found = tenant.cohorts.get(tenant.project, original.id).await;
    assert_eq!(found.unwrap(), Some(original));
}

/// A deleted cohort is returned as written once, then out of reach of every read and write.
async fn deleting_a_cohort_hides_it_from_get_list_and_live(tenant: Tenant) {
    let kept = tenant.cohort("kept").await;
    let gone = tenant.cohort("gone").await;

    let deleted = tenant.delete(gone.id).await;
    assert!(deleted.deleted);
    assert_eq!(
        deleted,
        Cohort {
            deleted: true,
            ..without_creator(gone.clone())
        }
    );

    let found = tenant.cohorts.get(tenant.project, gone.id).await;
    assert_eq!(found.unwrap(), None);
    let listed = tenant.cohorts.list(tenant.project, all()).await.unwrap();
    assert_eq!((listed.count, names(&listed.items)), (1, vec!["kept"]));
    let live = tenant.cohorts.live(tenant.project).await.unwrap();
    assert_eq!(live, [without_creator(kept)]);

    let restore = CohortChanges {
        deleted: Some(false),
        ..CohortChanges::default()
    };
    let restored = tenant
        .cohorts
        .update(tenant.project, gone.id, restore)
        .await;
    assert!(
        matches!(restored, Err(DomainError::NotFound)),
        "{restored:?}"
    );
}

async fn updating_a_deleted_a_foreign_or_a_missing_cohort_is_not_found(tenant: Tenant) {
    let deleted = tenant.cohort("deleted").await;
    tenant.delete(deleted.id).await;
    let foreign = tenant.cohort_in(tenant.other_project, "foreign").await;
    let rename = || CohortChanges {
        name: Some("Renamed".into()),
        ..CohortChanges::default()
    };

    for id in [deleted.id, foreign.id, CohortId(foreign.id.0 + 1000)] {
        for changes in [rename(), CohortChanges::default()] {
            let updated = tenant.cohorts.update(tenant.project, id, changes).await;
            assert!(matches!(updated, Err(DomainError::NotFound)), "{updated:?}");
        }
    }
    let untouched = tenant.cohorts.get(tenant.other_project, foreign.id).await;
    assert_eq!(untouched.unwrap(), Some(foreign));
}

/// `live` is what flags are evaluated with: every live cohort of the project, oldest id first,
/// whatever their `created_at`, and no creator is read.
async fn live_lists_the_projects_cohorts_by_id_without_their_creators(tenant: Tenant) {
    let first = tenant.cohort("first").await;
    let anonymous = tenant
        .cohorts
        .create(tenant.project, None, new_cohort("anonymous"))
        .await
        .unwrap();
    let gone = tenant.cohort("gone").await;
    tenant.delete(gone.id).await;
    tenant.cohort_in(tenant.other_project, "elsewhere").await;
    let last = tenant.cohort("last").await;

    let live = tenant.cohorts.live(tenant.project).await.unwrap();
    assert_eq!(
        live,
        [first, anonymous, last]
            .into_iter()
            .map(without_creator)
            .collect::<Vec<_>>()
    );
    let ids: Vec<i32> = live.iter().map(|cohort| cohort.id.0).collect();
    assert!(ids.is_sorted(), "{ids:?}");
    let elsewhere = tenant.cohorts.live(tenant.other_project).await.unwrap();
    assert_eq!(names(&elsewhere), ["elsewhere"]);
}

/// Filters of every kind, nested (AND within OR within AND), a negated person filter, a
/// property merely set and a negated cohort: each read of them is what was parsed, and they
/// are stored as PostHog's JSON.
async fn nested_filters_read_back_as_they_were_parsed(tenant: Tenant) {
    let named = tenant.cohort("named").await;
    let sent = json!({"properties": {"type": "AND", "values": [
        {"type": "OR", "values": [
            {"type": "AND", "values": [
                {"key": "email", "type": "person", "value": "@example.com",
                 "operator": "icontains", "negation": false},
                {"key": "plan", "type": "person", "value": ["free"], "operator": "exact",
                 "negation": true}
            ]},
            {"key": "beta", "type": "person", "operator": "is_set"}
        ]},
        {"key": "age", "type": "person", "value": "30", "operator": "gt"},
        {"key": "id", "type": "cohort", "value": named.id.0, "negation": true}
    ]}});
    let parsed = filters(sent);
    let cohort = NewCohort {
        filters: parsed.clone(),
        ..new_cohort("nested")
    };

    let created = tenant
        .cohorts
        .create(tenant.project, Some(tenant.user.clone()), cohort)
        .await
        .unwrap();
    assert_eq!(created.filters, parsed);
    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap().expect("the cohort").filters, parsed);
    let listed = tenant.cohorts.list(tenant.project, all()).await.unwrap();
    assert_eq!(listed.items[0].filters, parsed);
    let live = tenant.cohorts.live(tenant.project).await.unwrap();
    assert_eq!(live[1].filters, parsed);
    assert_eq!(live[1].filters.cohort_ids(), [named.id]);

    let written = serde_json::to_value(&parsed).unwrap();
    assert_eq!(filters(written), parsed, "what is stored parses the same");

    let refiltered = CohortChanges {
        filters: Some(new_cohort("plain").filters),
        ..CohortChanges::default()
    };
    let updated = tenant
        .cohorts
        .update(tenant.project, created.id, refiltered)
        .await
        .unwrap();
    assert_eq!(updated.filters, new_cohort("plain").filters);
    let back = CohortChanges {
        filters: Some(parsed.clone()),
        ..CohortChanges::default()
    };
    let updated = tenant
        .cohorts
        .update(tenant.project, created.id, back)
        .await
        .unwrap();
    assert_eq!(updated.filters, parsed);
    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap().expect("the cohort").filters, parsed);
}

/// Gives every cohort the same `created_at`, so list order comes down to ids.
async fn set_every_created_at(tenant: &Tenant, when: DateTime<Utc>) {
    diesel::sql_query("UPDATE cohorts SET created_at = $1")
        .bind::<Timestamptz, _>(when)
        .execute(&mut tenant.connection().await)
        .await
        .expect("backdating cohorts");
}

/// PostgreSQL only: the fake cannot backdate its cohorts.
#[tokio::test]
async fn cohorts_created_at_the_same_instant_are_listed_by_id_descending() {
    let tenant = Tenant::postgres().await;
    let ids: Vec<CohortId> = [
        tenant.cohort("first").await,
        tenant.cohort("second").await,
        tenant.cohort("third").await,
    ]
    .iter()
    .map(|cohort| cohort.id)
    .collect();
    set_every_created_at(&tenant, at("2026-01-01T00:00:00Z")).await;

    let page = tenant.cohorts.list(tenant.project, all()).await.unwrap();
    let listed: Vec<CohortId> = page.items.iter().map(|cohort| cohort.id).collect();
    assert_eq!(listed, [ids[2], ids[1], ids[0]]);
}

/// PostgreSQL only: filters no write could store (written behind the port's back) fail every
/// read of the cohort, naming it, rather than being served as matching no one.
#[tokio::test]
async fn a_stored_cohort_whose_filters_do_not_parse_is_unexpected_naming_it() {
    let tenant = Tenant::postgres().await;
    let corrupt = tenant.cohort("corrupt").await;
    let behavioral = json!({"properties": {"type": "AND", "values": [
        {"key": "$pageview", "type": "behavioral", "value": "performed_event"}
    ]}});
    diesel::sql_query("UPDATE cohorts SET filters = $1 WHERE id = $2")
        .bind::<Jsonb, _>(behavioral)
        .bind::<Integer, _>(corrupt.id.0)
        .execute(&mut tenant.connection().await)
        .await
        .expect("corrupting a cohort");
    let named = format!("cohort {} has filters no write could store", corrupt.id.0);

    let found = tenant.cohorts.get(tenant.project, corrupt.id).await;
    let error = found.expect_err("a corrupt cohort").to_string();
    assert!(error.contains(&named), "{error}");
    let listed = tenant.cohorts.list(tenant.project, all()).await;
    let error = listed.expect_err("a corrupt cohort").to_string();
    assert!(error.contains(&named), "{error}");
    let live = tenant.cohorts.live(tenant.project).await;
    let error = live.expect_err("a corrupt cohort").to_string();
    assert!(error.contains(&named), "{error}");
    let renamed = CohortChanges {
        name: Some("Renamed".into()),
        ..CohortChanges::default()
    };
    let updated = tenant
        .cohorts
        .update(tenant.project, corrupt.id, renamed)
        .await;
    assert!(
        matches!(&updated, Err(DomainError::Unexpected(error)) if error.to_string().contains(&named)),
        "{updated:?}"
    );
}
