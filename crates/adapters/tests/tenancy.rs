//! Contract tests of the PostgreSQL tenancy and key repositories against a real database.

use adapters::testing::TestDatabase;
use adapters::{PgApiKeyRepository, PgTenancyRepository};
use chrono::{TimeDelta, Utc};
use domain::api_key::ApiKeyRepository;
use domain::api_key::NewApiKey;
use domain::ports::PageRequest;
use domain::scope::ScopeGrants;
use domain::tenancy::{BootstrapPlan, TenancyRepository, VisibleProjects};
use domain::tenancy::{
    Email, MembershipLevel, PluginsAccessLevel, ProjectId, generate_project_api_token,
};

struct Repos {
    keys: PgApiKeyRepository,
    tenancy: PgTenancyRepository,
}

async fn repos() -> Repos {
    let db = TestDatabase::create().await;
    Repos {
        keys: PgApiKeyRepository::new(db.database.clone()),
        tenancy: PgTenancyRepository::new(db.database),
    }
}

fn plan(email: &str, token: &str) -> (String, BootstrapPlan) {
    let (plain, key) = NewApiKey::mint("test", ScopeGrants::parse(&["*"]).unwrap(), None, None);
    let plan = BootstrapPlan {
        email: Email::parse(email).unwrap(),
        first_name: "Ada".into(),
        organization_name: "Org".into(),
        plugins_access_level: PluginsAccessLevel::Install,
        project_name: "Project".into(),
        project_api_token: token.into(),
        key,
    };
    (plain.secure_value(), plan)
}

