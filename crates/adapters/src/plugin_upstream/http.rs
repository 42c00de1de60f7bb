//! GETs against an upstream with a size cap on every body, redirects followed only to the
//! configured upstreams, and failures described in words a client can act on — without ever
//! repeating a token.

use std::fmt;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue};
use reqwest::redirect::{Action, Attempt, Policy};
use reqwest::{Client, Response, StatusCode};
use serde_json::Value;
use url::{Origin, Url};

/// The most of an error answer read to find the upstream's own `message`.
const ERROR_BODY_BYTES: u64 = 64 * 1024;
/// The most of the upstream's `message` repeated to the client.
const MESSAGE_CHARS: usize = 300;
/// The most redirects followed for one GET (reqwest's own default).
const MAX_REDIRECTS: usize = 10;

/// An `Authorization` header: `{scheme} {token}`.
#[derive(Clone, Copy)]
pub(super) struct Auth<'a> {
    pub scheme: &'static str,
    pub token: &'a str,
}

/// Why a GET gave nothing.
#[derive(Debug)]
pub(super) enum Failure {
    /// Unreachable, timed out, an error status, or an unreadable answer: the reason, in words.
    Unavailable(String),
    /// The body was larger than the limit given.
    TooLarge(u64),
}

/// A client with the timeouts applied and the reason for each failure at hand.
pub(super) struct Http {
    client: Client,
    timeout: Duration,
}

impl Http {
    /// `allowed`: the origins (scheme, host and port) a redirect may lead to. A plugin URL is the
    /// client's choice, and an upstream's answer is the upstream's: without this, either could
    /// send Burrow to any host — one on its private network, or plain `http` in place of `https`.
    ///
    /// # Errors
    /// When the TLS backend cannot be set up.
    pub(super) fn new(timeout: Duration, allowed: Vec<Origin>) -> reqwest::Result<Self> {
        let client = Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .redirect(Policy::custom(move |attempt| redirect(&allowed, attempt)))
            // GitHub's API refuses requests without a User-Agent.
            .user_agent(concat!("burrow/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client, timeout })
    }

    /// The body of a 2xx answer to `GET url`, refused once it passes `limit` bytes.
    pub(super) async fn bytes(
        &self,
        url: Url,
        auth: Option<Auth<'_>>,
        limit: u64,
    ) -> Result<Vec<u8>, Failure> {
        let mut request = self.client.get(url);
        if let Some(auth) = auth {
            let mut value = HeaderValue::from_str(&format!("{} {}", auth.scheme, auth.token))
                .map_err(|_| {
                    Failure::Unavailable("the token cannot be sent in a header".to_owned())
                })?;
            value.set_sensitive(true);
            request = request.header(AUTHORIZATION, value);
        }
        let response = request
            .send()
            .await
            .map_err(|error| Failure::Unavailable(self.reason(&error)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(Failure::Unavailable(
                error_reason(status, response, auth).await,
            ));
        }
        if response
            .content_length()
            .is_some_and(|length| length > limit)
        {
            return Err(Failure::TooLarge(limit));
        }
        read_limited(response, limit)
            .await
            .map_err(|failure| match failure {
                Read::TooLarge => Failure::TooLarge(limit),
                Read::Broken(error) => Failure::Unavailable(self.reason(&error)),
            })
    }

    /// The JSON body of a 2xx answer to `GET url`.
    pub(super) async fn json(
        &self,
        url: Url,
        auth: Option<Auth<'_>>,
        limit: u64,
    ) -> Result<Value, Failure> {
        let bytes = self.bytes(url, auth, limit).await?;
        serde_json::from_slice(&bytes)
            .map_err(|_| Failure::Unavailable("the answer is not JSON".to_owned()))
    }

    /// A transport failure in words; reqwest's own text names the URL, which is left out.
    fn reason(&self, error: &reqwest::Error) -> String {
        if error.is_timeout() {
            format!("no answer within {:?}", self.timeout)
        } else if error.is_connect() {
            "the upstream could not be reached".to_owned()
        } else if let Some(refused) = std::error::Error::source(error)
            .and_then(|source| source.downcast_ref::<RefusedRedirect>())
        {
            refused.to_string()
        } else if error.is_body() || error.is_decode() {
            "the answer broke off".to_owned()
        } else {
            "the request failed".to_owned()
        }
    }
}

/// Follows a redirect to an allowed origin, for at most `MAX_REDIRECTS` hops.
fn redirect(allowed: &[Origin], attempt: Attempt<'_>) -> Action {
    // The first of `previous` is the URL asked for, not a redirect.
    if attempt.previous().len() > MAX_REDIRECTS {
        attempt.error(RefusedRedirect::TooMany)
    } else if allowed.contains(&attempt.url().origin()) {
        attempt.follow()
    } else {
        attempt.error(RefusedRedirect::Elsewhere)
    }
}

/// Why a redirect was not followed; its text is the reason the client reads.
#[derive(Debug)]
enum RefusedRedirect {
    TooMany,
    Elsewhere,
}

impl fmt::Display for RefusedRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::TooMany => "too many redirects",
            Self::Elsewhere => "the upstream redirected to a host that is not allowed",
        })
    }
}

impl std::error::Error for RefusedRedirect {}

enum Read {
    TooLarge,
    Broken(reqwest::Error),
}

/// The body, chunk by chunk, stopping as soon as it passes `limit`.
async fn read_limited(mut response: Response, limit: u64) -> Result<Vec<u8>, Read> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Read::Broken)? {
        if (bytes.len() + chunk.len()) as u64 > limit {
            return Err(Read::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// `HTTP 403 Forbidden: API rate limit exceeded…`: the status, with the upstream's `message`
/// (GitHub, GitLab) or `error` (npm) when its answer has one, the token blanked out if echoed.
async fn error_reason(status: StatusCode, response: Response, auth: Option<Auth<'_>>) -> String {
    let message = read_limited(response, ERROR_BODY_BYTES)
        .await
        .ok()
        .and_then(|body| serde_json::from_slice::<Value>(&body).ok())
        .and_then(|body| {
            ["message", "error"]
                .iter()
                .find_map(|key| body.get(key).and_then(Value::as_str).map(str::to_owned))
        })
        .map(|message| {
            let message = match auth {
                Some(auth) if !auth.token.is_empty() => message.replace(auth.token, "***"),
                _ => message,
            };
            message.chars().take(MESSAGE_CHARS).collect::<String>()
        });
    let rate_limited = matches!(
        status,
        StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
    );
    let status = format!("HTTP {status}");
    match message {
        Some(message) if !message.trim().is_empty() => format!("{status}: {}", message.trim()),
        _ if rate_limited => format!("{status} (rate limited)"),
        _ => status,
    }
}
