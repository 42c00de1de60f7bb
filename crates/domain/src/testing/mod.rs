//! In-memory fakes of every repository port, so domain rules can be tested without a database.
//!
//! One `InMemoryStore` plays every repository; clone it to share the same state between
//! services, as the adapters share one database.
//! `TimedMemories` and `CompiledEachTime` stand in for what the adapters keep in a node's
//! memory: the access service's remembered answers and compiled flag patterns.

mod cohorts;
mod early_access;
mod evaluation_slots;
mod feature_flags;
mod flag_evaluation;
mod groups;
mod patterns;
mod persons;
mod plugins;
mod survey_responses;
mod surveys;
mod tenancy;
mod timed_memories;
mod transaction;
mod upstream;
mod webhooks;

pub use evaluation_slots::InPlaceSlots;
pub use flag_evaluation::evaluate;
pub use patterns::CompiledEachTime;
pub use persons::person_properties;
pub use timed_memories::TimedMemories;
pub use upstream::{CannedUpstream, WordAnalyzer};

use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::access::{Principal, ProjectAccess};
use crate::activity::{ActivityEntry, ActivityPage};
use crate::api_key::ApiKey;
use crate::feature_flag::{FeatureFlag, FlagId};
use crate::ports::{Page, PageRequest};
use crate::scope::ScopeGrants;
use crate::survey::{SurveyId, SurveyState};
use crate::tenancy::{
    MembershipLevel, Organization, OrganizationId, Project, ProjectId, User, UserBasic, UserId,
};

#[derive(Debug, Default, Clone)]
struct State {
    users: Vec<User>,
    organizations: Vec<Organization>,
    projects: Vec<Project>,
    memberships: Vec<(UserId, OrganizationId, MembershipLevel)>,
    keys: Vec<(String, ApiKey)>,
    flags: Vec<StoredFlag>,
    cohorts: Vec<cohorts::StoredCohort>,
    early_access: Vec<crate::early_access::EarlyAccessFeature>,
    surveys: Vec<StoredSurvey>,
    survey_activity: Vec<surveys::StoredActivity>,
    plugins: Vec<plugins::StoredPlugin>,
    plugin_configs: Vec<crate::plugin_config::PluginConfig>,
    plugin_activity: Vec<plugins::StoredActivity>,
    survey_events: Vec<(ProjectId, crate::survey_response::SurveyEvent)>,
    survey_responses: Vec<survey_responses::StoredResponse>,
    person_properties: Vec<persons::StoredPerson>,
    hash_key_overrides: Vec<persons::HashKeyOverride>,
    cohort_members: Vec<persons::CohortMember>,
    group_types: Vec<groups::StoredGroupType>,
    groups: Vec<groups::StoredGroup>,
    webhooks: Vec<webhooks::StoredWebhook>,
    /// In the order they were made.
    deliveries: Vec<webhooks::StoredDelivery>,
    webhook_activity: Vec<webhooks::StoredActivity>,
    /// Captured answers waiting to be fanned out into deliveries, in the order they came.
    webhook_outbox: Vec<webhooks::OutboxEntry>,
    /// Deleted webhooks whose deliveries are still to be purged, oldest deletion first.
    deleted_webhooks: Vec<crate::webhook::WebhookId>,
    /// The last delivery's sequence number.
    delivery_sequence: u64,
}

#[derive(Debug, Clone)]
struct StoredFlag {
    flag: FeatureFlag,
    created_by: Option<UserId>,
}

#[derive(Debug, Clone)]
struct StoredSurvey {
    id: SurveyId,
    project_id: ProjectId,
    state: SurveyState,
    targeting_flag_id: Option<FlagId>,
    owns_targeting_flag: bool,
    created_at: DateTime<Utc>,
    created_by: Option<UserId>,
}

/// Every port, backed by vectors behind a mutex.
#[derive(Debug, Clone, Default)]
pub struct InMemoryStore {
    state: Arc<Mutex<State>>,
    /// Held by the open transaction (`transaction::Draft`), so transactions take turns.
    turn: Arc<futures_util::lock::Mutex<()>>,
}

