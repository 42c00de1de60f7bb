//! The SDK endpoints' use cases: a project's snapshot by its public token, kept in the node's
//! memory while the node hears of every change to it, built once at a time per project, and
//! `/flags` evaluated against it within a budget, off the request threads when costly.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::snapshot::SNAPSHOT_FLAG_BYTES;
use super::{EvaluationSlots, FlagsRequest, SdkSnapshot, SnapshotInvalidation};
use crate::access::AccessError;
use crate::cohort::{CohortId, CohortRepository};
use crate::error::Unexpected;
use crate::feature_flag::evaluation::{
    Evaluation, GroupSubject, GroupSubjects, Inputs, Person, evaluate_until,
};
use crate::feature_flag::pattern::Patterns;
use crate::feature_flag::{DependencyValues, FeatureFlagRepository, FlagId, ServingFlags};
use crate::group::{GroupKey, GroupRepository, GroupTypeIndex};
use crate::memory::{Memories, Memory};
use crate::person::{PersonRepository, ProfileQuery, stored_distinct_id};
use crate::survey::SurveyService;
use crate::tenancy::{Project, ProjectId, TenancyRepository};

/// The longest a kept snapshot is served: the safety net under change notifications, should
/// one ever go unheard on a connection that stayed up.
pub const SNAPSHOT_LIFETIME: Duration = Duration::from_secs(30);

/// The most time one costly `/flags` request's evaluations may take, checked before each
/// condition set: the flags not evaluated by then are left out of the answer, which says so
/// (`errorsWhileComputingFlags`), as PostHog's does when a flag fails. A project's flags are
/// bounded when written, so only flags stored under older limits, over large properties, come
/// near it.
pub const EVALUATION_BUDGET: Duration = Duration::from_millis(100);

/// Evaluations cheaper than this (a snapshot's [`SdkSnapshot::evaluation_cost`], times one more
/// for each 4 KiB of sent properties) run on the request's own thread: moving them costs more
/// than they do. Measured in docs/benchmarks.md.
const INLINE_EVALUATION_COST: usize = 2_000;

/// Every flag of a snapshot evaluated for one person, as far as the budget allowed.
#[derive(Debug)]
pub struct Evaluated<'s> {
    /// One per flag of `snapshot.flags`, at its index; `None` for a flag the budget left out.
    pub flags: Vec<Option<Evaluation<'s>>>,
    /// Some flag could not be computed: the budget ran out, or the project's flags were
    /// withheld from its snapshot ([`SdkSnapshot::flags_withheld`]).
    pub errors: bool,
}

/// Whether, and in how much memory, a node keeps snapshots.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotSettings {
    /// Off: every SDK request reads its project from storage (same answers, more statements).
    pub enabled: bool,
    /// About how many bytes all kept snapshots may take together.
    pub budget_bytes: u64,
}

/// What the storage the snapshots are built from holds.
pub struct SnapshotSources {
    pub tenancy: Arc<dyn TenancyRepository>,
    pub flags: Arc<dyn FeatureFlagRepository>,
    /// Read only for a project whose flags filter by cohorts.
    pub cohorts: Arc<dyn CohortRepository>,
    pub groups: Arc<dyn GroupRepository>,
    pub surveys: Arc<SurveyService>,
    pub persons: Arc<dyn PersonRepository>,
    /// Compiles the flags' patterns when a snapshot is built.
    pub patterns: Arc<dyn Patterns>,
    /// Where costly evaluations run.
    pub slots: Arc<dyn EvaluationSlots>,
}

/// The SDK endpoints' use cases, with `R` what the API renders from each snapshot
/// ([`SdkSnapshot::renderings`]).
pub struct SdkService<R> {
    pub(super) sources: SnapshotSources,
    kept: Option<Kept<R>>,
    /// Builds in progress, by project: a request that finds one waits for it and takes what it
    /// built (single flight), so a burst right after a change builds once, not once a request.
    flights: Mutex<HashMap<ProjectId, Arc<Flight<R>>>>,
    /// Snapshots served from memory, built from storage, and taken from another request's
    /// build, since the node started.
    from_memory: AtomicU64,
    built: AtomicU64,
    shared: AtomicU64,
}

