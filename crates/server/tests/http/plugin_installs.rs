//! Plugin installs, update checks, upgrades and uninstalls end to end, against a loopback fake
//! of GitHub, GitLab and the npm registry serving real zip and tgz archives.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use url::Url;

use crate::fake_upstream::{FakeUpstream, GEOIP_TGZ, zip_archive, zip_slip_archive};
use crate::helpers::{Tenant, TestApp, parts, spawn_app_with};
use crate::plugins::{plugins_path, send};

const SHA_1: &str = "1111111111111111111111111111111111111111";
const SHA_2: &str = "2222222222222222222222222222222222222222";

/// The app with every upstream pointed at `fake`, a short timeout and a small archive limit.
async fn app_with(fake: &FakeUpstream) -> TestApp {
    let base = Url::parse(&fake.base).unwrap();
    spawn_app_with(|args| {
        let plugins = &mut args.plugins;
        plugins.github_api_url = base.clone();
        plugins.github_url = base.clone();
        plugins.gitlab_url = base.clone();
        plugins.npm_registry_url = Some(base.join("/npm").unwrap());
        plugins.repository_url = Some(base.join("/repository.json").unwrap());
        plugins.github_token = Some("configured-token".into());
        plugins.timeout_secs = 1;
        plugins.max_archive_bytes = 256 * 1024;
    })
    .await
}

async fn install(app: &TestApp, tenant: &Tenant, body: Value) -> (u16, Value) {
    send(app, Method::POST, &plugins_path(tenant), tenant, body).await
}

/// GitHub's answers for `posthog/hello` at `sha`, named `name`, exporting `export`.
fn serve_hello(fake: &FakeUpstream, sha: &str, name: &str, export: &str) {
    fake.serve(
        "/repos/posthog/hello/commits",
        200,
        json!([{"sha": sha}]).to_string(),
    );
    let manifest = json!({"name": name, "description": "Greets", "main": "index.js", "config": [{"key": "greeting"}]});
    fake.serve(
        &format!("/posthog/hello/archive/{sha}.zip"),
        200,
        zip_archive(
            &format!("hello-{sha}"),
            &[
                ("plugin.json", &manifest.to_string()),
                (
                    "index.js",
                    &format!("export function {export}(event) {{ return event }}"),
                ),
                ("README.md", "# Hello"),
            ],
        ),
    );
}

