//! A read replica serves survey statistics while it is within its lag bound, and the primary
//! serves them once it falls behind it: a streaming standby of the test's own PostgreSQL whose
//! replay is paused.

use std::time::Duration;

use reqwest::Client;
use serde_json::{Value, json};

use crate::helpers::{parts, start_node, within};
use crate::own_postgres::OwnPostgres;
use crate::process::bootstrap;

/// The bound the node is given: long enough that a read right after a capture falls inside it
/// on a busy machine.
const MAX_LAG: Duration = Duration::from_secs(5);

#[tokio::test]
async fn statistics_read_the_replica_within_its_lag_bound_and_the_primary_past_it() {
    let primary = OwnPostgres::start();
    let url = primary.url("postgres");
    adapters::run_migrations(&url).await.expect("migrating");
    let boot = bootstrap(&url);
    let key = boot["personal_api_key"].as_str().unwrap().to_owned();
    let project = boot["project_id"].as_i64().unwrap();
    let replica = OwnPostgres::standby_of(&primary);
    let address = start_node(&url, |args| {
        args.replica_database_url = Some(replica.url("postgres"));
        args.replica_max_lag_ms = u64::try_from(MAX_LAG.as_millis()).unwrap();
        args.access_cache_ms = 0;
    });
    let client = Client::new();
    let (status, survey) = parts(
        client
            .post(format!("{address}/api/projects/{project}/surveys/"))
            .bearer_auth(&key)
            .json(&json!({
                "name": "NPS",
                "type": "popover",
                "questions": [{"type": "open", "question": "Why?"}],
                "start_date": "2026-01-01T00:00:00Z",
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let survey = survey["id"].as_str().unwrap().to_owned();
    let (_, details) = parts(
        client
            .get(format!("{address}/api/projects/{project}/"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let token = details["api_token"].as_str().unwrap().to_owned();
    let answer = |uuid: &str| {
        json!({
            "api_key": token,
            "batch": [{
                "uuid": uuid,
                "event": "survey sent",
                "properties": {"distinct_id": "person-1", "$survey_id": survey, "$survey_response": "Fast"},
            }],
        })
    };
    let capture = |batch: Value| {
        let request = client.post(format!("{address}/batch/")).json(&batch).send();
        async move {
            let (status, body) = parts(request.await.unwrap()).await;
            assert_eq!((status, body), (200, json!({"status": 1})));
        }
    };
    let sent = || async {
        let (status, stats) = parts(
            client
                .get(format!(
                    "{address}/api/projects/{project}/surveys/{survey}/stats/"
                ))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{stats}");
        stats["stats"]["survey sent"]["total_count"]
            .as_u64()
            .unwrap_or(0)
    };

    capture(answer("0193a7e0-0000-7000-8000-0000000000d1")).await;
    within(
        Duration::from_secs(20),
        "the replica replaying the first answer",
        || async { sent().await == 1 },
    )
    .await;

    // The replica stops replaying; the primary takes a second answer. Within the bound the
    // statistics still come from the replica, without it.
    on(&replica, "SELECT pg_wal_replay_pause()");
    capture(answer("0193a7e0-0000-7000-8000-0000000000d2")).await;
    assert_eq!(
        sent().await,
        1,
        "statistics within the lag bound come from the replica"
    );
    // Past the bound, from the primary.
    within(
        MAX_LAG * 3,
        "statistics from the primary once the replica fell behind its bound",
        || async { sent().await == 2 },
    )
    .await;

    // Caught up again, the replica serves them again, with both answers.
    on(&replica, "SELECT pg_wal_replay_resume()");
    within(
        Duration::from_secs(20),
        "the replica catching up",
        || async {
            on(
                &replica,
                "SELECT count(*) FROM survey_events WHERE uuid = '0193a7e0-0000-7000-8000-0000000000d2'",
            ) == "1"
        },
    )
    .await;
    assert_eq!(sent().await, 2);
}

fn on(server: &OwnPostgres, sql: &str) -> String {
    let output = std::process::Command::new("psql")
        .args([
            "-XAt",
            "-v",
            "ON_ERROR_STOP=1",
            &server.url("postgres"),
            "-c",
            sql,
        ])
        .output()
        .expect("running psql");
    assert!(output.status.success(), "{sql}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
