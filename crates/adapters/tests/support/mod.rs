//! Shared set-up of the flag and survey contract tests: a fresh database with one user who
//! owns two projects.

use adapters::PgTenancyRepository;
use adapters::testing::TestDatabase;
use domain::api_key::NewApiKey;
use domain::ports::{BootstrapPlan, TenancyRepository};
use domain::scope::ScopeGrants;
use domain::tenancy::{
    Email, PluginsAccessLevel, ProjectId, UserBasic, UserId, generate_project_api_token,
};

/// A test database and the tenant the tests write as.
pub struct Tenant {
    pub db: TestDatabase,
    pub user: UserBasic,
    pub project: ProjectId,
    /// A second project of the same organization, to check that nothing leaks across.
    pub other_project: ProjectId,
}

impl Tenant {
    pub async fn create() -> Self {
        let db = TestDatabase::create().await;
        let tenancy = PgTenancyRepository::new(db.database.clone());
        let (_, key) = NewApiKey::mint("test", ScopeGrants::parse(&["*"]).unwrap(), None, None);
        let record = tenancy
            .bootstrap(BootstrapPlan {
                email: Email::parse("ada@example.com").unwrap(),
                first_name: "Ada".into(),
                organization_name: "Org".into(),
                plugins_access_level: PluginsAccessLevel::Install,
                project_name: "Project".into(),
                project_api_token: generate_project_api_token(),
                key,
            })
            .await
            .unwrap();
        let other = tenancy
            .create_project(
                record.organization.id,
                "Other",
                &generate_project_api_token(),
            )
            .await
            .unwrap();
        Self {
            db,
            user: UserBasic::from(&record.user),
            project: record.project.id,
            other_project: other.id,
        }
    }

    pub fn user_id(&self) -> UserId {
        self.user.id
    }
}
