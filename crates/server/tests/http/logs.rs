//! What `burrow serve` writes to its logs: with `BURROW_LOG_FORMAT=json`, one JSON object a line,
//! each request's lines carrying its request id; and never a personal key, a project token or a
//! plugin secret, wherever the client put them (header, body, query string, path).

use adapters::testing::TestDatabase;
use serde_json::{Value, json};

use crate::process::{bootstrap, serve};

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

    let server = serve(&database.url, Some(&log), |command| {
        command
            .env("BURROW_LOG_FORMAT", "json")
            // More than operators run with, so a secret in a debug line would show too.
            .env("RUST_LOG", "debug");
    })
    .await;
    let client = reqwest::Client::new();
    let url = |path: &str| server.url(path);
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
        // posthog-js names the token in the path; so may a client that gets it slightly wrong.
        client
            .get(url(&format!("/array/{token}/config")))
            .send()
            .await,
        client
            .get(url(&format!("/array/{token}/config.js")))
            .send()
            .await,
        client
            .get(url(&format!("/array/{token}/config.js/")))
            .send()
            .await,
        client
            .get(url(&format!("/array/{token}/settings.json")))
            .send()
            .await,
        client
            .get(url(&format!("//array//{token}/config")))
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
        // A driver's debug line prints statement parameters as their bytes.
        let bytes = format!("{:?}", secret.as_bytes());
        let bytes = bytes.trim_matches(['[', ']']);
        assert!(
            !written.contains(bytes),
            "{secret} is in the log as bytes:\n{written}"
        );
    }
}
