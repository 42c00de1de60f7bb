//! What a failover does to a node's answers: a commit PostgreSQL never confirmed (its wait for a
//! synchronous standby cut by a fast shutdown) is a 503, never an acknowledged 200, and the
//! SDK's retry of it is stored once; a server that turned read-only is a 503 too, and the
//! connection that met it is not used again, so on a multi-host `DATABASE_URL` the writes
//! follow the host that takes them.

use std::process::Command;
use std::time::Duration;

use reqwest::Client;
use serde_json::json;

use crate::helpers::{parts, start_node, within};
use crate::own_node::{OwnNode, assert_database_unavailable, psql, reset, set};
use crate::own_postgres::OwnPostgres;

#[tokio::test]
async fn a_capture_whose_commit_no_standby_confirmed_is_503_when_the_server_stops_and_its_retry_counts_once()
 {
    let setup = OwnNode::start().await;
    // A synchronous standby that never connects: every commit waits for it (wait event
    // `SyncRep`) until the server stops.
    setup.set("synchronous_standby_names", "nobody").await;
    let batch = setup.answer("0193a7e0-0000-7000-8000-0000000000f1");
    let capturing = setup.capture_in_background(&batch);
    within(
        Duration::from_secs(20),
        "the capture's commit waiting for the standby",
        || async {
            setup.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'") == "1"
        },
    )
    .await;

    // A fast shutdown cancels the wait: the commit is local only, and PostgreSQL says so in a
    // warning and closes the connection without confirming it.
    setup.postgres.stop();
    let answered = capturing.await.unwrap().expect("the capture was answered");
    assert_database_unavailable(answered).await;

    setup.postgres.resume();
    setup.reset("synchronous_standby_names").await;
    // The SDK retries the same batch until it is acknowledged; the answer PostgreSQL kept
    // locally is not counted twice.
    let (status, body) = setup.retried_until_acknowledged(&batch).await;
    assert_eq!(body, json!({"status": 1}), "{status}");
    assert_eq!(
        setup.responses_count().await,
        json!({ setup.survey.as_str(): 1 })
    );
}

#[tokio::test]
async fn a_retry_of_a_capture_kept_only_locally_is_acknowledged_only_once_a_standby_confirms_it() {
    let setup = OwnNode::start().await;
    setup.set("synchronous_standby_names", "nobody").await;
    let batch = setup.answer("0193a7e0-0000-7000-8000-0000000000c1");
    let waiting_for_the_standby =
        || setup.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'");
    let capturing = setup.capture_in_background(&batch);
    within(
        Duration::from_secs(20),
        "the capture's commit waiting for the standby",
        || async { waiting_for_the_standby() == "1" },
    )
    .await;
    // As a fast shutdown does to each session, but the server stays up (a primary about to be
    // demoted): the commit is kept locally, unconfirmed, and the capture answered 503.
    setup.psql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'",
    );
    let answered = capturing.await.unwrap().expect("the capture was answered");
    assert_database_unavailable(answered).await;

    // The SDK's retry finds the answer stored, but only locally: it waits for the standby too,
    // rather than being acknowledged from a copy a failover would discard.
    let retrying = setup.capture_in_background(&batch);
    within(
        Duration::from_secs(20),
        "the retry's commit waiting for the standby",
        || async { retrying.is_finished() || waiting_for_the_standby() == "1" },
    )
    .await;
    if retrying.is_finished() {
        let answer = parts(retrying.await.unwrap().expect("the retry was answered")).await;
        panic!("the retry was answered while no standby had the answer: {answer:?}");
    }
    // A standby confirms (here: synchronous replication is switched off, which releases the
    // waits as a standby's confirmation does).
    setup.reset("synchronous_standby_names").await;
    let (status, body) = parts(retrying.await.unwrap().expect("the retry was answered")).await;
    assert_eq!((status, body), (200, json!({"status": 1})));
    assert_eq!(
        setup.responses_count().await,
        json!({ setup.survey.as_str(): 1 })
    );
}

