//! Authentication and tenant resolution rules, over the in-memory fakes.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use domain::access::{AccessError, AccessService, KeyLocation, PresentedKey, Principal};
use domain::admin::{AdminService, BootstrapRequest, Bootstrapped, KeyRequest};
use domain::api_key::PlainApiKey;
use domain::scope::{AccessKind, RequiredScope, ScopeObject};
use domain::tenancy::{MembershipLevel, PluginsAccessLevel, ProjectId, TenantRef};
use domain::testing::{InMemoryStore, TimedMemories};

struct World {
    store: InMemoryStore,
    access: AccessService,
    admin: AdminService,
}

/// A world whose access service reads storage on every request.
fn world() -> World {
    remembering_world(Duration::ZERO)
}

fn remembering_world(freshness: Duration) -> World {
    let store = InMemoryStore::new();
    World {
        access: AccessService::new(
            Arc::new(store.clone()),
            Arc::new(store.clone()),
            freshness,
            &TimedMemories,
        ),
        admin: AdminService::new(Arc::new(store.clone()), Arc::new(store.clone())),
        store,
    }
}

async fn bootstrap(world: &World, email: &str, scopes: &[&str]) -> Bootstrapped {
    world
        .admin
        .bootstrap(BootstrapRequest {
            email: email.into(),
            first_name: "Ada".into(),
            organization_name: format!("Org of {email}"),
            project_name: "Default".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            plugins_access_level: PluginsAccessLevel::Root,
        })
        .await
        .unwrap()
}

fn header(key: &PlainApiKey) -> Option<PresentedKey> {
    Some(PresentedKey {
        key: key.clone(),
        location: KeyLocation::Header,
    })
}

async fn principal(world: &World, key: &PlainApiKey) -> Principal {
    world.access.authenticate(header(key)).await.unwrap()
}

#[tokio::test]
async fn a_request_without_a_key_is_not_authenticated() {
    let world = world();
    let error = world.access.authenticate(None).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Authentication credentials were not provided."
    );
}

#[tokio::test]
async fn an_unknown_key_is_invalid_and_the_message_names_where_it_was_found() {
    let world = world();
    let unknown = PresentedKey {
        key: PlainApiKey::presented("phx_nope"),
        location: KeyLocation::QueryString,
    };
    let error = world.access.authenticate(Some(unknown)).await.unwrap_err();
    assert!(matches!(
        error,
        AccessError::InvalidKey(KeyLocation::QueryString)
    ));
    assert_eq!(
        error.to_string(),
        "Personal API key found in request query string is invalid."
    );
}

#[tokio::test]
async fn a_deactivated_users_key_stops_working_immediately() {
    let world = world();
    let boot = bootstrap(&world, "ada@example.com", &["*"]).await;
    assert!(world.access.authenticate(header(&boot.key)).await.is_ok());
    world
        .admin
        .deactivate_user("ADA@example.com")
        .await
        .unwrap();
    let error = world
        .access
        .authenticate(header(&boot.key))
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        AccessError::InvalidKey(KeyLocation::Header)
    ));
}

#[tokio::test]
async fn a_remembered_owner_is_refused_once_the_memory_expires() {
    let freshness = Duration::from_secs(1);
    let world = remembering_world(freshness);
    let boot = bootstrap(&world, "ada@example.com", &["*"]).await;
    let project = TenantRef::Id(boot.record.project.id);
    let first = principal(&world, &boot.key).await;
    world.access.project(first, project).await.unwrap();
    world
        .admin
        .deactivate_user("ada@example.com")
        .await
        .unwrap();

    let remembered = principal(&world, &boot.key).await;
    assert!(remembered.user.is_active, "still the remembered owner");
    tokio::time::sleep(freshness + Duration::from_millis(500)).await;
    let error = world
        .access
        .authenticate(header(&boot.key))
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        AccessError::InvalidKey(KeyLocation::Header)
    ));
}

#[tokio::test]
async fn last_used_at_is_written_at_most_once_an_hour() {
    let world = world();
    let boot = bootstrap(&world, "ada@example.com", &["*"]).await;
    let first = principal(&world, &boot.key).await;
    let stamped = world
        .store
        .key_last_used_at(first.key.id)
        .expect("stamped on first use");

    principal(&world, &boot.key).await;
    assert_eq!(world.store.key_last_used_at(first.key.id), Some(stamped));

    let two_hours_ago = Utc::now() - TimeDelta::hours(2);
    world
        .store
        .set_key_last_used_at(first.key.id, Some(two_hours_ago));
    principal(&world, &boot.key).await;
    assert!(world.store.key_last_used_at(first.key.id).unwrap() > two_hours_ago);
}

#[tokio::test]
async fn scopes_are_enforced_with_posthogs_message() {
    let world = world();
    let boot = bootstrap(&world, "ada@example.com", &["survey:read"]).await;
    let caller = principal(&world, &boot.key).await;
    let read = RequiredScope {
        object: ScopeObject::Survey,
        access: AccessKind::Read,
    };
    let write = RequiredScope {
        object: ScopeObject::Survey,
        access: AccessKind::Write,
    };
    assert!(AccessService::require_scope(&caller, read).is_ok());
    let error = AccessService::require_scope(&caller, write).unwrap_err();
    assert_eq!(
        error.to_string(),
        "API key missing required scope 'survey:write'"
    );
}

