//! The two stores under contract, behind one `Stores` value: the ports over a fresh
//! `InMemoryStore` or a fresh PostgreSQL database, each set up through its own
//! `TenancyRepository` with the same tenants (one user owning two projects of one organization,
//! another user owning a third project in an organization of their own).

use std::sync::Arc;

use adapters::testing::TestDatabase;
use adapters::{
    PgApiKeyRepository, PgCohortRepository, PgDeliveryQueue, PgFeatureFlagRepository,
    PgGroupRepository, PgPersonRepository, PgPluginConfigRepository, PgPluginRepository,
    PgSurveyRepository, PgSurveyResponseRepository, PgTenancyRepository, PgWebhookRepository,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Integer, Text, Timestamptz};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use domain::DomainError;
use domain::admin::{BootstrapPlan, BootstrapRecord, bootstrap_tenant};
use domain::api_key::{ApiKeyRepository, NewApiKey, PlainApiKey};
use domain::cohort::CohortRepository;
use domain::feature_flag::{
    FeatureFlag, FeatureFlagRepository, FlagChanges, FlagFilters, FlagId, FlagKey, NewFlag,
};
use domain::group::GroupRepository;
use domain::person::{PersonRepository, PersonSet, ProfileSets};
use domain::plugin::PluginRepository;
use domain::plugin_config::PluginConfigRepository;
use domain::ports::PageRequest;
use domain::scope::ScopeGrants;
use domain::survey::{SurveyId, SurveyRepository, SurveyService};
use domain::survey_response::SurveyResponseRepository;
use domain::tenancy::{
    Email, OrganizationId, PluginsAccessLevel, ProjectId, TenancyRepository, UserBasic, UserId,
    generate_project_api_token,
};
use domain::testing::InMemoryStore;
use domain::webhook::{DeliveryQueue, WebhookRepository};
use serde_json::json;

/// What bootstraps a user owning a new organization with one project, and the plan's key in
/// clear text (to present it).
pub fn bootstrap_plan(email: &str, organization: &str) -> (PlainApiKey, BootstrapPlan) {
    let (plain, key) = NewApiKey::mint("test", ScopeGrants::parse(&["*"]).unwrap(), None, None);
    let plan = BootstrapPlan {
        email: Email::parse(email).unwrap(),
        first_name: "Ada".into(),
        organization_name: organization.into(),
        plugins_access_level: PluginsAccessLevel::Install,
        project_name: "Project".into(),
        project_api_token: generate_project_api_token(),
        key,
    };
    (plain, plan)
}

/// A user owning a new organization with one project, and their key in clear text.
async fn bootstrap(
    keys: &dyn ApiKeyRepository,
    email: &str,
    organization: &str,
) -> (PlainApiKey, BootstrapRecord) {
    let (plain, plan) = bootstrap_plan(email, organization);
    let record = bootstrap_tenant(keys, plan)
        .await
        .expect("bootstrapping a tenant");
    (plain, record)
}

/// One store's repositories and the tenant every contract test writes as.
pub struct Stores {
    pub tenancy: Arc<dyn TenancyRepository>,
    pub keys: Arc<dyn ApiKeyRepository>,
    pub surveys: Arc<dyn SurveyRepository>,
    pub cohorts: Arc<dyn CohortRepository>,
    pub flags: Arc<dyn FeatureFlagRepository>,
    pub plugins: Arc<dyn PluginRepository>,
    pub plugin_configs: Arc<dyn PluginConfigRepository>,
    pub survey_responses: Arc<dyn SurveyResponseRepository>,
    pub persons: Arc<dyn PersonRepository>,
    pub groups: Arc<dyn GroupRepository>,
    pub webhooks: Arc<dyn WebhookRepository>,
    pub deliveries: Arc<dyn DeliveryQueue>,
    pub organization: OrganizationId,
    /// Another user's organization and its project, for what must not cross organizations.
    pub other_organization: OrganizationId,
    pub other_organization_project: ProjectId,
    pub project: ProjectId,
    /// A second project of the same organization, to check that nothing leaks across.
    pub other_project: ProjectId,
    pub user: UserBasic,
    /// The user's bootstrap key (every scope, no restriction) in clear text.
    pub key: PlainApiKey,
    /// The owner of the other organization, a member of nothing else.
    pub other_user: UserId,
    backdoor: Box<dyn Backdoor>,
}

/// A flag as stored, deleted or not: what `all_flags` shows, since no port lists deleted flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFlag {
    pub id: FlagId,
    pub key: String,
    pub active: bool,
    pub deleted: bool,
}

