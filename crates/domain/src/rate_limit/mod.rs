//! PostHog's promise to API clients: a personal API key may make so many requests a minute and
//! so many an hour (`480/minute,4800/hour` by default), whatever carried the key. Counting lives
//! behind a port so one node counts in memory and several share counters (in Redis).

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::api_key::ApiKey;
use crate::error::Unexpected;

/// At most `limit` requests in any `period` counted from the first request of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub limit: u64,
    pub period: Duration,
}

/// The windows a key's requests must all fit in; none means no limit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RateLimit(Vec<Window>);

impl RateLimit {
    pub fn off() -> Self {
        Self(Vec::new())
    }

    pub fn windows(&self) -> &[Window] {
        &self.0
    }

    pub fn is_off(&self) -> bool {
        self.0.is_empty()
    }
}

/// Why a rate-limit setting was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid rate limit {0:?}: expected `off` or comma-separated `N/second|minute|hour|day` (e.g. `480/minute,4800/hour`)"
)]
pub struct InvalidRateLimit(String);

impl FromStr for RateLimit {
    type Err = InvalidRateLimit;

    /// `off`, or windows like DRF's rates: `480/minute,4800/hour` (`s`, `m`, `h`, `d` and the
    /// plural forms are accepted too).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidRateLimit(text.to_owned());
        if text.trim().eq_ignore_ascii_case("off") {
            return Ok(Self::off());
        }
        let windows = text
            .split(',')
            .map(|part| {
                let (limit, unit) = part.trim().split_once('/').ok_or_else(invalid)?;
                let limit: u64 = limit.trim().parse().map_err(|_| invalid())?;
                let seconds = match unit.trim().to_ascii_lowercase().as_str() {
                    "s" | "sec" | "second" | "seconds" => 1,
                    "m" | "min" | "minute" | "minutes" => 60,
                    "h" | "hour" | "hours" => 3600,
                    "d" | "day" | "days" => 86_400,
                    _ => return Err(invalid()),
                };
                if limit == 0 {
                    return Err(invalid());
                }
                Ok(Window {
                    limit,
                    period: Duration::from_secs(seconds),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self(windows))
    }
}

/// What the counters decided about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Counted; go on.
    Admitted,
    /// Over a window's limit; not counted. The fullest window frees a request after this long.
    Throttled { retry_after: Duration },
}

/// Where requests are counted. An implementation checks every window first and counts the
/// request in all of them only when each has room, atomically, so a throttled request does not
/// eat into the longer windows and concurrent requests (on any node sharing the store) never
/// overshoot a limit.
#[async_trait]
pub trait RateCounters: Send + Sync {
    /// # Errors
    /// `Unexpected` when the store cannot be reached; the caller decides what that means.
    async fn admit(&self, subject: &str, windows: &[Window]) -> Result<Admission, Unexpected>;
}

/// Applies the configured limit to API keys.
pub struct RateLimiter {
    limit: RateLimit,
    counters: Arc<dyn RateCounters>,
}

impl RateLimiter {
    pub fn new(limit: RateLimit, counters: Arc<dyn RateCounters>) -> Self {
        Self { limit, counters }
    }

    /// Counts a request made with `key`.
    ///
    /// # Errors
    /// `Unexpected` when the counters cannot be reached. The HTTP layer serves the request
    /// anyway (a limiter outage must not become an API outage) and reports it.
    pub async fn admit(&self, key: &ApiKey) -> Result<Admission, Unexpected> {
        if self.limit.is_off() {
            return Ok(Admission::Admitted);
        }
        self.counters
            .admit(&key.id.to_string(), self.limit.windows())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_drf_style_rates() {
        let windows = |rate: &str| -> Vec<(u64, u64)> {
            let limit = rate.parse::<RateLimit>().unwrap();
            let windows = limit.windows().iter();
            windows.map(|w| (w.limit, w.period.as_secs())).collect()
        };
        assert_eq!(windows("480/minute,4800/hour"), [(480, 60), (4800, 3600)]);
        assert_eq!(windows(" 5/s , 10/d "), [(5, 1), (10, 86_400)]);
        assert!("OFF".parse::<RateLimit>().unwrap().is_off());
    }

    #[test]
    fn refuses_what_is_not_a_rate() {
        for bad in [
            "",
            "480",
            "480/fortnight",
            "-1/minute",
            "0/minute",
            "x/hour",
            "off,1/s",
        ] {
            assert!(bad.parse::<RateLimit>().is_err(), "{bad:?} was accepted");
        }
    }
}