/// One build of a project's snapshot.
struct Flight<R> {
    /// The changes heard when it began: only a request that has heard no more may take it.
    began: Option<u64>,
    /// Locked by the request building it until it is done, then holding what it built
    /// (nothing if it failed or was abandoned).
    built: futures_util::lock::Mutex<Option<Arc<SdkSnapshot<R>>>>,
}

enum Role<R> {
    Lead(Arc<Flight<R>>),
    Follow(Arc<Flight<R>>),
    Alone,
}

/// Takes a finished (or abandoned) build out of the map, so the next request starts anew.
struct Landing<'a, R> {
    flights: &'a Mutex<HashMap<ProjectId, Arc<Flight<R>>>>,
    project: ProjectId,
}

impl<R> Drop for Landing<'_, R> {
    fn drop(&mut self) {
        self.flights
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.project);
    }
}

/// How a node's snapshots have been doing, for its metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotCounts {
    pub from_memory: u64,
    pub built: u64,
    /// Whether the node hears changes now, and so keeps snapshots.
    pub listening: bool,
    /// Tokens kept with the project they name: valid tokens only, however many are tried.
    pub tokens_kept: u64,
    pub snapshots_kept: u64,
    /// About how many bytes the kept snapshots take ([`SdkSnapshot::size`]).
    pub snapshot_bytes_kept: u64,
    /// Requests that took a snapshot another request was building.
    pub shared: u64,
}

/// Snapshots kept in the node's memory, and what decides whether one may be.
struct Kept<R> {
    /// Which project a token names (tokens never move): a pointer to the snapshot, which must
    /// carry the token too, and all capture needs.
    tokens: Box<dyn Memory<str, ProjectId>>,
    snapshots: Box<dyn Memory<ProjectId, Arc<SdkSnapshot<R>>>>,
    /// Counts the changes heard (and every loss of hearing): a snapshot whose build began
    /// before a change was heard may hold what changed, so it is not kept.
    heard: AtomicU64,
    /// Whether changes are being heard now; while they are not, nothing is kept, so no node
    /// serves a stale snapshot because its listener was down.
    listening: AtomicBool,
    /// The largest snapshot kept: half the budget, so one project's cannot push out every
    /// other's. A larger one is served and dropped (built again, once at a time, when asked).
    largest: u64,
}

