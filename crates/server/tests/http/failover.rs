//! What a failover does to a node's answers: a commit PostgreSQL never confirmed (its wait for a
//! synchronous standby cut by a fast shutdown) is a 503, never an acknowledged 200, and the
//! SDK's retry of it is stored once; a server that turned read-only is a 503 too, and the
//! connection that met it is not used again, so on a multi-host `DATABASE_URL` the writes
//! follow the host that takes them.

use std::process::Command;
use std::time::Duration;

use reqwest::Client;
use serde_json::{Value, json};

use crate::helpers::{assert_error, parts, start_node, within};
use crate::own_postgres::OwnPostgres;
use crate::process::bootstrap;

/// A node in front of its own PostgreSQL, with a survey to answer.
struct Setup {
    postgres: OwnPostgres,
    url: String,
    address: String,
    key: String,
    project: i64,
    token: String,
    survey: String,
}

impl Setup {
    async fn start() -> Self {
        let postgres = OwnPostgres::start();
        let url = postgres.url("postgres");
        adapters::run_migrations(&url).await.expect("migrating");
        let boot = bootstrap(&url);
        let key = boot["personal_api_key"].as_str().unwrap().to_owned();
        let project = boot["project_id"].as_i64().unwrap();
        let address = start_node(&url, |args| {
            args.db_timeout_ms = 2000;
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
        let (status, details) = parts(
            client
                .get(format!("{address}/api/projects/{project}/"))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{details}");
        Self {
            postgres,
            url,
            address,
            key,
            project,
            token: details["api_token"].as_str().unwrap().to_owned(),
            survey: survey["id"].as_str().unwrap().to_owned(),
        }
    }

    fn psql(&self, sql: &str) -> String {
        psql(&self.url, sql)
    }

    async fn set(&self, setting: &str, value: &str) {
        set(&self.url, setting, value).await;
    }

    async fn reset(&self, setting: &str) {
        reset(&self.url, setting).await;
    }

    /// A batch of one `survey sent` answer, as posthog-js sends it.
    fn answer(&self, uuid: &str) -> Value {
        json!({
            "api_key": self.token,
            "batch": [{
                "uuid": uuid,
                "event": "survey sent",
                "timestamp": "2026-11-23T10:00:00.000Z",
                "properties": {
                    "distinct_id": "person-1",
                    "$survey_id": self.survey,
                    "$survey_submission_id": uuid,
                    "$survey_completed": true,
                    "$survey_response": "Fast",
                },
            }],
        })
    }

    async fn capture(&self, batch: &Value) -> reqwest::Response {
        Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap()
            .post(format!("{}/batch/", self.address))
            .json(batch)
            .send()
            .await
            .expect("the capture was answered")
    }

    /// Sends `batch` as an SDK does after a 503: again, a little later, until it is acknowledged.
    /// Anything but a 503 on the way is an error.
    async fn retried_until_acknowledged(&self, batch: &Value) -> (u16, Value) {
        for _ in 0..100 {
            let response = self.capture(batch).await;
            if response.status() != 503 {
                return parts(response).await;
            }
            assert_database_unavailable(response).await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("the capture was not acknowledged within 20 s of retries");
    }

    async fn responses_count(&self) -> Value {
        let (status, counts) = parts(
            Client::new()
                .get(format!(
                    "{}/api/projects/{}/surveys/responses_count/",
                    self.address, self.project
                ))
                .bearer_auth(&self.key)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{counts}");
        counts
    }
}

/// Runs `sql` on the server at `url` as its superuser, answering the output's rows unaligned.
fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", url, "-c", sql])
        .output()
        .expect("running psql");
    assert!(output.status.success(), "{sql}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Changes a server setting for every session, as an operator's `ALTER SYSTEM` and reload, and
/// waits until the postmaster has it, which it passes on to the open sessions as it learns it:
/// each applies it before its next statement.
async fn set(url: &str, setting: &str, value: &str) {
    psql(url, &format!("ALTER SYSTEM SET {setting} = '{value}'"));
    reloaded(url, setting, &format!("setting = '{value}'")).await;
}

async fn reset(url: &str, setting: &str) {
    psql(url, &format!("ALTER SYSTEM RESET {setting}"));
    reloaded(url, setting, "setting = boot_val").await;
}

async fn reloaded(url: &str, setting: &str, condition: &str) {
    psql(url, "SELECT pg_reload_conf()");
    within(
        Duration::from_secs(10),
        "the reload of a setting",
        || async {
            psql(
                url,
                &format!("SELECT {condition} FROM pg_settings WHERE name = '{setting}'"),
            ) == "t"
        },
    )
    .await;
}

async fn assert_database_unavailable(response: reqwest::Response) {
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().to_owned());
    let (status, body) = parts(response).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    assert_error(
        &body,
        "server_error",
        "database_unavailable",
        "The database is unavailable. Try again shortly.",
    );
}

#[tokio::test]
async fn a_capture_whose_commit_no_standby_confirmed_is_503_when_the_server_stops_and_its_retry_counts_once()
 {
    let setup = Setup::start().await;
    // A synchronous standby that never connects: every commit waits for it (wait event
    // `SyncRep`) until the server stops.
    setup.set("synchronous_standby_names", "nobody").await;
    let batch = setup.answer("0193a7e0-0000-7000-8000-0000000000f1");
    let capturing = tokio::spawn({
        let (address, batch) = (setup.address.clone(), batch.clone());
        async move {
            Client::new()
                .post(format!("{address}/batch/"))
                .json(&batch)
                .send()
                .await
        }
    });
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
    let setup = Setup::start().await;
    setup.set("synchronous_standby_names", "nobody").await;
    let batch = setup.answer("0193a7e0-0000-7000-8000-0000000000c1");
    let waiting_for_the_standby =
        || setup.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'");
    let capturing = tokio::spawn({
        let (address, batch) = (setup.address.clone(), batch.clone());
        async move {
            Client::new()
                .post(format!("{address}/batch/"))
                .json(&batch)
                .send()
                .await
        }
    });
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
    let retrying = tokio::spawn({
        let (address, batch) = (setup.address.clone(), batch.clone());
        async move {
            Client::new()
                .post(format!("{address}/batch/"))
                .json(&batch)
                .send()
                .await
        }
    });
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
    let setup = Setup::start().await;
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
    let setup = Setup::start().await;
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
    let node = Setup {
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
