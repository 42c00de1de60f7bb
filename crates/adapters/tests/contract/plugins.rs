//! Contract tests of the plugin and plugin config repositories, written through the real
//! `PluginService` and `PluginConfigService` (or one primitive at a time): who sees which plugin,
//! one install of a URL per organization, whole-or-nothing writes, cascades, unused plugins, the
//! activity log, and config transactions (seen only once committed, one config written by one
//! at a time).

use std::sync::Arc;
use std::time::Duration;

use domain::DomainError;
use domain::patch::Patch;
use domain::plugin::{
    NewPlugin, Plugin, PluginAccess, PluginChanges, PluginFields, PluginId, PluginService,
    PluginSettings, PluginType, SourceChanges,
};
use domain::plugin_config::{
    PluginConfig, PluginConfigChanges, PluginConfigService, PluginConfigState,
};
use domain::tenancy::{OrganizationId, PluginsAccessLevel, ProjectId, UserId};
use domain::testing::{CannedUpstream, WordAnalyzer};
use serde_json::{Map, json};

use crate::stores::{Stores, all};

contract! {
    an_organization_sees_its_own_global_and_configured_plugins_only,
    a_url_is_installed_once_per_organization_whatever_its_query,
    a_failed_update_writes_nothing_and_only_the_owner_may_update,
    source_files_are_set_and_deleted_as_the_write_says,
    uninstalling_takes_the_configs_and_files_along_and_is_logged,
    unused_lists_the_owners_plugins_without_an_enabled_live_config,
    activity_is_per_organization_newest_first_and_paged,
    configs_are_listed_by_order_and_deleted_ones_hidden,
    a_config_transaction_is_seen_only_once_committed,
    concurrent_updates_of_one_config_lose_no_change,
    a_dropped_transaction_writes_nothing_and_frees_its_locks_at_once,
}

/// Where the upstream serves its one plugin from.
const URL: &str = "https://github.com/posthog/hello";

fn user(stores: &Stores) -> UserId {
    stores.user.id
}

