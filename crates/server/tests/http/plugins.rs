//! `/api/organizations/{id}/plugins/` and `/api/projects/{id}/plugin_configs/` over HTTP: access
//! levels, ownership, source plugins, configs, unused plugins and the activity log.

use domain::tenancy::{MembershipLevel, PluginsAccessLevel};
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_error, parts, spawn_app, spawn_app_with};

/// The tenant's organization's plugins, as clients address them.
pub fn plugins_path(tenant: &Tenant) -> String {
    format!("/api/organizations/{}/plugins/", tenant.organization_id)
}

pub fn plugin_path(tenant: &Tenant, id: &Value, action: &str) -> String {
    format!("{}{id}/{action}", plugins_path(tenant))
}

/// A JSON request with the tenant's key: status and body.
pub async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    tenant: &Tenant,
    body: Value,
) -> (u16, Value) {
    parts(app.send_json(method, path, &tenant.key, &body).await).await
}

async fn get(app: &TestApp, path: &str, tenant: &Tenant) -> (u16, Value) {
    parts(app.get(path, &tenant.key).await).await
}

/// DELETE, for its status (a 204 has no body).
async fn delete(app: &TestApp, path: &str, tenant: &Tenant) -> u16 {
    app.request(Method::DELETE, path)
        .bearer_auth(&tenant.key)
        .send()
        .await
        .expect("request sent")
        .status()
        .as_u16()
}

pub async fn set_level(app: &TestApp, tenant: &Tenant, level: PluginsAccessLevel) {
    app.admin
        .set_plugins_access_level(tenant.organization_id, level)
        .await
        .expect("setting the plugin level");
}

pub async fn source_plugin(app: &TestApp, tenant: &Tenant, name: &str) -> Value {
    let (status, plugin) = send(
        app,
        Method::POST,
        &plugins_path(tenant),
        tenant,
        json!({"plugin_type": "source", "name": name}),
    )
    .await;
    assert_eq!(status, 201, "{plugin}");
    plugin
}