impl<R: Default + Send + Sync + 'static> SdkService<R> {
    pub fn new(
        sources: SnapshotSources,
        settings: SnapshotSettings,
        memories: &impl Memories,
    ) -> Self {
        let kept = settings.enabled.then(|| Kept {
            tokens: memories.memory(SNAPSHOT_LIFETIME),
            snapshots: memories
                .weighed_memory(SNAPSHOT_LIFETIME, settings.budget_bytes, |s| s.size()),
            heard: AtomicU64::new(0),
            listening: AtomicBool::new(false),
            largest: settings.budget_bytes / 2,
        });
        Self {
            sources,
            kept,
            flights: Mutex::default(),
            from_memory: AtomicU64::new(0),
            built: AtomicU64::new(0),
            shared: AtomicU64::new(0),
        }
    }

    pub fn counts(&self) -> SnapshotCounts {
        SnapshotCounts {
            from_memory: self.from_memory.load(Ordering::Relaxed),
            built: self.built.load(Ordering::Relaxed),
            listening: self.kept.as_ref().is_some_and(|kept| kept.listening()),
            tokens_kept: self.kept.as_ref().map_or(0, |kept| kept.tokens.entries()),
            snapshots_kept: self
                .kept
                .as_ref()
                .map_or(0, |kept| kept.snapshots.entries()),
            snapshot_bytes_kept: self.kept.as_ref().map_or(0, |kept| kept.snapshots.weight()),
            shared: self.shared.load(Ordering::Relaxed),
        }
    }

    /// Whether this node keeps snapshots (it may still not, while it cannot hear changes).
    pub fn keeps_snapshots(&self) -> bool {
        self.kept.is_some()
    }

    /// The snapshot of the project whose public token (PostHog's `api_key`/`token`) this is:
    /// the kept one, else the one another request is building, else one built from storage,
    /// kept when no change was heard meanwhile.
    ///
    /// # Errors
    /// `MissingProjectToken` for no or an empty token, `InvalidProjectToken` for an unknown
    /// one, `Unexpected` when storage fails.
    pub async fn snapshot(&self, token: Option<&str>) -> Result<Arc<SdkSnapshot<R>>, AccessError> {
        let token = checked(token)?;
        let kept = self.kept.as_ref().filter(|kept| kept.listening());
        if let Some(found) = kept.and_then(|kept| kept.recall(token)) {
            self.from_memory.fetch_add(1, Ordering::Relaxed);
            return Ok(found);
        }
        let project = self.project_named(token).await?;
        let heard_before = kept.map(|kept| kept.heard());
        match self.role(project.id, heard_before) {
            Role::Lead(flight) => {
                let _landing = Landing {
                    flights: &self.flights,
                    project: project.id,
                };
                let mut built = flight
                    .built
                    .try_lock()
                    .ok_or_else(|| Unexpected::new("a new snapshot build was already locked"))?;
                let snapshot = self.build_now(project).await?;
                if let (Some(kept), Some(heard_before)) = (kept, heard_before) {
                    kept.keep(token, &snapshot, heard_before);
                }
                *built = Some(Arc::clone(&snapshot));
                Ok(snapshot)
            }
            Role::Follow(flight) => {
                let taken = flight.built.lock().await.clone();
                if let Some(snapshot) = taken {
                    self.shared.fetch_add(1, Ordering::Relaxed);
                    return Ok(snapshot);
                }
                // The build failed or its request went away: this one builds alone.
                self.build_now(project).await
            }
            Role::Alone => self.build_now(project).await,
        }
    }

    /// What a request that found no kept snapshot does: lead a build of `project`, follow the
    /// one in progress, or (when that one began before a change this request has heard of,
    /// and so may miss it) build alone.
    fn role(&self, project: ProjectId, heard_before: Option<u64>) -> Role<R> {
        let mut flights = self.flights.lock().unwrap_or_else(PoisonError::into_inner);
        match flights.get(&project) {
            Some(flight) if flight.began == heard_before => Role::Follow(Arc::clone(flight)),
            Some(_) => Role::Alone,
            None => {
                let flight = Arc::new(Flight {
                    began: heard_before,
                    built: futures_util::lock::Mutex::new(None),
                });
                flights.insert(project, Arc::clone(&flight));
                Role::Lead(flight)
            }
        }
    }

    /// [`Self::build`], counted.
    async fn build_now(&self, project: Project) -> Result<Arc<SdkSnapshot<R>>, AccessError> {
        let snapshot = Arc::new(self.build(project).await?);
        self.built.fetch_add(1, Ordering::Relaxed);
        Ok(snapshot)
    }

    /// The id of the project the token names, for capture, which needs nothing else of it: a
    /// token never changes its project, so what is kept is only the pointer, and a project that
    /// only captures never has its flags and surveys held in memory.
    ///
    /// # Errors
    /// As [`Self::snapshot`].
    pub async fn project_id(&self, token: Option<&str>) -> Result<ProjectId, AccessError> {
        let token = checked(token)?;
        let kept = self.kept.as_ref().filter(|kept| kept.listening());
        if let Some(project) = kept.and_then(|kept| kept.tokens.recall(token)) {
            return Ok(project);
        }
        let project = self.project_named(token).await?.id;
        if let Some(kept) = kept {
            kept.tokens.keep(token.to_owned(), project);
        }
        Ok(project)
    }

    async fn project_named(&self, token: &str) -> Result<Project, AccessError> {
        self.sources
            .tenancy
            .project_by_token(token)
            .await?
            .ok_or(AccessError::InvalidProjectToken)
    }

    /// A snapshot of `project` read from storage now, kept nowhere. Made (flags parsed,
    /// patterns compiled) in one of the project's evaluation slots: for flags stored under
    /// older limits that is seconds of CPU, which no request thread may spend.
    ///
    /// # Errors
    /// `Unexpected` when storage fails, or (busy) no slot frees in time.
    pub async fn build(&self, project: Project) -> Result<SdkSnapshot<R>, Unexpected> {
        let flags = self
            .sources
            .flags
            .serving(project.id, SNAPSHOT_FLAG_BYTES)
            .await?;
        let surveys = self.sources.surveys.unarchived(project.id).await?;
        let names_cohorts = match &flags {
            ServingFlags::Loaded(flags) => flags
                .iter()
                .any(|flag| !flag.filters.cohort_ids().is_empty()),
            ServingFlags::TooLarge(_) => false,
        };
        let cohorts = if names_cohorts {
            self.sources.cohorts.live(project.id).await?
        } else {
            Vec::new()
        };
        let group_types = self.sources.groups.types(project.id).await?;
        let patterns = Arc::clone(&self.sources.patterns);
        let id = project.id;
        self.offloaded(id, move || {
            SdkSnapshot::new(project, flags, cohorts, group_types, surveys, &*patterns)
        })
        .await
    }

    /// `work`'s result, computed in one of `project`'s evaluation slots.
    async fn offloaded<T: Send + 'static>(
        &self,
        project: ProjectId,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Unexpected> {
        let result = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&result);
        let work = move || {
            let done = work();
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(done);
        };
        self.sources.slots.run(project, Box::new(work)).await?;
        let done = result.lock().unwrap_or_else(PoisonError::into_inner).take();
        done.ok_or_else(|| Unexpected::new("an evaluation slot ended without a result"))
    }

    /// Every flag of the snapshot evaluated for the request's person and groups (the
    /// properties stored for them, overridden by the ones the request sent) within
    /// [`EVALUATION_BUDGET`], and `answer` made of them: on the request's thread when that is
    /// cheap, else in one of the node's [`EvaluationSlots`], so a project's costly flags take
    /// only its own share of them. One evaluation per flag, in the order of `snapshot.flags`, so
    /// an answer finds each by the index [`SdkSnapshot::answer_order`] gives.
    ///
    /// # Errors
    /// `Unexpected` when storage fails, or (busy) no slot frees in time.
    pub async fn answer_flags<A: Send + 'static>(
        &self,
        snapshot: Arc<SdkSnapshot<R>>,
        request: FlagsRequest,
        answer: impl for<'s> FnOnce(&'s SdkSnapshot<R>, Evaluated<'s>) -> A + Send + 'static,
    ) -> Result<A, Unexpected> {
        let cost = snapshot
            .evaluation_cost()
            .saturating_mul(1 + request.sent_bytes() / 4096);
        let asking = self.asking(&snapshot, request).await?;
        let now = Utc::now();
        if cost < INLINE_EVALUATION_COST {
            let evaluated = evaluated(&snapshot, &asking, now, false);
            return Ok(answer(&snapshot, evaluated));
        }
        let project = snapshot.project.id;
        self.offloaded(project, move || {
            answer(&snapshot, evaluated(&snapshot, &asking, now, true))
        })
        .await
    }

    /// Whom the flags are evaluated for, read in one statement when the snapshot has flags:
    /// the person's stored properties under the sent ones, the request's groups of the types
    /// flags aggregate by (stored properties under sent ones, with `$group_key`, as the SDKs
    /// add it), the person's hash key overrides when flags ensure experience continuity, and
    /// which of the flags' static cohorts list the person. A request after identify
    /// (`$anon_distinct_id`) first keeps the anonymous id as the person's hash key for those
    /// flags, as PostHog does.
    async fn asking(
        &self,
        snapshot: &SdkSnapshot<R>,
        mut request: FlagsRequest,
    ) -> Result<Asking, Unexpected> {
        if snapshot.flags.is_empty() {
            return Ok(Asking::person(Person {
                distinct_id: request.distinct_id,
                properties: Map::new(),
            }));
        }
        let project = snapshot.project.id;
        let distinct_id = stored_distinct_id(&request.distinct_id);
        let continuity = snapshot.continuity_flags();
        if let Some(anonymous) = request.anon_distinct_id.as_deref().map(stored_distinct_id)
            && !continuity.is_empty()
            && anonymous != distinct_id
        {
            let keys: Vec<&str> = continuity.iter().map(String::as_str).collect();
            self.sources
                .persons
                .keep_hash_keys(project, &distinct_id, &anonymous, &keys)
                .await?;
        }
        let (indices, keys): (Vec<GroupTypeIndex>, Vec<GroupKey>) =
            std::mem::take(&mut request.groups)
                .into_iter()
                .filter_map(|group| Some((snapshot.aggregated_type(&group.group_type)?, group)))
                .unzip();
        let query = ProfileQuery {
            distinct_id: &distinct_id,
            groups: &keys,
            hash_key_overrides: !continuity.is_empty(),
            static_cohorts: snapshot.cohorts().statics(),
        };
        let profile = self.sources.persons.profile(project, &query).await?;
        let mut properties = profile.properties;
        properties.extend(request.person_properties.into_map());
        let mut subjects = GroupSubjects::default();
        for ((index, group), stored) in indices.into_iter().zip(keys).zip(profile.groups) {
            let mut properties = stored;
            if let Some(Value::Object(sent)) = request.group_properties.take(&group.group_type) {
                properties.extend(sent);
            }
            properties.insert(
                "$group_key".to_owned(),
                Value::from(group.group_key.clone()),
            );
            subjects.insert(
                index,
                GroupSubject {
                    group_key: group.group_key,
                    properties,
                },
            );
        }
        Ok(Asking {
            person: Person {
                distinct_id: request.distinct_id,
                properties,
            },
            groups: subjects,
            hash_key_overrides: profile.hash_key_overrides,
            static_cohorts: profile.static_cohorts,
        })
    }
}

