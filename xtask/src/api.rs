//! A small blocking client for Burrow's HTTP API. The bench seeds its data through it rather than
//! with SQL, so the data stays valid as the schema evolves, and uses it to show what a failing
//! request answers.

use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::Value;
use ureq::http::Request;

/// Long enough for one capture request of thousands of events, which is one transaction.
const TIMEOUT: Duration = Duration::from_secs(300);

/// Burrow at `base`, called with one personal API key.
#[derive(Clone)]
pub(crate) struct Api {
    agent: ureq::Agent,
    base: String,
    key: String,
}

impl Api {
    pub(crate) fn new(base: String, key: String) -> Self {
        let config = ureq::Agent::config_builder()
            // Error answers are read like any other, so a failure can say what the server said.
            .http_status_as_error(false)
            .timeout_global(Some(TIMEOUT))
            .build();
        Self {
            agent: ureq::Agent::new_with_config(config),
            base,
            key,
        }
    }

    pub(crate) fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.expect("GET", path, None, 200)
    }

    /// Creates something; Burrow answers 201 with it.
    pub(crate) fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.expect("POST", path, Some(body.to_string()), 201)
    }

    pub(crate) fn patch(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.expect("PATCH", path, Some(body.to_string()), 200)
    }

    /// Sends a capture batch to `/batch/` as an SDK does: the project token is in the body and no
    /// personal key is sent.
    pub(crate) fn capture(&self, body: Vec<u8>) -> anyhow::Result<()> {
        let request = Request::post(format!("{}/batch/", self.base))
            .header("Content-Type", "application/json")
            .body(body)?;
        let (status, answer) = self.exchange(request)?;
        if status != 200 {
            bail!("POST /batch/ answered {status}: {}", excerpt(&answer));
        }
        Ok(())
    }

    /// What one request answers, as `status: body`, for an error message; sent with the key
    /// when `personal_key`, as an SDK sends it otherwise.
    pub(crate) fn probe(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        personal_key: bool,
    ) -> String {
        match self.send(method, path, body.map(str::to_owned), personal_key) {
            Ok((status, answer)) => format!("{status}: {}", excerpt(&answer)),
            Err(error) => format!("no answer ({error:#})"),
        }
    }

    /// Sends a request with the key; fails unless it answers `expected`; returns the JSON answer.
    fn expect(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        expected: u16,
    ) -> anyhow::Result<Value> {
        let (status, answer) = self.send(method, path, body, true)?;
        if status != expected {
            bail!(
                "{method} {path} answered {status} (expected {expected}): {}",
                excerpt(&answer)
            );
        }
        serde_json::from_str(&answer)
            .with_context(|| format!("{method} {path} answered {status} with no JSON"))
    }

    /// Sends a request with a JSON body, if any, and the key if `personal_key`.
    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        personal_key: bool,
    ) -> anyhow::Result<(u16, String)> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("Content-Type", "application/json");
        if personal_key {
            request = request.header("Authorization", format!("Bearer {}", self.key));
        }
        match body {
            Some(body) => self.exchange(request.body(body)?),
            None => self.exchange(request.body(())?),
        }
    }

    fn exchange(&self, request: Request<impl ureq::AsSendBody>) -> anyhow::Result<(u16, String)> {
        let description = format!("{} {}", request.method(), request.uri().path());
        let mut response = self
            .agent
            .run(request)
            .with_context(|| format!("{description}: no answer"))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .read_to_string()
            .with_context(|| format!("{description}: reading the answer"))?;
        Ok((status, body))
    }
}

/// The start of an answer, enough to see why it failed.
fn excerpt(text: &str) -> &str {
    const MAX: usize = 500;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}