#[tokio::test]
async fn projects_resolve_by_id_and_current_and_refuse_strangers() {
    let world = world();
    let ada = bootstrap(&world, "ada@example.com", &["*"]).await;
    let bob = bootstrap(&world, "bob@example.com", &["*"]).await;
    let ada_project = ada.record.project.id;

    let by_id = world
        .access
        .project(
            principal(&world, &ada.key).await,
            TenantRef::Id(ada_project),
        )
        .await
        .unwrap();
    assert_eq!(by_id.project.id, ada_project);
    assert_eq!(by_id.level, MembershipLevel::Owner);

    let current = world
        .access
        .project(principal(&world, &ada.key).await, TenantRef::Current)
        .await
        .unwrap();
    assert_eq!(current.project.id, ada_project);

    let stranger = world
        .access
        .project(
            principal(&world, &bob.key).await,
            TenantRef::Id(ada_project),
        )
        .await
        .unwrap_err();
    assert_eq!(
        stranger.to_string(),
        "You don't have access to the project."
    );

    for missing in [999, -1] {
        let error = world
            .access
            .project(
                principal(&world, &ada.key).await,
                TenantRef::Id(ProjectId(missing)),
            )
            .await
            .unwrap_err();
        assert!(matches!(error, AccessError::ProjectNotFound), "{missing}");
    }
}

#[tokio::test]
async fn a_key_scoped_to_other_projects_is_refused_with_the_project_id() {
    let world = world();
    let ada = bootstrap(&world, "ada@example.com", &["*"]).await;
    let second = world
        .admin
        .create_project(ada.record.organization.id, "Second")
        .await
        .unwrap();
    let scoped = world
        .admin
        .create_key(KeyRequest {
            email: "ada@example.com".into(),
            scopes: vec!["*".into()],
            scoped_teams: Some(vec![second.id]),
            ..KeyRequest::default()
        })
        .await
        .unwrap();
    let first = ada.record.project.id;
    let error = world
        .access
        .project(principal(&world, &scoped).await, TenantRef::Id(first))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("API key does not have access to the requested project: ID {first}.")
    );
    let visible = world
        .access
        .visible_projects(
            &principal(&world, &scoped).await,
            domain::ports::PageRequest {
                limit: 10,
                offset: 0,
            },
        )
        .await
        .unwrap();
    assert_eq!(visible.count, 1);
    assert_eq!(visible.items[0].id, second.id);
    // `@current` falls back to a project the key can reach.
    let current = world
        .access
        .project(principal(&world, &scoped).await, TenantRef::Current)
        .await
        .unwrap();
    assert_eq!(current.project.id, second.id);
}

#[tokio::test]
async fn a_key_scoped_to_other_organizations_is_refused() {
    let world = world();
    let ada = bootstrap(&world, "ada@example.com", &["*"]).await;
    let other = bootstrap(&world, "ada@example.com", &["*"]).await;
    let scoped = world
        .admin
        .create_key(KeyRequest {
            email: "ada@example.com".into(),
            scopes: vec!["*".into()],
            scoped_organizations: Some(vec![other.record.organization.id]),
            ..KeyRequest::default()
        })
        .await
        .unwrap();
    let org = ada.record.organization.id;
    let error = world
        .access
        .organization(principal(&world, &scoped).await, TenantRef::Id(org))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("API key does not have access to the requested organization: ID {org}.")
    );
    let visible = world
        .access
        .visible_organizations(&principal(&world, &scoped).await)
        .await
        .unwrap();
    assert_eq!(visible.len(), 1);
    assert_eq!(visible[0].organization.id, other.record.organization.id);
}

#[tokio::test]
async fn bootstrapping_an_existing_email_reuses_the_user_as_owner_of_the_new_organization() {
    let world = world();
    let first = bootstrap(&world, "ada@example.com", &["*"]).await;
    let second = bootstrap(&world, "Ada@Example.com", &["*"]).await;
    assert_eq!(first.record.user.id, second.record.user.id);
    assert_ne!(first.record.organization.id, second.record.organization.id);
    let caller = principal(&world, &first.key).await;
    let memberships = world.access.visible_organizations(&caller).await.unwrap();
    assert_eq!(memberships.len(), 2);
    assert!(
        memberships
            .iter()
            .all(|m| m.level == MembershipLevel::Owner)
    );
}

#[tokio::test]
async fn admin_commands_reject_unknown_scopes_and_users() {
    let world = world();
    bootstrap(&world, "ada@example.com", &["*"]).await;
    let bad_scope = world
        .admin
        .create_key(KeyRequest {
            email: "ada@example.com".into(),
            scopes: vec!["surveys:read".into()],
            ..KeyRequest::default()
        })
        .await;
    assert!(bad_scope.is_err());
    let nobody = world
        .admin
        .deactivate_user("nobody@example.com")
        .await
        .unwrap_err();
    assert_eq!(
        nobody.to_string(),
        "no user with email 'nobody@example.com'"
    );
}

#[tokio::test]
async fn bootstrap_rejects_names_longer_than_the_schema_stores() {
    let world = world();
    let request = |organization: &str, project: &str| BootstrapRequest {
        email: "ada@example.com".into(),
        first_name: String::new(),
        organization_name: organization.into(),
        project_name: project.into(),
        scopes: vec!["*".into()],
        plugins_access_level: PluginsAccessLevel::Root,
    };
    let long_org = world
        .admin
        .bootstrap(request(&"o".repeat(65), "P"))
        .await
        .unwrap_err();
    assert_eq!(
        long_org.to_string(),
        "organization name must be at most 64 characters"
    );
    let blank_project = world.admin.bootstrap(request("O", "  ")).await.unwrap_err();
    assert_eq!(blank_project.to_string(), "project name must not be blank");
    assert!(
        world
            .admin
            .bootstrap(request(&"o".repeat(64), &"p".repeat(200)))
            .await
            .is_ok()
    );
}
