//! What `burrow serve` writes to its logs: with `BURROW_LOG_FORMAT=json`, one JSON object a line,
//! each request's lines carrying its request id; and never a personal key, a project token or a
//! plugin secret, wherever the client put them (header, body, query string).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use adapters::testing::TestDatabase;
use serde_json::{Value, json};

/// The server under test, stopped (and its log complete) when dropped.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bootstrap(database_url: &str) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_burrow"))
        .args(["admin", "bootstrap", "--email", "ada@example.com"])
        .args(["--organization", "Logs", "--project", "Logs"])
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "off")
        .output()
        .expect("running burrow admin bootstrap");
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("bootstrap prints JSON")
}

async fn serve(database_url: &str, log: &std::path::Path) -> Server {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let address = format!("http://127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_burrow"))
        .arg("serve")
        .env("DATABASE_URL", database_url)
        .env("BURROW_BIND", format!("127.0.0.1:{port}"))
        .env("BURROW_LOG_FORMAT", "json")
        // More than operators run with, so a secret in a debug line would show too.
        .env("RUST_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("creating the log file"))
        .spawn()
        .expect("starting burrow serve");
    let server = Server { child, address };
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = reqwest::Client::new();
    loop {
        let health = client.get(format!("{}/_health", server.address)).send();
        if health.await.is_ok_and(|r| r.status() == 200) {
            return server;
        }
        assert!(Instant::now() < deadline, "burrow serve did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn json_logs_carry_request_ids_and_never_keys_tokens_or_plugin_secrets() {
    let database = TestDatabase::create().await;
    let boot = bootstrap(&database.url);
    let key = boot["personal_api_key"].as_str().unwrap().to_owned();
    let token = boot["project_api_token"].as_str().unwrap().to_owned();
    let project = boot["project_id"].as_i64().unwrap();
    let organization = boot["organization_id"].as_str().unwrap().to_owned();
    let unknown_key = "phx_notakeyofanyonebutstillnevertobelogged0123456789";
    let plugin_secret = "plugin-secret-never-logged";
    let log = std::env::temp_dir().join(format!("burrow-logs-{}.jsonl", uuid::Uuid::new_v4()));

    let server = serve(&database.url, &log).await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", server.address);
    let sent = [
        client
            .get(url("/api/projects/"))
            .bearer_auth(&key)
            .send()
            .await,
        client
            .get(url(&format!("/api/projects/?personal_api_key={key}")))
            .send()
            .await,
        client
            .get(url("/api/projects/"))
            .bearer_auth(unknown_key)
            .send()
            .await,
        client
            .post(url(&format!("/api/projects/{project}/surveys/")))
            .json(
                &json!({"personal_api_key": key, "name": "Logged?", "type": "popover",
                          "questions": [{"type": "open", "question": "Why?"}]}),
            )
            .send()
            .await,
        client
            .post(url("/batch/"))
            .json(
                &json!({"api_key": token, "batch": [{"event": "$pageview", "distinct_id": "d1"}]}),
            )
            .send()
            .await,
    ];
    for response in sent {
        assert!(response.expect("request sent").status().as_u16() < 500);
    }
    let plugin: Value = client
        .post(url(&format!("/api/organizations/{organization}/plugins/")))
        .bearer_auth(&key)
        .json(&json!({"plugin_type": "source", "name": "Secretive"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let plugin_id = &plugin["id"];
    let schema = r#"{"name": "Secretive", "config": [{"key": "token", "secret": true}]}"#;
    let patched = client
        .patch(url(&format!(
            "/api/organizations/{organization}/plugins/{plugin_id}/update_source/"
        )))
        .bearer_auth(&key)
        .json(&json!({"plugin.json": schema}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let configured = client
        .post(url(&format!("/api/projects/{project}/plugin_configs/")))
        .bearer_auth(&key)
        .json(&json!({"plugin": plugin_id, "enabled": true, "order": 1,
                      "config": {"token": plugin_secret}}))
        .send()
        .await
        .unwrap();
    assert_eq!(configured.status(), 201);
    drop(server);

    let written = std::fs::read_to_string(&log).expect("reading the log");
    let _ = std::fs::remove_file(&log);
    let lines: Vec<Value> = written
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let completed: Vec<&Value> = lines
        .iter()
        .filter(|line| line["fields"]["message"] == "request completed")
        .collect();
    assert!(completed.len() >= 8, "{written}");
    for line in &completed {
        let id = line["span"]["request_id"].as_str().unwrap_or_default();
        assert_eq!(id.len(), 36, "a request id on {line}");
    }
    for secret in [key.as_str(), token.as_str(), unknown_key, plugin_secret] {
        assert!(
            !written.contains(secret),
            "{secret} is in the log:\n{written}"
        );
    }
}
