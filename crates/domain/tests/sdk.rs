//! The SDK service over the in-memory fakes: when a project's snapshot is kept, when it is
//! forgotten, and that a change heard while a snapshot is being built keeps it from being kept.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use domain::access::AccessError;
use domain::error::{DomainError, Unexpected};
use domain::feature_flag::pattern::{Patterns, compile};
use domain::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagFilters, FlagId, FlagKey, NewFlag,
    ServingFlags,
};
use domain::ports::{Page, PageRequest};
use domain::sdk::{
    Evaluated, FlagsRequest, MAX_PERSON_PROPERTIES_BYTES, SNAPSHOT_FLAG_BYTES, SdkService,
    SdkSnapshot, SentProperties, SnapshotInvalidation, SnapshotSettings, SnapshotSources,
};
use domain::survey::SurveyService;
use domain::tenancy::{ProjectId, UserBasic};
use domain::testing::{InMemoryStore, InPlaceSlots, TimedMemories};
use regex::Regex;
use serde_json::{Value, json};

#[path = "support/bootstrap_ada.rs"]
mod bootstrap_ada;

use bootstrap_ada::bootstrap_ada;

/// Flags as stored, with a hook run whenever a snapshot reads them: the moment a change can
/// land in the middle of a build.
struct Flags {
    store: InMemoryStore,
    while_read: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    /// Held by a test to keep builds waiting in storage.
    gate: tokio::sync::Mutex<()>,
}

#[async_trait]
impl FeatureFlagRepository for Flags {
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<FeatureFlag>, Unexpected> {
        self.store.list(project, page).await
    }

    async fn get(&self, project: ProjectId, id: FlagId) -> Result<Option<FeatureFlag>, Unexpected> {
        self.store.get(project, id).await
    }

    async fn get_by_key(
        &self,
        project: ProjectId,
        key: &str,
    ) -> Result<Option<FeatureFlag>, Unexpected> {
        self.store.get_by_key(project, key).await
    }

    async fn create(
        &self,
        project: ProjectId,
        creator: Option<UserBasic>,
        flag: NewFlag,
    ) -> Result<FeatureFlag, DomainError> {
        self.store.create(project, creator, flag).await
    }

    async fn update(
        &self,
        project: ProjectId,
        id: FlagId,
        changes: FlagChanges,
    ) -> Result<FeatureFlag, DomainError> {
        self.store.update(project, id, changes).await
    }

    async fn active(&self, project: ProjectId) -> Result<Vec<FeatureFlag>, Unexpected> {
        let read = self.store.active(project).await;
        if let Some(hook) = self.while_read.lock().unwrap().take() {
            hook();
        }
        read
    }

    async fn serving(
        &self,
        project: ProjectId,
        max_bytes: u64,
    ) -> Result<ServingFlags, Unexpected> {
        let _open = self.gate.lock().await;
        let read = self.store.serving(project, max_bytes).await;
        if let Some(hook) = self.while_read.lock().unwrap().take() {
            hook();
        }
        read
    }
}

/// Counts compilations, to tell a snapshot's patterns from compiling per evaluation.
#[derive(Default)]
struct CountedPatterns(AtomicUsize);

impl Patterns for CountedPatterns {
    fn compiled(&self, pattern: &str) -> Option<Arc<Regex>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        compile(pattern).ok().map(Arc::new)
    }
}

/// What the tests render from a snapshot, as the API keeps its answers with it.
type Renderings = OnceLock<Vec<u8>>;

type Snapshot = SdkSnapshot<Renderings>;

struct World {
    store: InMemoryStore,
    flags: Arc<Flags>,
    patterns: Arc<CountedPatterns>,
    sdk: Arc<SdkService<Renderings>>,
    project: ProjectId,
    token: String,
}

async fn world(enabled: bool) -> World {
    let store = InMemoryStore::new();
    let made = bootstrap_ada(&store).await;
    let flags = Arc::new(Flags {
        store: store.clone(),
        while_read: Mutex::new(None),
        gate: tokio::sync::Mutex::new(()),
    });
    let patterns = Arc::new(CountedPatterns::default());
    let sdk = Arc::new(SdkService::new(
        SnapshotSources {
            tenancy: Arc::new(store.clone()),
            flags: flags.clone(),
            cohorts: Arc::new(store.clone()),
            groups: Arc::new(store.clone()),
            surveys: Arc::new(SurveyService::new(
                Arc::new(store.clone()),
                Arc::new(store.clone()),
            )),
            persons: Arc::new(store.clone()),
            patterns: patterns.clone(),
            slots: Arc::new(InPlaceSlots),
        },
        SnapshotSettings {
            enabled,
            budget_bytes: 1 << 20,
        },
        &TimedMemories,
    ));
    World {
        store,
        flags,
        patterns,
        sdk,
        project: made.record.project.id,
        token: made.record.project.api_token,
    }
}

