//! One project's flags cannot take a node from the others (issue 40, probes 1 and 2, scaled
//! to run in seconds against the real binary): flags stored under older, larger limits are
//! weighed before they are loaded, so concurrent `/flags` right after a change keep the node's
//! peak memory bounded; a project at its write limits is built once for a burst (single
//! flight); and costly evaluations run in the node's evaluation slots within a budget, so
//! `/_health` and another project's `/flags` keep answering while one project's are slow.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use adapters::testing::TestDatabase;
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{parts, scraped};
use crate::process::{ServerProcess, bootstrap, serve};

/// A project of its own in the test's database: its personal key, id and public token.
fn another_tenant(database_url: &str, name: &str) -> (String, i64, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_burrow"))
        .args([
            "admin",
            "bootstrap",
            "--email",
            &format!("{name}@example.com"),
        ])
        .args(["--organization", name, "--project", name])
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "off")
        .output()
        .expect("running burrow admin bootstrap");
    assert!(output.status.success(), "{output:?}");
    let made: Value = serde_json::from_slice(&output.stdout).unwrap();
    tenant_parts(&made)
}

fn tenant_parts(made: &Value) -> (String, i64, String) {
    (
        made["personal_api_key"].as_str().unwrap().to_owned(),
        made["project_id"].as_i64().unwrap(),
        made["project_api_token"].as_str().unwrap().to_owned(),
    )
}

/// `count` active flags written straight to the table (as flags stored before today's write
/// limits were), each of 100 condition sets of `filters` substring filters on `email`:
/// every filter of a set but its last looks for `aend`, the last for what no email has, so an
/// email of `a…aEND` makes every set scan it end to end, and fail.
fn legacy_flags(project: i64, count: usize, filters: usize) -> String {
    format!(
        "INSERT INTO feature_flags (project_id, name, key, filters, deleted, active,
                                    ensure_experience_continuity, created_at)
         SELECT {project}, 'heavy ' || n, 'heavy-' || n,
                jsonb_build_object('groups', (
                    SELECT jsonb_agg(jsonb_build_object(
                        'rollout_percentage', 100,
                        'properties', (
                            SELECT jsonb_agg(jsonb_build_object(
                                'key', 'email', 'type', 'person', 'operator', 'icontains',
                                'value', CASE WHEN p < {filters} THEN 'aend'
                                              ELSE 'q' || s || '-' || n END))
                            FROM generate_series(1, {filters}) AS p)))
                    FROM generate_series(1, 100) AS s)),
                false, true, false, now()
         FROM generate_series(1, {count}) AS n"
    )
}

/// A database with two projects, the first holding `count` stored flags of `filters` filters a
/// set (`legacy_flags`), and the real binary serving it: each project's key, id and token.
async fn legacy_and_plain_tenants(
    count: usize,
    filters: usize,
) -> (
    TestDatabase,
    ServerProcess,
    (String, i64, String),
    (String, i64, String),
) {
    let database = TestDatabase::create().await;
    let legacy = tenant_parts(&bootstrap(&database.url));
    let plain = another_tenant(&database.url, "plain");
    database
        .execute(&legacy_flags(legacy.1, count, filters))
        .await;
    let server = serve(&database.url, None, |command| {
        command.env("BURROW_RATE_LIMIT", "off");
    })
    .await;
    (database, server, legacy, plain)
}

