//! Contract of the tenancy and API key repositories: bootstrap all or nothing, tenants read with
//! the caller's membership, memberships, the current tenant, visible projects, keys found by
//! their hash for active owners only, and `last_used_at`.

use chrono::{DateTime, SubsecRound as _, TimeDelta, Utc};
use domain::api_key::NewApiKey;
use domain::scope::ScopeGrants;
use domain::tenancy::{
    AsSeenBy, Email, MembershipLevel, OrganizationId, PluginsAccessLevel, Project, ProjectId,
    UserId, VisibleProjects, generate_project_api_token,
};
use uuid::Uuid;

use domain::admin::bootstrap_tenant;

use crate::stores::{Stores, all, at, bootstrap_plan};

contract!(
    bootstrap_stores_a_tenant_whose_key_finds_its_active_owner,
    a_failed_bootstrap_leaves_nothing_behind,
    bootstrapping_an_existing_email_reuses_the_user,
    unknown_ids_tokens_and_hashes_find_nothing,
    a_tenant_is_read_with_the_callers_membership_or_none,
    memberships_can_be_added_and_changed_but_only_between_existing_rows,
    memberships_list_the_oldest_organization_first_ties_by_id,
    plugins_access_levels_are_stored_per_organization,
    projects_need_their_organization_and_a_token_of_their_own,
    the_current_tenant_can_be_switched_to_existing_ones_only,
    visible_projects_respect_membership_and_key_restrictions,
    created_keys_keep_their_scopes_and_restrictions,
    a_key_needs_an_existing_owner_and_an_id_and_hash_of_its_own,
    touch_records_when_a_key_was_last_used,
    a_deactivated_users_keys_stop_working_at_once,
);

/// Ids of a list of projects, for comparing lists by what they hold.
fn ids<'a>(projects: impl IntoIterator<Item = &'a Project>) -> Vec<ProjectId> {
    projects.into_iter().map(|p| p.id).collect()
}

fn email(raw: &str) -> Email {
    Email::parse(raw).expect("a valid email")
}

/// A key for the user restricted to `teams` and `organizations`, with its clear text's hash.
fn restricted_key(
    teams: Option<Vec<ProjectId>>,
    organizations: Option<Vec<OrganizationId>>,
) -> (String, NewApiKey) {
    let scopes = ScopeGrants::parse(&["survey:read", "feature_flag:write"]).unwrap();
    let (plain, key) = NewApiKey::mint("restricted", scopes, teams, organizations);
    (plain.secure_value(), key)
}

async fn bootstrap_stores_a_tenant_whose_key_finds_its_active_owner(stores: Stores) {
    let (plain, plan) = bootstrap_plan("carol@example.com", "Carol's");
    let token = plan.project_api_token.clone();
    let record = bootstrap_tenant(&*stores.keys, plan).await.unwrap();
    assert_eq!(record.organization.name, "Carol's");
    assert_eq!(
        record.organization.plugins_access_level,
        PluginsAccessLevel::Install
    );
    assert_eq!(
        (
            record.project.name.as_str(),
            record.project.api_token.as_str()
        ),
        ("Project", token.as_str())
    );
    assert_eq!(record.project.organization_id, record.organization.id);
    assert_eq!(
        (record.user.email.as_str(), record.user.first_name.as_str()),
        ("carol@example.com", "Ada")
    );
    assert!(record.user.is_active && !record.user.is_email_verified);
    assert_eq!(
        (
            record.user.current_organization_id,
            record.user.current_project_id
        ),
        (Some(record.organization.id), Some(record.project.id))
    );

    // Everything bootstrapped reads back as it was returned.
    let tenancy = &stores.tenancy;
    assert_eq!(
        tenancy.project(record.project.id).await.unwrap().as_ref(),
        Some(&record.project)
    );
    assert_eq!(
        tenancy.project_by_token(&token).await.unwrap().as_ref(),
        Some(&record.project)
    );
    assert_eq!(
        tenancy.organization(record.organization.id).await.unwrap(),
        Some(record.organization.clone())
    );
    assert_eq!(
        tenancy.user(record.user.id).await.unwrap().as_ref(),
        Some(&record.user)
    );
    assert_eq!(
        tenancy
            .user_by_email(&email("carol@example.com"))
            .await
            .unwrap()
            .as_ref(),
        Some(&record.user)
    );
    let memberships = tenancy.memberships(record.user.id).await.unwrap();
    assert_eq!(memberships.len(), 1);
    assert_eq!(memberships[0].organization, record.organization);
    assert_eq!(memberships[0].level, MembershipLevel::Owner);

    let (key, owner) = stores
        .keys
        .find_active(&plain.secure_value())
        .await
        .unwrap()
        .expect("the bootstrap key is found by its hash");
    assert_eq!(owner, record.user);
    assert_eq!(key.user_id, record.user.id);
    assert_eq!((key.label.as_str(), key.mask), ("test", plain.mask()));
    assert_eq!(key.scopes.as_slice(), ["*"]);
    assert_eq!((key.scoped_teams, key.scoped_organizations), (None, None));
    assert_eq!(key.last_used_at, None);
}