/// Whom one `/flags` request's flags are evaluated for.
struct Asking {
    person: Person,
    groups: GroupSubjects,
    hash_key_overrides: HashMap<String, String>,
    /// The snapshot's static cohorts that list the person.
    static_cohorts: Vec<CohortId>,
}

impl Asking {
    fn person(person: Person) -> Self {
        Self {
            person,
            groups: GroupSubjects::default(),
            hash_key_overrides: HashMap::new(),
            static_cohorts: Vec::new(),
        }
    }
}

/// The snapshot's flags evaluated for `asking` in order, relative dates counted from one clock
/// reading, `now`; when `budgeted`, only until [`EVALUATION_BUDGET`] is spent from now (checked
/// before each condition set, so a cheap evaluation, which is not budgeted, reads no clock).
fn evaluated<'s, R>(
    snapshot: &'s SdkSnapshot<R>,
    asking: &Asking,
    now: DateTime<Utc>,
    budgeted: bool,
) -> Evaluated<'s> {
    let deadline = budgeted.then(|| Instant::now() + EVALUATION_BUDGET);
    let mut flags: Vec<Option<Evaluation<'s>>> = vec![None; snapshot.flags.len()];
    let cohorts = snapshot.cohorts().for_person(&asking.static_cohorts);
    let mut out_of_time = false;
    for &index in snapshot.evaluation_order() {
        let settled = Settled {
            snapshot,
            flags: &flags,
        };
        let inputs = Inputs {
            person: &asking.person,
            groups: &asking.groups,
            hash_key_overrides: &asking.hash_key_overrides,
            now,
            patterns: snapshot.patterns(),
            dependencies: &settled,
            cohorts: &cohorts,
        };
        match evaluate_until(&snapshot.flags[index], &inputs, deadline) {
            Some(evaluation) => flags[index] = Some(evaluation),
            None => {
                out_of_time = true;
                break;
            }
        }
    }
    let errors = out_of_time || snapshot.flags_withheld.is_some();
    Evaluated { flags, errors }
}

