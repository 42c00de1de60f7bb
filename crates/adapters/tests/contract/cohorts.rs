//! The cohort repository's contract: cohorts are stored exactly as given (their filters read back
//! as they were parsed), listed newest first, and deleted or foreign cohorts are out of reach;
//! static cohorts list distinct ids once each, counted per cohort and per project, and their
//! captured members are listed as persons with their UUIDs. Writes run in a transaction, which a
//! rollback undoes whole.
//!
//! `Stores` holds no cohort port, so these tests open their own tenant beside the repository,
//! through each store's own ports, as `Stores` does; `cohort_contract!` runs each once per store
//! as `contract!` does. The last tests are PostgreSQL's alone: rows no port could have written.

use std::sync::Arc;

use adapters::testing::TestDatabase;
use adapters::{
    PgApiKeyRepository, PgCohortRepository, PgSurveyResponseRepository, PgTenancyRepository,
};
use chrono::{DateTime, Utc};
use diesel::sql_types::{Integer, Jsonb, Timestamptz};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use domain::DomainError;
use domain::admin::bootstrap_tenant;
use domain::api_key::ApiKeyRepository;
use domain::cohort::{
    Cohort, CohortChanges, CohortFilters, CohortId, CohortListFilter, CohortRepository,
    CohortSearch, CohortTransaction, MemberCounts, NewCohort, PAGE_PERSON_BYTES,
};
use domain::person::{PersonSet, ProfileSets};
use domain::ports::PageRequest;
use domain::survey_response::SurveyResponseRepository;
use domain::tenancy::{
    ProjectId, TenancyRepository, UserBasic, UserId, generate_project_api_token,
};
use domain::testing::InMemoryStore;
use serde_json::{Value, json};
use uuid::Uuid;

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
    a_list_keeps_the_static_or_the_dynamic_cohorts,
    a_list_keeps_the_cohorts_a_user_created,
    a_search_finds_names_holding_the_text_ignoring_case_its_wildcards_matched_as_written,
    list_filters_narrow_together_and_the_page_counts_what_they_keep,
    an_update_applies_exactly_the_given_changes,
    an_update_without_changes_returns_the_cohort_as_it_is,
    deleting_a_cohort_hides_it_from_get_list_and_live,
    updating_a_deleted_a_foreign_or_a_missing_cohort_is_not_found,
    live_lists_the_projects_cohorts_by_id_without_their_creators,
    nested_filters_read_back_as_they_were_parsed,
    a_static_cohort_is_stored_static,
    members_are_listed_once_and_counted_per_cohort_and_per_project,
    members_are_removed_by_distinct_id_or_all_at_once,
    a_rolled_back_write_leaves_no_cohort_and_no_member,
    persons_are_found_by_uuid_in_their_project_only,
    persons_lists_captured_members_by_distinct_id_in_pages,
    a_persons_page_ends_once_its_properties_pass_the_budget,
}

/// One store's cohort port and the tenant these tests write as: a user owning two projects of
/// one organization (the second to check that nothing leaks across).
pub struct Tenant {
    cohorts: Arc<dyn CohortRepository>,
    /// What writes persons (a capture's `$set`), for the members that are persons.
    captures: Arc<dyn SurveyResponseRepository>,
    project: ProjectId,
    other_project: ProjectId,
    user: UserBasic,
    /// The database the PostgreSQL store runs on (dropped with the tenant); `None` in memory.
    db: Option<TestDatabase>,
}

impl Tenant {
    async fn in_memory() -> Self {
        let store = InMemoryStore::new();
        let captures = Arc::new(store.clone());
        Self::open(&store, &store, (Arc::new(store.clone()), captures), None).await
    }

    async fn postgres() -> Self {
        let db = TestDatabase::create().await;
        let database = &db.database;
        Self::open(
            &PgApiKeyRepository::new(database.clone()),
            &PgTenancyRepository::new(database.clone()),
            (
                Arc::new(PgCohortRepository::new(database.clone())),
                Arc::new(PgSurveyResponseRepository::new(database.clone())),
            ),
            Some(db.clone()),
        )
        .await
    }