#[tokio::test]
async fn a_source_plugin_is_installed_edited_and_uninstalled_with_its_activity_logged() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;

    let plugin = source_plugin(&app, &ada, "Hello").await;
    let id = plugin["id"].clone();
    assert_eq!(
        plugin,
        json!({
            "id": id, "plugin_type": "source", "name": "Hello", "description": null, "url": null,
            "icon": null, "config_schema": {}, "tag": null, "latest_tag": null, "is_global": false,
            "organization_id": ada.organization_id.0.to_string(),
            "organization_name": "Org of ada@example.com",
            "capabilities": {}, "metrics": {}, "public_jobs": {}
        })
    );
    assert_eq!(
        get(&app, &plugin_path(&ada, &id, "source/"), &ada).await,
        (200, json!({}))
    );

    let files = json!({
        "plugin.json": "{\"name\": \"my plugin\", \"config\": [{\"key\": \"token\", \"secret\": true}]}",
        "index.ts": "export function processEvent(event) { return event }\nexport const jobs = { retry: async () => {} }\nexport function runEveryHour() {}"
    });
    let (status, body) = send(
        &app,
        Method::PATCH,
        &plugin_path(&ada, &id, "update_source/"),
        &ada,
        files.clone(),
    )
    .await;
    assert_eq!((status, body), (200, files.clone()));
    let (_, edited) = get(&app, &plugin_path(&ada, &id, ""), &ada).await;
    assert_eq!(edited["name"], "my plugin");
    assert_eq!(
        edited["config_schema"],
        json!([{"key": "token", "secret": true}])
    );
    assert_eq!(
        edited["capabilities"],
        json!({"methods": ["processEvent"], "jobs": ["retry"], "scheduled_tasks": ["runEveryHour"]})
    );

    let (status, error) = send(
        &app,
        Method::PATCH,
        &plugin_path(&ada, &id, "update_source/"),
        &ada,
        json!({"plugin.json": "{not json", "index.ts": "changed"}),
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(
        (error["type"].as_str(), error["attr"].as_str()),
        (Some("validation_error"), Some("plugin.json"))
    );
    assert_eq!(
        get(&app, &plugin_path(&ada, &id, "source"), &ada).await.1,
        files,
        "nothing saved"
    );

    for bad_name in ["../evil.ts", "a/b.ts", ""] {
        let (status, error) = send(
            &app,
            Method::PATCH,
            &plugin_path(&ada, &id, "update_source/"),
            &ada,
            json!({bad_name: "x"}),
        )
        .await;
        assert_eq!(status, 400, "{bad_name}: {error}");
    }

    let (status, left) = send(
        &app,
        Method::PATCH,
        &plugin_path(&ada, &id, "update_source/"),
        &ada,
        json!({"index.ts": null}),
    )
    .await;
    assert_eq!(status, 200, "{left}");
    assert_eq!(left, json!({"plugin.json": files["plugin.json"]}));

    let (status, renamed) = send(
        &app,
        Method::PATCH,
        &plugin_path(&ada, &id, ""),
        &ada,
        json!({"description": "Greets", "url": "https://github.com/x/y", "latest_tag": "z"}),
    )
    .await;
    assert_eq!(status, 200, "{renamed}");
    assert_eq!(
        (
            renamed["description"].as_str(),
            &renamed["url"],
            &renamed["latest_tag"]
        ),
        (Some("Greets"), &Value::Null, &Value::Null)
    );

    let (_, list) = get(&app, &plugins_path(&ada), &ada).await;
    assert_eq!(
        (list["count"].as_u64(), &list["results"][0]["id"]),
        (Some(1), &id)
    );
    assert_eq!(
        get(&app, &format!("{}unused/", plugins_path(&ada)), &ada).await,
        (200, json!([id]))
    );

    assert_eq!(delete(&app, &plugin_path(&ada, &id, ""), &ada).await, 204);
    assert_eq!(get(&app, &plugin_path(&ada, &id, ""), &ada).await.0, 404);

    let (status, activity) = get(
        &app,
        &format!("{}activity/?limit=2", plugins_path(&ada)),
        &ada,
    )
    .await;
    assert_eq!(status, 200, "{activity}");
    // installed, source_updated twice, updated, uninstalled: failed writes log nothing.
    assert_eq!(activity["total_count"], 5, "{activity}");
    let verbs: Vec<&str> = activity["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["activity"].as_str().unwrap())
        .collect();
    assert_eq!(verbs, ["uninstalled", "updated"]);
    let newest = &activity["results"][0];
    assert_eq!(
        newest["user"],
        json!({"first_name": "Test", "email": "ada@example.com"})
    );
    assert_eq!(
        (newest["scope"].as_str(), newest["item_id"].as_str()),
        (Some("Plugin"), id.to_string().as_str().into())
    );
    assert_eq!(newest["detail"]["name"], "my plugin");
    assert!(
        activity["next"]
            .as_str()
            .unwrap()
            .ends_with("activity/?limit=2&page=2"),
        "{activity}"
    );
    assert_eq!(activity["previous"], Value::Null);
}

#[tokio::test]
async fn the_organizations_plugin_level_gates_reads_writes_and_global_plugins() {
    // Level changes are felt at once with nothing remembered; that they are felt within
    // seconds with the default memory is `cli::create_project_add_member_and_plugin_levels_take_effect`.
    let app = spawn_app_with(|args| args.access_cache_ms = 0).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let plugin = source_plugin(&app, &ada, "Mine").await;
    let id = plugin["id"].clone();
    let insufficient = "Your organization's plugin access level is insufficient.";
    let no_global = "This organization can't manage global plugins!";

    set_level(&app, &ada, PluginsAccessLevel::None).await;
    let (status, body) = get(&app, &plugins_path(&ada), &ada).await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        insufficient,
    );

    set_level(&app, &ada, PluginsAccessLevel::Config).await;
    assert_eq!(get(&app, &plugins_path(&ada), &ada).await.0, 200);
    assert_eq!(get(&app, &plugin_path(&ada, &id, ""), &ada).await.0, 200);
    let (status, body) = send(
        &app,
        Method::POST,
        &plugins_path(&ada),
        &ada,
        json!({"plugin_type": "source"}),
    )
    .await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        insufficient,
    );
    let (status, body) = get(&app, &plugin_path(&ada, &id, "source"), &ada).await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        "Plugin source editing is not available for the current organization!",
    );
    let (status, body) = get(&app, &plugin_path(&ada, &id, "check_for_updates"), &ada).await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        "Plugin installation is not available for the current organization!",
    );

    set_level(&app, &ada, PluginsAccessLevel::Install).await;
    let (status, body) = send(
        &app,
        Method::POST,
        &plugins_path(&ada),
        &ada,
        json!({"plugin_type": "source", "is_global": true}),
    )
    .await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        no_global,
    );
    let (status, body) = send(
        &app,
        Method::PATCH,
        &plugin_path(&ada, &id, ""),
        &ada,
        json!({"is_global": false}),
    )
    .await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        no_global,
    );
    assert_eq!(
        send(
            &app,
            Method::PATCH,
            &plugin_path(&ada, &id, ""),
            &ada,
            json!({"name": "Renamed"})
        )
        .await
        .0,
        200
    );

    set_level(&app, &ada, PluginsAccessLevel::Root).await;
    let (status, global) = send(
        &app,
        Method::PATCH,
        &plugin_path(&ada, &id, ""),
        &ada,
        json!({"is_global": true}),
    )
    .await;
    assert_eq!((status, &global["is_global"]), (200, &json!(true)));
    let (status, body) = parts(
        app.request(Method::DELETE, &plugin_path(&ada, &id, ""))
            .bearer_auth(&ada.key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert_error(
        &body,
        "validation_error",
        "invalid_input",
        "This plugin is marked as global! Make it local before uninstallation",
    );
}

#[tokio::test]
async fn another_organizations_plugins_are_hidden_unless_global_or_configured_and_never_writable() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let private = source_plugin(&app, &ada, "Private").await;
    let global = source_plugin(&app, &ada, "Global").await;
    let configured = source_plugin(&app, &ada, "Configured").await;
    assert_eq!(
        send(
            &app,
            Method::PATCH,
            &plugin_path(&ada, &global["id"], ""),
            &ada,
            json!({"is_global": true})
        )
        .await
        .0,
        200
    );

    assert_eq!(
        get(&app, &plugin_path(&bob, &private["id"], ""), &bob)
            .await
            .0,
        404
    );
    assert_eq!(
        send(
            &app,
            Method::PATCH,
            &plugin_path(&bob, &private["id"], ""),
            &bob,
            json!({"name": "x"})
        )
        .await
        .0,
        404
    );
    let (status, seen) = get(&app, &plugin_path(&bob, &global["id"], ""), &bob).await;
    assert_eq!(
        (status, &seen["organization_name"]),
        (200, &json!("Org of ada@example.com"))
    );
    let (status, body) = send(
        &app,
        Method::PATCH,
        &plugin_path(&bob, &global["id"], ""),
        &bob,
        json!({"name": "x"}),
    )
    .await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        "This plugin installation is managed by another organization",
    );
    assert_eq!(
        get(&app, &plugin_path(&bob, &global["id"], "source"), &bob)
            .await
            .0,
        404,
        "detail actions are the owner's"
    );

    // A config in one of Bob's projects makes Ada's plugin visible to Bob's organization…
    let configs = format!("/api/projects/{}/plugin_configs/", bob.project_id);
    let (status, body) = send(
        &app,
        Method::POST,
        &configs,
        &bob,
        json!({"plugin": configured["id"], "enabled": false, "order": 1}),
    )
    .await;
    assert_eq!(
        status, 400,
        "invisible plugins cannot be configured: {body}"
    );
    assert_eq!(body["attr"], "plugin");
    let (status, config) = send(
        &app,
        Method::POST,
        &configs,
        &bob,
        json!({"plugin": global["id"], "enabled": true, "order": 1}),
    )
    .await;
    assert_eq!(status, 201, "{config}");
    assert_eq!(
        send(
            &app,
            Method::PATCH,
            &plugin_path(&ada, &global["id"], ""),
            &ada,
            json!({"is_global": false})
        )
        .await
        .0,
        200
    );
    let (_, list) = get(&app, &plugins_path(&bob), &bob).await;
    let ids: Vec<&Value> = list["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["id"])
        .collect();
    assert_eq!(
        ids,
        [&global["id"]],
        "still configured, so still visible: {list}"
    );
    // …and counts as used for Ada's organization.
    let (_, unused) = get(&app, &format!("{}unused/", plugins_path(&ada)), &ada).await;
    assert_eq!(unused, json!([private["id"], configured["id"]]));

    assert_eq!(
        delete(&app, &format!("{configs}{}/", config["id"]), &bob).await,
        204
    );
    assert_eq!(get(&app, &plugins_path(&bob), &bob).await.1["count"], 0);
}