/// The flags of a snapshot evaluated so far for one person, which the flags depending on
/// them read.
struct Settled<'a, 's, R> {
    snapshot: &'s SdkSnapshot<R>,
    flags: &'a [Option<Evaluation<'s>>],
}

impl<R> DependencyValues for Settled<'_, '_, R> {
    fn value_of(&self, flag: FlagId) -> Option<(bool, Option<&str>)> {
        let position = self.snapshot.dependencies().position(flag)?;
        let evaluation = self.flags.get(position)?.as_ref()?;
        Some((evaluation.enabled, evaluation.variant))
    }
}

/// The token as the SDKs name a project, trimmed.
///
/// # Errors
/// `MissingProjectToken` for no or an empty token; `InvalidProjectToken` for one holding U+0000,
/// which no token holds (storage cannot even compare one), so storage is not asked.
fn checked(token: Option<&str>) -> Result<&str, AccessError> {
    let token = token
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .ok_or(AccessError::MissingProjectToken)?;
    if token.contains('\0') {
        return Err(AccessError::InvalidProjectToken);
    }
    Ok(token)
}

impl<R: Send + Sync> SnapshotInvalidation for SdkService<R> {
    fn listening(&self) {
        if let Some(kept) = &self.kept {
            kept.lost_track();
            kept.listening.store(true, Ordering::SeqCst);
        }
    }