async fn a_failed_bootstrap_leaves_nothing_behind(stores: Stores) {
    let taken = stores
        .tenancy
        .project(stores.project)
        .await
        .unwrap()
        .unwrap()
        .api_token;
    let ada_before = stores.tenancy.user(stores.user.id).await.unwrap().unwrap();

    // A new user whose project token is taken: the project fails after the user and the
    // organization, and neither remains.
    let (carol_key, mut carol) = bootstrap_plan("carol@example.com", "Carol's");
    carol.project_api_token.clone_from(&taken);
    assert!(bootstrap_tenant(&*stores.keys, carol).await.is_err());
    let carol = stores
        .tenancy
        .user_by_email(&email("carol@example.com"))
        .await
        .unwrap();
    assert_eq!(carol, None, "the user insert was rolled back");
    let carols_key = stores
        .keys
        .find_active(&carol_key.secure_value())
        .await
        .unwrap();
    assert!(carols_key.is_none());

    // An existing user whose new key's hash is taken: no organization, membership or current
    // tenant changes.
    let (_, mut again) = bootstrap_plan("ada@example.com", "Ada's second");
    again.key.secure_value = stores.key.secure_value();
    assert!(bootstrap_tenant(&*stores.keys, again).await.is_err());
    assert_eq!(
        stores
            .tenancy
            .memberships(stores.user.id)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        stores.tenancy.user(stores.user.id).await.unwrap(),
        Some(ada_before)
    );
}

async fn bootstrapping_an_existing_email_reuses_the_user(stores: Stores) {
    let (_, plan) = bootstrap_plan("ADA@example.COM", "Ada's second");
    let second = bootstrap_tenant(&*stores.keys, plan).await.unwrap();
    assert_eq!(second.user.id, stores.user.id);
    assert_eq!(
        second.user.email, "ada@example.com",
        "the stored email is kept"
    );
    assert_eq!(
        (
            second.user.current_organization_id,
            second.user.current_project_id
        ),
        (Some(second.organization.id), Some(second.project.id))
    );
    let levels: Vec<_> = stores
        .tenancy
        .memberships(stores.user.id)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.organization.id, m.level))
        .collect();
    assert_eq!(
        levels,
        [
            (stores.organization, MembershipLevel::Owner),
            (second.organization.id, MembershipLevel::Owner)
        ]
    );

    for lookup in ["ada@example.com", "Ada@Example.Com", " ADA@EXAMPLE.COM "] {
        let found = stores.tenancy.user_by_email(&email(lookup)).await.unwrap();
        assert_eq!(found.map(|u| u.id), Some(stores.user.id), "{lookup}");
    }
    // An address outside ASCII is found as it was written, whatever the database's locale.
    let (_, plan) = bootstrap_plan("Émile@example.com", "Émile's");
    let emile = bootstrap_tenant(&*stores.keys, plan).await.unwrap();
    let found = stores
        .tenancy
        .user_by_email(&email("Émile@example.com"))
        .await
        .unwrap();
    assert_eq!(found.map(|u| u.id), Some(emile.user.id));
}