#[tokio::test]
async fn plugin_configs_hide_secret_values_and_keep_them_when_patched_with_null() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let plugin = source_plugin(&app, &ada, "Secretive").await;
    let schema = json!({"plugin.json": "{\"name\": \"Secretive\", \"config\": [{\"key\": \"token\", \"secret\": true}, {\"key\": \"host\"}]}"});
    assert_eq!(
        send(
            &app,
            Method::PATCH,
            &plugin_path(&ada, &plugin["id"], "update_source"),
            &ada,
            schema
        )
        .await
        .0,
        200
    );

    let configs = format!("/api/projects/{}/plugin_configs/", ada.project_id);
    let (status, config) = send(&app, Method::POST, &configs, &ada, json!({"plugin": plugin["id"], "enabled": true, "order": 2, "config": {"token": "s3cret", "host": "eu"}})).await;
    assert_eq!(status, 201, "{config}");
    let placeholder = "**************** POSTHOG SECRET FIELD ****************";
    assert_eq!(
        config["config"],
        json!({"token": placeholder, "host": "eu"})
    );
    assert_eq!(
        (
            config["team_id"].as_i64(),
            config["plugin"].clone(),
            config["deleted"].clone()
        ),
        (
            Some(i64::from(ada.project_id.0)),
            plugin["id"].clone(),
            json!(false)
        )
    );

    let path = format!("{configs}{}/", config["id"]);
    let (status, patched) = send(
        &app,
        Method::PATCH,
        &path,
        &ada,
        json!({"config": {"token": null, "host": "us"}}),
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(
        patched["config"],
        json!({"token": placeholder, "host": "us"})
    );
    let stored: i64 = app.rows("plugin_configs").await;
    assert_eq!(stored, 1);
    assert_eq!(
        get(&app, &configs, &ada).await.1["results"][0]["config"]["token"],
        placeholder
    );
    let (_, unused) = get(&app, &format!("{}unused/", plugins_path(&ada)), &ada).await;
    assert_eq!(unused, json!([]), "an enabled config uses the plugin");
}

