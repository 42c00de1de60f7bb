//! Rate-limit counters kept in this process: right for one node, and the shape every shared
//! store (`redis_rate_counters.rs`) must behave like.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use domain::Unexpected;
use domain::rate_limit::{Admission, RateCounters, Window};
use moka::ops::compute::Op;
use moka::sync::Cache;

/// Keys counted at once; past this the least recently used key's counts are forgotten, which
/// can only let that key through early.
const CAPACITY: u64 = 100_000;

/// One window's count and when it started (at its first counted request).
#[derive(Debug, Clone, Copy)]
struct Count {
    started: Instant,
    requests: u64,
}

/// In-process counters (the default when no shared store is configured).
pub struct LocalRateCounters {
    counts: Cache<String, Vec<Count>>,
}

impl LocalRateCounters {
    /// Counters that forget a key once `longest` (the longest window) has passed without a
    /// counted request from it, when every window it had is over anyway.
    pub fn new(longest: Duration) -> Self {
        Self {
            counts: Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(longest.max(Duration::from_secs(1)))
                .build(),
        }
    }
}

#[async_trait]
impl RateCounters for LocalRateCounters {
    async fn admit(&self, subject: &str, windows: &[Window]) -> Result<Admission, Unexpected> {
        let now = Instant::now();
        let mut admission = Admission::Admitted;
        // One atomic read-modify-write per key: concurrent requests of a key queue here.
        self.counts
            .entry(subject.to_owned())
            .and_compute_with(|stored| {
                let mut counts: Vec<Count> = windows
                    .iter()
                    .enumerate()
                    .map(|(i, window)| {
                        stored
                            .as_ref()
                            .and_then(|entry| entry.value().get(i).copied())
                            .filter(|count| now.duration_since(count.started) < window.period)
                            .unwrap_or(Count {
                                started: now,
                                requests: 0,
                            })
                    })
                    .collect();
                let wait = windows
                    .iter()
                    .zip(&counts)
                    .filter(|(window, count)| count.requests >= window.limit)
                    .map(|(window, count)| window.period - now.duration_since(count.started))
                    .max();
                if let Some(retry_after) = wait {
                    admission = Admission::Throttled { retry_after };
                    return Op::Nop;
                }
                for count in &mut counts {
                    count.requests = count.requests.saturating_add(1);
                }
                Op::Put(counts)
            });
        Ok(admission)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(limit: u64, millis: u64) -> Window {
        Window {
            limit,
            period: Duration::from_millis(millis),
        }
    }

    #[tokio::test]
    async fn admits_up_to_the_limit_then_throttles_until_the_window_ends() {
        let counters = LocalRateCounters::new(Duration::from_secs(60));
        let windows = [window(3, 60_000)];
        for _ in 0..3 {
            assert_eq!(
                counters.admit("k", &windows).await.unwrap(),
                Admission::Admitted
            );
        }
        let Admission::Throttled { retry_after } = counters.admit("k", &windows).await.unwrap()
        else {
            panic!("the fourth request was admitted");
        };
        assert!(retry_after <= Duration::from_secs(60) && retry_after > Duration::from_secs(58));
        assert_eq!(
            counters.admit("other key", &windows).await.unwrap(),
            Admission::Admitted,
            "keys are counted apart"
        );
    }

    #[tokio::test]
    async fn a_window_that_ends_frees_its_requests() {
        let counters = LocalRateCounters::new(Duration::from_secs(1));
        let windows = [window(1, 150)];
        assert_eq!(
            counters.admit("k", &windows).await.unwrap(),
            Admission::Admitted
        );
        assert!(matches!(
            counters.admit("k", &windows).await.unwrap(),
            Admission::Throttled { .. }
        ));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            counters.admit("k", &windows).await.unwrap(),
            Admission::Admitted
        );
    }

    #[tokio::test]
    async fn a_throttled_request_is_not_counted_in_the_longer_window() {
        let counters = LocalRateCounters::new(Duration::from_secs(60));
        let windows = [window(1, 150), window(3, 60_000)];
        assert_eq!(
            counters.admit("k", &windows).await.unwrap(),
            Admission::Admitted
        );
        for _ in 0..5 {
            assert!(matches!(
                counters.admit("k", &windows).await.unwrap(),
                Admission::Throttled { .. }
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        // Only one request of the hour's three was used, whatever was refused meanwhile.
        assert_eq!(
            counters.admit("k", &windows).await.unwrap(),
            Admission::Admitted
        );
    }

    #[tokio::test]
    async fn the_longest_wait_of_the_full_windows_is_reported() {
        let counters = LocalRateCounters::new(Duration::from_secs(3600));
        let windows = [window(1, 60_000), window(1, 3_600_000)];
        counters.admit("k", &windows).await.unwrap();
        let Admission::Throttled { retry_after } = counters.admit("k", &windows).await.unwrap()
        else {
            panic!("admitted over the limit");
        };
        assert!(retry_after > Duration::from_secs(3590));
    }
}
