//! Requests an attacker would send, each answered without taking Burrow down: source code that
//! nests past any stack, a small body that inflates to millions of events, methods and paths
//! that would grow `/metrics`, strings longer than their columns on every write route, and
//! `/flags` bodies and targeting filters past their bounds.

use std::io::Write as _;

use adapters::testing::TestDatabase;
use domain::tenancy::PluginsAccessLevel;
use flate2::Compression;
use flate2::write::GzEncoder;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app, spawn_app_with};
use crate::plugins::{plugin_path, set_level, source_plugin};
use crate::process::{bootstrap, serve};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(bytes).expect("gzip in memory");
    encoder.finish().expect("gzip in memory")
}

/// A source plugin of the tenant's organization (at the install level): its path.
async fn source_plugin_path(app: &TestApp, tenant: &Tenant) -> String {
    set_level(app, tenant, PluginsAccessLevel::Install).await;
    let plugin = source_plugin(app, tenant, "Deep").await;
    plugin_path(tenant, &plugin["id"], "")
}

#[tokio::test]
async fn a_plugin_source_nested_fifty_thousand_levels_deep_is_saved_and_the_server_keeps_answering()
{
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let plugin = source_plugin_path(&app, &ada).await;
    let readable = json!({"index.ts": "export function processEvent(event) { return event }"});
    let (status, _) = parts(
        app.send_json(
            Method::PATCH,
            &format!("{plugin}update_source/"),
            &ada.key,
            &readable,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);

    // What aborted the whole process: oxc's parser recursing once per parenthesis.
    let deep = format!("const a={}1{}", "(".repeat(50_000), ")".repeat(50_000));
    let (status, saved) = parts(
        app.send_json(
            Method::PATCH,
            &format!("{plugin}update_source/"),
            &ada.key,
            &json!({"index.ts": deep}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "the source is stored as sent");
    assert_eq!(saved["index.ts"].as_str().map(str::len), Some(deep.len()));

    let health = app.request(Method::GET, "/_health").send().await.unwrap();
    assert_eq!(health.status(), 200);
    let (_, plugin) = parts(app.get(&plugin, &ada.key).await).await;
    assert_eq!(
        plugin["capabilities"],
        json!({"methods": ["processEvent"], "jobs": [], "scheduled_tasks": []}),
        "a source the analyzer refuses keeps the capabilities read before"
    );
}

/// Growth of the server's peak memory allowed for one hostile capture request: the body, what
/// it may inflate to (1 MiB beyond 100 times its size), and the parser's small state.
const CAPTURE_PEAK_GROWTH_KIB: u64 = 16 * 1024;

#[tokio::test]
async fn a_17_kb_gzip_body_of_six_million_events_is_refused_without_the_memory_it_inflates_to() {
    let database = TestDatabase::create().await;
    let boot = bootstrap(&database.url);
    let server = serve(&database.url, None, |command| {
        command.env("BURROW_RATE_LIMIT", "off");
    })
    .await;
    let client = reqwest::Client::new();
    let (_, project) = parts(
        client
            .get(server.url(&format!("/api/projects/{}/", boot["project_id"])))
            .bearer_auth(boot["personal_api_key"].as_str().unwrap())
            .send()
            .await
            .unwrap(),
    )
    .await;
    let token = project["api_token"].as_str().expect("a project token");
    // Warm the capture path up, so what is measured is the hostile request alone.
    let warm = client
        .post(server.url("/batch/"))
        .json(&json!({"api_key": token, "batch": [{"event": "$pageview", "distinct_id": "x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(warm.status(), 200);
    let before = server.peak_memory_kib();

    let events = format!("[{}]", ["{}"; 6_000_000].join(","));
    let bomb = gzip(events.as_bytes());
    assert!(bomb.len() < 20 * 1024, "{} bytes", bomb.len());
    for _ in 0..4 {
        let (status, body) = parts(
            client
                .post(server.url("/batch/"))
                .header("Content-Type", "application/json")
                .body(bomb.clone())
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 413, "{body}");
        assert_eq!(body["code"], "request_too_large");
    }

    // Sent plain, the same events are read one by one and the read stops at the limit.
    let plain = format!("[{}]", ["{}"; 1_500_000].join(","));
    let (status, body) = parts(
        client
            .post(server.url("/batch/"))
            .header("Content-Type", "application/json")
            .body(plain)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 413, "{body}");

    // Within the inflation ratio, but more events than a request may carry: the read stops
    // at the limit, before the token is even looked up.
    let many = format!(
        "[{}]",
        [r#"{"event":"$pageview","distinct_id":"x"}"#; 10_001].join(",")
    );
    let (status, body) = parts(
        client
            .post(server.url("/batch/"))
            .header("Content-Type", "application/json")
            .body(gzip(many.as_bytes()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(
        body["detail"],
        "A capture request may carry at most 10000 events."
    );

    let growth = server.peak_memory_kib().saturating_sub(before);
    assert!(
        growth < CAPTURE_PEAK_GROWTH_KIB,
        "peak memory grew by {growth} KiB (bound {CAPTURE_PEAK_GROWTH_KIB} KiB)"
    );
    let health = client.get(server.url("/_health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn invented_methods_and_paths_do_not_grow_the_metrics() {
    let app = spawn_app().await;
    let send = |method: String, path: String| {
        let request = app.request(Method::from_bytes(method.as_bytes()).unwrap(), &path);
        async move { request.send().await.unwrap().status() }
    };
    let size = || async {
        app.request(Method::GET, "/metrics")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    // The first unknown method and path (and the first scrape) make their series; after that
    // nothing new may appear.
    send("BREW".into(), "/first/unknown".into()).await;
    size().await;
    let before = size().await;
    for index in 0..200 {
        let method = format!("M{}{}", "X".repeat(index % 50), index);
        let status = send(method, format!("/scan/{index}/{}", "y".repeat(index))).await;
        assert!(status.is_client_error(), "{status}");
    }
    let after = size().await;
    let new_lines: Vec<_> = after
        .lines()
        .filter(|line| {
            !before
                .lines()
                .any(|old| old.split(' ').next() == line.split(' ').next())
        })
        .collect();
    assert!(new_lines.is_empty(), "{new_lines:#?}");
    assert!(
        after.len() <= before.len() + 64,
        "/metrics grew from {} to {} bytes",
        before.len(),
        after.len()
    );
    assert!(after.contains(r#"method="other""#), "{after}");
    assert!(!after.contains("MXX"), "a method became a label");
    assert!(!after.contains("/scan/"), "a path became a label");
}

/// How each length-limited column is kept within its limit.
enum Bound {
    /// A field of a write route, refused with DRF's `max_length` error past the limit.
    Field(Route, &'static str),
    /// Written by something other than a client's string: the reason.
    Elsewhere(&'static str),
}

/// The write routes whose string fields are stored in limited columns.
#[derive(Clone, Copy)]
enum Route {
    PluginCreate,
    PluginPatch,
    PluginConfigPatch,
    SurveyCreate,
    FlagCreate,
    EarlyAccessCreate,
}

/// Every length-limited column of the schema and what bounds it.
fn bounds() -> Vec<((&'static str, &'static str), Bound)> {
    use Bound::{Elsewhere, Field};
    use Route::{
        EarlyAccessCreate, FlagCreate, PluginConfigPatch, PluginCreate, PluginPatch, SurveyCreate,
    };
    const CAPTURE_ID: &str =
        "capture: $survey_id and $survey_submission_id refused past 200, distinct ids truncated";
    const ADMIN: &str = "`burrow admin`, which checks the length";
    const INTERNAL: &str = "one of Burrow's own names";
    const GROUP_NAME: &str = "capture: a $groupidentify whose $group_type or $group_key passes 400 \
         is dropped (domain capture tests)";
    const GROUP_TYPE_NAME: &str =
        "update_metadata refuses past 400, its body a list (groups.rs, domain groups tests)";
    vec![
        (
            ("early_access_features", "documentation_url"),
            Elsewhere("refused past 800 before it is read as a URL (early_access.rs)"),
        ),
        (
            ("early_access_features", "name"),
            Field(EarlyAccessCreate, "name"),
        ),
        (("feature_flags", "key"), Field(FlagCreate, "key")),
        (("group_types", "group_type"), Elsewhere(GROUP_NAME)),
        (("group_types", "name_plural"), Elsewhere(GROUP_TYPE_NAME)),
        (("group_types", "name_singular"), Elsewhere(GROUP_TYPE_NAME)),
        (("groups", "group_key"), Elsewhere(GROUP_NAME)),
        (("groups", "group_type"), Elsewhere(GROUP_NAME)),
        (
            ("hash_key_overrides", "feature_flag_key"),
            Elsewhere("a flag's key, refused past 400 when the flag is written"),
        ),
        (("organizations", "name"), Elsewhere(ADMIN)),
        (("personal_api_keys", "label"), Elsewhere(ADMIN)),
        (
            ("personal_api_keys", "mask"),
            Elsewhere("derived from the key"),
        ),
        (
            ("personal_api_keys", "secure_value"),
            Elsewhere("a hash of the key"),
        ),
        (("plugin_activity", "activity"), Elsewhere(INTERNAL)),
        (("plugin_activity", "scope"), Elsewhere(INTERNAL)),
        (
            ("plugin_configs", "description"),
            Field(PluginConfigPatch, "description"),
        ),
        (("plugin_configs", "name"), Field(PluginConfigPatch, "name")),
        (
            ("plugin_source_files", "filename"),
            Elsewhere("update_source refuses names past 200 (plugins.rs)"),
        ),
        (("plugins", "icon"), Field(PluginPatch, "icon")),
        (
            ("plugins", "latest_tag"),
            Elsewhere("the upstream's version, refused past 200 (a 502)"),
        ),
        (("plugins", "name"), Field(PluginCreate, "name")),
        (("plugins", "plugin_type"), Elsewhere("a closed choice")),
        (("plugins", "tag"), Field(PluginPatch, "tag")),
        (
            ("plugins", "url"),
            Elsewhere("PluginUrl refuses past 800 (domain tests)"),
        ),
        (
            ("plugins", "url_key"),
            Elsewhere("the url without its query"),
        ),
        (("projects", "api_token"), Elsewhere("generated")),
        (("projects", "name"), Elsewhere(ADMIN)),
        (("survey_activity", "activity"), Elsewhere(INTERNAL)),
        (
            ("survey_response_counts", "survey_id"),
            Elsewhere(CAPTURE_ID),
        ),
        (("survey_events", "distinct_id"), Elsewhere(CAPTURE_ID)),
        (("survey_events", "event"), Elsewhere("a closed choice")),
        (("survey_events", "submission_id"), Elsewhere(CAPTURE_ID)),
        (("survey_events", "survey_id"), Elsewhere(CAPTURE_ID)),
        (("survey_responses", "distinct_id"), Elsewhere(CAPTURE_ID)),
        (("survey_responses", "submission_id"), Elsewhere(CAPTURE_ID)),
        (
            ("survey_responses", "submission_key"),
            Elsewhere(CAPTURE_ID),
        ),
        (("survey_responses", "survey_id"), Elsewhere(CAPTURE_ID)),
        (
            ("surveys", "base_language"),
            Elsewhere("refused past 20 before it is read as a language (survey_translations.rs)"),
        ),
        (("surveys", "name"), Field(SurveyCreate, "name")),
        (
            ("surveys", "response_sampling_interval_type"),
            Elsewhere("a closed choice"),
        ),
        (("surveys", "schedule"), Elsewhere("a closed choice")),
        (("surveys", "type"), Elsewhere("a closed choice")),
        (("users", "distinct_id"), Elsewhere("generated")),
        (("webhook_activity", "activity"), Elsewhere(INTERNAL)),
        (("webhook_deliveries", "kind"), Elsewhere(INTERNAL)),
        (("webhook_deliveries", "state"), Elsewhere(INTERNAL)),
        (
            ("webhook_deliveries", "submission_key"),
            Elsewhere(CAPTURE_ID),
        ),
        (("webhook_deliveries", "survey_id"), Elsewhere(CAPTURE_ID)),
        (("webhook_outbox", "submission_key"), Elsewhere(CAPTURE_ID)),
        (("webhook_outbox", "survey_id"), Elsewhere(CAPTURE_ID)),
        (("webhooks", "disabled_reason"), Elsewhere(INTERNAL)),
        (("webhooks", "format"), Elsewhere("a closed choice")),
        (("users", "email"), Elsewhere(ADMIN)),
        (("users", "first_name"), Elsewhere(ADMIN)),
        (("users", "last_name"), Elsewhere(ADMIN)),
    ]
}

/// DRF's error for a string longer than its field allows.
fn max_length(attr: &str, limit: usize) -> Value {
    json!({
        "type": "validation_error",
        "code": "max_length",
        "detail": format!("Ensure this field has no more than {limit} characters."),
        "attr": attr,
    })
}

/// Sends `value` as `field` on `route`: status and body.
async fn write(
    app: &TestApp,
    ada: &Tenant,
    route: Route,
    field: &str,
    value: &str,
) -> (u16, Value) {
    let project = ada.project_id.0;
    let (method, path, mut body) = match route {
        Route::PluginCreate => (
            Method::POST,
            format!("/api/organizations/{}/plugins/", ada.organization_id),
            json!({"plugin_type": "source"}),
        ),
        Route::PluginPatch => (Method::PATCH, source_plugin_path(app, ada).await, json!({})),
        Route::PluginConfigPatch => {
            let plugin = source_plugin(app, ada, "Configured").await;
            let configs = format!("/api/projects/{project}/plugin_configs/");
            let (status, config) = parts(
                app.send_json(
                    Method::POST,
                    &configs,
                    &ada.key,
                    &json!({"plugin": plugin["id"]}),
                )
                .await,
            )
            .await;
            assert_eq!(status, 201, "{config}");
            (
                Method::PATCH,
                format!("{configs}{}/", config["id"]),
                json!({}),
            )
        }
        Route::SurveyCreate => (
            Method::POST,
            format!("/api/projects/{project}/surveys/"),
            json!({"type": "api"}),
        ),
        Route::FlagCreate => (
            Method::POST,
            format!("/api/projects/{project}/feature_flags/"),
            json!({}),
        ),
        Route::EarlyAccessCreate => (
            Method::POST,
            format!("/api/projects/{project}/early_access_feature/"),
            json!({"stage": "beta"}),
        ),
    };
    body[field] = json!(value);
    parts(app.send_json(method, &path, &ada.key, &body).await).await
}

#[tokio::test]
async fn every_limited_column_is_bounded_and_every_bounded_field_refuses_one_character_more() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    set_level(&app, &ada, PluginsAccessLevel::Install).await;
    let columns = app.database.limited_columns().await;
    let bounds = bounds();
    let mut listed: Vec<_> = bounds.iter().map(|(column, _)| *column).collect();
    listed.sort_unstable();
    let mut found: Vec<_> = columns
        .iter()
        .map(|c| (c.table.as_str(), c.column.as_str()))
        .collect();
    found.sort_unstable();
    let known: Vec<String> = bounds
        .iter()
        .map(|((table, column), bound)| match bound {
            Bound::Field(_, field) => format!("{table}.{column}: the `{field}` field"),
            Bound::Elsewhere(reason) => format!("{table}.{column}: {reason}"),
        })
        .collect();
    assert_eq!(
        found,
        listed,
        "a length-limited column without a known bound, or a bound for a column that is gone; \
         the known bounds:\n{}",
        known.join("\n")
    );
    for ((table, column), bound) in &bounds {
        let Bound::Field(route, field) = bound else {
            continue;
        };
        let limit = columns
            .iter()
            .find(|c| c.table == *table && c.column == *column)
            .map(|c| usize::try_from(c.max_chars).unwrap())
            .unwrap();
        // Keys are letters, digits, `-` and `_`; every other field takes any character.
        let fitting = "k".repeat(limit);
        let (status, body) = write(&app, &ada, *route, field, &fitting).await;
        assert!(
            status < 300,
            "{table}.{column} at its limit: {status} {body}"
        );
        let (status, body) = write(&app, &ada, *route, field, &format!("{fitting}k")).await;
        assert_eq!(
            (status, body),
            (400, max_length(field, limit)),
            "{table}.{column} past its limit"
        );
    }
}

#[tokio::test]
async fn a_plugin_named_past_its_column_is_a_400_not_a_500() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    set_level(&app, &ada, PluginsAccessLevel::Install).await;
    let (status, body) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/organizations/{}/plugins/", ada.organization_id),
            &ada.key,
            &json!({"plugin_type": "source", "name": "n".repeat(201)}),
        )
        .await,
    )
    .await;
    assert_eq!((status, body), (400, max_length("name", 200)));
    assert_eq!(app.rows("plugins").await, 0);
}

#[tokio::test]
async fn flag_filters_with_a_pattern_that_cannot_compile_or_too_many_conditions_are_400s() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let flags = format!("/api/projects/{}/feature_flags/", ada.project_id.0);
    let regex = |pattern: String| json!({"groups": [{"properties": [{"key": "email", "operator": "regex", "value": pattern}]}]});
    let set = json!({"properties": [], "rollout_percentage": 50});
    for (filters, detail) in [
        (
            regex("(unclosed".into()),
            "Invalid regular expression in a property filter: error: unclosed group",
        ),
        (
            regex("a{1000}".repeat(100)),
            "Invalid regular expression in a property filter: it is too large",
        ),
        (
            json!({"groups": vec![set; 51]}),
            "A flag may have at most 50 condition sets.",
        ),
    ] {
        let (status, body) = parts(
            app.send_json(
                Method::POST,
                &flags,
                &ada.key,
                &json!({"key": "hostile", "filters": filters}),
            )
            .await,
        )
        .await;
        assert_eq!(
            (status, body),
            (
                400,
                json!({"type": "validation_error", "code": "invalid_input", "detail": detail, "attr": "filters"})
            )
        );
    }
    assert_eq!(app.rows("feature_flags").await, 0);
}

#[tokio::test]
async fn bodies_past_the_nodes_memory_budget_wait_then_get_a_503_until_it_is_given_back() {
    use tokio::io::AsyncWriteExt as _;

    let app = spawn_app_with(|args| args.body_memory_mb = 1).await;
    let address = app.address.trim_start_matches("http://").to_owned();
    // A client announces a large body, sends more than the whole budget of it, and stalls.
    let mut stalled = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /batch/ HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: 4000000\r\n\r\n["
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    stalled.write_all(&vec![b' '; 1_100_000]).await.unwrap();
    stalled.flush().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;

    let capture = || {
        app.request(Method::POST, "/batch/")
            .json(&json!({"api_key": "unknown", "batch": [{"event": "$pageview", "distinct_id": "x"}]}))
            .send()
    };
    let refused = capture().await.unwrap();
    assert_eq!(refused.headers()["retry-after"], "1");
    let (status, body) = parts(refused).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("server_busy")),
        "{body}"
    );

    drop(stalled);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (status, body) = parts(capture().await.unwrap()).await;
    assert_eq!(
        status, 401,
        "past the budget again once it is given back: {body}"
    );
}

/// What `/flags` answers a hostile body, in the order it checks: past the size limit a 413
/// before the body is read whole; JSON nested past serde's depth a 400 `parse_error`; no
/// token a 401; a hundred thousand `flag_keys` (as many as fit under the limit) only the flags
/// the project has. The node keeps answering.
#[tokio::test]
async fn a_hostile_flags_body_is_refused_by_size_depth_and_token_and_a_long_key_list_costs_nothing()
{
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let post = |body: Vec<u8>| async {
        parts(
            app.request(Method::POST, "/flags/?v=2")
                .header("Content-Type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap(),
        )
        .await
    };

    let (status, body) = post(vec![b' '; 1024 * 1024 + 1]).await;
    assert_eq!(
        (status, body["type"].clone()),
        (413, json!("invalid_request"))
    );

    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, body) = post(deep.into_bytes()).await;
    assert_eq!((status, body["code"].clone()), (400, json!("parse_error")));

    let (status, body) = post(json!({"distinct_id": "p"}).to_string().into_bytes()).await;
    assert_eq!(
        (status, body["type"].clone()),
        (401, json!("authentication_error"))
    );

    let keys: Vec<String> = (0..100_000).map(|n| format!("k{n}")).collect();
    let many = json!({"token": token, "distinct_id": "p", "flag_keys": keys});
    let (status, body) = post(many.to_string().into_bytes()).await;
    assert_eq!((status, body["flags"].clone()), (200, json!({})));
}

/// A survey's `targeting_flag_filters` are held to a flag's bounds when the request is read:
/// a pattern that cannot compile or too many condition sets is a 400 naming `filters`, and
/// neither a survey nor a flag is stored.
#[tokio::test]
async fn hostile_targeting_filters_are_400s_and_store_nothing() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let surveys = format!("/api/projects/{}/surveys/", ada.project_id.0);
    let set = json!({"properties": [], "rollout_percentage": 50});
    let regex = json!({"groups": [{"properties": [{"key": "email", "operator": "regex", "value": "a{1000}".repeat(100)}]}]});
    for (filters, detail) in [
        (
            regex,
            "Invalid regular expression in a property filter: it is too large",
        ),
        (
            json!({"groups": vec![set; 51]}),
            "A flag may have at most 50 condition sets.",
        ),
    ] {
        let body = json!({"name": "NPS", "type": "popover", "targeting_flag_filters": filters});
        let (status, body) =
            parts(app.send_json(Method::POST, &surveys, &ada.key, &body).await).await;
        assert_eq!(
            (status, body),
            (
                400,
                json!({"type": "validation_error", "code": "invalid_input", "detail": detail, "attr": "filters"})
            )
        );
    }
    assert_eq!(
        (app.rows("surveys").await, app.rows("feature_flags").await),
        (0, 0)
    );
}

#[tokio::test]
async fn deep_flag_dependency_chains_and_oversized_cohorts_are_400s() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let flags = format!("/api/projects/{}/feature_flags/", ada.project_id.0);
    let on = |id: &Value| {
        json!({"groups": [{"properties": [{"key": id.to_string(), "type": "flag",
            "operator": "flag_evaluates_to", "value": true}]}]})
    };
    let mut last = Value::Null;
    for n in 1..=10 {
        let filters = if last.is_null() {
            json!({"groups": [{"rollout_percentage": 100}]})
        } else {
            on(&last)
        };
        let (status, flag) = parts(
            app.send_json(
                Method::POST,
                &flags,
                &ada.key,
                &json!({"key": format!("chain-{n}"), "filters": filters}),
            )
            .await,
        )
        .await;
        assert_eq!(status, 201, "{flag}");
        last = flag["id"].clone();
    }
    let (status, error) = parts(
        app.send_json(
            Method::POST,
            &flags,
            &ada.key,
            &json!({"key": "chain-11", "filters": on(&last)}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, error["attr"].as_str()),
        (400, Some("filters")),
        "{error}"
    );
    assert!(
        error["detail"]
            .as_str()
            .unwrap()
            .starts_with("A flag dependency chain may hold at most 10 flags"),
        "{error}"
    );

    let cohorts = format!("/api/projects/{}/cohorts/", ada.project_id.0);
    let person = json!({"key": "plan", "type": "person", "operator": "exact", "value": "pro"});
    let mut deep = json!({"type": "AND", "values": [person]});
    for _ in 0..5 {
        deep = json!({"type": "AND", "values": [deep]});
    }
    let many: Vec<Value> = (0..101).map(|_| person.clone()).collect();
    let huge = json!({"type": "AND", "values": [
        {"key": "plan", "type": "person", "operator": "exact", "value": "p".repeat(70_000)}]});
    for (properties, refusal) in [
        (deep, "nest at most 5 deep"),
        (json!({"type": "OR", "values": many}), "at most 100 filters"),
        (huge, "at most 65536 bytes"),
    ] {
        let (status, error) = parts(
            app.send_json(
                Method::POST,
                &cohorts,
                &ada.key,
                &json!({"filters": {"properties": properties}}),
            )
            .await,
        )
        .await;
        assert_eq!(status, 400, "{error}");
        assert!(
            error["detail"].as_str().unwrap().contains(refusal),
            "{refusal}: {error}"
        );
    }
}
