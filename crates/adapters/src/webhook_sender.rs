//! Reaching webhook receivers: the HTTP sender behind `WebhookSender` and the system resolver
//! behind `HostResolver`. Before every attempt the sender reads the stored URL again with the
//! operator's policy (scheme, port, a literal address), since a webhook may predate a rule; it
//! resolves names itself and refuses to connect when any address is one the policy forbids, so
//! a name that resolved to a public address when the webhook was saved cannot be pointed inside
//! the network later (DNS rebinding). It follows no redirect, ignores proxy variables, and
//! bounds time and the answer it reads.

use std::error::Error as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use domain::webhook::{HostResolver, ReceiverAnswer, TargetPolicy, Transmission, WebhookSender};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::RETRY_AFTER;
use reqwest::redirect::Policy;

/// Most bytes of a receiver's answer read (and dropped): a receiver cannot make Burrow buffer
/// more, and reading a little lets keep-alive connections be reused.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// How the sender talks to receivers.
#[derive(Debug, Clone)]
pub struct SenderSettings {
    pub policy: TargetPolicy,
    /// The whole attempt, connection to answer (`BURROW_WEBHOOK_TIMEOUT_SECS`).
    pub timeout: Duration,
}

/// Sends webhook deliveries over HTTP(S).
pub struct HttpWebhookSender {
    client: reqwest::Client,
    policy: TargetPolicy,
}

impl HttpWebhookSender {
    /// # Errors
    /// When the TLS backend cannot be set up.
    pub fn new(settings: SenderSettings) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("Burrow-Webhooks/", env!("CARGO_PKG_VERSION")))
            .redirect(Policy::none())
            .no_proxy()
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout.min(Duration::from_secs(10)))
            .dns_resolver(Arc::new(CheckedResolver {
                policy: Arc::new(settings.policy.clone()),
            }))
            .build()?;
        Ok(Self {
            client,
            policy: settings.policy,
        })
    }
}

#[async_trait]
impl WebhookSender for HttpWebhookSender {
    async fn send(&self, transmission: Transmission<'_>) -> ReceiverAnswer {
        // The scheme, the port and a literal address (which skips the resolver) are checked
        // here, as the rules are now.
        let url = match self.policy.url(transmission.url) {
            Ok(url) => url,
            Err(refused) => return ReceiverAnswer::Failed(refused.detail),
        };
        let mut request = self.client.post(url).body(transmission.body.to_vec());
        for (name, value) in transmission.headers {
            request = request.header(name, value);
        }
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(error) => return ReceiverAnswer::Failed(describe(&error)),
        };
        let code = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let mut read = 0;
        while read < MAX_ANSWER_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) | Err(_) => break,
            }
        }
        ReceiverAnswer::Status { code, retry_after }
    }
}

/// A failed request in a sentence: what went wrong, with the innermost cause (a refused
/// address's reason, "connection refused", …).
fn describe(error: &reqwest::Error) -> String {
    let what = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    let mut cause: Option<&dyn std::error::Error> = error.source();
    let mut innermost = None;
    while let Some(current) = cause {
        innermost = Some(current.to_string());
        cause = current.source();
    }
    match innermost {
        Some(cause) => format!("{what}: {cause}"),
        None => what.to_owned(),
    }
}

/// The system's resolver, refusing a name when any of its addresses is forbidden.
struct CheckedResolver {
    policy: Arc<TargetPolicy>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let addresses = lookup(name.as_str(), 0).await?;
            if let Some(refusal) = addresses.iter().find_map(|ip| policy.refusal(*ip)) {
                return Err(format!("{} resolves to {refusal}", name.as_str()).into());
            }
            let addrs: Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(addrs)
        })
    }
}

async fn lookup(host: &str, port: u16) -> Result<Vec<IpAddr>, std::io::Error> {
    Ok(tokio::net::lookup_host((host, port))
        .await?
        .map(|address| address.ip())
        .collect())
}

/// How long the check when a webhook is saved waits for DNS, so a slow resolver cannot hold a
/// request.
const SAVE_LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// The operating system's resolver, for the check when a webhook is saved.
#[derive(Debug, Default)]
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, String> {
        match tokio::time::timeout(SAVE_LOOKUP_TIMEOUT, lookup(host, port)).await {
            Ok(resolved) => resolved.map_err(|error| error.to_string()),
            Err(_) => Err(format!(
                "no answer within {} s",
                SAVE_LOOKUP_TIMEOUT.as_secs()
            )),
        }
    }
}