    /// Bootstraps the tenant through the store's own ports, so both stores hold the same user
    /// and projects.
    async fn open(
        keys: &dyn ApiKeyRepository,
        tenancy: &dyn TenancyRepository,
        (cohorts, captures): (Arc<dyn CohortRepository>, Arc<dyn SurveyResponseRepository>),
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
            captures,
            project: record.project.id,
            other_project: other.id,
            user: UserBasic::from(&record.user),
            db,
        }
    }

    /// Runs `write` in a transaction of the store and commits it.
    async fn write<T>(&self, write: impl AsyncFnOnce(&mut dyn CohortTransaction) -> T) -> T {
        let mut transaction = self.cohorts.begin().await.expect("beginning a transaction");
        let outcome = write(&mut *transaction).await;
        transaction.commit().await.expect("committing");
        outcome
    }

    /// Stores a cohort of `project` as given, in a transaction of its own.
    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        cohort: NewCohort,
    ) -> Cohort {
        self.write(async |tx| tx.insert(project, creator, cohort).await)
            .await
            .expect("creating a cohort")
    }

    /// Applies changes to a cohort of the main project, in a transaction of its own.
    async fn update(&self, id: CohortId, changes: CohortChanges) -> Result<Cohort, DomainError> {
        let project = self.project;
        self.write(async |tx| tx.update(project, id, changes).await)
            .await
    }

    /// A live cohort of `project`, created by the user, with plain filters.
    async fn cohort_in(&self, project: ProjectId, name: &str) -> Cohort {
        self.create(project, Some(self.user.clone()), new_cohort(name))
            .await
    }

    /// A live cohort of the main project, created by the user.
    async fn cohort(&self, name: &str) -> Cohort {
        self.cohort_in(self.project, name).await
    }

    /// A static cohort of `project`.
    async fn static_in(&self, project: ProjectId, name: &str) -> Cohort {
        let cohort = NewCohort {
            filters: CohortFilters::empty(),
            is_static: true,
            ..new_cohort(name)
        };
        self.create(project, Some(self.user.clone()), cohort).await
    }

    /// Soft-deletes a cohort of the main project as the cohorts API does.
    async fn delete(&self, id: CohortId) -> Cohort {
        let deletion = CohortChanges {
            deleted: Some(true),
            ..CohortChanges::default()
        };
        self.update(id, deletion).await.expect("deleting a cohort")
    }

    /// Lists `distinct_ids` in a cohort of `project`; how many were new.
    async fn add_in(&self, project: ProjectId, cohort: CohortId, distinct_ids: &[&str]) -> u64 {
        let ids: Vec<String> = distinct_ids.iter().map(|id| (*id).to_owned()).collect();
        self.write(async |tx| tx.add_members(project, cohort, &ids).await)
            .await
            .expect("listing members")
    }

    async fn add(&self, cohort: CohortId, distinct_ids: &[&str]) -> u64 {
        self.add_in(self.project, cohort, distinct_ids).await
    }

    /// The counts of a cohort of `project`, as a write reads them.
    async fn counts_in(&self, project: ProjectId, cohort: CohortId) -> MemberCounts {
        self.write(async |tx| tx.member_counts(project, cohort).await)
            .await
            .expect("counting members")
    }

    /// Stores a person of `project` as a capture's `$set` does.
    async fn person_in(&self, project: ProjectId, distinct_id: &str, properties: Value) {
        let set = PersonSet {
            distinct_id: distinct_id.to_owned(),
            properties: properties.as_object().expect("an object").clone(),
        };
        let sets = ProfileSets {
            persons: vec![set],
            ..ProfileSets::default()
        };
        self.captures
            .record(project, vec![], sets)
            .await
            .expect("storing a person");
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
        is_static: false,
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
        .create(tenant.project, Some(tenant.user.clone()), cohort.clone())
        .await;
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
        .create(tenant.project, None, new_cohort("Anonymous"))
        .await;
    assert_eq!(created.created_by, None);
    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap().as_ref(), Some(&created));
    let listed = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), all())
        .await
        .unwrap();
    assert_eq!(listed.items, [created]);
}

async fn live_cohorts_are_listed_newest_first_in_pages_with_their_count(tenant: Tenant) {
    for name in ["first", "second", "third", "fourth"] {
        tenant.cohort(name).await;
    }
    let gone = tenant.cohort("gone").await;
    tenant.delete(gone.id).await;
    tenant.cohort_in(tenant.other_project, "elsewhere").await;

    let page = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), all())
        .await
        .unwrap();
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
    let window = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), window)
        .await
        .unwrap();
    assert_eq!(window.count, 4);
    assert_eq!(names(&window.items), ["third", "second"]);

    let past_the_end = PageRequest {
        limit: 2,
        offset: 10,
    };
    let past_the_end = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), past_the_end)
        .await;
    let past_the_end = past_the_end.unwrap();
    assert_eq!((past_the_end.count, past_the_end.items.len()), (4, 0));

    let other = tenant
        .cohorts
        .list(tenant.other_project, &CohortListFilter::default(), all())
        .await;
    let other = other.unwrap();
    assert_eq!((other.count, names(&other.items)), (1, vec!["elsewhere"]));
}