impl InMemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("in-memory store poisoned")
    }

    /// The stored `last_used_at` of a key, for tests of the refresh rule.
    pub fn key_last_used_at(&self, key_id: Uuid) -> Option<DateTime<Utc>> {
        self.lock()
            .keys
            .iter()
            .find(|(_, key)| key.id == key_id)
            .and_then(|(_, key)| key.last_used_at)
    }

    /// Every flag ever stored in the project, deleted ones included.
    pub fn all_flags(&self, project: ProjectId) -> Vec<FeatureFlag> {
        let state = self.lock();
        state
            .flags
            .iter()
            .filter(|f| f.flag.project_id == project)
            .map(|f| state.flag_view(f))
            .collect()
    }

    /// How many surveys are stored, across projects.
    pub fn survey_count(&self) -> usize {
        self.lock().surveys.len()
    }

    /// Gives every stored flag, survey and organization the same `created_at`, so tests can
    /// check that lists order ties by id.
    pub fn set_every_created_at(&self, at: DateTime<Utc>) {
        let mut state = self.lock();
        for stored in &mut state.flags {
            stored.flag.created_at = at;
        }
        for survey in &mut state.surveys {
            survey.created_at = at;
        }
        for organization in &mut state.organizations {
            organization.created_at = at;
        }
    }

    /// Overwrites a key's `last_used_at`, to simulate the passing of time.
    pub fn set_key_last_used_at(&self, key_id: Uuid, at: Option<DateTime<Utc>>) {
        if let Some((_, key)) = self
            .lock()
            .keys
            .iter_mut()
            .find(|(_, key)| key.id == key_id)
        {
            key.last_used_at = at;
        }
    }
}

/// A survey event of submission `sub` of survey `s`, its uuid and its person numbered by
/// `second`, sent `second` seconds into a fixed day: for tests of how a submission's events merge.
pub fn survey_event(
    kind: crate::survey_response::SurveyEventKind,
    second: i64,
    properties: serde_json::Value,
) -> crate::survey_response::SurveyEvent {
    use chrono::TimeZone as _;
    crate::survey_response::SurveyEvent {
        uuid: Uuid::from_u128(u128::try_from(second).unwrap()),
        kind,
        survey_id: "s".into(),
        distinct_id: format!("person-{second}"),
        timestamp: Utc.timestamp_opt(1_800_000_000 + second, 0).unwrap(),
        submission_id: Some("sub".into()),
        properties: properties.as_object().unwrap().clone(),
    }
}

/// A user as an authenticated caller holds it, for tests of services that take the acting user
/// whole without storing one.
pub fn someone(id: UserId) -> UserBasic {
    UserBasic {
        id,
        uuid: Uuid::from_u128(u128::from(id.0.unsigned_abs())),
        distinct_id: format!("user-{}", id.0),
        first_name: "Ada".into(),
        last_name: String::new(),
        email: format!("user-{}@example.com", id.0),
        is_email_verified: true,
    }
}

/// `user`, a `level` member of project 1's organization, calling with an all-scopes key: the
/// caller of a request, for tests of what an answer shows whom.
pub fn caller_in_project(user: UserId, level: MembershipLevel) -> ProjectAccess {
    let organization = OrganizationId(Uuid::nil());
    let basic = someone(user);
    ProjectAccess {
        principal: Principal {
            user: User {
                id: user,
                uuid: basic.uuid,
                email: basic.email,
                first_name: basic.first_name,
                last_name: basic.last_name,
                distinct_id: basic.distinct_id,
                is_active: true,
                is_email_verified: true,
                current_organization_id: Some(organization),
                current_project_id: Some(ProjectId(1)),
                created_at: Utc::now(),
            },
            key: ApiKey {
                id: Uuid::nil(),
                user_id: user,
                label: "test".into(),
                mask: "phx_...test".into(),
                scopes: ScopeGrants::parse(&["*"]).expect("the all-scopes grant parses"),
                scoped_teams: None,
                scoped_organizations: None,
                created_at: Utc::now(),
                last_used_at: None,
            },
        },
        project: Project {
            id: ProjectId(1),
            organization_id: organization,
            name: "Test".into(),
            api_token: "phc_test".into(),
            created_at: Utc::now(),
            survey_config: None,
        },
        level,
    }
}

/// The page of `items` that `page` asks for, and how many items there are: the paging every
/// fake list shares, so all of them treat an offset past the end (or past `usize`) alike, as an
/// empty page.
fn page_of<T>(items: Vec<T>, page: PageRequest) -> Page<T> {
    let count = items.len() as u64;
    let items = items
        .into_iter()
        .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
        .take(page.limit as usize)
        .collect();
    Page { count, items }
}

impl State {
    /// One page of an activity log from its entries and who made each, newest first (ties by
    /// id), each with its user's name and email as the adapters join them in when reading.
    pub(super) fn activity_page<'a>(
        &self,
        logged: impl Iterator<Item = (UserId, &'a ActivityEntry)>,
        page: PageRequest,
    ) -> ActivityPage {
        let mut entries: Vec<ActivityEntry> = logged
            .map(|(user, entry)| ActivityEntry {
                user: self
                    .users
                    .iter()
                    .find(|u| u.id == user)
                    .map(|u| (u.first_name.clone(), u.email.clone())),
                ..entry.clone()
            })
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
        let Page { count, items } = page_of(entries, page);
        ActivityPage {
            entries: items,
            total: count,
        }
    }

    pub(super) fn user_basic(&self, id: Option<UserId>) -> Option<UserBasic> {
        let id = id?;
        self.users.iter().find(|u| u.id == id).map(UserBasic::from)
    }
}
