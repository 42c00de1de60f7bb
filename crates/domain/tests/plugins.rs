//! Plugin rules over the in-memory fakes: access levels, ownership, installs from an upstream,
//! source editing and upgrades.

use std::sync::Arc;

use domain::DomainError;
use domain::patch::Patch;
use domain::plugin::{
    NewPlugin, Plugin, PluginAccess, PluginChanges, PluginFields, PluginService, PluginSettings,
    PluginType, SourceChanges, UpstreamError,
};
use domain::plugin_config::{NewPluginConfig, PluginConfigService, PluginConfigState};
use domain::ports::PageRequest;
use domain::tenancy::{OrganizationId, PluginsAccessLevel, ProjectId, UserId};
use domain::testing::{CannedUpstream, InMemoryStore, WordAnalyzer};
use serde_json::{Map, json};
use uuid::Uuid;

const PAGE: PageRequest = PageRequest {
    limit: 100,
    offset: 0,
};
const URL: &str = "https://github.com/posthog/hello";

struct World {
    store: InMemoryStore,
    upstream: CannedUpstream,
    plugins: PluginService,
}

fn world() -> World {
    let store = InMemoryStore::new();
    let upstream = CannedUpstream::new();
    World {
        plugins: PluginService::new(
            Arc::new(store.clone()),
            Arc::new(upstream.clone()),
            Arc::new(WordAnalyzer),
            PluginSettings::default(),
        ),
        store,
        upstream,
    }
}

fn access(organization: u128, level: PluginsAccessLevel) -> PluginAccess {
    PluginAccess {
        organization: OrganizationId(Uuid::from_u128(organization)),
        // These organizations are not stored, so reads show them nameless too.
        organization_name: String::new(),
        level,
        user: UserId(1),
    }
}

fn root() -> PluginAccess {
    access(1, PluginsAccessLevel::Root)
}

fn source_plugin(name: &str) -> NewPlugin {
    NewPlugin {
        url: None,
        fields: PluginFields {
            plugin_type: Some(PluginType::Source),
            name: Patch::Value(name.into()),
            ..PluginFields::default()
        },
    }
}

fn remote(url: &str) -> NewPlugin {
    NewPlugin {
        url: Some(url.into()),
        fields: PluginFields::default(),
    }
}

fn forbidden(error: DomainError) -> String {
    match error {
        DomainError::Forbidden(detail) => detail,
        other => panic!("expected a 403, got {other:?}"),
    }
}

fn invalid(error: DomainError) -> (Option<String>, String) {
    match error {
        DomainError::Invalid(error) => (error.attr, error.detail),
        other => panic!("expected a 400, got {other:?}"),
    }
}

fn publish_hello(world: &World, tag: &str, name: &str, main: &str) {
    let manifest = json!({"name": name, "config": [{"key": "greeting"}]}).to_string();
    world.upstream.publish(
        tag,
        &[
            ("plugin.json", &manifest),
            ("index.js", main),
            ("README.md", "# hi"),
        ],
    );
}

async fn installed(world: &World, plugin: NewPlugin) -> Plugin {
    world
        .plugins
        .install(&root(), plugin)
        .await
        .expect("installing")
}