impl World {
    async fn add_flag(&self, key: &str) {
        let filters = json!({"groups": [{"properties": [
            {"key": "email", "operator": "regex", "value": "@example\\.com$", "type": "person"},
            {"key": "name", "operator": "not_regex", "value": "^bot", "type": "person"}
        ]}]});
        self.insert_flag(key, FlagFilters::parse(filters).unwrap())
            .await;
    }

    /// A flag stored as written before today's write limits: `filters` read, not checked.
    async fn add_stored_flag(&self, key: &str, filters: Value) {
        self.insert_flag(key, FlagFilters::read(filters).unwrap())
            .await;
    }

    async fn insert_flag(&self, key: &str, filters: FlagFilters) {
        self.store
            .create(
                self.project,
                None,
                NewFlag {
                    key: FlagKey::parse(key).unwrap(),
                    name: key.into(),
                    filters,
                    active: true,
                    ensure_experience_continuity: false,
                    is_remote_configuration: false,
                },
            )
            .await
            .unwrap();
    }

    /// What `/flags` evaluates of `snapshot` for `person`: each evaluated flag's `enabled`, in
    /// the snapshot's order (the flags left out skipped), and whether the answer reports errors.
    async fn evaluate(
        &self,
        snapshot: &Arc<Snapshot>,
        person: &str,
        properties: Value,
    ) -> (Vec<bool>, bool) {
        let Value::Object(properties) = properties else {
            panic!("properties are an object")
        };
        let request = FlagsRequest {
            distinct_id: person.to_owned(),
            person_properties: SentProperties::parse("person_properties", properties).unwrap(),
            ..FlagsRequest::default()
        };
        let enabled = |_: &Snapshot, evaluated: Evaluated| {
            let enabled = evaluated
                .flags
                .iter()
                .flatten()
                .map(|e| e.enabled)
                .collect();
            (enabled, evaluated.errors)
        };
        self.sdk
            .answer_flags(Arc::clone(snapshot), request, enabled)
            .await
            .unwrap()
    }

    async fn snapshot(&self) -> Arc<Snapshot> {
        self.sdk.snapshot(Some(&self.token)).await.unwrap()
    }

    async fn flag_keys(&self) -> Vec<String> {
        self.snapshot()
            .await
            .flags
            .iter()
            .map(|flag| flag.key.clone())
            .collect()
    }
}

#[tokio::test]
async fn nothing_is_kept_until_changes_are_heard() {
    let world = world(true).await;
    let first = world.snapshot().await;
    assert!(!Arc::ptr_eq(&first, &world.snapshot().await));
    world.add_flag("new").await;
    assert_eq!(world.flag_keys().await, ["new"]);
}

#[tokio::test]
async fn a_kept_snapshot_serves_until_its_project_changes() {
    let world = world(true).await;
    world.sdk.listening();
    let kept = world.snapshot().await;
    assert!(
        Arc::ptr_eq(&kept, &world.snapshot().await),
        "served from memory"
    );

    world.add_flag("unheard").await;
    assert!(world.flag_keys().await.is_empty(), "no change heard yet");
    world.sdk.changed(ProjectId(world.project.0 + 1));
    assert!(
        world.flag_keys().await.is_empty(),
        "another project changed"
    );
    world.sdk.changed(world.project);
    assert_eq!(world.flag_keys().await, ["unheard"]);
}

#[tokio::test]
async fn losing_the_listener_forgets_and_keeps_nothing_until_it_is_back() {
    let world = world(true).await;
    world.sdk.listening();
    world.snapshot().await;
    world.sdk.deaf();
    world.add_flag("while-deaf").await;
    assert_eq!(world.flag_keys().await, ["while-deaf"]);
    let first = world.snapshot().await;
    assert!(!Arc::ptr_eq(&first, &world.snapshot().await), "not kept");
    world.sdk.listening();
    let kept = world.snapshot().await;
    assert!(Arc::ptr_eq(&kept, &world.snapshot().await));
}

#[tokio::test]
async fn a_change_heard_while_a_snapshot_is_built_keeps_it_from_being_kept() {
    let world = world(true).await;
    world.sdk.listening();
    let sdk = Arc::downgrade(&world.sdk);
    let project = world.project;
    *world.flags.while_read.lock().unwrap() = Some(Box::new(move || {
        sdk.upgrade().unwrap().changed(project);
    }));
    let built_during_a_change = world.snapshot().await;
    let next = world.snapshot().await;
    assert!(!Arc::ptr_eq(&built_during_a_change, &next), "not kept");
    assert!(Arc::ptr_eq(&next, &world.snapshot().await), "kept");
}