/// The count and the names of the main project's cohorts `filter` keeps, in one page.
async fn kept(tenant: &Tenant, filter: CohortListFilter) -> (u64, Vec<String>) {
    let page = tenant.cohorts.list(tenant.project, &filter, all()).await;
    let page = page.expect("listing cohorts");
    let names = names(&page.items).into_iter().map(str::to_owned).collect();
    (page.count, names)
}

/// A filter keeping the cohorts whose name holds `text`.
fn searching(text: &str) -> CohortListFilter {
    CohortListFilter {
        search: CohortSearch::parse(text).expect("a short search"),
        ..CohortListFilter::default()
    }
}

async fn a_list_keeps_the_static_or_the_dynamic_cohorts(tenant: Tenant) {
    tenant.cohort("dynamic").await;
    tenant.static_in(tenant.project, "static").await;
    tenant.static_in(tenant.other_project, "elsewhere").await;
    let gone = tenant.static_in(tenant.project, "gone").await;
    tenant.delete(gone.id).await;

    let of_kind = |is_static| CohortListFilter {
        is_static: Some(is_static),
        ..CohortListFilter::default()
    };
    assert_eq!(
        kept(&tenant, of_kind(true)).await,
        (1, vec!["static".into()])
    );
    assert_eq!(
        kept(&tenant, of_kind(false)).await,
        (1, vec!["dynamic".into()])
    );
    assert_eq!(kept(&tenant, CohortListFilter::default()).await.0, 2);
}

/// A cohort without a creator is never one a user created.
async fn a_list_keeps_the_cohorts_a_user_created(tenant: Tenant) {
    tenant.cohort("mine").await;
    tenant
        .create(tenant.project, None, new_cohort("nobody's"))
        .await;
    let created_by = |user| CohortListFilter {
        created_by: Some(user),
        ..CohortListFilter::default()
    };
    assert_eq!(
        kept(&tenant, created_by(tenant.user.id)).await,
        (1, vec!["mine".into()])
    );
    let stranger = UserId(tenant.user.id.0 + 1000);
    assert_eq!(kept(&tenant, created_by(stranger)).await, (0, vec![]));
}

/// Only the name is searched (not the description); `%`, `_` and `\` stand for themselves.
async fn a_search_finds_names_holding_the_text_ignoring_case_its_wildcards_matched_as_written(
    tenant: Tenant,
) {
    for name in [
        "Pro plan",
        "50% off",
        "500 off",
        "a_b",
        "axb",
        r"back\slash",
        "backslash",
    ] {
        tenant.cohort(name).await;
    }
    let found = async |text| kept(&tenant, searching(text)).await.1;
    assert_eq!(found("PRO").await, ["Pro plan"]);
    assert_eq!(found("0% o").await, ["50% off"]);
    assert_eq!(found("a_b").await, ["a_b"]);
    assert_eq!(found(r"k\s").await, [r"back\slash"]);
    assert_eq!(
        found("About").await,
        Vec::<String>::new(),
        "not the description"
    );
    assert_eq!(found("off").await, ["500 off", "50% off"]);
}