/// What a contract test must see or do that no port offers, implemented by each store.
#[async_trait]
trait Backdoor: Send + Sync {
    /// Every flag of the project, deleted ones included, by id.
    async fn all_flags(&self, project: ProjectId) -> Vec<StoredFlag>;
    /// How many surveys are stored, across projects.
    async fn survey_count(&self) -> usize;
    /// Gives every stored flag, survey and organization the same `created_at`, so list order
    /// comes down to ids.
    async fn set_every_created_at(&self, at: DateTime<Utc>);
}

#[async_trait]
impl Backdoor for InMemoryStore {
    async fn all_flags(&self, project: ProjectId) -> Vec<StoredFlag> {
        InMemoryStore::all_flags(self, project)
            .into_iter()
            .map(|flag| StoredFlag {
                id: flag.id,
                key: flag.key,
                active: flag.active,
                deleted: flag.deleted,
            })
            .collect()
    }

    async fn survey_count(&self) -> usize {
        InMemoryStore::survey_count(self)
    }

    async fn set_every_created_at(&self, at: DateTime<Utc>) {
        InMemoryStore::set_every_created_at(self, at);
    }
}

#[derive(QueryableByName)]
struct FlagRow {
    #[diesel(sql_type = Integer)]
    id: i32,
    #[diesel(sql_type = Text)]
    key: String,
    #[diesel(sql_type = Bool)]
    active: bool,
    #[diesel(sql_type = Bool)]
    deleted: bool,
}

/// A connection of its own, outside the repositories' pool, for reads and writes no port makes.
async fn connect(db: &TestDatabase) -> AsyncPgConnection {
    AsyncPgConnection::establish(&db.url)
        .await
        .expect("connecting to the test database")
}

#[async_trait]
impl Backdoor for TestDatabase {
    async fn all_flags(&self, project: ProjectId) -> Vec<StoredFlag> {
        diesel::sql_query(
            "SELECT id, key, active, deleted FROM feature_flags WHERE project_id = $1 ORDER BY id",
        )
        .bind::<Integer, _>(project.0)
        .load::<FlagRow>(&mut connect(self).await)
        .await
        .expect("reading every flag")
        .into_iter()
        .map(|row| StoredFlag {
            id: FlagId(row.id),
            key: row.key,
            active: row.active,
            deleted: row.deleted,
        })
        .collect()
    }

    async fn survey_count(&self) -> usize {
        usize::try_from(self.count_rows("surveys").await).expect("a small count")
    }

    async fn set_every_created_at(&self, at: DateTime<Utc>) {
        let mut conn = connect(self).await;
        for table in ["feature_flags", "surveys", "organizations"] {
            diesel::sql_query(format!("UPDATE {table} SET created_at = $1"))
                .bind::<Timestamptz, _>(at)
                .execute(&mut conn)
                .await
                .expect("backdating rows");
        }
    }
}

impl Stores {
    /// The ports over a fresh in-memory fake.
    pub async fn in_memory() -> Self {
        let store = InMemoryStore::new();
        Self::open(
            (Arc::new(store.clone()), Arc::new(store.clone())),
            (Arc::new(store.clone()), Arc::new(store.clone())),
            Arc::new(store.clone()),
            (Arc::new(store.clone()), Arc::new(store.clone())),
            (
                Arc::new(store.clone()),
                Arc::new(store.clone()),
                Arc::new(store.clone()),
            ),
            (Arc::new(store.clone()), Arc::new(store.clone())),
            Box::new(store),
        )
        .await
    }

    /// The ports over a fresh PostgreSQL database.
    pub async fn postgres() -> Self {
        Self::on_postgres(&TestDatabase::create().await).await
    }

    /// The ports over `db`, for tests that also reach the database themselves.
    pub async fn on_postgres(db: &TestDatabase) -> Self {
        let database = &db.database;
        Self::open(
            (
                Arc::new(PgTenancyRepository::new(database.clone())),
                Arc::new(PgApiKeyRepository::new(database.clone())),
            ),
            (
                Arc::new(PgSurveyRepository::new(database.clone())),
                Arc::new(PgCohortRepository::new(database.clone())),
            ),
            Arc::new(PgFeatureFlagRepository::new(database.clone())),
            (
                Arc::new(PgPluginRepository::new(database.clone())),
                Arc::new(PgPluginConfigRepository::new(database.clone())),
            ),
            (
                Arc::new(PgSurveyResponseRepository::new(database.clone())),
                Arc::new(PgPersonRepository::new(database.clone())),
                Arc::new(PgGroupRepository::new(database.clone())),
            ),
            (
                Arc::new(PgWebhookRepository::new(database.clone())),
                Arc::new(PgDeliveryQueue::new(database.clone())),
            ),
            Box::new(db.clone()),
        )
        .await
    }