#[tokio::test]
async fn a_node_with_snapshots_off_reads_storage_every_time() {
    let world = world(false).await;
    world.sdk.listening();
    assert!(!world.sdk.keeps_snapshots());
    let first = world.snapshot().await;
    assert!(!Arc::ptr_eq(&first, &world.snapshot().await));
}

#[tokio::test]
async fn tokens_are_checked_before_storage_is_asked() {
    let world = world(true).await;
    for (token, missing) in [(None, true), (Some("  "), true), (Some("phc_\0"), false)] {
        let refused = world.sdk.snapshot(token).await.unwrap_err();
        if missing {
            assert!(matches!(refused, AccessError::MissingProjectToken));
        } else {
            assert!(matches!(refused, AccessError::InvalidProjectToken));
        }
    }
    let unknown = world.sdk.snapshot(Some("phc_unknown")).await.unwrap_err();
    assert!(matches!(unknown, AccessError::InvalidProjectToken));
}

#[tokio::test]
async fn patterns_are_compiled_once_per_snapshot_not_per_evaluation() {
    let world = world(true).await;
    world.sdk.listening();
    world.add_flag("one").await;
    world.add_flag("two").await;
    let snapshot = world.snapshot().await;
    let compiled = world.patterns.0.load(Ordering::SeqCst);
    for person in ["a", "b", "c"] {
        let properties = json!({"email": "a@example.com", "name": person});
        let (enabled, _) = world.evaluate(&snapshot, person, properties).await;
        assert_eq!(enabled, [true, true]);
    }
    assert_eq!(world.patterns.0.load(Ordering::SeqCst), compiled);
    assert_eq!(
        compiled, 4,
        "two patterns per flag, each compiled when built"
    );
    let (none, _) = world.evaluate(&snapshot, "d", json!({})).await;
    assert_eq!(none, [false, false], "no email, no match");
}

#[tokio::test]
async fn an_answer_is_rendered_once_per_snapshot_and_forgotten_with_it() {
    let world = world(true).await;
    world.sdk.listening();
    let renders = AtomicUsize::new(0);
    let render = || {
        renders.fetch_add(1, Ordering::SeqCst);
        b"{}".to_vec()
    };
    let snapshot = world.snapshot().await;
    let first = snapshot.renderings.get_or_init(render).clone();
    let again = world.snapshot().await;
    let second = again.renderings.get_or_init(render).clone();
    assert_eq!(renders.load(Ordering::SeqCst), 1);
    assert_eq!(first, second);

    world.sdk.changed(world.project);
    let rebuilt = world.snapshot().await;
    assert!(
        rebuilt.renderings.get().is_none(),
        "a new snapshot starts unrendered"
    );
}

#[tokio::test]
async fn capture_finds_its_project_without_building_a_snapshot() {
    let world = world(true).await;
    world.sdk.listening();
    for _ in 0..2 {
        let found = world.sdk.project_id(Some(&world.token)).await.unwrap();
        assert_eq!(found, world.project);
    }
    assert_eq!(world.sdk.counts().built, 0);
    let unknown = world.sdk.project_id(Some("phc_unknown")).await.unwrap_err();
    assert!(matches!(unknown, AccessError::InvalidProjectToken));
    let missing = world.sdk.project_id(None).await.unwrap_err();
    assert!(matches!(missing, AccessError::MissingProjectToken));
}

/// A condition set of `filters` substring filters that all scan an email to its end, the last
/// failing: every set of a flag is evaluated, each filter over the whole value.
fn scanning_filters(sets: usize, filters: usize) -> Value {
    let set = json!({"properties": (0..filters).map(|n| json!({
        "key": "email", "type": "person", "operator": "icontains",
        "value": if n + 1 < filters { "aend" } else { "nowhere" },
    })).collect::<Vec<_>>()});
    json!({"groups": vec![set; sets]})
}