/// Filters narrow together; `count` is how many they keep, and the page is a window of those.
async fn list_filters_narrow_together_and_the_page_counts_what_they_keep(tenant: Tenant) {
    for name in ["team a", "team b", "team c"] {
        tenant.static_in(tenant.project, name).await;
    }
    tenant.cohort("team dynamic").await;
    tenant.static_in(tenant.project, "other").await;
    tenant
        .create(
            tenant.project,
            None,
            NewCohort {
                filters: CohortFilters::empty(),
                is_static: true,
                ..new_cohort("team anonymous")
            },
        )
        .await;

    let filter = CohortListFilter {
        is_static: Some(true),
        created_by: Some(tenant.user.id),
        ..searching("TEAM")
    };
    let window = PageRequest {
        limit: 2,
        offset: 1,
    };
    let page = tenant.cohorts.list(tenant.project, &filter, window).await;
    let page = page.unwrap();
    assert_eq!(
        (page.count, names(&page.items)),
        (3, vec!["team b", "team a"])
    );
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
        let updated = tenant.update(original.id, change).await.unwrap();
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
        .update(original.id, CohortChanges::default())
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
    let listed = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), all())
        .await
        .unwrap();
    assert_eq!((listed.count, names(&listed.items)), (1, vec!["kept"]));
    let live = tenant.cohorts.live(tenant.project).await.unwrap();
    assert_eq!(live, [without_creator(kept)]);

    let restore = CohortChanges {
        deleted: Some(false),
        ..CohortChanges::default()
    };
    let restored = tenant.update(gone.id, restore).await;
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
            let updated = tenant.update(id, changes).await;
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
        .create(tenant.project, None, new_cohort("anonymous"))
        .await;
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
        .create(tenant.project, Some(tenant.user.clone()), cohort)
        .await;
    assert_eq!(created.filters, parsed);
    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap().expect("the cohort").filters, parsed);
    let listed = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), all())
        .await
        .unwrap();
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
    let updated = tenant.update(created.id, refiltered).await.unwrap();
    assert_eq!(updated.filters, new_cohort("plain").filters);
    let back = CohortChanges {
        filters: Some(parsed.clone()),
        ..CohortChanges::default()
    };
    let updated = tenant.update(created.id, back).await.unwrap();
    assert_eq!(updated.filters, parsed);
    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap().expect("the cohort").filters, parsed);
}

/// A static cohort reads back static, with the empty filters it was given, from every read.
async fn a_static_cohort_is_stored_static(tenant: Tenant) {
    let created = tenant.static_in(tenant.project, "Beta").await;
    assert!(created.is_static);
    assert_eq!(created.filters, CohortFilters::empty());
    let found = tenant.cohorts.get(tenant.project, created.id).await;
    assert_eq!(found.unwrap(), Some(created.clone()));
    let live = tenant.cohorts.live(tenant.project).await.unwrap();
    assert_eq!(live, [without_creator(created.clone())]);
    let renamed = CohortChanges {
        name: Some("Renamed".into()),
        ..CohortChanges::default()
    };
    let updated = tenant.update(created.id, renamed).await.unwrap();
    assert!(updated.is_static);
    assert!(!tenant.cohort("dynamic").await.is_static);
}

async fn members_are_listed_once_and_counted_per_cohort_and_per_project(tenant: Tenant) {
    let beta = tenant.static_in(tenant.project, "Beta").await.id;
    let alpha = tenant.static_in(tenant.project, "Alpha").await.id;
    let elsewhere = tenant.static_in(tenant.other_project, "Elsewhere").await.id;
    let empty = tenant.static_in(tenant.project, "Empty").await.id;

    assert_eq!(tenant.add(beta, &["alice", "bob", "alice"]).await, 2);
    assert_eq!(tenant.add(beta, &["bob", "carol"]).await, 1);
    assert_eq!(tenant.add(alpha, &["alice"]).await, 1);
    assert_eq!(
        tenant
            .add_in(tenant.other_project, elsewhere, &["alice"])
            .await,
        1
    );

    assert_eq!(
        tenant.counts_in(tenant.project, beta).await,
        MemberCounts {
            cohort: 3,
            project: 4
        }
    );
    assert_eq!(
        tenant.counts_in(tenant.other_project, elsewhere).await,
        MemberCounts {
            cohort: 1,
            project: 1
        }
    );
    let mut counts = tenant
        .cohorts
        .member_counts(tenant.project, &[beta, alpha, empty, elsewhere])
        .await
        .unwrap();
    counts.sort();
    let mut expected = vec![(beta, 3), (alpha, 1)];
    expected.sort();
    assert_eq!(
        counts, expected,
        "a cohort listing none, or another project's, is left out"
    );
}

async fn members_are_removed_by_distinct_id_or_all_at_once(tenant: Tenant) {
    let beta = tenant.static_in(tenant.project, "Beta").await.id;
    let alpha = tenant.static_in(tenant.project, "Alpha").await.id;
    tenant.add(beta, &["alice", "bob", "carol"]).await;
    tenant.add(alpha, &["alice"]).await;
    let project = tenant.project;

    let gone = vec!["alice".to_owned(), "nobody".to_owned()];
    tenant
        .write(async |tx| tx.remove_members(project, beta, &gone).await)
        .await
        .unwrap();
    assert_eq!(tenant.counts_in(project, beta).await.cohort, 2);
    assert_eq!(tenant.counts_in(project, alpha).await.cohort, 1);

    tenant
        .write(async |tx| tx.clear_members(project, beta).await)
        .await
        .unwrap();
    assert_eq!(
        tenant.counts_in(project, beta).await,
        MemberCounts {
            cohort: 0,
            project: 1
        }
    );
}

