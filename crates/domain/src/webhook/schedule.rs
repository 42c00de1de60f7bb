//! When a failed delivery is tried again: exponential backoff with jitter over about a day, then
//! the delivery fails for good.

use std::time::Duration;

use rand::Rng as _;

/// The waits between attempts: the first attempt is immediate, each failure waits the next
/// delay (±20 % jitter, so receivers coming back are not hit by every sender at once), and a
/// delivery fails for good after the last one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule {
    delays: Vec<Duration>,
}

/// Seconds of the default waits: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h and 12 h,
/// about 22.7 hours from the first attempt to the tenth and last.
const DEFAULT_DELAYS: [u64; 9] = [5, 30, 120, 600, 1_800, 3_600, 10_800, 21_600, 43_200];

impl Default for RetrySchedule {
    fn default() -> Self {
        Self::new(DEFAULT_DELAYS.map(Duration::from_secs).to_vec())
    }
}

impl RetrySchedule {
    /// A schedule of these waits (tests shorten it; `BURROW_WEBHOOK_RETRY_DELAYS`).
    pub fn new(delays: Vec<Duration>) -> Self {
        Self { delays }
    }

    /// How many attempts a delivery gets in all.
    pub fn attempts(&self) -> u32 {
        u32::try_from(self.delays.len()).map_or(u32::MAX, |retries| retries.saturating_add(1))
    }

    /// How long to wait after `failed` attempts have failed (1 after the first), jittered; `None`
    /// when they were all the schedule allows.
    pub fn delay_after(&self, failed: u32) -> Option<Duration> {
        let index = usize::try_from(failed.checked_sub(1)?).ok()?;
        let delay = *self.delays.get(index)?;
        Some(delay.mul_f64(rand::rng().random_range(0.8..=1.2)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_spreads_ten_attempts_over_about_a_day() {
        let schedule = RetrySchedule::default();
        assert_eq!(schedule.attempts(), 10);
        // 22.7 hours of waits, each jittered by at most 20 %.
        let total: Duration = (1..10)
            .filter_map(|failed| schedule.delay_after(failed))
            .sum();
        assert!(total > Duration::from_secs(18 * 3600) && total < Duration::from_secs(28 * 3600));
    }

    #[test]
    fn delays_are_jittered_around_the_schedule_and_end_with_it() {
        let schedule = RetrySchedule::new(vec![Duration::from_secs(10), Duration::from_secs(100)]);
        assert_eq!(schedule.delay_after(0), None);
        for _ in 0..100 {
            let first = schedule.delay_after(1).unwrap();
            assert!(
                first >= Duration::from_secs(8) && first <= Duration::from_secs(12),
                "{first:?}"
            );
        }
        assert!(schedule.delay_after(2).unwrap() >= Duration::from_secs(80));
        assert_eq!(schedule.delay_after(3), None);
        assert_eq!(schedule.attempts(), 3);
    }
}