#[tokio::test]
async fn a_burst_of_requests_builds_a_snapshot_once_and_shares_it() {
    let world = world(true).await;
    world.sdk.listening();
    world.add_flag("beta").await;
    let held = world.flags.gate.lock().await;
    let requests: Vec<_> = (0..5)
        .map(|_| {
            let (sdk, token) = (Arc::clone(&world.sdk), world.token.clone());
            tokio::spawn(async move { sdk.snapshot(Some(&token)).await.unwrap() })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    drop(held);
    let mut snapshots = Vec::new();
    for request in requests {
        snapshots.push(request.await.unwrap());
    }
    assert!(snapshots.iter().all(|s| Arc::ptr_eq(s, &snapshots[0])));
    let counts = world.sdk.counts();
    assert_eq!((counts.built, counts.shared), (1, 4), "{counts:?}");
    assert_eq!(counts.snapshots_kept, 1);
    assert_eq!(
        counts.snapshot_bytes_kept,
        u64::from(snapshots[0].size()),
        "what the kept snapshot weighs is reported"
    );
}

#[tokio::test]
async fn a_request_that_heard_a_change_does_not_take_a_build_begun_before_it() {
    let world = world(true).await;
    world.sdk.listening();
    let held = world.flags.gate.lock().await;
    let request = || {
        let (sdk, token) = (Arc::clone(&world.sdk), world.token.clone());
        tokio::spawn(async move { sdk.snapshot(Some(&token)).await.unwrap() })
    };
    let before = request();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    world.add_flag("new").await;
    world.sdk.changed(world.project);
    let after = request();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    drop(held);
    let (before, after) = (before.await.unwrap(), after.await.unwrap());
    assert!(!Arc::ptr_eq(&before, &after));
    assert_eq!(
        after.flags.len(),
        1,
        "the later request's build has the change"
    );
    let counts = world.sdk.counts();
    assert_eq!((counts.built, counts.shared), (2, 0), "{counts:?}");
}

#[tokio::test]
async fn a_snapshot_larger_than_half_the_budget_is_served_but_not_kept() {
    let world = world(true).await;
    world.sdk.listening();
    // About 100 KB of filters: estimated at several times that parsed, past half of 1 MiB.
    world
        .add_stored_flag("large", json!({"groups": [{"properties": [
            {"key": "email", "type": "person", "operator": "exact", "value": "v".repeat(100_000)}
        ]}]}))
        .await;
    let first = world.snapshot().await;
    assert_eq!(first.flags.len(), 1);
    assert!(u64::from(first.size()) > (1 << 20) / 2);
    assert!(!Arc::ptr_eq(&first, &world.snapshot().await), "built again");
    assert_eq!(world.sdk.counts().snapshots_kept, 0);
}

#[tokio::test]
async fn flags_past_what_a_snapshot_loads_are_withheld_and_the_answer_says_so() {
    let world = world(true).await;
    world.sdk.listening();
    let filters = json!({"groups": [{"properties": [
        {"key": "email", "type": "person", "operator": "exact", "value": "v".repeat(60_000)}
    ]}]});
    for n in 0..20 {
        world
            .add_stored_flag(&format!("stored-{n}"), filters.clone())
            .await;
    }
    let snapshot = world.snapshot().await;
    let withheld = snapshot.flags_withheld.unwrap();
    assert!(withheld > SNAPSHOT_FLAG_BYTES, "{withheld}");
    assert!(snapshot.flags.is_empty(), "nothing of them loaded");
    let (evaluated, errors) = world.evaluate(&snapshot, "visitor", json!({})).await;
    assert!(errors && evaluated.is_empty());
}

#[tokio::test]
async fn evaluation_stops_at_its_budget_and_the_answer_says_so() {
    let world = world(true).await;
    for n in 0..20 {
        world
            .add_stored_flag(&format!("scan-{n}"), scanning_filters(20, 20))
            .await;
    }
    let snapshot = world.snapshot().await;
    // Upper case at the end: each filter scans the whole email, then compares it lowered.
    let email = format!("{}END", "a".repeat(60_000));
    let properties = json!({"email": email});
    let (evaluated, errors) = world.evaluate(&snapshot, "visitor", properties).await;
    assert!(errors);
    // Stopped before a condition set once the budget was spent: within the first flags.
    assert!(evaluated.len() < 20, "{} of 20 evaluated", evaluated.len());
    assert!(evaluated.iter().all(|enabled| !enabled));

    // The same flags for a short email are all evaluated, well within the budget.
    let (evaluated, errors) = world
        .evaluate(&snapshot, "visitor", json!({"email": "aEND"}))
        .await;
    assert!(!errors && evaluated.len() == 20);
}

#[test]
fn person_properties_are_bounded_and_weighed_once() {
    let fits = json!({"email": "a".repeat(MAX_PERSON_PROPERTIES_BYTES - 20)});
    let Value::Object(fits) = fits else { panic!() };
    let text = serde_json::to_vec(&fits).unwrap().len();
    assert_eq!(
        SentProperties::parse("person_properties", fits)
            .unwrap()
            .bytes(),
        text
    );
    let past = json!({"email": "a".repeat(MAX_PERSON_PROPERTIES_BYTES)});
    let Value::Object(past) = past else { panic!() };
    let error = SentProperties::parse("person_properties", past).unwrap_err();
    assert_eq!(error.attr.as_deref(), Some("person_properties"));
    assert_eq!(error.code.as_str(), "max_length");
}