/// A write rolled back leaves nothing behind: neither the cohort it inserted nor the members.
async fn a_rolled_back_write_leaves_no_cohort_and_no_member(tenant: Tenant) {
    let beta = tenant.static_in(tenant.project, "Beta").await.id;
    let mut transaction = tenant.cohorts.begin().await.unwrap();
    transaction.lock_members(tenant.project).await.unwrap();
    let inserted = transaction
        .insert(tenant.project, None, new_cohort("Doomed"))
        .await
        .unwrap();
    let listed = vec!["alice".to_owned()];
    let added = transaction.add_members(tenant.project, beta, &listed).await;
    assert_eq!(added.unwrap(), 1);
    let locked = transaction.lock(tenant.project, beta).await.unwrap();
    assert_eq!(locked.map(|cohort| cohort.id), Some(beta));
    transaction.rollback().await.unwrap();

    let found = tenant.cohorts.get(tenant.project, inserted.id).await;
    assert_eq!(found.unwrap(), None);
    assert_eq!(tenant.counts_in(tenant.project, beta).await.cohort, 0);
}

/// Persons get a UUID when first stored, which names them in their project only.
async fn persons_are_found_by_uuid_in_their_project_only(tenant: Tenant) {
    let beta = tenant.static_in(tenant.project, "Beta").await.id;
    tenant
        .person_in(tenant.project, "alice", json!({"plan": "pro"}))
        .await;
    tenant.person_in(tenant.project, "bob", json!({})).await;
    tenant
        .person_in(tenant.other_project, "alice", json!({}))
        .await;
    tenant.add(beta, &["alice", "bob"]).await;
    let persons = tenant
        .cohorts
        .persons(tenant.project, beta, all(), PAGE_PERSON_BYTES)
        .await;
    let uuids: Vec<Uuid> = persons.unwrap().items.iter().map(|p| p.uuid).collect();
    assert_eq!(uuids.len(), 2);
    assert_ne!(uuids[0], uuids[1]);

    let project = tenant.project;
    let asked = vec![uuids[0], Uuid::new_v4()];
    let found = tenant
        .write(async |tx| tx.distinct_ids_of(project, &asked).await)
        .await
        .unwrap();
    assert_eq!(found, ["alice"]);
    let other = tenant.other_project;
    let foreign = tenant
        .write(async |tx| tx.distinct_ids_of(other, &uuids).await)
        .await
        .unwrap();
    assert_eq!(foreign, Vec::<String>::new());

    // A later `$set` keeps the person's UUID.
    tenant
        .person_in(tenant.project, "alice", json!({"plan": "team"}))
        .await;
    let again = tenant
        .cohorts
        .persons(tenant.project, beta, all(), PAGE_PERSON_BYTES)
        .await;
    let again = again.unwrap();
    assert_eq!(again.items[0].uuid, uuids[0]);
    assert_eq!(again.items[0].properties["plan"], "team");
}

async fn persons_lists_captured_members_by_distinct_id_in_pages(tenant: Tenant) {
    let beta = tenant.static_in(tenant.project, "Beta").await.id;
    let alpha = tenant.static_in(tenant.project, "Alpha").await.id;
    for id in ["d", "B", "a", "c"] {
        tenant
            .person_in(tenant.project, id, json!({"id": id}))
            .await;
    }
    tenant.add(beta, &["c", "a", "unseen", "d", "B"]).await;
    tenant.add(alpha, &["d"]).await;

    let window = PageRequest {
        limit: 2,
        offset: 1,
    };
    let page = tenant
        .cohorts
        .persons(tenant.project, beta, window, PAGE_PERSON_BYTES)
        .await;
    let page = page.unwrap();
    let ids: Vec<&str> = page.items.iter().map(|p| p.distinct_id.as_str()).collect();
    // Byte order: upper case first.
    assert_eq!((page.count, ids), (4, vec!["a", "c"]));
    assert_eq!(page.items[1].properties["id"], "c");

    let past = PageRequest {
        limit: 2,
        offset: u64::MAX,
    };
    let past = tenant
        .cohorts
        .persons(tenant.project, beta, past, PAGE_PERSON_BYTES)
        .await;
    assert_eq!(past.unwrap().items.len(), 0);
    let other = tenant
        .cohorts
        .persons(tenant.other_project, beta, all(), PAGE_PERSON_BYTES)
        .await;
    assert_eq!(other.unwrap().count, 0);
}