async fn flags(server: &ServerProcess, token: &str, properties: &Value) -> (u16, Value) {
    let client = reqwest::Client::new();
    parts(
        client
            .post(server.url("/flags/?v=2"))
            .json(&json!({"token": token, "distinct_id": "visitor",
                          "person_properties": properties}))
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// What the whole test may raise the server's peak memory to: the issue's bound. Unbounded,
/// 20 such flags (about 18 MB of filters) made a node hold over 300 MiB per concurrent build.
const PEAK_KIB: u64 = 256 * 1024;

#[tokio::test]
async fn huge_stored_flags_are_weighed_not_loaded_and_a_burst_builds_once() {
    // About 0.9 MB of filters each: within the limits of the time, over today's.
    let (database, server, (huge_key, _, huge_token), (key, project, token)) =
        legacy_and_plain_tenants(20, 100).await;

    // A project at its write limits, written through the API: eight flags of about 60 KiB.
    let client = reqwest::Client::new();
    let filter = |n: usize| {
        json!({"key": "email", "type": "person", "operator": "icontains",
               "value": format!("{n}-{}", "v".repeat(1_150))})
    };
    for n in 0..8 {
        let filters = json!({"groups": [{"properties": (0..50).map(filter).collect::<Vec<_>>(),
                                         "rollout_percentage": 100}]});
        let response = client
            .post(server.url(&format!("/api/projects/{project}/feature_flags/")))
            .bearer_auth(&key)
            .json(&json!({"key": format!("big-{n}"), "filters": filters}))
            .send()
            .await
            .unwrap();
        let (status, body) = parts(response).await;
        assert_eq!(status, 201, "{body}");
    }
    // A ninth passes the project's weight.
    let filters = json!({"groups": [{"properties": (0..50).map(filter).collect::<Vec<_>>()}]});
    let response = client
        .post(server.url(&format!("/api/projects/{project}/feature_flags/")))
        .bearer_auth(&key)
        .json(&json!({"key": "big-8", "filters": filters}))
        .send()
        .await
        .unwrap();
    let (status, body) = parts(response).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["attr"], "filters");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .starts_with("A project's active flags may weigh at most 524288 bytes"),
        "{body}"
    );

    let built = || {
        scraped(
            &server.address,
            r#"burrow_sdk_snapshots_total{source="storage"}"#,
        )
    };
    for round in 0..2 {
        if round == 1 {
            // A change to each project forgets its snapshot: the next burst builds again.
            database
                .execute("UPDATE feature_flags SET name = name || '!'")
                .await;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let builds_before = built().await.unwrap_or(0.0);
        let nobody = json!({});
        let answers = join_all(
            (0..6)
                .map(|_| flags(&server, &huge_token, &nobody))
                .chain((0..6).map(|_| flags(&server, &token, &nobody))),
        )
        .await;
        for (n, (status, body)) in answers.iter().enumerate() {
            assert_eq!(*status, 200, "{body}");
            let huge = n < 6;
            assert_eq!(body["errorsWhileComputingFlags"], huge, "{body:.300}");
            let served = body["flags"].as_object().unwrap().len();
            assert_eq!(served, if huge { 0 } else { 8 });
        }
        let builds = built().await.unwrap_or(0.0) - builds_before;
        // The huge project is weighed (never kept) by each of its requests once at a time; the
        // fitting one is built once and kept.
        assert!(builds <= 7.0, "round {round}: {builds} builds");
    }
    let kept = scraped(&server.address, "burrow_sdk_kept_snapshot_bytes")
        .await
        .unwrap();
    assert!(kept > 0.0 && kept <= 16.0 * 1024.0 * 1024.0, "{kept}");

    // Server SDKs are not handed part of the huge project's definitions.
    let response = client
        .get(server.url(&format!("/flags/definitions?token={huge_token}")))
        .bearer_auth(&huge_key)
        .send()
        .await
        .unwrap();
    let (status, body) = parts(response).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "flags_too_large");

    let peak = server.peak_memory_kib();
    assert!(
        peak <= PEAK_KIB,
        "peak memory {peak} KiB (bound {PEAK_KIB} KiB)"
    );
}

/// How long `/_health` and another project's `/flags` may take while one project's costly
/// evaluations run: the issue's bound, on the median of many, so one scheduling hiccup of a
/// shared two-core machine running other tests does not decide it.
const OTHERS_MEDIAN: Duration = Duration::from_millis(200);

#[tokio::test]
async fn one_projects_costly_flags_leave_health_and_other_projects_responsive() {
    // Three flags of substring filters stored under older limits (about 250 KB each: loaded).
    let (_database, server, (_, _, slow_token), (_, _, other_token)) =
        legacy_and_plain_tenants(3, 30).await;
    // Upper case at its end: each filter scans the email for one, then compares it lowered.
    let large = json!({"email": format!("{}END", "a".repeat(60_000))});
    let too_large = json!({"email": "a".repeat(70_000)});
    let (status, body) = flags(&server, &slow_token, &too_large).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["code"], "max_length");
    assert_eq!(body["attr"], "person_properties");

    // The snapshot built (and kept) first: what is measured is evaluation.
    let (status, body) = flags(&server, &slow_token, &json!({})).await;
    assert_eq!(status, 200, "{body:.300}");
    let others_done = AtomicBool::new(false);
    let slow = async {
        let mut answered = 0;
        while !others_done.load(Ordering::SeqCst) {
            let answers = join_all((0..3).map(|_| flags(&server, &slow_token, &large))).await;
            for (status, body) in answers {
                // On a loaded machine the project's one slot (of two) may stay taken for the
                // wait: that project alone is told to come back.
                if status == 503 {
                    assert_eq!(body["code"], "server_busy", "{body}");
                    continue;
                }
                assert_eq!(status, 200, "{body:.300}");
                // The budget ran out before every flag was evaluated.
                assert_eq!(body["errorsWhileComputingFlags"], true, "{body:.300}");
                answered += 1;
            }
        }
        answered
    };
    let others = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let client = reqwest::Client::new();
        let mut took = Vec::new();
        for _ in 0..15 {
            let started = Instant::now();
            let health = client.get(server.url("/_health")).send().await.unwrap();
            assert_eq!(health.status(), 200);
            took.push(("health", started.elapsed()));
            let started = Instant::now();
            let (status, body) = flags(&server, &other_token, &json!({})).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["errorsWhileComputingFlags"], false);
            took.push(("other project's /flags", started.elapsed()));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        others_done.store(true, Ordering::SeqCst);
        took
    };
    let (answered, took) = tokio::join!(slow, others);
    assert!(answered >= 3, "the slow project was answered too");
    for what in ["health", "other project's /flags"] {
        let mut times: Vec<Duration> = took
            .iter()
            .filter(|(w, _)| *w == what)
            .map(|(_, t)| *t)
            .collect();
        times.sort();
        let median = times[times.len() / 2];
        assert!(
            median <= OTHERS_MEDIAN,
            "{what}: median {median:?} while the slow project's flags ran ({times:?})"
        );
    }
}