    /// Bootstraps the tenant through the store's own key port, so both stores hold the same
    /// user, organization and projects.
    async fn open(
        (tenancy, keys): (Arc<dyn TenancyRepository>, Arc<dyn ApiKeyRepository>),
        (surveys, cohorts): (Arc<dyn SurveyRepository>, Arc<dyn CohortRepository>),
        flags: Arc<dyn FeatureFlagRepository>,
        (plugins, plugin_configs): (Arc<dyn PluginRepository>, Arc<dyn PluginConfigRepository>),
        (survey_responses, persons, groups): (
            Arc<dyn SurveyResponseRepository>,
            Arc<dyn PersonRepository>,
            Arc<dyn GroupRepository>,
        ),
        (webhooks, deliveries): (Arc<dyn WebhookRepository>, Arc<dyn DeliveryQueue>),
        backdoor: Box<dyn Backdoor>,
    ) -> Self {
        let (key, record) = bootstrap(keys.as_ref(), "ada@example.com", "Org").await;
        let (_, other_organization) =
            bootstrap(keys.as_ref(), "bob@example.com", "Other org").await;
        let other = tenancy
            .create_project(
                record.organization.id,
                "Other",
                &generate_project_api_token(),
            )
            .await
            .expect("creating a second project");
        Self {
            tenancy,
            keys,
            surveys,
            cohorts,
            flags,
            plugins,
            plugin_configs,
            survey_responses,
            persons,
            groups,
            webhooks,
            deliveries,
            organization: record.organization.id,
            other_organization: other_organization.organization.id,
            other_organization_project: other_organization.project.id,
            project: record.project.id,
            other_project: other.id,
            user: UserBasic::from(&record.user),
            key,
            other_user: other_organization.user.id,
            backdoor,
        }
    }

    /// Every flag of the main project, deleted ones included, by id.
    pub async fn all_flags(&self) -> Vec<StoredFlag> {
        self.backdoor.all_flags(self.project).await
    }

    /// Every flag of the other project, deleted ones included, by id.
    pub async fn all_other_flags(&self) -> Vec<StoredFlag> {
        self.backdoor.all_flags(self.other_project).await
    }

    pub async fn survey_count(&self) -> usize {
        self.backdoor.survey_count().await
    }

    pub async fn set_every_created_at(&self, at: DateTime<Utc>) {
        self.backdoor.set_every_created_at(at).await;
    }

    /// A new user owning a new organization with one project, and their key in clear text.
    pub async fn bootstrap(
        &self,
        email: &str,
        organization: &str,
    ) -> (PlainApiKey, BootstrapRecord) {
        bootstrap(self.keys.as_ref(), email, organization).await
    }

    /// The survey use cases over these stores.
    pub fn survey_service(&self) -> SurveyService {
        SurveyService::new(Arc::clone(&self.surveys), Arc::clone(&self.cohorts))
    }

    /// Deletes a survey of `project` as the user, through the service.
    pub async fn delete_survey(&self, project: ProjectId, id: SurveyId) -> Result<(), DomainError> {
        self.survey_service()
            .delete(project, id, self.user.id)
            .await
    }

    /// An active flag to create, with a rollout so its filters are not the default ones.
    pub fn new_flag(&self, key: &str) -> NewFlag {
        NewFlag {
            key: FlagKey::parse(key).expect("a valid key"),
            name: format!("Flag {key}"),
            filters: FlagFilters::parse(json!({"groups": [{"rollout_percentage": 50}]})).unwrap(),
            active: true,
            ensure_experience_continuity: false,
            is_remote_configuration: false,
        }
    }

    /// A live, active flag of the main project, created by the user.
    pub async fn flag(&self, key: &str) -> FeatureFlag {
        self.flag_in(self.project, key).await
    }

    /// A live, active flag of `project`, created by the user.
    pub async fn flag_in(&self, project: ProjectId, key: &str) -> FeatureFlag {
        self.flags
            .create(project, Some(self.user.clone()), self.new_flag(key))
            .await
            .expect("creating a flag")
    }

    /// Soft-deletes a flag of the main project as the flags API does.
    pub async fn delete_flag(&self, id: FlagId) -> FeatureFlag {
        self.flags
            .update(self.project, id, FlagChanges::deletion())
            .await
            .expect("deleting a flag")
    }
}

/// What a capture sets when it sets persons only.
pub fn person_sets(persons: Vec<PersonSet>) -> ProfileSets {
    ProfileSets {
        persons,
        groups: Vec::new(),
    }
}

/// A page holding every item of a test's short lists.
pub fn all() -> PageRequest {
    PageRequest {
        limit: 100,
        offset: 0,
    }
}

/// A timestamp from RFC 3339 text, whole seconds so PostgreSQL stores it unchanged.
pub fn at(raw: &str) -> DateTime<Utc> {
    raw.parse().expect("an RFC 3339 timestamp")
}