#[tokio::test]
async fn a_server_that_turned_read_only_answers_writes_503_and_the_connection_that_met_it_is_replaced()
 {
    let setup = OwnNode::start().await;
    let writer = || {
        setup.psql(
            "SELECT string_agg(pid::text, ',') FROM pg_stat_activity \
             WHERE query LIKE 'WITH inserted AS (%INSERT INTO survey_events%'",
        )
    };
    let (status, body) = parts(
        setup
            .capture(&setup.answer("0193a7e0-0000-7000-8000-0000000000a1"))
            .await,
    )
    .await;
    assert_eq!((status, body), (200, json!({"status": 1})));
    let writer_before = writer();
    assert!(
        !writer_before.is_empty(),
        "the capture's connection is open"
    );

    // As a primary being demoted, or an operator's maintenance switch: writes are refused.
    setup.set("default_transaction_read_only", "on").await;
    assert_database_unavailable(
        setup
            .capture(&setup.answer("0193a7e0-0000-7000-8000-0000000000a2"))
            .await,
    )
    .await;
    let created = Client::new()
        .post(format!(
            "{}/api/projects/{}/surveys/",
            setup.address, setup.project
        ))
        .bearer_auth(&setup.key)
        .json(&json!({"name": "While read-only", "type": "popover"}))
        .send()
        .await
        .unwrap();
    assert_database_unavailable(created).await;
    setup.reset("default_transaction_read_only").await;
    let (status, body) = setup
        .retried_until_acknowledged(&setup.answer("0193a7e0-0000-7000-8000-0000000000a3"))
        .await;
    assert_eq!((status, body), (200, json!({"status": 1})));
    // The pool dropped the connection as it next handed one out, and opened another.
    within(
        Duration::from_secs(10),
        "the end of the connection that met the read-only server",
        || async {
            !setup
                .psql(
                    "SELECT string_agg(pid::text, ',') FROM pg_stat_activity \
                     WHERE backend_type = 'client backend'",
                )
                .split(',')
                .any(|pid| writer_before.split(',').any(|before| before == pid))
        },
    )
    .await;

    assert_eq!(
        setup.responses_count().await,
        json!({ setup.survey.as_str(): 2 })
    );
}

/// `host:port` of a server's URL, for a multi-host one.
fn host_of(postgres: &OwnPostgres) -> String {
    let url = postgres.url("postgres");
    url.trim_start_matches("postgres://postgres@")
        .trim_end_matches("/postgres")
        .to_owned()
}

#[tokio::test]
async fn on_a_multi_host_url_writes_follow_the_server_that_takes_them_once_the_first_turns_read_only()
 {
    let setup = OwnNode::start().await;
    // A second server with the same data, read-only as a standby would be.
    let standby = OwnPostgres::start();
    let copied = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "pg_dump --no-owner '{}' | psql -X -q -v ON_ERROR_STOP=1 '{}'",
            setup.url,
            standby.url("postgres")
        ))
        .output()
        .expect("copying the database");
    assert!(copied.status.success(), "{copied:?}");
    let standby_url = standby.url("postgres");
    let on_standby = |sql: &str| psql(&standby_url, sql);
    set(&standby_url, "default_transaction_read_only", "on").await;
    let both = format!(
        "postgres://postgres@{},{}/postgres?target_session_attrs=read-write",
        host_of(&setup.postgres),
        host_of(&standby)
    );
    let node = OwnNode {
        address: start_node(&both, |args| {
            args.db_timeout_ms = 2000;
            args.access_cache_ms = 0;
        }),
        ..setup
    };
    let first = "0193a7e0-0000-7000-8000-0000000000b1";
    let (status, body) = parts(node.capture(&node.answer(first)).await).await;
    assert_eq!((status, body), (200, json!({"status": 1})));

    // The switchover: the first host stops taking writes, the second starts.
    node.set("default_transaction_read_only", "on").await;
    reset(&standby_url, "default_transaction_read_only").await;
    let second = "0193a7e0-0000-7000-8000-0000000000b2";
    let (status, body) = node.retried_until_acknowledged(&node.answer(second)).await;
    assert_eq!((status, body), (200, json!({"status": 1})));
    assert_eq!(
        on_standby(&format!(
            "SELECT count(*) FROM survey_events WHERE uuid IN ('{first}', '{second}')"
        )),
        "1",
        "the second answer is on the new primary (the first went to the old one, after the copy)"
    );
    assert_eq!(
        node.psql(&format!(
            "SELECT count(*) FROM survey_events WHERE uuid = '{second}'"
        )),
        "0",
        "nothing was written on the server that turned read-only"
    );
}