async fn unknown_ids_tokens_and_hashes_find_nothing(stores: Stores) {
    let tenancy = &stores.tenancy;
    let no_project = ProjectId(stores.project.0 + 1000);
    let no_organization = OrganizationId(Uuid::now_v7());
    let no_user = UserId(stores.user.id.0 + 1000);
    assert_eq!(tenancy.project(no_project).await.unwrap(), None);
    assert_eq!(tenancy.project_by_token("phc_unknown").await.unwrap(), None);
    assert_eq!(tenancy.organization(no_organization).await.unwrap(), None);
    assert_eq!(
        tenancy
            .project_for(stores.user.id, no_project)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        tenancy
            .organization_for(stores.user.id, no_organization)
            .await
            .unwrap(),
        None
    );
    assert_eq!(tenancy.user(no_user).await.unwrap(), None);
    assert_eq!(
        tenancy
            .user_by_email(&email("nobody@example.com"))
            .await
            .unwrap(),
        None
    );
    assert!(tenancy.memberships(no_user).await.unwrap().is_empty());
    let page = tenancy
        .visible_projects(
            &VisibleProjects {
                user_id: no_user,
                project_ids: None,
                organization_ids: None,
            },
            all(),
        )
        .await
        .unwrap();
    assert_eq!((page.count, page.items), (0, vec![]));
    let unknown = stores.keys.find_active("sha256$unknown").await.unwrap();
    assert!(unknown.is_none());
    // The clear text is not the hash: a key is found by what is stored, nothing else.
    let by_clear_text = stores.keys.find_active(stores.key.expose()).await.unwrap();
    assert!(by_clear_text.is_none());
}

async fn a_tenant_is_read_with_the_callers_membership_or_none(stores: Stores) {
    let tenancy = &stores.tenancy;
    let owned = tenancy
        .project_for(stores.user.id, stores.project)
        .await
        .unwrap()
        .expect("the project exists");
    assert_eq!(owned.tenant.id, stores.project);
    assert_eq!(owned.tenant.organization_id, stores.organization);
    assert_eq!(owned.level, Some(MembershipLevel::Owner));

    let stranger = tenancy
        .project_for(stores.other_user, stores.project)
        .await
        .unwrap();
    assert_eq!(stranger.map(|seen| seen.level), Some(None));
    let organization = tenancy
        .organization_for(stores.other_user, stores.organization)
        .await
        .unwrap()
        .expect("the organization exists");
    assert_eq!(
        organization,
        AsSeenBy {
            tenant: tenancy
                .organization(stores.organization)
                .await
                .unwrap()
                .unwrap(),
            level: None,
        }
    );
    let own = tenancy
        .organization_for(stores.other_user, stores.other_organization)
        .await
        .unwrap();
    assert_eq!(
        own.and_then(|seen| seen.level),
        Some(MembershipLevel::Owner)
    );
}

async fn memberships_can_be_added_and_changed_but_only_between_existing_rows(stores: Stores) {
    let tenancy = &stores.tenancy;
    let level = async || {
        tenancy
            .organization_for(stores.other_user, stores.organization)
            .await
            .unwrap()
            .and_then(|seen| seen.level)
    };
    for wanted in [MembershipLevel::Member, MembershipLevel::Admin] {
        tenancy
            .upsert_membership(stores.other_user, stores.organization, wanted)
            .await
            .unwrap();
        assert_eq!(level().await, Some(wanted));
        let project = tenancy
            .project_for(stores.other_user, stores.other_project)
            .await
            .unwrap();
        assert_eq!(project.and_then(|seen| seen.level), Some(wanted));
    }
    let memberships = tenancy.memberships(stores.other_user).await.unwrap();
    assert_eq!(memberships.len(), 2, "changed, not added twice");

    let no_user = UserId(stores.user.id.0 + 1000);
    let no_organization = OrganizationId(Uuid::now_v7());
    let member = MembershipLevel::Member;
    assert!(
        tenancy
            .upsert_membership(no_user, stores.organization, member)
            .await
            .is_err()
    );
    assert!(
        tenancy
            .upsert_membership(stores.user.id, no_organization, member)
            .await
            .is_err()
    );
    assert_eq!(tenancy.memberships(no_user).await.unwrap(), vec![]);
}