#[tokio::test]
async fn a_github_plugin_is_installed_checked_upgraded_edited_and_uninstalled() {
    let fake = FakeUpstream::start().await;
    serve_hello(&fake, SHA_1, "Hello", "processEvent");
    let app = app_with(&fake).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;

    let (status, plugin) = install(
        &app,
        &ada,
        json!({"url": "https://github.com/posthog/hello?private_token=url-secret"}),
    )
    .await;
    assert_eq!(status, 201, "{plugin}");
    let id = plugin["id"].clone();
    assert_eq!(
        (
            plugin["plugin_type"].as_str(),
            plugin["url"].as_str(),
            plugin["name"].as_str()
        ),
        (
            Some("custom"),
            Some("https://github.com/posthog/hello"),
            Some("Hello")
        )
    );
    assert_eq!(
        (plugin["tag"].as_str(), plugin["latest_tag"].as_str()),
        (Some(SHA_1), Some(SHA_1))
    );
    assert_eq!(plugin["config_schema"], json!([{"key": "greeting"}]));
    assert_eq!(plugin["capabilities"]["methods"], json!(["processEvent"]));
    assert!(
        !plugin.to_string().contains("url-secret"),
        "tokens never appear: {plugin}"
    );
    assert_eq!(
        fake.authorizations("/repos/"),
        [Some("Bearer url-secret".into())]
    );
    assert_eq!(
        fake.authorizations("/posthog/"),
        [Some("token url-secret".into())]
    );

    let detail = format!("{}{id}/", plugins_path(&ada));
    let (_, source) = parts(app.get(&format!("{detail}source/"), &ada.key).await).await;
    assert_eq!(
        source["index.ts"],
        "export function processEvent(event) { return event }"
    );
    assert!(
        source["plugin.json"]
            .as_str()
            .unwrap()
            .contains("\"Hello\"")
    );
    assert_eq!(
        source.as_object().unwrap().len(),
        2,
        "only the files a plugin is made of: {source}"
    );

    let (status, again) = install(
        &app,
        &ada,
        json!({"url": "https://github.com/posthog/hello"}),
    )
    .await;
    assert_eq!(status, 400, "{again}");
    assert_eq!(
        again["detail"],
        "Plugin from URL \"https://github.com/posthog/hello\" already installed!"
    );

    serve_hello(&fake, SHA_2, "Hello 2", "onEvent");
    let (status, checked) = parts(
        app.get(&format!("{detail}check_for_updates/"), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{checked}");
    assert_eq!(
        (
            checked["plugin"]["tag"].as_str(),
            checked["plugin"]["latest_tag"].as_str()
        ),
        (Some(SHA_1), Some(SHA_2))
    );

    let (status, upgraded) = send(
        &app,
        Method::POST,
        &format!("{detail}upgrade/"),
        &ada,
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{upgraded}");
    assert_eq!(
        (upgraded["tag"].as_str(), upgraded["name"].as_str()),
        (Some(SHA_2), Some("Hello 2"))
    );
    assert_eq!(upgraded["capabilities"]["methods"], json!(["onEvent"]));
    assert_eq!(upgraded["plugin_type"], "custom");

    let (status, pinned) = send(
        &app,
        Method::POST,
        &format!("{detail}upgrade/"),
        &ada,
        json!({"tag": SHA_1}),
    )
    .await;
    assert_eq!(
        (status, pinned["tag"].as_str(), pinned["name"].as_str()),
        (200, Some(SHA_1), Some("Hello"))
    );

    let (status, _) = send(
        &app,
        Method::PATCH,
        &format!("{detail}update_source/"),
        &ada,
        json!({"index.ts": "export function teardownPlugin() {}"}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, edited) = parts(app.get(&detail, &ada.key).await).await;
    assert_eq!(edited["capabilities"]["methods"], json!(["teardownPlugin"]));

    let deleted = app
        .request(Method::DELETE, &detail)
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 204);
    assert_eq!(app.rows("plugins").await, 0);
    let (_, activity) = parts(
        app.get(
            &format!("{}activity/?limit=20", plugins_path(&ada)),
            &ada.key,
        )
        .await,
    )
    .await;
    let verbs: Vec<&str> = activity["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["activity"].as_str().unwrap())
        .collect();
    assert_eq!(
        verbs,
        [
            "uninstalled",
            "source_updated",
            "upgraded",
            "upgraded",
            "installed"
        ]
    );
}

#[tokio::test]
async fn an_npm_plugin_installs_from_the_real_geoip_tarball_and_stays_a_repository_plugin() {
    let fake = FakeUpstream::start().await;
    fake.serve(
        "/npm/@posthog/geoip-plugin/latest",
        200,
        json!({"version": "0.0.7"}).to_string(),
    );
    fake.serve(
        "/npm/@posthog/geoip-plugin/-/geoip-plugin-0.0.7.tgz",
        200,
        GEOIP_TGZ,
    );
    let app = app_with(&fake).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;

    let (status, plugin) = install(&app, &ada, json!({"url": "https://www.npmjs.com/package/@posthog/geoip-plugin", "plugin_type": "repository"})).await;
    assert_eq!(status, 201, "{plugin}");
    assert_eq!(
        (
            plugin["name"].as_str(),
            plugin["tag"].as_str(),
            plugin["plugin_type"].as_str()
        ),
        (Some("GeoIP"), Some("0.0.7"), Some("repository"))
    );
    assert_eq!(
        plugin["description"],
        "Enrich PostHog events and persons with IP location data"
    );
    assert_eq!(plugin["capabilities"]["methods"], json!(["processEvent"]));
    let detail = format!("{}{}/", plugins_path(&ada), plugin["id"]);
    let (status, upgraded) = send(
        &app,
        Method::POST,
        &format!("{detail}upgrade/"),
        &ada,
        json!({}),
    )
    .await;
    assert_eq!(
        (status, upgraded["plugin_type"].as_str()),
        (200, Some("repository"))
    );
}

#[tokio::test]
async fn a_gitlab_plugin_installs_from_its_newest_commit() {
    let fake = FakeUpstream::start().await;
    fake.serve(
        "/api/v4/projects/group%2Fhello/repository/commits",
        200,
        json!([{"id": SHA_1}]).to_string(),
    );
    fake.serve(
        &format!("/api/v4/projects/group%2Fhello/repository/archive.zip?sha={SHA_1}"),
        200,
        zip_archive(
            "hello-main",
            &[
                ("plugin.json", r#"{"name": "GitLab hello"}"#),
                ("index.ts", "export const onEvent = () => {}"),
            ],
        ),
    );
    let app = app_with(&fake).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, plugin) =
        install(&app, &ada, json!({"url": "https://gitlab.com/group/hello"})).await;
    assert_eq!(status, 201, "{plugin}");
    assert_eq!(
        (plugin["name"].as_str(), plugin["tag"].as_str()),
        (Some("GitLab hello"), Some(SHA_1))
    );
    assert_eq!(plugin["capabilities"]["methods"], json!(["onEvent"]));
}

#[tokio::test]
async fn hostile_or_failing_upstreams_answer_400_or_502_and_write_nothing() {
    let fake = FakeUpstream::start().await;
    let pinned = |repo: &str| format!("https://github.com/posthog/{repo}/commit/{SHA_1}");
    let archive = |repo: &str| format!("/posthog/{repo}/archive/{SHA_1}.zip");
    fake.serve_slowly(
        &archive("slow"),
        200,
        zip_archive("r", &[("plugin.json", r#"{"name": "x"}"#)]),
        Duration::from_secs(3),
    );
    fake.serve(&archive("huge"), 200, vec![b'P'; 300 * 1024]);
    fake.serve(&archive("slip"), 200, zip_slip_archive());
    fake.serve(
        &archive("bare"),
        200,
        zip_archive("r", &[("index.js", "x")]),
    );
    fake.serve(
        &archive("future"),
        200,
        zip_archive(
            "r",
            &[
                (
                    "plugin.json",
                    r#"{"name": "x", "posthogVersion": ">= 2.0.0"}"#,
                ),
                ("index.js", "x"),
            ],
        ),
    );
    fake.serve(
        "/repos/posthog/limited/commits",
        403,
        json!({"message": "API rate limit exceeded"}).to_string(),
    );
    let app = app_with(&fake).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;

    let started = std::time::Instant::now();
    let (status, body) = install(&app, &ada, json!({"url": pinned("slow")})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (502, Some("upstream_error")),
        "{body}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timeout cut the slow upstream short"
    );

    let (status, body) = install(
        &app,
        &ada,
        json!({"url": "https://github.com/posthog/limited"}),
    )
    .await;
    assert_eq!(status, 502, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("API rate limit exceeded"),
        "{body}"
    );
    assert!(!body.to_string().contains("configured-token"));

    let (status, body) = install(&app, &ada, json!({"url": pinned("missing")})).await;
    assert_eq!(status, 502, "{body}");

    for (repo, detail) in [
        ("huge", "larger than"),
        ("slip", "outside its root"),
        ("bare", "Could not find plugin.json in the plugin"),
        (
            "future",
            "does not match this plugin's semantic version requirement \">= 2.0.0\"",
        ),
    ] {
        let (status, body) = install(&app, &ada, json!({"url": pinned(repo)})).await;
        assert_eq!(
            (status, body["type"].as_str()),
            (400, Some("validation_error")),
            "{repo}: {body}"
        );
        assert!(
            body["detail"].as_str().unwrap().contains(detail),
            "{repo}: {body}"
        );
    }
    assert_eq!(app.rows("plugins").await, 0);
}

#[tokio::test]
async fn two_installs_of_one_url_at_once_give_one_201_and_one_400() {
    let fake = FakeUpstream::start().await;
    serve_hello(&fake, SHA_1, "Hello", "processEvent");
    let app = app_with(&fake).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let body = json!({"url": format!("https://github.com/posthog/hello/commit/{SHA_1}")});
    let (first, second) = tokio::join!(
        install(&app, &ada, body.clone()),
        install(&app, &ada, body.clone())
    );
    let mut statuses = [first.0, second.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 400], "{first:?} {second:?}");
    assert_eq!(app.rows("plugins").await, 1);
    // Another organization installs the same URL on its own.
    let bob = app.tenant("bob@example.com", &["*"]).await;
    assert_eq!(install(&app, &bob, body).await.0, 201);
}

#[tokio::test]
async fn the_repository_listing_is_served_from_the_configured_upstream() {
    let fake = FakeUpstream::start().await;
    let listing = json!([{"name": "helloworldplugin", "url": "https://github.com/posthog/helloworldplugin", "verified": true, "maintainer": "community"}]);
    fake.serve("/repository.json", 200, listing.to_string());
    let app = app_with(&fake).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, body) = parts(
        app.get(&format!("{}repository/", plugins_path(&ada)), &ada.key)
            .await,
    )
    .await;
    assert_eq!((status, body), (200, listing));
}

#[tokio::test]
async fn local_plugins_install_from_the_configured_directory_only() {
    let dir = std::env::temp_dir().join(format!("burrow-local-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(dir.join("hello")).unwrap();
    std::fs::write(dir.join("hello/plugin.json"), r#"{"name": "Local hello"}"#).unwrap();
    std::fs::write(
        dir.join("hello/index.js"),
        "export function setupPlugin() {}",
    )
    .unwrap();
    let local = dir.clone();
    let app = spawn_app_with(move |args| args.plugins.local_dir = Some(local)).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;

    let (status, plugin) = install(&app, &ada, json!({"url": "file:hello"})).await;
    assert_eq!(status, 201, "{plugin}");
    assert_eq!(
        (
            plugin["plugin_type"].as_str(),
            plugin["name"].as_str(),
            &plugin["tag"]
        ),
        (Some("local"), Some("Local hello"), &Value::Null)
    );
    assert_eq!(plugin["capabilities"]["methods"], json!(["setupPlugin"]));
    let (status, body) = install(&app, &ada, json!({"url": "file:../../etc"})).await;
    assert_eq!(status, 400, "{body}");
    let detail = format!("{}{}/", plugins_path(&ada), plugin["id"]);
    let (status, body) = parts(
        app.get(&format!("{detail}check_for_updates/"), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 400, "local plugins have no remote version: {body}");
    std::fs::remove_dir_all(dir).unwrap();
}
