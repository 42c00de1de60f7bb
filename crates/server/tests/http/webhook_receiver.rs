//! A webhook receiver as users write one (`tests/webhooks/receiver.py`): Python with the
//! `standardwebhooks` package from PyPI verifying every delivery, unchanged. `cargo xtask test`
//! installs the package into `target/standardwebhooks` (`BURROW_STANDARD_WEBHOOKS_PYTHON`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use crate::helpers::within;

/// The receiver process, killed when dropped.
pub struct Receiver {
    _child: Child,
    pub port: u16,
    client: reqwest::Client,
}

impl Receiver {
    /// Starts a receiver on `port` (0: a free one).
    pub async fn start_on(port: u16) -> Self {
        let python = std::env::var_os("BURROW_STANDARD_WEBHOOKS_PYTHON").map_or_else(
            || {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../target/standardwebhooks/bin/python")
            },
            PathBuf::from,
        );
        assert!(
            python.is_file(),
            "standardwebhooks is not installed in {}: run `cargo xtask test`, which installs it",
            python.display()
        );
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/webhooks/receiver.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("starting the receiver");
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the receiver starts within 30 s")
            .expect("reading the receiver's output")
            .expect("the receiver prints its port");
        let port = line
            .strip_prefix("PORT ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("unexpected receiver output: {line}"));
        Self {
            _child: child,
            port,
            client: reqwest::Client::new(),
        }
    }

    pub async fn start() -> Self {
        Self::start_on(0).await
    }

    /// Where webhooks should send.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Verify with `secrets`; answer the next deliveries as `script` says (`"500"`,
    /// `"sleep:3"`, …), then 200.
    pub async fn control(&self, secrets: &[&str], script: &[&str]) {
        let response = self
            .client
            .post(format!("http://127.0.0.1:{}/_control", self.port))
            .json(&json!({"secrets": secrets, "script": script}))
            .send()
            .await
            .expect("controlling the receiver");
        assert!(response.status().is_success());
    }

    /// Every delivery received so far, in arrival order.
    pub async fn received(&self) -> Vec<Value> {
        self.client
            .get(format!("http://127.0.0.1:{}/_received", self.port))
            .send()
            .await
            .expect("asking the receiver")
            .json()
            .await
            .expect("the receiver answers JSON")
    }

    /// Waits until `count` deliveries were answered 2xx; returns everything received.
    pub async fn wait_for_accepted(&self, count: usize, bound: Duration) -> Vec<Value> {
        within(bound, &format!("{count} accepted deliveries"), || async {
            accepted(&self.received().await).len() >= count
        })
        .await;
        self.received().await
    }
}

/// The deliveries the receiver answered 2xx, each webhook-id once (first time it was accepted),
/// in arrival order: what a receiver deduplicating by `webhook-id` processes.
pub fn accepted(received: &[Value]) -> Vec<Value> {
    let mut seen = std::collections::HashSet::new();
    received
        .iter()
        .filter(|delivery| {
            delivery["status"]
                .as_u64()
                .is_some_and(|status| (200..300).contains(&status))
        })
        .filter(|delivery| seen.insert(delivery["id"].as_str().unwrap_or_default().to_owned()))
        .cloned()
        .collect()
}

/// Asserts every delivery received was verified by `standardwebhooks`.
pub fn assert_all_verified(received: &[Value]) {
    for delivery in received {
        assert_eq!(
            delivery["verified"], true,
            "standardwebhooks refused a delivery: {delivery}"
        );
    }
}
