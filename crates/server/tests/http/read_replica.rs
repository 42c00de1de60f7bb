//! A read replica serves survey statistics while it is within its lag bound, and the primary
//! serves them once it falls behind it: a streaming standby of the test's own PostgreSQL whose
//! replay is paused.

use std::time::Duration;

use reqwest::Client;
use serde_json::json;

use crate::helpers::{parts, within};
use crate::own_node::{OwnNode, psql};
use crate::own_postgres::OwnPostgres;
use crate::process::bootstrap_tenant;

/// The bound the node is given: long enough that a read right after a capture falls inside it
/// on a busy machine.
const MAX_LAG: Duration = Duration::from_secs(5);

#[tokio::test]
async fn statistics_read_the_replica_within_its_lag_bound_and_the_primary_past_it() {
    let primary = OwnPostgres::start();
    let replica = OwnPostgres::standby_of(&primary);
    let replica_url = replica.url("postgres");
    let node = OwnNode::start_with(primary, |args| {
        args.replica_database_url = Some(replica_url);
        args.replica_max_lag_ms = u64::try_from(MAX_LAG.as_millis()).unwrap();
    })
    .await;
    let node = &node;
    let capture = |uuid: &'static str| async move {
        let (status, body) = parts(node.capture(&node.answer(uuid)).await).await;
        assert_eq!((status, body), (200, json!({"status": 1})));
    };
    let sent = || async {
        let (status, stats) = parts(
            Client::new()
                .get(format!(
                    "{}/api/projects/{}/surveys/{}/stats/",
                    node.address, node.project, node.survey
                ))
                .bearer_auth(&node.key)
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

    capture("0193a7e0-0000-7000-8000-0000000000d1").await;
    within(
        Duration::from_secs(20),
        "the replica replaying the first answer",
        || async { sent().await == 1 },
    )
    .await;

    // The replica stops replaying; the primary takes a second answer. Within the bound the
    // statistics still come from the replica, without it.
    psql(&replica.url("postgres"), "SELECT pg_wal_replay_pause()");
    capture("0193a7e0-0000-7000-8000-0000000000d2").await;
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
    psql(&replica.url("postgres"), "SELECT pg_wal_replay_resume()");
    within(
        Duration::from_secs(20),
        "the replica catching up",
        || async {
            psql(
                &replica.url("postgres"),
                "SELECT count(*) FROM survey_events WHERE uuid = '0193a7e0-0000-7000-8000-0000000000d2'",
            ) == "1"
        },
    )
    .await;
    assert_eq!(sent().await, 2);
}

/// The replica's pool is shared by every project's statistics: one project's reads that fill it
/// (here: stuck behind a lock the paused replica holds) send another project's to the primary,
/// answered at once, rather than queueing them until the pool's timeout (a 503).
#[tokio::test]
async fn a_replica_one_project_fills_sends_another_projects_statistics_to_the_primary() {
    let primary = OwnPostgres::start();
    let replica = OwnPostgres::standby_of(&primary);
    let replica_url = replica.url("postgres");
    let node = OwnNode::start_with(primary, |args| {
        args.replica_database_url = Some(replica_url.clone());
        // The replica stays within its bound for the whole test, paused or not.
        args.replica_max_lag_ms = 600_000;
        // The replica's pool: a quarter of it, 2 connections.
        args.db_pool_size = Some(8);
    })
    .await;
    let other = bootstrap_tenant(&node.url, "grace@example.com", "Other");
    let other_project = other["project_id"].as_i64().unwrap();
    let other_key = other["personal_api_key"].as_str().unwrap().to_owned();
    let (status, survey) = parts(
        Client::new()
            .post(format!(
                "{}/api/projects/{other_project}/surveys/",
                node.address
            ))
            .bearer_auth(&other_key)
            .json(&json!({"name": "Other", "type": "popover",
                          "questions": [{"type": "open", "question": "Why?"}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let stats = |project: i64, key: String| {
        let url = format!("{}/api/projects/{project}/surveys/stats/", node.address);
        async move {
            parts(
                Client::new()
                    .get(url)
                    .bearer_auth(key)
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    };
    let on_replica = |sql: &str| psql(&replica.url("postgres"), sql);
    within(
        Duration::from_secs(20),
        "the replica within its bound",
        || async { on_replica("SELECT pg_last_wal_replay_lsn() IS NOT NULL") == "t" },
    )
    .await;

    // A lock on the events the statistics read, taken on the primary and replayed by the
    // replica, which is paused before the primary lets it go: the replica keeps holding it.
    let holder = node.url.clone();
    let holding = std::thread::spawn(move || {
        psql(
            &holder,
            "BEGIN; LOCK TABLE survey_events IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(5); COMMIT;",
        )
    });
    let locked = "SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' \
                  AND relation = 'survey_events'::regclass";
    within(
        Duration::from_secs(20),
        "the replica replaying the lock",
        || async {
            // The lock's WAL record is sent once flushed: a switch flushes it.
            psql(&node.url, "SELECT pg_switch_wal()");
            on_replica(locked) == "1"
        },
    )
    .await;
    on_replica("SELECT pg_wal_replay_pause()");
    holding.join().unwrap();

    // The first project's statistics fill the replica's pool, each waiting on the lock.
    let first = (0..2)
        .map(|_| tokio::spawn(stats(node.project, node.key.clone())))
        .collect::<Vec<_>>();
    within(
        Duration::from_secs(20),
        "both replica connections waiting",
        || async {
            on_replica("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
                == "2"
        },
    )
    .await;

    let (status, body) = stats(other_project, other_key).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["stats"]["survey sent"]["total_count"], 0, "{body}");

    on_replica("SELECT pg_wal_replay_resume()");
    for request in first {
        let (status, body) = request.await.unwrap();
        assert_eq!(status, 200, "{body}");
    }
}