impl Stores {
    /// The plugin use cases over the store, with an upstream serving one plugin.
    fn plugin_service(&self) -> PluginService {
        let upstream = CannedUpstream::new();
        upstream.publish(
            "v1.0.0",
            &[
                ("plugin.json", r#"{"name": "Hello"}"#),
                (
                    "index.js",
                    "export function processEvent(event) { return event }",
                ),
            ],
        );
        PluginService::new(
            Arc::clone(&self.plugins),
            Arc::new(upstream),
            Arc::new(WordAnalyzer),
            PluginSettings::default(),
        )
    }

    /// A caller with every plugin right in `organization` (the contract's tenants are named
    /// when bootstrapped, `stores.rs`).
    fn root_of(&self, organization: OrganizationId) -> PluginAccess {
        let organization_name = if organization == self.organization {
            "Org"
        } else {
            "Other org"
        };
        PluginAccess {
            organization,
            organization_name: organization_name.into(),
            level: PluginsAccessLevel::Root,
            user: self.user.id,
        }
    }
}

/// Installs a source plugin (no upstream, no files) through the service.
async fn install(stores: &Stores, organization: OrganizationId, name: &str) -> Plugin {
    let plugin = NewPlugin {
        url: None,
        fields: PluginFields {
            plugin_type: Some(PluginType::Source),
            name: Patch::Value(name.into()),
            ..PluginFields::default()
        },
    };
    stores
        .plugin_service()
        .install(&stores.root_of(organization), plugin)
        .await
        .expect("installing")
}

fn from_url(url: &str) -> NewPlugin {
    NewPlugin {
        url: Some(url.into()),
        fields: PluginFields::default(),
    }
}

fn file(name: &str, content: Option<&str>) -> (String, Option<String>) {
    (name.to_owned(), content.map(str::to_owned))
}

fn config(enabled: bool, order: i32) -> PluginConfigState {
    PluginConfigState {
        enabled,
        order,
        config: Map::new(),
        name: None,
        description: None,
    }
}

/// Stores a config in a transaction of its own, for any plugin (the service would refuse one the
/// organization cannot see).
async fn configure(
    stores: &Stores,
    project: ProjectId,
    plugin: PluginId,
    state: PluginConfigState,
) -> PluginConfig {
    let mut transaction = stores.plugin_configs.begin().await.unwrap();
    let config = transaction.insert(project, plugin, state).await.unwrap();
    transaction.commit().await.unwrap();
    config
}

/// The config use cases over the store, as the tenant's owner with every plugin right.
fn service(stores: &Stores) -> (PluginConfigService, PluginAccess) {
    let service = PluginConfigService::new(stores.plugin_configs.clone(), stores.plugins.clone());
    let access = PluginAccess {
        organization: stores.organization,
        organization_name: "Org".into(),
        level: PluginsAccessLevel::Install,
        user: user(stores),
    };
    (service, access)
}

/// Deletes a config as the service does, in the tenant's organization.
async fn delete(
    stores: &Stores,
    project: ProjectId,
    config: &PluginConfig,
) -> Result<(), DomainError> {
    let (service, access) = service(stores);
    service.delete(&access, project, config.id).await
}

fn ids(plugins: &[Plugin]) -> Vec<PluginId> {
    plugins.iter().map(|p| p.id).collect()
}

async fn an_organization_sees_its_own_global_and_configured_plugins_only(stores: Stores) {
    let own = install(&stores, stores.organization, "Own").await;
    let foreign = install(&stores, stores.other_organization, "Foreign").await;
    let global = install(&stores, stores.other_organization, "Global").await;
    let configured = install(&stores, stores.other_organization, "Configured").await;
    let made_global = PluginChanges {
        is_global: Some(true),
        ..PluginChanges::default()
    };
    stores
        .plugin_service()
        .update(
            &stores.root_of(stores.other_organization),
            global.id,
            made_global,
        )
        .await
        .unwrap();
    let used = configure(&stores, stores.project, configured.id, config(false, 0)).await;

    let page = stores
        .plugins
        .list(stores.organization, all())
        .await
        .unwrap();
    assert_eq!(page.count, 3);
    assert_eq!(ids(&page.items), [own.id, global.id, configured.id]);
    assert_eq!(page.items[1].organization_name, "Other org");
    assert!(
        stores
            .plugins
            .get(stores.organization, foreign.id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        stores
            .plugins
            .get(stores.organization, configured.id)
            .await
            .unwrap()
            .is_some()
    );

    assert!(
        stores
            .plugins
            .get(stores.other_organization, own.id)
            .await
            .unwrap()
            .is_none()
    );
    configure(
        &stores,
        stores.other_organization_project,
        own.id,
        config(true, 0),
    )
    .await;
    assert!(
        stores
            .plugins
            .get(stores.other_organization, own.id)
            .await
            .unwrap()
            .is_some(),
        "a config in one of its projects makes a plugin visible to that organization"
    );

    delete(&stores, stores.project, &used).await.unwrap();
    assert!(
        stores
            .plugins
            .get(stores.organization, configured.id)
            .await
            .unwrap()
            .is_none(),
        "a deleted config no longer makes a plugin visible"
    );
}

async fn a_url_is_installed_once_per_organization_whatever_its_query(stores: Stores) {
    let plugins = stores.plugin_service();
    let own = stores.root_of(stores.organization);
    let first = plugins
        .install(&own, from_url(&format!("{URL}?private_token=a")))
        .await
        .unwrap();
    let again = plugins.install(&own, from_url(URL)).await;
    assert!(matches!(again, Err(DomainError::Invalid(_))), "{again:?}");
    let elsewhere = stores.root_of(stores.other_organization);
    assert!(plugins.install(&elsewhere, from_url(URL)).await.is_ok());
    assert!(
        plugins
            .install(&own, from_url(&format!("{URL}-other")))
            .await
            .is_ok()
    );

    // An install racing past the service's check meets the store's own guard.
    let mut raced = first.state.clone();
    raced.url = Some(URL.into());
    let mut transaction = stores.plugins.begin().await.unwrap();
    let insert = transaction.insert(stores.organization, &raced, None).await;
    assert!(matches!(insert, Err(DomainError::Conflict)), "{insert:?}");
    transaction.rollback().await.unwrap();
    assert_eq!(
        stores
            .plugins
            .list(stores.organization, all())
            .await
            .unwrap()
            .count,
        2
    );
}

async fn a_failed_update_writes_nothing_and_only_the_owner_may_update(stores: Stores) {
    let plugin = install(&stores, stores.organization, "Kept").await;
    let plugins = stores.plugin_service();
    let rename = |name: &str| PluginChanges {
        name: Patch::Value(name.into()),
        ..PluginChanges::default()
    };
    let other = stores.root_of(stores.other_organization);
    let hidden = plugins.update(&other, plugin.id, rename("Stolen")).await;
    assert!(matches!(hidden, Err(DomainError::NotFound)), "{hidden:?}");
    configure(
        &stores,
        stores.other_organization_project,
        plugin.id,
        config(true, 0),
    )
    .await;
    let foreign = plugins.update(&other, plugin.id, rename("Stolen")).await;
    assert!(
        matches!(foreign, Err(DomainError::Forbidden(_))),
        "a plugin another organization configures is seen there, not changed: {foreign:?}"
    );
    let stored = stores
        .plugins
        .get(stores.organization, plugin.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.state.name.as_deref(), Some("Kept"));
    let activity = stores.plugins.activity(stores.organization, all());
    assert_eq!(activity.await.unwrap().total, 1);

    let owner = stores.root_of(stores.organization);
    let renamed = plugins
        .update(&owner, plugin.id, rename("Renamed"))
        .await
        .unwrap();
    assert_eq!(
        stores
            .plugins
            .get(stores.organization, plugin.id)
            .await
            .unwrap(),
        Some(renamed),
        "an update returns the plugin as stored"
    );
    let activity = stores
        .plugins
        .activity(stores.organization, all())
        .await
        .unwrap();
    assert_eq!(activity.total, 2);
    assert_eq!(activity.entries[0].activity, "updated");
}

async fn source_files_are_set_and_deleted_as_the_write_says(stores: Stores) {
    let plugin = install(&stores, stores.organization, "Files").await;
    let plugins = stores.plugin_service();
    let owner = stores.root_of(stores.organization);
    let written = SourceChanges::from([
        file("plugin.json", Some(r#"{"name": "Files"}"#)),
        file("index.ts", Some("export {}")),
    ]);
    plugins
        .update_source(&owner, plugin.id, written)
        .await
        .unwrap();
    let changes = SourceChanges::from([
        file("index.ts", Some("export function onEvent() {}")),
        file("plugin.json", None),
        file("never-there.ts", None),
    ]);
    let files = plugins
        .update_source(&owner, plugin.id, changes)
        .await
        .unwrap();
    let stored = stores.plugins.source(plugin.id).await.unwrap();
    assert_eq!(stored, files, "the files returned are the ones stored");
    assert_eq!(
        stored.into_iter().collect::<Vec<_>>(),
        [(
            "index.ts".to_owned(),
            "export function onEvent() {}".to_owned()
        )]
    );
}

async fn uninstalling_takes_the_configs_and_files_along_and_is_logged(stores: Stores) {
    let plugin = install(&stores, stores.organization, "Gone").await;
    let plugins = stores.plugin_service();
    let owner = stores.root_of(stores.organization);
    let source = SourceChanges::from([file("index.ts", Some("export {}"))]);
    plugins
        .update_source(&owner, plugin.id, source)
        .await
        .unwrap();
    let config = configure(&stores, stores.project, plugin.id, config(true, 0)).await;
    let other = stores.root_of(stores.other_organization);
    assert!(matches!(
        plugins.uninstall(&other, plugin.id).await,
        Err(DomainError::NotFound)
    ));
    plugins.uninstall(&owner, plugin.id).await.unwrap();
    assert!(
        stores
            .plugins
            .get(stores.organization, plugin.id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        stores
            .plugin_configs
            .get(stores.project, config.id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(stores.plugins.source(plugin.id).await.unwrap().is_empty());
    let activity = stores
        .plugins
        .activity(stores.organization, all())
        .await
        .unwrap();
    assert_eq!(activity.entries[0].activity, "uninstalled");
    assert_eq!(activity.entries[0].item_id, plugin.id.to_string());
}

async fn unused_lists_the_owners_plugins_without_an_enabled_live_config(stores: Stores) {
    let enabled = install(&stores, stores.organization, "Enabled").await;
    let disabled = install(&stores, stores.organization, "Disabled").await;
    let deleted = install(&stores, stores.organization, "Deleted").await;
    let bare = install(&stores, stores.organization, "Bare").await;
    install(&stores, stores.other_organization, "Foreign").await;
    configure(&stores, stores.project, enabled.id, config(true, 0)).await;
    configure(&stores, stores.project, disabled.id, config(false, 0)).await;
    let gone = configure(&stores, stores.project, deleted.id, config(true, 0)).await;
    delete(&stores, stores.project, &gone).await.unwrap();
    assert_eq!(
        stores.plugins.unused(stores.organization).await.unwrap(),
        [disabled.id, deleted.id, bare.id]
    );
}

async fn activity_is_per_organization_newest_first_and_paged(stores: Stores) {
    for name in ["one", "two", "three"] {
        install(&stores, stores.organization, name).await;
    }
    install(&stores, stores.other_organization, "elsewhere").await;
    let page = stores
        .plugins
        .activity(
            stores.organization,
            domain::ports::PageRequest {
                limit: 2,
                offset: 0,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.total, 3);
    let names: Vec<_> = page
        .entries
        .iter()
        .map(|e| e.detail["name"].clone())
        .collect();
    assert_eq!(names, [json!("three"), json!("two")]);
    assert_eq!(
        page.entries[0].user,
        Some(("Ada".to_owned(), "ada@example.com".to_owned()))
    );
    assert_eq!(
        (
            page.entries[0].scope.as_str(),
            page.entries[0].activity.as_str()
        ),
        ("Plugin", "installed")
    );
}

async fn configs_are_listed_by_order_and_deleted_ones_hidden(stores: Stores) {
    let plugin = install(&stores, stores.organization, "Configured").await;
    let second = configure(&stores, stores.project, plugin.id, config(true, 2)).await;
    let first = configure(&stores, stores.project, plugin.id, config(false, 1)).await;
    let gone = configure(&stores, stores.project, plugin.id, config(true, 0)).await;
    configure(&stores, stores.other_project, plugin.id, config(true, 0)).await;
    delete(&stores, stores.project, &gone).await.unwrap();
    assert!(matches!(
        delete(&stores, stores.project, &gone).await,
        Err(DomainError::NotFound)
    ));
    let configs = &stores.plugin_configs;
    let page = configs.list(stores.project, all()).await.unwrap();
    assert_eq!(page.count, 2);
    assert_eq!(
        page.items.iter().map(|c| c.id).collect::<Vec<_>>(),
        [first.id, second.id]
    );

    let mut transaction = configs.begin().await.unwrap();
    assert_eq!(
        transaction
            .lock(stores.other_project, first.id)
            .await
            .unwrap(),
        None,
        "a config is locked only in its own project"
    );
    assert_eq!(
        transaction.lock(stores.project, gone.id).await.unwrap(),
        None,
        "a deleted config is not locked"
    );
    let mut changed = transaction
        .lock(stores.project, first.id)
        .await
        .unwrap()
        .expect("a live config");
    assert_eq!(changed, first);
    changed.state.enabled = true;
    changed.state.config.insert("host".into(), json!("eu"));
    let updated = transaction.update(changed.clone()).await.unwrap();
    transaction.commit().await.unwrap();
    assert_eq!(updated.state, changed.state);
    assert!(updated.updated_at >= first.updated_at);
    assert_eq!(
        configs.get(stores.project, first.id).await.unwrap(),
        Some(updated),
        "an update returns the config as stored"
    );
}

async fn a_config_transaction_is_seen_only_once_committed(stores: Stores) {
    let plugin = install(&stores, stores.organization, "Pending").await;
    let kept = configure(&stores, stores.project, plugin.id, config(true, 0)).await;
    let configs = &stores.plugin_configs;

    let mut transaction = configs.begin().await.unwrap();
    let added = transaction
        .insert(stores.project, plugin.id, config(false, 1))
        .await
        .unwrap();
    let mut changed = transaction
        .lock(stores.project, kept.id)
        .await
        .unwrap()
        .unwrap();
    changed.state.order = 7;
    transaction.update(changed).await.unwrap();
    assert_eq!(
        transaction.lock(stores.project, added.id).await.unwrap(),
        Some(added.clone()),
        "a transaction sees its own writes"
    );
    transaction.rollback().await.unwrap();
    assert_eq!(configs.get(stores.project, added.id).await.unwrap(), None);
    assert_eq!(
        configs.get(stores.project, kept.id).await.unwrap(),
        Some(kept.clone()),
        "a rolled back transaction writes nothing"
    );

    let mut transaction = configs.begin().await.unwrap();
    let added = transaction
        .insert(stores.project, plugin.id, config(false, 1))
        .await
        .unwrap();
    transaction.commit().await.unwrap();
    assert_eq!(
        configs.get(stores.project, added.id).await.unwrap(),
        Some(added),
        "an insert returns the config as stored"
    );
}

/// A transaction dropped unfinished (its request failed or was cancelled mid-way) writes
/// nothing and holds nothing: the next one locks the same config at once, rather than waiting
/// on a lock nobody will release.
async fn a_dropped_transaction_writes_nothing_and_frees_its_locks_at_once(stores: Stores) {
    let plugin = install(&stores, stores.organization, "Dropped").await;
    let kept = configure(&stores, stores.project, plugin.id, config(true, 0)).await;
    let configs = &stores.plugin_configs;
    let mut transaction = configs.begin().await.unwrap();
    let mut changed = transaction
        .lock(stores.project, kept.id)
        .await
        .unwrap()
        .unwrap();
    changed.state.order = 9;
    transaction.update(changed).await.unwrap();
    drop(transaction);

    let (next, locked) = tokio::time::timeout(Duration::from_secs(5), async {
        let mut next = configs.begin().await.unwrap();
        let locked = next.lock(stores.project, kept.id).await.unwrap();
        (next, locked)
    })
    .await
    .expect("the dropped transaction's lock is released at once");
    assert_eq!(
        locked,
        Some(kept),
        "a dropped transaction's writes are not seen"
    );
    next.rollback().await.unwrap();
}

/// The fields one concurrent update changes in a round, and how to tell its value from the
/// ones of earlier rounds.
fn change(round: i32, writer: i32) -> PluginConfigChanges {
    let mark = format!("{round}.{writer}");
    match writer % 3 {
        0 => PluginConfigChanges {
            name: Patch::Value(format!("name {mark}")),
            ..PluginConfigChanges::default()
        },
        1 => PluginConfigChanges {
            description: Patch::Value(format!("description {mark}")),
            ..PluginConfigChanges::default()
        },
        _ => PluginConfigChanges {
            order: Some(round * 100 + writer),
            ..PluginConfigChanges::default()
        },
    }
}

async fn concurrent_updates_of_one_config_lose_no_change(stores: Stores) {
    let plugin = install(&stores, stores.organization, "Busy").await;
    let config = configure(&stores, stores.project, plugin.id, config(true, 0)).await;
    let (service, access) = service(&stores);
    let service = Arc::new(service);
    for round in 1..=5 {
        // Each round, 15 updates at once, five to each of name, description and order: each
        // keeps the fields it does not send, which are the ones the others change.
        let updates: Vec<_> = (0..15)
            .map(|writer| {
                let service = Arc::clone(&service);
                let access = access.clone();
                let (project, id) = (stores.project, config.id);
                tokio::spawn(async move {
                    service
                        .update(&access, project, id, change(round, writer))
                        .await
                })
            })
            .collect();
        for update in updates {
            update.await.unwrap().expect("an update");
        }
        let state = stores
            .plugin_configs
            .get(stores.project, config.id)
            .await
            .unwrap()
            .unwrap()
            .state;
        let lost = format!("an update of round {round} was lost: {state:?}");
        assert!(
            state
                .name
                .as_deref()
                .is_some_and(|name| name.starts_with(&format!("name {round}."))),
            "{lost}"
        );
        assert!(
            state
                .description
                .as_deref()
                .is_some_and(|text| text.starts_with(&format!("description {round}."))),
            "{lost}"
        );
        assert_eq!(state.order / 100, round, "{lost}");
    }
}
