//! A node in front of a PostgreSQL the test owns (so it can stop it, change its settings, or
//! give it a standby), with a survey to answer and the helpers the tests of failures use.

use std::process::Command;
use std::time::Duration;

use burrow_server::cli::ServeArgs;
use reqwest::Client;
use serde_json::{Value, json};

use crate::helpers::{assert_error, parts, start_node, within};
use crate::own_postgres::OwnPostgres;
use crate::process::bootstrap;

/// A node in front of its own PostgreSQL, with a survey to answer.
pub struct OwnNode {
    pub postgres: OwnPostgres,
    pub url: String,
    pub address: String,
    pub key: String,
    pub project: i64,
    pub token: String,
    pub survey: String,
}

impl OwnNode {
    /// A node with a short `BURROW_DB_TIMEOUT_MS`, in front of a PostgreSQL of its own.
    pub async fn start() -> Self {
        Self::start_with(OwnPostgres::start(), |_| {}).await
    }

    /// A node in front of `postgres` (migrated here), with `adjust`'s settings.
    pub async fn start_with(postgres: OwnPostgres, adjust: impl FnOnce(&mut ServeArgs)) -> Self {
        let url = postgres.url("postgres");
        adapters::run_migrations(&url).await.expect("migrating");
        let boot = bootstrap(&url);
        let key = boot["personal_api_key"].as_str().unwrap().to_owned();
        let project = boot["project_id"].as_i64().unwrap();
        let address = start_node(&url, |args| {
            args.db_timeout_ms = 2000;
            args.access_cache_ms = 0;
            adjust(args);
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

    pub fn psql(&self, sql: &str) -> String {
        psql(&self.url, sql)
    }

    pub async fn set(&self, setting: &str, value: &str) {
        set(&self.url, setting, value).await;
    }

    pub async fn reset(&self, setting: &str) {
        reset(&self.url, setting).await;
    }

    /// A batch of one `survey sent` answer, as posthog-js sends it.
    pub fn answer(&self, uuid: &str) -> Value {
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

    pub async fn capture(&self, batch: &Value) -> reqwest::Response {
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

    /// Sends `batch` without waiting for its answer (which may wait on the server).
    pub fn capture_in_background(
        &self,
        batch: &Value,
    ) -> tokio::task::JoinHandle<reqwest::Result<reqwest::Response>> {
        let request = Client::new()
            .post(format!("{}/batch/", self.address))
            .json(batch)
            .send();
        tokio::spawn(request)
    }

    /// Sends `batch` as an SDK does after a 503: again, a little later, until it is acknowledged.
    /// Anything but a 503 on the way is an error.
    pub async fn retried_until_acknowledged(&self, batch: &Value) -> (u16, Value) {
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

    pub async fn responses_count(&self) -> Value {
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
pub fn psql(url: &str, sql: &str) -> String {
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
pub async fn set(url: &str, setting: &str, value: &str) {
    psql(url, &format!("ALTER SYSTEM SET {setting} = '{value}'"));
    reloaded(url, setting, &format!("setting = '{value}'")).await;
}

pub async fn reset(url: &str, setting: &str) {
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

pub async fn assert_database_unavailable(response: reqwest::Response) {
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
