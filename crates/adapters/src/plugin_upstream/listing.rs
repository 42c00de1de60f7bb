//! The repository listing, kept in memory for a while and served stale when its upstream fails,
//! so the plugin catalogue survives an outage of the host serving it.

use std::future::Future;
use std::time::{Duration, Instant};

use domain::plugin::UpstreamError;
use serde_json::Value;
use tokio::sync::Mutex;

struct Fetched {
    listing: Value,
    at: Instant,
}

/// The last listing fetched and when.
pub(super) struct ListingCache {
    ttl: Duration,
    last: Mutex<Option<Fetched>>,
}

impl ListingCache {
    pub(super) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            last: Mutex::new(None),
        }
    }

    /// The cached listing while fresh; else `fetch`'s, cached; else the stale one, then kept
    /// for another `ttl` so a hanging upstream does not slow every call. The lock is held during
    /// the fetch, so concurrent callers share one request instead of each sending their own.
    ///
    /// # Errors
    /// `fetch`'s error when nothing was ever fetched.
    pub(super) async fn get<F>(&self, fetch: F) -> Result<Value, UpstreamError>
    where
        F: Future<Output = Result<Value, UpstreamError>>,
    {
        let mut last = self.last.lock().await;
        if let Some(fresh) = last.as_ref().filter(|last| last.at.elapsed() < self.ttl) {
            return Ok(fresh.listing.clone());
        }
        match (fetch.await, last.as_mut()) {
            (Ok(listing), _) => {
                *last = Some(Fetched {
                    listing: listing.clone(),
                    at: Instant::now(),
                });
                Ok(listing)
            }
            (Err(error), Some(stale)) => {
                tracing::warn!(
                    error = %error,
                    age_seconds = stale.at.elapsed().as_secs(),
                    "serving a stale plugin repository listing"
                );
                stale.at = Instant::now();
                Ok(stale.listing.clone())
            }
            (Err(error), None) => Err(error),
        }
    }
}