async fn memberships_list_the_oldest_organization_first_ties_by_id(stores: Stores) {
    let tenancy = &stores.tenancy;
    let mut joined = vec![stores.organization];
    for name in ["Second", "Third"] {
        let (_, plan) = bootstrap_plan("ada@example.com", name);
        joined.push(
            bootstrap_tenant(&*stores.keys, plan)
                .await
                .unwrap()
                .organization
                .id,
        );
    }
    tenancy
        .upsert_membership(
            stores.user.id,
            stores.other_organization,
            MembershipLevel::Member,
        )
        .await
        .unwrap();
    // Bob's organization is older than Ada's second and third.
    joined.insert(1, stores.other_organization);
    let listed = async || -> Vec<OrganizationId> {
        tenancy
            .memberships(stores.user.id)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.organization.id)
            .collect()
    };
    assert_eq!(listed().await, joined);

    stores
        .set_every_created_at(at("2026-01-01T00:00:00Z"))
        .await;
    joined.sort();
    assert_eq!(listed().await, joined);
}

async fn plugins_access_levels_are_stored_per_organization(stores: Stores) {
    let tenancy = &stores.tenancy;
    let level = async |organization: OrganizationId| {
        tenancy
            .organization(organization)
            .await
            .unwrap()
            .unwrap()
            .plugins_access_level
    };
    for wanted in [
        PluginsAccessLevel::None,
        PluginsAccessLevel::Config,
        PluginsAccessLevel::Root,
        PluginsAccessLevel::Install,
    ] {
        tenancy
            .set_plugins_access_level(stores.organization, wanted)
            .await
            .unwrap();
        assert_eq!(level(stores.organization).await, wanted);
    }
    tenancy
        .set_plugins_access_level(stores.other_organization, PluginsAccessLevel::None)
        .await
        .unwrap();
    assert_eq!(
        level(stores.organization).await,
        PluginsAccessLevel::Install
    );
    // Setting the level of no organization changes nothing and is no error.
    let nowhere = OrganizationId(Uuid::now_v7());
    tenancy
        .set_plugins_access_level(nowhere, PluginsAccessLevel::Root)
        .await
        .unwrap();
    assert_eq!(tenancy.organization(nowhere).await.unwrap(), None);
}

async fn projects_need_their_organization_and_a_token_of_their_own(stores: Stores) {
    let tenancy = &stores.tenancy;
    let token = generate_project_api_token();
    let made = tenancy
        .create_project(stores.other_organization, "Third", &token)
        .await
        .unwrap();
    assert_eq!(
        (
            made.organization_id,
            made.name.as_str(),
            made.api_token.as_str()
        ),
        (stores.other_organization, "Third", token.as_str())
    );
    assert!(made.id != stores.project && made.id != stores.other_project);
    assert_eq!(tenancy.project(made.id).await.unwrap(), Some(made.clone()));
    assert_eq!(tenancy.project_by_token(&token).await.unwrap(), Some(made));

    let taken = tenancy
        .create_project(stores.organization, "Taken", &token)
        .await;
    assert!(taken.is_err(), "a token names one project");
    let orphan = tenancy
        .create_project(
            OrganizationId(Uuid::now_v7()),
            "Orphan",
            &generate_project_api_token(),
        )
        .await;
    assert!(orphan.is_err(), "a project belongs to an organization");
    let listed = tenancy
        .visible_projects(
            &VisibleProjects {
                user_id: stores.other_user,
                project_ids: None,
                organization_ids: None,
            },
            all(),
        )
        .await
        .unwrap();
    assert_eq!(listed.count, 2, "nothing was made by the refused writes");
}

