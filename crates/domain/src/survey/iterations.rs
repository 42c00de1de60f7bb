//! Recurring surveys: the iteration schedule derived from `iteration_count`,
//! `iteration_frequency_days` and `start_date` on every write (PostHog's pre_save rule).

use chrono::{DateTime, Datelike as _, TimeDelta, Utc};

use crate::error::ValidationError;

/// Most iterations a schedule lists.
pub const MAX_ITERATIONS: i32 = 500;

/// Longest gap between two iterations (ten years): a client-controlled number of days is
/// multiplied into a date, so it is bounded before any arithmetic.
pub const MAX_FREQUENCY_DAYS: i32 = 3650;

/// The last year a stored date may fall in (PostgreSQL and ISO 8601 clients agree up to it).
const LAST_YEAR: i32 = 9999;

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
    ///
    /// # Errors
    /// `iteration_frequency_days` when a date of the schedule would fall after year 9999.
    pub fn compute(
        count: Option<i32>,
        frequency_days: Option<i32>,
        start_date: Option<DateTime<Utc>>,
        previous: &Iterations,
    ) -> Result<Self, ValidationError> {
        let (Some(count @ 1..), Some(frequency @ 1..)) = (count, frequency_days) else {
            return Ok(Self {
                start_dates: Some(vec![]),
                current: None,
                current_start_date: None,
            });
        };
        let Some(start) = start_date else {
            return Ok(Self {
                start_dates: None,
                ..previous.clone()
            });
        };
        let start_dates = (0..count.min(MAX_ITERATIONS))
            .map(|k| iteration_start(start, k, frequency))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                ValidationError::invalid(
                    "iteration_frequency_days",
                    format!("The iteration schedule must end by the year {LAST_YEAR}."),
                )
            })?;
        let current = previous.current.filter(|c| *c > 0).unwrap_or(1);
        Ok(Self {
            start_dates: Some(start_dates),
            current: Some(current),
            current_start_date: Some(start),
        })
    }
}

impl Iterations {
    /// The iteration running at `now` and its start: the last one that has begun (the first
    /// while none has); `None` without a schedule.
    pub fn running_at(&self, now: DateTime<Utc>) -> Option<(i32, DateTime<Utc>)> {
        let dates = self.start_dates.as_deref()?;
        let begun = dates
            .iter()
            .take_while(|start| **start <= now)
            .count()
            .max(1);
        let start = *dates.get(begun - 1)?;
        Some((i32::try_from(begun).ok()?, start))
    }

    /// Whether the last iteration ended before `now`: `frequency_days` after it began.
    pub fn final_ended_by(&self, frequency_days: Option<i32>, now: DateTime<Utc>) -> bool {
        let (Some(last), Some(days @ 1..)) = (
            self.start_dates.as_deref().and_then(<[_]>::last),
            frequency_days,
        ) else {
            return false;
        };
        TimeDelta::try_days(i64::from(days))
            .and_then(|length| last.checked_add_signed(length))
            .is_some_and(|end| end < now)
    }
}

/// The start of iteration `k`, or `None` when it cannot be stored.
fn iteration_start(start: DateTime<Utc>, k: i32, frequency_days: i32) -> Option<DateTime<Utc>> {
    let days = i64::from(k).checked_mul(i64::from(frequency_days))?;
    start
        .checked_add_signed(TimeDelta::try_days(days)?)
        .filter(|date| date.year() <= LAST_YEAR)
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
            Iterations::compute(Some(2), Some(30), Some(start), &Iterations::default()).unwrap();
        assert_eq!(
            iterations.start_dates,
            Some(vec![start, at("2024-06-21T14:40:09Z")])
        );
        assert_eq!(iterations.current, Some(1));
        assert_eq!(iterations.current_start_date, Some(start));
    }

    #[test]
    fn the_running_iteration_is_the_last_begun_and_the_schedule_ends_a_frequency_after_the_last() {
        let start = at("2026-01-01T00:00:00Z");
        let iterations =
            Iterations::compute(Some(3), Some(7), Some(start), &Iterations::default()).unwrap();
        let day = |n: i64| start + TimeDelta::days(n);
        assert_eq!(iterations.running_at(day(-1)), Some((1, start)));
        assert_eq!(iterations.running_at(day(6)), Some((1, start)));
        assert_eq!(iterations.running_at(day(7)), Some((2, day(7))));
        assert_eq!(iterations.running_at(day(30)), Some((3, day(14))));
        assert!(!iterations.final_ended_by(Some(7), day(21)));
        assert!(iterations.final_ended_by(Some(7), day(21) + TimeDelta::seconds(1)));
        assert_eq!(Iterations::default().running_at(day(0)), None);
        assert!(!Iterations::default().final_ended_by(Some(7), day(99)));
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
                Iterations::compute(count, frequency, Some(Utc::now()), &Iterations::default())
                    .unwrap();
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
        let iterations =
            Iterations::compute(Some(3), Some(7), None, &Iterations::default()).unwrap();
        assert_eq!(iterations.start_dates, None);
    }

    #[test]
    fn the_current_iteration_is_kept_across_writes() {
        let previous = Iterations {
            current: Some(3),
            ..Iterations::default()
        };
        let iterations =
            Iterations::compute(Some(5), Some(7), Some(Utc::now()), &previous).unwrap();
        assert_eq!(iterations.current, Some(3));
    }

    #[test]
    fn a_schedule_past_year_9999_is_refused_not_overflowed() {
        let start = at("9990-01-01T00:00:00Z");
        let error = Iterations::compute(
            Some(MAX_ITERATIONS),
            Some(MAX_FREQUENCY_DAYS),
            Some(start),
            &Iterations::default(),
        )
        .unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("iteration_frequency_days"));
        assert_eq!(
            error.detail,
            "The iteration schedule must end by the year 9999."
        );
        assert_eq!(iteration_start(start, i32::MAX, i32::MAX), None);
    }
}