#[tokio::test]
async fn concurrent_patches_of_one_config_each_keep_the_others_changes() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let plugin = source_plugin(&app, &ada, "Busy").await;
    let configs = format!("/api/projects/{}/plugin_configs/", ada.project_id);
    let (status, config) = send(
        &app,
        Method::POST,
        &configs,
        &ada,
        json!({"plugin": plugin["id"], "enabled": false, "order": 0}),
    )
    .await;
    assert_eq!(status, 201, "{config}");
    let path = format!("{configs}{}/", config["id"]);
    for round in 1..=5 {
        // Each round, fifteen PATCHes at once, five to each of name, description and order:
        // each leaves the fields it does not send as stored, which are the ones the others
        // change.
        let patches: Vec<_> = (0..15)
            .map(|writer| {
                let mark = format!("{round}.{writer}");
                let body = match writer % 3 {
                    0 => json!({"name": format!("name {mark}")}),
                    1 => json!({"description": format!("description {mark}")}),
                    _ => json!({"order": round * 100 + writer}),
                };
                tokio::spawn(
                    app.request(Method::PATCH, &path)
                        .bearer_auth(&ada.key)
                        .json(&body)
                        .send(),
                )
            })
            .collect();
        for patch in patches {
            let (status, body) = parts(patch.await.unwrap().unwrap()).await;
            assert_eq!(status, 200, "{body}");
        }
        let (_, stored) = get(&app, &path, &ada).await;
        let (name, description) = (format!("name {round}."), format!("description {round}."));
        assert!(
            stored["name"]
                .as_str()
                .is_some_and(|n| n.starts_with(&name))
                && stored["description"]
                    .as_str()
                    .is_some_and(|d| d.starts_with(&description))
                && stored["order"]
                    .as_i64()
                    .is_some_and(|order| order / 100 == round),
            "a PATCH of round {round} was lost: {stored}"
        );
    }
}