async fn the_current_tenant_can_be_switched_to_existing_ones_only(stores: Stores) {
    let tenancy = &stores.tenancy;
    let current = async || {
        let user = tenancy.user(stores.user.id).await.unwrap().unwrap();
        (user.current_organization_id, user.current_project_id)
    };
    tenancy
        .set_current(
            stores.user.id,
            stores.organization,
            Some(stores.other_project),
        )
        .await
        .unwrap();
    assert_eq!(
        current().await,
        (Some(stores.organization), Some(stores.other_project))
    );
    tenancy
        .set_current(stores.user.id, stores.other_organization, None)
        .await
        .unwrap();
    assert_eq!(current().await, (Some(stores.other_organization), None));

    let no_project = ProjectId(stores.project.0 + 1000);
    let no_organization = OrganizationId(Uuid::now_v7());
    assert!(
        tenancy
            .set_current(stores.user.id, stores.organization, Some(no_project))
            .await
            .is_err()
    );
    assert!(
        tenancy
            .set_current(stores.user.id, no_organization, None)
            .await
            .is_err()
    );
    assert_eq!(current().await, (Some(stores.other_organization), None));
    // Switching no user changes nothing and is no error.
    let no_user = UserId(stores.user.id.0 + 1000);
    tenancy
        .set_current(no_user, stores.organization, Some(stores.project))
        .await
        .unwrap();
    assert_eq!(tenancy.user(no_user).await.unwrap(), None);
}

async fn visible_projects_respect_membership_and_key_restrictions(stores: Stores) {
    let tenancy = &stores.tenancy;
    let mut filter = VisibleProjects {
        user_id: stores.user.id,
        project_ids: None,
        organization_ids: None,
    };
    let visible = async |filter: &VisibleProjects| {
        let page = tenancy.visible_projects(filter, all()).await.unwrap();
        assert_eq!(page.count, page.items.len() as u64);
        ids(&page.items)
    };
    assert_eq!(
        visible(&filter).await,
        [stores.project, stores.other_project]
    );

    let window = tenancy
        .visible_projects(
            &filter,
            domain::ports::PageRequest {
                limit: 1,
                offset: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (window.count, ids(&window.items)),
        (2, vec![stores.other_project])
    );

    filter.project_ids = Some(vec![
        stores.other_project,
        stores.other_organization_project,
    ]);
    assert_eq!(visible(&filter).await, [stores.other_project]);
    filter.project_ids = Some(vec![]);
    assert!(
        visible(&filter).await.is_empty(),
        "an empty list restricts to nothing"
    );

    filter.project_ids = None;
    filter.organization_ids = Some(vec![stores.other_organization]);
    assert!(visible(&filter).await.is_empty());
    filter.organization_ids = Some(vec![stores.organization]);
    assert_eq!(
        visible(&filter).await,
        [stores.project, stores.other_project]
    );

    // Joining an organization shows its projects; both restrictions must then let one through.
    tenancy
        .upsert_membership(
            stores.user.id,
            stores.other_organization,
            MembershipLevel::Member,
        )
        .await
        .unwrap();
    filter.organization_ids = None;
    let mut every = vec![
        stores.project,
        stores.other_project,
        stores.other_organization_project,
    ];
    every.sort();
    assert_eq!(visible(&filter).await, every, "ordered by id");
    filter.project_ids = Some(vec![stores.project, stores.other_organization_project]);
    filter.organization_ids = Some(vec![stores.other_organization]);
    assert_eq!(visible(&filter).await, [stores.other_organization_project]);
}

async fn created_keys_keep_their_scopes_and_restrictions(stores: Stores) {
    let restrictions = [
        (
            Some(vec![stores.other_project, stores.project]),
            Some(vec![stores.organization]),
        ),
        (Some(vec![]), Some(vec![])),
        (None, Some(vec![stores.other_organization])),
    ];
    for (teams, organizations) in restrictions {
        let (secure_value, new) = restricted_key(teams.clone(), organizations.clone());
        stores
            .keys
            .create(stores.user.id, new.clone())
            .await
            .unwrap();
        let (key, owner) = stores
            .keys
            .find_active(&secure_value)
            .await
            .unwrap()
            .expect("a created key is found by its hash");
        assert_eq!(owner.id, stores.user.id);
        assert_eq!(
            (key.id, key.user_id, key.label, key.mask),
            (new.id, stores.user.id, new.label, new.mask)
        );
        assert_eq!(key.scopes.as_slice(), ["survey:read", "feature_flag:write"]);
        assert_eq!(
            (key.scoped_teams, key.scoped_organizations),
            (teams, organizations),
            "stored as given, order and emptiness included"
        );
        assert_eq!(key.last_used_at, None);
    }
    let (_, bootstrap_owner) = stores
        .keys
        .find_active(&stores.key.secure_value())
        .await
        .unwrap()
        .expect("the bootstrap key still works");
    assert_eq!(bootstrap_owner.id, stores.user.id);
}

async fn a_key_needs_an_existing_owner_and_an_id_and_hash_of_its_own(stores: Stores) {
    let (secure_value, key) = restricted_key(None, None);
    let no_user = UserId(stores.user.id.0 + 1000);
    assert!(stores.keys.create(no_user, key.clone()).await.is_err());
    assert!(
        stores
            .keys
            .find_active(&secure_value)
            .await
            .unwrap()
            .is_none()
    );

    let (_, mut twin) = restricted_key(None, None);
    twin.secure_value = stores.key.secure_value();
    assert!(
        stores.keys.create(stores.other_user, twin).await.is_err(),
        "a hash names one key"
    );
    let (first, owner) = stores
        .keys
        .find_active(&stores.key.secure_value())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner.id, stores.user.id, "the first key keeps its owner");

    let (secure_value, mut same_id) = restricted_key(None, None);
    same_id.id = first.id;
    assert!(
        stores.keys.create(stores.user.id, same_id).await.is_err(),
        "an id names one key"
    );
    assert!(
        stores
            .keys
            .find_active(&secure_value)
            .await
            .unwrap()
            .is_none()
    );
}