#[tokio::test]
async fn reads_need_config_writes_install_and_global_plugins_root() {
    let world = world();
    let plugin = installed(&world, source_plugin("Mine")).await;
    let insufficient = "Your organization's plugin access level is insufficient.";

    let none = access(1, PluginsAccessLevel::None);
    assert_eq!(
        forbidden(world.plugins.list(&none, PAGE).await.unwrap_err()),
        insufficient
    );
    let config = access(1, PluginsAccessLevel::Config);
    assert!(world.plugins.get(&config, plugin.id).await.is_ok());
    assert_eq!(
        forbidden(
            world
                .plugins
                .install(&config, source_plugin("x"))
                .await
                .unwrap_err()
        ),
        insufficient
    );
    assert_eq!(
        forbidden(world.plugins.source(&config, plugin.id).await.unwrap_err()),
        "Plugin source editing is not available for the current organization!"
    );
    let install = access(1, PluginsAccessLevel::Install);
    let global = PluginChanges {
        is_global: Some(false),
        ..PluginChanges::default()
    };
    assert_eq!(
        forbidden(
            world
                .plugins
                .update(&install, plugin.id, global.clone())
                .await
                .unwrap_err()
        ),
        "This organization can't manage global plugins!"
    );
    assert!(
        world
            .plugins
            .update(&root(), plugin.id, global)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn another_organizations_plugin_is_hidden_or_read_only() {
    let world = world();
    let plugin = installed(&world, source_plugin("Theirs")).await;
    let other = access(2, PluginsAccessLevel::Root);
    assert!(matches!(
        world.plugins.get(&other, plugin.id).await,
        Err(DomainError::NotFound)
    ));

    let globalize = PluginChanges {
        is_global: Some(true),
        ..PluginChanges::default()
    };
    world
        .plugins
        .update(&root(), plugin.id, globalize)
        .await
        .unwrap();
    assert!(world.plugins.get(&other, plugin.id).await.is_ok());
    let rename = PluginChanges {
        name: Patch::Value("Mine now".into()),
        ..PluginChanges::default()
    };
    assert_eq!(
        forbidden(
            world
                .plugins
                .update(&other, plugin.id, rename)
                .await
                .unwrap_err()
        ),
        "This plugin installation is managed by another organization"
    );
    assert!(matches!(
        world.plugins.source(&other, plugin.id).await,
        Err(DomainError::NotFound)
    ));
    assert_eq!(
        invalid(
            world
                .plugins
                .uninstall(&root(), plugin.id)
                .await
                .unwrap_err()
        )
        .1,
        "This plugin is marked as global! Make it local before uninstallation"
    );
}

#[tokio::test]
async fn an_install_reads_the_manifest_and_main_file_at_the_newest_tag() {
    let world = world();
    publish_hello(&world, "abc", "Hello", "export function processEvent() {}");
    let plugin = installed(&world, remote(&format!("{URL}?private_token=s3cret"))).await;
    assert_eq!(plugin.state.plugin_type, PluginType::Custom);
    assert_eq!(plugin.state.name.as_deref(), Some("Hello"));
    assert_eq!(
        (
            plugin.state.tag.as_deref(),
            plugin.state.latest_tag.as_deref()
        ),
        (Some("abc"), Some("abc"))
    );
    assert_eq!(plugin.state.display_url(), Some(URL));
    assert_eq!(
        plugin.state.config_schema.to_json(),
        json!([{"key": "greeting"}])
    );
    assert_eq!(
        plugin.state.capabilities.methods,
        Some(vec!["processEvent".to_owned()])
    );
    assert_eq!(
        world.store.plugin_archive(plugin.id).as_deref(),
        Some(b"abc".as_slice())
    );
    let files = world.plugins.source(&root(), plugin.id).await.unwrap();
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["index.ts", "plugin.json"]
    );
    assert_eq!(world.upstream.latest_asked(), 1);

    let again = world
        .plugins
        .install(&root(), remote(&format!("{URL}?private_token=t")))
        .await
        .unwrap_err();
    assert_eq!(
        invalid(again).1,
        format!("Plugin from URL \"{URL}\" already installed!")
    );
    assert_eq!(
        world.upstream.latest_asked(),
        1,
        "an installed URL is refused before anything is downloaded"
    );
    assert!(
        world
            .plugins
            .install(&access(2, PluginsAccessLevel::Root), remote(URL))
            .await
            .is_ok(),
        "each organization installs its own copy"
    );
}

#[tokio::test]
async fn a_pinned_url_is_downloaded_without_asking_for_the_newest_tag() {
    let world = world();
    let sha = "1111111111111111111111111111111111111111";
    publish_hello(&world, sha, "Pinned", "x");
    let plugin = installed(&world, remote(&format!("{URL}/commit/{sha}"))).await;
    assert_eq!(plugin.state.tag.as_deref(), Some(sha));
    assert_eq!(world.upstream.latest_asked(), 0);
}

#[tokio::test]
async fn upstream_failures_are_502s_or_400s_and_write_nothing() {
    let world = world();
    world
        .upstream
        .fail_with(UpstreamError::Unavailable("GitHub is down".into()));
    assert!(matches!(
        world.plugins.install(&root(), remote(URL)).await,
        Err(DomainError::Upstream(reason)) if reason == "GitHub is down"
    ));
    world
        .upstream
        .fail_with(UpstreamError::InvalidArchive("too large".into()));
    assert_eq!(
        invalid(
            world
                .plugins
                .install(&root(), remote(URL))
                .await
                .unwrap_err()
        )
        .1,
        "too large"
    );
    assert_eq!(world.plugins.list(&root(), PAGE).await.unwrap().count, 0);
}

#[tokio::test]
async fn broken_archives_are_refused_with_posthogs_messages() {
    let world = world();
    world.upstream.publish("a", &[("index.js", "x")]);
    assert_eq!(
        invalid(
            world
                .plugins
                .install(&root(), remote(URL))
                .await
                .unwrap_err()
        )
        .1,
        "Could not find plugin.json in the plugin"
    );
    world
        .upstream
        .publish("b", &[("plugin.json", r#"{"name": "No main"}"#)]);
    assert_eq!(
        invalid(
            world
                .plugins
                .install(&root(), remote(URL))
                .await
                .unwrap_err()
        )
        .1,
        "Could not find main file index.js or index.ts in plugin No main"
    );
    world.upstream.publish(
        "c",
        &[
            (
                "plugin.json",
                r#"{"name": "Old", "posthogVersion": "< 1.0.0"}"#,
            ),
            ("index.js", "x"),
        ],
    );
    assert!(
        invalid(
            world
                .plugins
                .install(&root(), remote(URL))
                .await
                .unwrap_err()
        )
        .1
        .starts_with("Currently running PostHog version 1.43.0")
    );
}

#[tokio::test]
async fn source_edits_validate_plugin_json_and_refresh_capabilities_when_readable() {
    let world = world();
    let plugin = installed(&world, source_plugin("Edited")).await;
    let edit = |pairs: &[(&str, Option<&str>)]| -> SourceChanges {
        pairs
            .iter()
            .map(|(name, text)| ((*name).to_owned(), text.map(str::to_owned)))
            .collect()
    };
    world
        .plugins
        .update_source(
            &root(),
            plugin.id,
            edit(&[("index.ts", Some("function onEvent() {} // runEveryHour"))]),
        )
        .await
        .unwrap();
    let read = world.plugins.get(&root(), plugin.id).await.unwrap();
    assert_eq!(
        read.state.capabilities.methods,
        Some(vec!["onEvent".to_owned()])
    );
    assert_eq!(
        read.state.capabilities.scheduled_tasks,
        Some(vec!["runEveryHour".to_owned()])
    );

    world
        .plugins
        .update_source(
            &root(),
            plugin.id,
            edit(&[("index.ts", Some("syntax error"))]),
        )
        .await
        .unwrap();
    let kept = world.plugins.get(&root(), plugin.id).await.unwrap();
    assert_eq!(
        kept.state.capabilities, read.state.capabilities,
        "unreadable source keeps what was known"
    );

    let refused = world
        .plugins
        .update_source(
            &root(),
            plugin.id,
            edit(&[("plugin.json", Some("{")), ("index.ts", Some("new"))]),
        )
        .await
        .unwrap_err();
    assert_eq!(invalid(refused).0.as_deref(), Some("plugin.json"));
    let files = world.plugins.source(&root(), plugin.id).await.unwrap();
    assert_eq!(
        files["index.ts"], "syntax error",
        "nothing of a refused edit is saved"
    );

    world
        .plugins
        .update_source(
            &root(),
            plugin.id,
            edit(&[(
                "plugin.json",
                Some(r#"{"name": "Renamed", "config": [{"key": "k"}]}"#),
            )]),
        )
        .await
        .unwrap();
    let renamed = world.plugins.get(&root(), plugin.id).await.unwrap();
    assert_eq!(
        (
            renamed.state.name.as_deref(),
            renamed.state.config_schema.to_json()
        ),
        (Some("Renamed"), json!([{"key": "k"}]))
    );
}

#[tokio::test]
async fn upgrades_take_the_newest_or_the_asked_tag_and_keep_the_plugin_type() {
    let world = world();
    publish_hello(&world, "v1", "Hello", "processEvent");
    let mut repository = remote(URL);
    repository.fields.plugin_type = Some(PluginType::Repository);
    let plugin = installed(&world, repository).await;
    publish_hello(&world, "v2", "Hello 2", "onEvent");

    let checked = world
        .plugins
        .check_for_updates(&root(), plugin.id)
        .await
        .unwrap();
    assert_eq!(
        (
            checked.state.tag.as_deref(),
            checked.state.latest_tag.as_deref()
        ),
        (Some("v1"), Some("v2"))
    );
    let upgraded = world
        .plugins
        .upgrade(&root(), plugin.id, None)
        .await
        .unwrap();
    assert_eq!(
        (
            upgraded.state.tag.as_deref(),
            upgraded.state.name.as_deref()
        ),
        (Some("v2"), Some("Hello 2"))
    );
    assert_eq!(upgraded.state.plugin_type, PluginType::Repository);
    let back = world
        .plugins
        .upgrade(&root(), plugin.id, Some("v1".into()))
        .await
        .unwrap();
    assert_eq!(back.state.tag.as_deref(), Some("v1"));

    let source = installed(&world, source_plugin("Local code")).await;
    assert_eq!(
        world
            .plugins
            .upgrade(&root(), source.id, None)
            .await
            .unwrap(),
        source
    );
    assert!(
        invalid(
            world
                .plugins
                .check_for_updates(&root(), source.id)
                .await
                .unwrap_err()
        )
        .1
        .contains("no remote URL")
    );
}

#[tokio::test]
async fn configs_need_a_plugin_the_organization_can_see() {
    let world = world();
    let configs =
        PluginConfigService::new(Arc::new(world.store.clone()), Arc::new(world.store.clone()));
    let theirs = world
        .plugins
        .install(
            &access(2, PluginsAccessLevel::Root),
            source_plugin("Theirs"),
        )
        .await
        .unwrap();
    let config = NewPluginConfig {
        plugin: theirs.id,
        state: PluginConfigState {
            enabled: true,
            order: 0,
            config: Map::new(),
            name: None,
            description: None,
        },
    };
    let refused = configs
        .create(&root(), ProjectId(1), config)
        .await
        .unwrap_err();
    assert_eq!(
        invalid(refused),
        (
            Some("plugin".into()),
            format!("Invalid pk \"{}\" - object does not exist.", theirs.id)
        )
    );
}