#[tokio::test]
async fn urls_outside_posthogs_grammar_and_unconfigured_sources_are_400s() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for (url, detail) in [
        (
            "https://example.com/plugin",
            "Must be a GitHub/GitLab repository or npm package URL!",
        ),
        (
            "ftp://github.com/a/b",
            "Must be a GitHub/GitLab repository or npm package URL!",
        ),
    ] {
        let (status, body) = send(
            &app,
            Method::POST,
            &plugins_path(&ada),
            &ada,
            json!({"url": url}),
        )
        .await;
        assert_eq!(
            (status, body["detail"].as_str()),
            (400, Some(detail)),
            "{url}: {body}"
        );
    }
    let (status, body) = send(
        &app,
        Method::POST,
        &plugins_path(&ada),
        &ada,
        json!({"name": "no url"}),
    )
    .await;
    assert_eq!(
        (status, body["attr"].as_str(), body["code"].as_str()),
        (400, Some("url"), Some("required")),
        "{body}"
    );
    for url in [
        "https://www.npmjs.com/package/posthog-plugin-x",
        "file:my-plugin",
    ] {
        let (status, body) = send(
            &app,
            Method::POST,
            &plugins_path(&ada),
            &ada,
            json!({"url": url}),
        )
        .await;
        assert_eq!(
            (status, body["type"].as_str()),
            (400, Some("validation_error")),
            "{url}: {body}"
        );
    }
    assert_eq!(app.rows("plugins").await, 0);
    let (status, listing) = get(&app, &format!("{}repository/", plugins_path(&ada)), &ada).await;
    assert_eq!((status, listing), (200, json!([])), "no listing configured");
}

#[tokio::test]
async fn members_of_other_organizations_cannot_reach_plugins_at_all() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let (status, _) = get(&app, &plugins_path(&ada), &bob).await;
    assert_eq!(status, 403);
    app.admin
        .add_member(
            "bob@example.com",
            ada.organization_id,
            MembershipLevel::Member,
        )
        .await
        .unwrap();
    assert_eq!(get(&app, &plugins_path(&ada), &bob).await.0, 200);
}

