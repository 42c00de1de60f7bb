//! The SDK endpoints' use cases: a project's snapshot by its public token, kept in the node's
//! memory while the node hears of every change to it, and `/flags` evaluated against it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use chrono::Utc;
use serde_json::{Map, Value};

use super::{SdkSnapshot, SnapshotInvalidation};
use crate::access::AccessError;
use crate::error::Unexpected;
use crate::feature_flag::FeatureFlagRepository;
use crate::feature_flag::evaluation::{Evaluation, Person, evaluate_at};
use crate::feature_flag::pattern::Patterns;
use crate::memory::{Memories, Memory};
use crate::person::{PersonRepository, stored_distinct_id};
use crate::survey::SurveyService;
use crate::tenancy::{Project, ProjectId, TenancyRepository};

/// The longest a kept snapshot is served: the safety net under change notifications, should
/// one ever go unheard on a connection that stayed up.
pub const SNAPSHOT_LIFETIME: Duration = Duration::from_secs(30);

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
    pub surveys: Arc<SurveyService>,
    pub persons: Arc<dyn PersonRepository>,
    /// Compiles the flags' patterns when a snapshot is built.
    pub patterns: Arc<dyn Patterns>,
}

pub struct SdkService {
    pub(super) sources: SnapshotSources,
    kept: Option<Kept>,
    /// Snapshots served from memory, and built from storage, since the node started.
    from_memory: AtomicU64,
    built: AtomicU64,
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
}

/// Snapshots kept in the node's memory, and what decides whether one may be.
struct Kept {
    /// Which project a token names (tokens never move): a pointer to the snapshot, which must
    /// carry the token too, and all capture needs.
    tokens: Box<dyn Memory<str, ProjectId>>,
    snapshots: Box<dyn Memory<ProjectId, Arc<SdkSnapshot>>>,
    /// Counts the changes heard (and every loss of hearing): a snapshot whose build began
    /// before a change was heard may hold what changed, so it is not kept.
    heard: AtomicU64,
    /// Whether changes are being heard now; while they are not, nothing is kept, so no node
    /// serves a stale snapshot because its listener was down.
    listening: AtomicBool,
}

impl SdkService {
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
        });
        Self {
            sources,
            kept,
            from_memory: AtomicU64::new(0),
            built: AtomicU64::new(0),
        }
    }

    pub fn counts(&self) -> SnapshotCounts {
        SnapshotCounts {
            from_memory: self.from_memory.load(Ordering::Relaxed),
            built: self.built.load(Ordering::Relaxed),
            listening: self.kept.as_ref().is_some_and(Kept::listening),
            tokens_kept: self.kept.as_ref().map_or(0, |kept| kept.tokens.entries()),
            snapshots_kept: self
                .kept
                .as_ref()
                .map_or(0, |kept| kept.snapshots.entries()),
        }
    }

    /// Whether this node keeps snapshots (it may still not, while it cannot hear changes).
    pub fn keeps_snapshots(&self) -> bool {
        self.kept.is_some()
    }

    /// The snapshot of the project whose public token (PostHog's `api_key`/`token`) this is:
    /// the kept one, else one built from storage, kept when no change was heard meanwhile.
    ///
    /// # Errors
    /// `MissingProjectToken` for no or an empty token, `InvalidProjectToken` for an unknown
    /// one, `Unexpected` when storage fails.
    pub async fn snapshot(&self, token: Option<&str>) -> Result<Arc<SdkSnapshot>, AccessError> {
        let token = checked(token)?;
        let kept = self.kept.as_ref().filter(|kept| kept.listening());
        if let Some(found) = kept.and_then(|kept| kept.recall(token)) {
            self.from_memory.fetch_add(1, Ordering::Relaxed);
            return Ok(found);
        }
        let heard_before = kept.map(Kept::heard);
        let project = self.project_named(token).await?;
        let snapshot = Arc::new(self.build(project).await?);
        self.built.fetch_add(1, Ordering::Relaxed);
        if let (Some(kept), Some(heard_before)) = (kept, heard_before) {
            kept.keep(token, &snapshot, heard_before);
        }
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

    /// A snapshot of `project` read from storage now, kept nowhere.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn build(&self, project: Project) -> Result<SdkSnapshot, Unexpected> {
        let flags = self.sources.flags.active(project.id).await?;
        let surveys = self.sources.surveys.unarchived(project.id).await?;
        Ok(SdkSnapshot::new(
            project,
            flags,
            surveys,
            &*self.sources.patterns,
        ))
    }

    /// Every flag of the snapshot evaluated for the person: the properties stored for
    /// `distinct_id` (the one read from storage), overridden by the ones the request sent.
    /// One evaluation per flag, in the order of `snapshot.flags`, so an answer finds each by
    /// the index [`SdkSnapshot::answer_order`] gives.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn evaluate_flags<'s>(
        &self,
        snapshot: &'s SdkSnapshot,
        distinct_id: &str,
        sent_properties: &Map<String, Value>,
    ) -> Result<Vec<Evaluation<'s>>, Unexpected> {
        if snapshot.flags.is_empty() {
            return Ok(Vec::new());
        }
        let mut properties = self
            .sources
            .persons
            .properties(snapshot.project.id, &stored_distinct_id(distinct_id))
            .await?;
        properties.extend(sent_properties.iter().map(|(k, v)| (k.clone(), v.clone())));
        let person = Person {
            distinct_id: distinct_id.to_owned(),
            properties,
        };
        // One clock reading for every flag of the answer (relative date filters).
        let now = Utc::now();
        Ok(snapshot
            .flags
            .iter()
            .map(|flag| evaluate_at(flag, &person, now, snapshot.patterns()))
            .collect())
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

impl SnapshotInvalidation for SdkService {
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

impl Kept {
    fn listening(&self) -> bool {
        self.listening.load(Ordering::SeqCst)
    }

    fn heard(&self) -> u64 {
        self.heard.load(Ordering::SeqCst)
    }

    fn recall(&self, token: &str) -> Option<Arc<SdkSnapshot>> {
        let project = self.tokens.recall(token)?;
        self.snapshots
            .recall(&project)
            .filter(|snapshot| snapshot.project.api_token == token)
    }

    /// Keeps `snapshot` unless a change was heard since its build began. It is kept first and
    /// checked after, so a change heard in between still forgets it: `changed` counts before it
    /// forgets.
    fn keep(&self, token: &str, snapshot: &Arc<SdkSnapshot>, heard_before: u64) {
        let project = snapshot.project.id;
        if self.heard() != heard_before {
            return;
        }
        self.tokens.keep(token.to_owned(), project);
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