/// Persons' properties bound a page: it ends with the person passing the budget (never
/// empty, even when the first alone passes it), and the count is the whole list's.
async fn a_persons_page_ends_once_its_properties_pass_the_budget(tenant: Tenant) {
    let beta = tenant.static_in(tenant.project, "Beta").await.id;
    for id in ["a", "b", "c", "d"] {
        let padding = "x".repeat(1000);
        tenant
            .person_in(tenant.project, id, json!({"padding": padding}))
            .await;
    }
    tenant.add(beta, &["a", "b", "c", "d"]).await;
    let ids = |page: &domain::ports::Page<domain::cohort::CohortPerson>| -> Vec<String> {
        page.items.iter().map(|p| p.distinct_id.clone()).collect()
    };
    let page = tenant
        .cohorts
        .persons(tenant.project, beta, all(), 1500)
        .await;
    let page = page.unwrap();
    assert_eq!((page.count, ids(&page)), (4, vec!["a".into(), "b".into()]));
    let window = PageRequest {
        limit: 10,
        offset: 2,
    };
    let page = tenant
        .cohorts
        .persons(tenant.project, beta, window, 1)
        .await;
    assert_eq!(ids(&page.unwrap()), ["c"]);
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

    let page = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), all())
        .await
        .unwrap();
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
    let listed = tenant
        .cohorts
        .list(tenant.project, &CohortListFilter::default(), all())
        .await;
    let error = listed.expect_err("a corrupt cohort").to_string();
    assert!(error.contains(&named), "{error}");
    let live = tenant.cohorts.live(tenant.project).await;
    let error = live.expect_err("a corrupt cohort").to_string();
    assert!(error.contains(&named), "{error}");
    let renamed = CohortChanges {
        name: Some("Renamed".into()),
        ..CohortChanges::default()
    };
    let updated = tenant.update(corrupt.id, renamed).await;
    assert!(
        matches!(&updated, Err(DomainError::Unexpected(error)) if error.to_string().contains(&named)),
        "{updated:?}"
    );
}

/// PostgreSQL only: the members' lock keeps a second write of the project's members waiting
/// until the first ends (the fake's transactions take turns anyway).
#[tokio::test]
async fn a_members_write_waits_for_the_one_holding_the_projects_lock() {
    let tenant = Tenant::postgres().await;
    let mut first = tenant.cohorts.begin().await.unwrap();
    first.lock_members(tenant.project).await.unwrap();

    let cohorts = Arc::clone(&tenant.cohorts);
    let project = tenant.project;
    let second = tokio::spawn(async move {
        let mut second = cohorts.begin().await.unwrap();
        second.lock_members(project).await.unwrap();
        second.commit().await.unwrap();
    });
    let other = tenant.other_project;
    let mut elsewhere = tenant.cohorts.begin().await.unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        elsewhere.lock_members(other),
    )
    .await
    .expect("another project's members are not held")
    .unwrap();
    elsewhere.commit().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "the second write waits");
    first.commit().await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), second)
        .await
        .expect("the second write goes on once the first ends")
        .unwrap();
}

/// PostgreSQL only: a distinct id holding U+0000 is listed as PostgreSQL stores text (U+FFFD in
/// its place), as capture stores the person.
#[tokio::test]
async fn a_distinct_id_holding_nul_is_listed_as_capture_stores_it() {
    let tenant = Tenant::postgres().await;
    let beta = tenant.static_in(tenant.project, "Beta").await.id;
    tenant.person_in(tenant.project, "nul\0id", json!({})).await;
    assert_eq!(tenant.add(beta, &["nul\0id", "nul\u{fffd}id"]).await, 1);
    let persons = tenant
        .cohorts
        .persons(tenant.project, beta, all(), PAGE_PERSON_BYTES)
        .await;
    let persons = persons.unwrap();
    assert_eq!(persons.items[0].distinct_id, "nul\u{fffd}id");
}
