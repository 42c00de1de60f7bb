//! Faults operators live through: the database going away and coming back, the server killed
//! mid-write, and a rolling restart's SIGTERM.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use adapters::testing::TestDatabase;
use reqwest::Client;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

use crate::helpers::{assert_error, eventually, parts, scraped, start_node, within};
use crate::own_postgres::OwnPostgres;
use crate::process::{bootstrap, serve};

/// A client that gives up long after any configured timeout, so a hang fails the test instead
/// of stalling it.
fn patient_client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("a client")
}

async fn assert_database_unavailable(response: reqwest::Response) {
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap()),
        Some("1")
    );
    let (status, body) = parts(response).await;
    assert_eq!(status, 503, "{body}");
    assert_error(
        &body,
        "server_error",
        "database_unavailable",
        "The database is unavailable. Try again shortly.",
    );
}

#[tokio::test]
async fn a_stopped_database_answers_503_and_its_return_needs_no_restart() {
    let postgres = OwnPostgres::start();
    let url = postgres.url("postgres");
    adapters::run_migrations(&url).await.expect("migrating");
    let boot = bootstrap(&url);
    let key = boot["personal_api_key"].as_str().unwrap().to_owned();
    let project = boot["project_id"].as_i64().unwrap();
    let address = start_node(&url, |args| {
        args.db_timeout_ms = 1000;
        // Every request reads the key from the database, as an uncached node would.
        args.access_cache_ms = 0;
    });
    let client = patient_client();
    let surveys = format!("{address}/api/projects/{project}/surveys/");
    let list = || client.get(&surveys).bearer_auth(&key).send();
    assert_eq!(list().await.unwrap().status(), 200);

    postgres.stop();
    assert_database_unavailable(list().await.unwrap()).await;
    let create = client
        .post(&surveys)
        .bearer_auth(&key)
        .json(&json!({"name": "While down", "type": "popover"}))
        .send()
        .await
        .unwrap();
    assert_database_unavailable(create).await;
    assert_eq!(
        client
            .get(format!("{address}/_readyz"))
            .send()
            .await
            .unwrap()
            .status(),
        503
    );
    assert_eq!(
        scraped(
            &address,
            r#"burrow_database_errors_total{kind="unavailable"}"#
        )
        .await,
        Some(2.0)
    );

    postgres.resume();
    eventually("the database's return", || async {
        list().await.is_ok_and(|response| response.status() == 200)
    })
    .await;
    let created = client
        .post(&surveys)
        .bearer_auth(&key)
        .json(&json!({"name": "After", "type": "popover"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
}

#[tokio::test]
async fn a_database_that_never_answers_is_given_up_on_after_the_timeout() {
    // Accepts connections and says nothing, like a server behind a dead network path.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let address = start_node(&format!("postgres://postgres@127.0.0.1:{port}/x"), |args| {
        args.db_timeout_ms = 300;
    });
    let response = patient_client()
        .get(format!("{address}/api/projects/"))
        .bearer_auth("phx_akeythatmustbelookedupinthedatabase000000000")
        .send()
        .await
        .expect("answered before the client gave up");
    assert_database_unavailable(response).await;
}

#[tokio::test]
async fn every_acknowledged_write_survives_kill_9() {
    let database = TestDatabase::create().await;
    let boot = bootstrap(&database.url);
    let key = boot["personal_api_key"].as_str().unwrap().to_owned();
    let project = boot["project_id"].as_i64().unwrap();
    let server = serve(&database.url, None, |command| {
        command.env("BURROW_RATE_LIMIT", "off");
    })
    .await;
    let surveys = server.url(&format!("/api/projects/{project}/surveys/"));

    // Writers create surveys with targeting (a survey and its flag in one write) until the
    // server dies under them.
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let (client, surveys, key) = (Client::new(), surveys.clone(), key.clone());
            tokio::spawn(async move {
                let mut acknowledged = Vec::new();
                for i in 0.. {
                    let body = json!({
                        "name": format!("Burst {writer}-{i}"),
                        "type": "popover",
                        "questions": [{"type": "open", "question": "Still here?"}],
                        "targeting_flag_filters": {"groups": [{"properties": [], "rollout_percentage": 50}]},
                    });
                    let Ok(response) = client.post(&surveys).bearer_auth(&key).json(&body).send().await
                    else {
                        break;
                    };
                    if response.status() != 201 {
                        break;
                    }
                    let Ok(created) = response.json::<Value>().await else {
                        break;
                    };
                    acknowledged.push(created["id"].as_str().unwrap().to_owned());
                }
                acknowledged
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.signal("KILL");
    let mut acknowledged = Vec::new();
    for writer in writers {
        acknowledged.extend(writer.await.unwrap());
    }
    drop(server);
    assert!(
        acknowledged.len() >= 8,
        "the burst wrote too little to tell"
    );

    let restarted = serve(&database.url, None, |command| {
        command.env("BURROW_RATE_LIMIT", "off");
    })
    .await;
    let client = Client::new();
    for id in &acknowledged {
        let response = client
            .get(restarted.url(&format!("/api/projects/{project}/surveys/{id}/")))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "acknowledged survey {id} is gone");
    }
    let page = |path: String| {
        let (client, key) = (client.clone(), key.clone());
        async move {
            client
                .get(path)
                .bearer_auth(key)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let stored =
        page(restarted.url(&format!("/api/projects/{project}/surveys/?limit=10000"))).await;
    let flags = page(restarted.url(&format!(
        "/api/projects/{project}/feature_flags/?limit=10000"
    )))
    .await;
    let targeting: Vec<i64> = stored["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|survey| {
            survey["targeting_flag"]["id"]
                .as_i64()
                .unwrap_or_else(|| panic!("a survey without its flag: {survey}"))
        })
        .collect();
    let flag_ids: Vec<i64> = flags["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["id"].as_i64().unwrap())
        .collect();
    let mut sorted_targeting = targeting.clone();
    sorted_targeting.sort_unstable();
    let mut sorted_flags = flag_ids;
    sorted_flags.sort_unstable();
    assert_eq!(
        sorted_targeting, sorted_flags,
        "every flag belongs to a stored survey and every survey has its flag"
    );
}

#[tokio::test]
async fn sigterm_lets_in_flight_requests_finish_and_refuses_new_ones() {
    let database = TestDatabase::create().await;
    let boot = bootstrap(&database.url);
    let key = boot["personal_api_key"].as_str().unwrap().to_owned();
    let project = boot["project_id"].as_i64().unwrap();
    let mut server = serve(&database.url, None, |command| {
        command.env("BURROW_SHUTDOWN_TIMEOUT_SECS", "10");
    })
    .await;
    let host = server.address.trim_start_matches("http://").to_owned();

    // A request still arriving when the signal comes: headers and half the body sent.
    let body = json!({"name": "In flight", "type": "popover"}).to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut in_flight = TcpStream::connect(&host).await.unwrap();
    let head = format!(
        "POST /api/projects/{project}/surveys/ HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    in_flight.write_all(head.as_bytes()).await.unwrap();
    in_flight.write_all(first.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    server.signal("TERM");
    let refused = async {
        for _ in 0..100 {
            if TcpStream::connect(&host).await.is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    };
    assert!(
        refused.await,
        "new connections are still accepted after SIGTERM"
    );

    in_flight.write_all(rest.as_bytes()).await.unwrap();
    let mut answer = String::new();
    in_flight.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");

    let status = server
        .exited_within(Duration::from_secs(15))
        .await
        .expect("the server exits within its shutdown timeout");
    assert!(status.success(), "{status:?}");
    assert_eq!(database.count_rows("surveys").await, 1);
}

/// A TCP path to PostgreSQL that can go silent as a lost network path does: connections stay
/// open (no FIN, no RST) and what is sent is dropped, in both directions, so only a timeout
/// can tell.
struct SilenceablePath {
    address: String,
    silent: Arc<AtomicBool>,
}

impl SilenceablePath {
    async fn to(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let address = listener.local_addr().expect("its address").to_string();
        let silent = Arc::new(AtomicBool::new(false));
        let path_silent = silent.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(Self::forward(
                    client_read,
                    server_write,
                    path_silent.clone(),
                ));
                tokio::spawn(Self::forward(
                    server_read,
                    client_write,
                    path_silent.clone(),
                ));
            }
        });
        Self { address, silent }
    }

    /// Copies `from` to `to` until either closes, dropping what arrives while silent.
    async fn forward(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, silent: Arc<AtomicBool>) {
        let mut buffer = vec![0; 16 * 1024];
        while let Ok(read) = from.read(&mut buffer).await {
            if read == 0 {
                return;
            }
            if silent.load(Ordering::SeqCst) {
                continue;
            }
            if to.write_all(&buffer[..read]).await.is_err() {
                return;
            }
        }
    }

    fn go_silent(&self) {
        self.silent.store(true, Ordering::SeqCst);
    }
}

/// A change listener whose connection goes silent without closing (the network path lost) is
/// noticed by its heartbeat: the node stops keeping SDK snapshots instead of serving what it
/// no longer hears about. The heartbeat asks after 5 s of silence and waits 5 s for the answer.
#[tokio::test]
async fn a_change_listener_on_a_silent_connection_is_noticed_by_its_heartbeat() {
    let database = TestDatabase::create().await;
    let (scheme_and_user, rest) = database.url.split_once('@').expect("user@host in the URL");
    let (upstream, name) = rest.split_once('/').expect("host:port/database in the URL");
    let path = SilenceablePath::to(upstream.to_owned()).await;
    let node = start_node(
        &format!("{scheme_and_user}@{}/{name}", path.address),
        |args| args.sdk.snapshot = true,
    );
    let listening =
        async |up: f64| scraped(&node, "burrow_sdk_change_listener_up").await == Some(up);
    within(Duration::from_secs(10), "the listener listening", || {
        listening(1.0)
    })
    .await;
    path.go_silent();
    within(
        Duration::from_secs(20),
        "the silent listener noticed",
        || listening(0.0),
    )
    .await;
}
