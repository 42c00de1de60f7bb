//! Capture load as the SDKs send it: each client thread sends one `survey sent` answer at a time
//! to `/batch/` of its node, and retries the same event (same `uuid`) after any answer but a 2xx,
//! as posthog-js and the server SDKs retry a 503, until it is acknowledged. Every attempt is
//! recorded with when it was sent and answered, for [`super::tally`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::json;
use uuid::Uuid;

/// One request's timeout: far past a node's `BURROW_DB_TIMEOUT_MS`, so a timeout means a node
/// that hung.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The wait before a retry (posthog-js waits longer and backs off; shorter finds the end of a
/// 503 window more precisely).
const RETRY_PAUSE: Duration = Duration::from_millis(100);
/// How long a client keeps retrying its last event once the load is told to stop.
const FINISH_DEADLINE: Duration = Duration::from_secs(60);

/// What one attempt got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    /// A 2xx: the client was told its answer is stored.
    Acknowledged,
    /// 503, with `Retry-After` or without.
    Unavailable { retry_after: bool },
    /// Any other status.
    Status(u16),
    /// No HTTP answer (connection refused or reset, timeout).
    None,
}

/// One attempt to send `event`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attempt {
    pub(super) event: Uuid,
    /// Which node was asked (an index into [`Target::nodes`]).
    pub(super) node: usize,
    /// Since the load started.
    pub(super) sent: Duration,
    pub(super) answered: Duration,
    pub(super) answer: Answer,
}

/// Clients sending answers until [`Load::finish`].
pub(super) struct Load {
    started: Instant,
    stop: Arc<AtomicBool>,
    clients: Vec<JoinHandle<Vec<Attempt>>>,
}

/// Where the clients send, and what.
pub(super) struct Target {
    /// The nodes' base URLs; client `n` sends to node `n % nodes.len()`.
    pub(super) nodes: Vec<String>,
    pub(super) token: String,
    pub(super) survey: String,
}

impl Load {
    pub(super) fn start(target: &Target, clients: usize) -> Self {
        let started = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let clients = (0..clients)
            .map(|client| {
                let node = client % target.nodes.len();
                let client = Client {
                    base: target.nodes[node].clone(),
                    node,
                    token: target.token.clone(),
                    survey: target.survey.clone(),
                    person: format!("failover-client-{client}"),
                    started,
                    stop: Arc::clone(&stop),
                };
                thread::spawn(move || client.run())
            })
            .collect();
        Self {
            started,
            stop,
            clients,
        }
    }

    /// Time since the load started, on the clock of its attempts.
    pub(super) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Stops sending new events, lets each client finish its last one, and returns every
    /// attempt.
    pub(super) fn finish(self) -> Vec<Attempt> {
        self.stop.store(true, Ordering::Relaxed);
        self.clients
            .into_iter()
            .flat_map(|client| client.join().expect("a load client panicked"))
            .collect()
    }
}

struct Client {
    base: String,
    node: usize,
    token: String,
    survey: String,
    person: String,
    started: Instant,
    stop: Arc<AtomicBool>,
}

impl Client {
    fn run(self) -> Vec<Attempt> {
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(REQUEST_TIMEOUT))
                .build(),
        );
        let url = format!("{}/batch/", self.base);
        let mut attempts = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let event = Uuid::new_v4();
            let body = json!({
                "api_key": self.token,
                "batch": [{
                    "event": "survey sent",
                    "distinct_id": self.person,
                    "uuid": event,
                    "properties": {
                        "$survey_id": self.survey,
                        "$survey_response": "9",
                        "$survey_completed": true,
                    },
                }],
            })
            .to_string();
            let mut stopping_since = None;
            loop {
                let sent = self.started.elapsed();
                let answer = match agent
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .send(body.as_str())
                {
                    Ok(response) => match response.status().as_u16() {
                        200..=299 => Answer::Acknowledged,
                        503 => Answer::Unavailable {
                            retry_after: response.headers().contains_key("retry-after"),
                        },
                        status => Answer::Status(status),
                    },
                    Err(_) => Answer::None,
                };
                attempts.push(Attempt {
                    event,
                    node: self.node,
                    sent,
                    answered: self.started.elapsed(),
                    answer,
                });
                if answer == Answer::Acknowledged {
                    break;
                }
                if self.stop.load(Ordering::Relaxed)
                    && stopping_since.get_or_insert_with(Instant::now).elapsed() > FINISH_DEADLINE
                {
                    break;
                }
                thread::sleep(RETRY_PAUSE);
            }
        }
        attempts
    }
}
