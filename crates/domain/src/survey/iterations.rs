//! Recurring surveys: the iteration schedule derived from `iteration_count`,
//! `iteration_frequency_days` and `start_date` on every write (PostHog's pre_save rule).

use chrono::{DateTime, TimeDelta, Utc};

/// Most iterations a schedule lists.
pub const MAX_ITERATIONS: i32 = 500;

/// The computed iteration fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Iterations {
    pub start_dates: Option<Vec<DateTime<Utc>>>,
    pub current: Option<i32>,
    pub current_start_date: Option<DateTime<Utc>>,
}

impl Iterations {
    /// Recomputes the schedule; `previous` carries the current iteration forward.
    ///
    /// Without a count or a frequency there is no schedule (`[]`, no current iteration). Before
    /// launch the dates are unknown (`null`). Once launched, iteration k starts `k × frequency`
    /// days after `start_date`, and the current iteration is at least 1.
    pub fn compute(
        count: Option<i32>,
        frequency_days: Option<i32>,
        start_date: Option<DateTime<Utc>>,
        previous: &Iterations,
    ) -> Self {
        let (Some(count @ 1..), Some(frequency @ 1..)) = (count, frequency_days) else {
            return Self {
                start_dates: Some(vec![]),
                current: None,
                current_start_date: None,
            };
        };
        let Some(start) = start_date else {
            return Self {
                start_dates: None,
                ..previous.clone()
            };
        };
        let start_dates = (0..count.min(MAX_ITERATIONS))
            .map(|k| start + TimeDelta::days(i64::from(k) * i64::from(frequency)))
            .collect();
        let current = previous.current.filter(|c| *c > 0).unwrap_or(1);
        Self {
            start_dates: Some(start_dates),
            current: Some(current),
            current_start_date: Some(start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn launched_recurring_surveys_list_their_iteration_dates() {
        let start = at("2024-05-22T14:40:09Z");
        let iterations =
            Iterations::compute(Some(2), Some(30), Some(start), &Iterations::default());
        assert_eq!(
            iterations.start_dates,
            Some(vec![start, at("2024-06-21T14:40:09Z")])
        );
        assert_eq!(iterations.current, Some(1));
        assert_eq!(iterations.current_start_date, Some(start));
    }

    #[test]
    fn no_count_or_frequency_means_no_schedule() {
        for (count, frequency) in [
            (None, Some(7)),
            (Some(3), None),
            (Some(0), Some(7)),
            (Some(3), Some(0)),
        ] {
            let iterations =
                Iterations::compute(count, frequency, Some(Utc::now()), &Iterations::default());
            assert_eq!(
                iterations,
                Iterations {
                    start_dates: Some(vec![]),
                    current: None,
                    current_start_date: None
                }
            );
        }
    }

    #[test]
    fn before_launch_the_dates_are_unknown() {
        let iterations = Iterations::compute(Some(3), Some(7), None, &Iterations::default());
        assert_eq!(iterations.start_dates, None);
    }

    #[test]
    fn the_current_iteration_is_kept_across_writes() {
        let previous = Iterations {
            current: Some(3),
            ..Iterations::default()
        };
        let iterations = Iterations::compute(Some(5), Some(7), Some(Utc::now()), &previous);
        assert_eq!(iterations.current, Some(3));
    }
}