/// What each plugin operation answers at each organization level: reads from `config`, writes
/// from `install`, global changes at `root` only.
#[tokio::test]
async fn every_operation_answers_as_the_organizations_level_allows() {
    // Level changes are felt at once with nothing remembered; that they are felt within
    // seconds with the default memory is `cli::create_project_add_member_and_plugin_levels_take_effect`.
    let app = spawn_app_with(|args| args.access_cache_ms = 0).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let plugin = source_plugin(&app, &ada, "Subject").await;
    let id = &plugin["id"];
    let configs = format!("/api/projects/{}/plugin_configs/", ada.project_id);
    // (method, path, body, status at none, config, install, root)
    let operations: Vec<(Method, String, Value, [u16; 4])> = vec![
        (
            Method::GET,
            plugins_path(&ada),
            json!({}),
            [403, 200, 200, 200],
        ),
        (
            Method::GET,
            plugin_path(&ada, id, ""),
            json!({}),
            [403, 200, 200, 200],
        ),
        (
            Method::GET,
            plugin_path(&ada, id, "source/"),
            json!({}),
            [403, 403, 200, 200],
        ),
        (
            Method::GET,
            plugin_path(&ada, id, "check_for_updates/"),
            json!({}),
            [403, 403, 400, 400],
        ),
        (
            Method::GET,
            format!("{}unused/", plugins_path(&ada)),
            json!({}),
            [403, 200, 200, 200],
        ),
        (
            Method::GET,
            format!("{}activity/", plugins_path(&ada)),
            json!({}),
            [403, 200, 200, 200],
        ),
        (
            Method::GET,
            format!("{}repository/", plugins_path(&ada)),
            json!({}),
            [403, 200, 200, 200],
        ),
        (
            Method::POST,
            plugins_path(&ada),
            json!({"plugin_type": "source", "name": "n"}),
            [403, 403, 201, 201],
        ),
        (
            Method::POST,
            plugins_path(&ada),
            json!({"plugin_type": "source", "is_global": true}),
            [403, 403, 403, 201],
        ),
        (
            Method::PATCH,
            plugin_path(&ada, id, ""),
            json!({"description": "d"}),
            [403, 403, 200, 200],
        ),
        (
            Method::PUT,
            plugin_path(&ada, id, ""),
            json!({"description": "d"}),
            [403, 403, 200, 200],
        ),
        (
            Method::PATCH,
            plugin_path(&ada, id, ""),
            json!({"is_global": false}),
            [403, 403, 403, 200],
        ),
        (
            Method::PATCH,
            plugin_path(&ada, id, "update_source/"),
            json!({"index.ts": "x"}),
            [403, 403, 200, 200],
        ),
        (
            Method::POST,
            plugin_path(&ada, id, "upgrade/"),
            json!({}),
            [403, 403, 200, 200],
        ),
        (
            Method::GET,
            configs.clone(),
            json!({}),
            [403, 200, 200, 200],
        ),
        (
            Method::POST,
            configs,
            json!({"plugin": id, "order": 1}),
            [403, 201, 201, 201],
        ),
    ];
    let levels = [
        PluginsAccessLevel::None,
        PluginsAccessLevel::Config,
        PluginsAccessLevel::Install,
        PluginsAccessLevel::Root,
    ];
    for (index, level) in levels.into_iter().enumerate() {
        set_level(&app, &ada, level).await;
        for (method, path, body, expected) in &operations {
            let (status, answer) = send(&app, method.clone(), path, &ada, body.clone()).await;
            assert_eq!(
                status, expected[index],
                "{method} {path} at {level:?}: {answer}"
            );
        }
    }
    set_level(&app, &ada, PluginsAccessLevel::Install).await;
    let target = source_plugin(&app, &ada, "Uninstalled").await;
    set_level(&app, &ada, PluginsAccessLevel::Config).await;
    assert_eq!(
        delete(&app, &plugin_path(&ada, &target["id"], ""), &ada).await,
        403
    );
    set_level(&app, &ada, PluginsAccessLevel::Install).await;
    assert_eq!(
        delete(&app, &plugin_path(&ada, &target["id"], ""), &ada).await,
        204
    );
}