async fn touch_records_when_a_key_was_last_used(stores: Stores) {
    let secure_value = stores.key.secure_value();
    let last_used = async || {
        let (key, _) = stores
            .keys
            .find_active(&secure_value)
            .await
            .unwrap()
            .unwrap();
        (key.id, key.last_used_at)
    };
    let (id, never) = last_used().await;
    assert_eq!(never, None);

    let earlier = Utc::now() - TimeDelta::hours(2);
    stores.keys.touch(id, earlier).await.unwrap();
    // Stored to the microsecond, as PostgreSQL keeps it.
    assert_eq!(last_used().await, (id, Some(earlier.trunc_subsecs(6))));
    let later: DateTime<Utc> = at("2026-03-01T12:00:00Z");
    stores.keys.touch(id, later).await.unwrap();
    assert_eq!(last_used().await, (id, Some(later)));

    // Touching no key changes nothing and is no error.
    stores.keys.touch(Uuid::new_v4(), earlier).await.unwrap();
    assert_eq!(last_used().await, (id, Some(later)));
}

async fn a_deactivated_users_keys_stop_working_at_once(stores: Stores) {
    let (secure_value, key) = restricted_key(None, None);
    stores.keys.create(stores.user.id, key).await.unwrap();
    let (bob_key, bob) = stores.bootstrap("bob2@example.com", "Bob's second").await;

    stores
        .tenancy
        .deactivate_user(stores.user.id)
        .await
        .unwrap();
    for hash in [stores.key.secure_value(), secure_value] {
        assert!(stores.keys.find_active(&hash).await.unwrap().is_none());
    }
    let ada = stores.tenancy.user(stores.user.id).await.unwrap().unwrap();
    assert!(!ada.is_active, "the user is kept, inactive");
    let (_, owner) = stores
        .keys
        .find_active(&bob_key.secure_value())
        .await
        .unwrap()
        .expect("another user's key still works");
    assert_eq!(owner.id, bob.user.id);
    // Deactivating no user is no error.
    stores
        .tenancy
        .deactivate_user(UserId(stores.user.id.0 + 1000))
        .await
        .unwrap();
}