#[tokio::test]
async fn bootstrap_stores_a_tenant_whose_key_finds_its_active_owner() {
    let repos = repos().await;
    let (secure_value, plan) = plan("ada@example.com", &generate_project_api_token());
    let record = repos.tenancy.bootstrap(plan).await.unwrap();
    assert_eq!(
        record.organization.plugins_access_level,
        PluginsAccessLevel::Install
    );
    assert_eq!(record.user.current_project_id, Some(record.project.id));

    let (key, user) = repos
        .keys
        .find_active(&secure_value)
        .await
        .unwrap()
        .expect("key found");
    assert_eq!(user.id, record.user.id);
    assert_eq!(key.last_used_at, None);
    assert!(key.scopes.as_slice() == ["*"]);
    assert_eq!(
        repos
            .tenancy
            .organization_for(user.id, record.organization.id)
            .await
            .unwrap()
            .and_then(|seen| seen.level),
        Some(MembershipLevel::Owner)
    );

    let at = Utc::now() - TimeDelta::minutes(5);
    repos.keys.touch(key.id, at).await.unwrap();
    let (key, _) = repos
        .keys
        .find_active(&secure_value)
        .await
        .unwrap()
        .unwrap();
    assert!((key.last_used_at.unwrap() - at).num_milliseconds().abs() < 1);

    repos.tenancy.deactivate_user(user.id).await.unwrap();
    assert!(
        repos
            .keys
            .find_active(&secure_value)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_failed_bootstrap_leaves_nothing_behind() {
    let repos = repos().await;
    let token = generate_project_api_token();
    let (_, first) = plan("ada@example.com", &token);
    repos.tenancy.bootstrap(first).await.unwrap();
    // Same project token again: the project insert fails after the user and organization.
    let (secure_value, second) = plan("bob@example.com", &token);
    assert!(repos.tenancy.bootstrap(second).await.is_err());
    let bob = repos
        .tenancy
        .user_by_email(&Email::parse("bob@example.com").unwrap())
        .await
        .unwrap();
    assert!(bob.is_none(), "the user insert was rolled back");
    assert!(
        repos
            .keys
            .find_active(&secure_value)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn visible_projects_respect_membership_and_key_restrictions() {
    let repos = repos().await;
    let (_, ada_plan) = plan("ada@example.com", &generate_project_api_token());
    let ada = repos.tenancy.bootstrap(ada_plan).await.unwrap();
    let (_, bob_plan) = plan("bob@example.com", &generate_project_api_token());
    let bob = repos.tenancy.bootstrap(bob_plan).await.unwrap();
    let second = repos
        .tenancy
        .create_project(ada.organization.id, "Second", &generate_project_api_token())
        .await
        .unwrap();
    let all = PageRequest {
        limit: 10,
        offset: 0,
    };
    let mut filter = VisibleProjects {
        user_id: ada.user.id,
        project_ids: None,
        organization_ids: None,
    };

    let page = repos.tenancy.visible_projects(&filter, all).await.unwrap();
    assert_eq!(page.count, 2);
    assert_eq!(
        page.items.iter().map(|p| p.id).collect::<Vec<_>>(),
        vec![ada.project.id, second.id]
    );

    let window = repos
        .tenancy
        .visible_projects(
            &filter,
            PageRequest {
                limit: 1,
                offset: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!((window.count, window.items[0].id), (2, second.id));

    filter.project_ids = Some(vec![second.id, bob.project.id]);
    let page = repos.tenancy.visible_projects(&filter, all).await.unwrap();
    assert_eq!(
        page.items.iter().map(|p| p.id).collect::<Vec<_>>(),
        vec![second.id]
    );

    filter.project_ids = None;
    filter.organization_ids = Some(vec![bob.organization.id]);
    assert_eq!(
        repos
            .tenancy
            .visible_projects(&filter, all)
            .await
            .unwrap()
            .count,
        0
    );
}

#[tokio::test]
async fn a_tenant_is_read_with_the_callers_membership_or_none() {
    let repos = repos().await;
    let (_, ada_plan) = plan("ada@example.com", &generate_project_api_token());
    let ada = repos.tenancy.bootstrap(ada_plan).await.unwrap();
    let (_, bob_plan) = plan("bob@example.com", &generate_project_api_token());
    let bob = repos.tenancy.bootstrap(bob_plan).await.unwrap();
    let project = ada.project.id;

    let owned = repos
        .tenancy
        .project_for(ada.user.id, project)
        .await
        .unwrap();
    let owned = owned.expect("the project exists");
    assert_eq!(owned.tenant.id, project);
    assert_eq!(owned.level, Some(MembershipLevel::Owner));
    let stranger = repos
        .tenancy
        .project_for(bob.user.id, project)
        .await
        .unwrap();
    assert_eq!(stranger.map(|seen| seen.level), Some(None));
    let organization = repos
        .tenancy
        .organization_for(bob.user.id, ada.organization.id)
        .await
        .unwrap()
        .expect("the organization exists");
    assert_eq!(organization.tenant.id, ada.organization.id);
    assert_eq!(organization.level, None);

    let missing = ProjectId(project.0 + 1000);
    assert!(
        repos
            .tenancy
            .project_for(ada.user.id, missing)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn emails_are_unique_and_matched_case_insensitively() {
    let repos = repos().await;
    let (_, first) = plan("Ada@Example.com", &generate_project_api_token());
    let made = repos.tenancy.bootstrap(first).await.unwrap();
    let (_, again) = plan("ada@example.COM", &generate_project_api_token());
    let reused = repos.tenancy.bootstrap(again).await.unwrap();
    assert_eq!(made.user.id, reused.user.id);
    assert_eq!(
        repos.tenancy.memberships(made.user.id).await.unwrap().len(),
        2
    );
}

#[tokio::test]
async fn memberships_can_be_added_and_changed() {
    let repos = repos().await;
    let (_, ada_plan) = plan("ada@example.com", &generate_project_api_token());
    let ada = repos.tenancy.bootstrap(ada_plan).await.unwrap();
    let (_, bob_plan) = plan("bob@example.com", &generate_project_api_token());
    let bob = repos.tenancy.bootstrap(bob_plan).await.unwrap();
    let org = ada.organization.id;
    repos
        .tenancy
        .upsert_membership(bob.user.id, org, MembershipLevel::Member)
        .await
        .unwrap();
    assert_eq!(
        repos
            .tenancy
            .organization_for(bob.user.id, org)
            .await
            .unwrap()
            .and_then(|seen| seen.level),
        Some(MembershipLevel::Member)
    );
    repos
        .tenancy
        .upsert_membership(bob.user.id, org, MembershipLevel::Admin)
        .await
        .unwrap();
    assert_eq!(
        repos
            .tenancy
            .organization_for(bob.user.id, org)
            .await
            .unwrap()
            .and_then(|seen| seen.level),
        Some(MembershipLevel::Admin)
    );
    repos
        .tenancy
        .set_plugins_access_level(org, PluginsAccessLevel::None)
        .await
        .unwrap();
    assert_eq!(
        repos
            .tenancy
            .organization(org)
            .await
            .unwrap()
            .unwrap()
            .plugins_access_level,
        PluginsAccessLevel::None
    );
}