    fn deaf(&self) {
        if let Some(kept) = &self.kept {
            kept.listening.store(false, Ordering::SeqCst);
            kept.lost_track();
        }
    }

    fn changed(&self, project: ProjectId) {
        if let Some(kept) = &self.kept {
            kept.heard.fetch_add(1, Ordering::SeqCst);
            kept.snapshots.forget(&project);
        }
    }
}

impl<R> Kept<R> {
    fn listening(&self) -> bool {
        self.listening.load(Ordering::SeqCst)
    }

    fn heard(&self) -> u64 {
        self.heard.load(Ordering::SeqCst)
    }

    fn recall(&self, token: &str) -> Option<Arc<SdkSnapshot<R>>> {
        let project = self.tokens.recall(token)?;
        self.snapshots
            .recall(&project)
            .filter(|snapshot| snapshot.project.api_token == token)
    }

    /// Keeps `snapshot` unless a change was heard since its build began, or it is larger than
    /// one snapshot may be. It is kept first and checked after, so a change heard in between
    /// still forgets it: `changed` counts before it forgets.
    fn keep(&self, token: &str, snapshot: &Arc<SdkSnapshot<R>>, heard_before: u64) {
        let project = snapshot.project.id;
        if self.heard() != heard_before {
            return;
        }
        self.tokens.keep(token.to_owned(), project);
        if u64::from(snapshot.size()) > self.largest {
            return;
        }
        self.snapshots.keep(project, Arc::clone(snapshot));
        if self.heard() != heard_before || !self.listening() {
            self.snapshots.forget(&project);
        }
    }

    fn lost_track(&self) {
        self.heard.fetch_add(1, Ordering::SeqCst);
        self.snapshots.forget_all();
    }
}
