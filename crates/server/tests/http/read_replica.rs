//! A read replica serves survey statistics while it is within its lag bound, and the primary
//! serves them once it falls behind it: a streaming standby of the test's own PostgreSQL whose
//! replay is paused.

use std::time::Duration;

use reqwest::Client;
use serde_json::json;

use crate::helpers::{parts, within};
use crate::own_node::{OwnNode, psql};
use crate::own_postgres::OwnPostgres;

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
