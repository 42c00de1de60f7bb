//! Response sampling, PostHog's "adaptive sampling": a survey asks for about `limit` responses
//! over `interval` days, weeks or months from `start_date`, and is shown to a share of persons
//! that grows day by day, so the responses spread over the period instead of arriving on its
//! first morning.
//!
//! PostHog keeps it in three parts, and so does Burrow:
//! - the **daily schedule** (`response_sampling_daily_limits`, PostHog's `pre_save` rule): for
//!   each day of the period, the responses expected by its end (cumulative) and the share of
//!   persons shown the survey that day (`100 / days` more each day, the last day 100 %);
//! - the **internal sampling flag** (`survey-targeting-…-sampling`), a flag of one condition set
//!   with no properties whose rollout is that share;
//! - a **daily round** (PostHog's `update_survey_adaptive_sampling` task,
//!   [`plan_sampling_step`]): on each day of the schedule, while the survey's responses are
//!   fewer than the day's expected count, the flag's rollout becomes the day's share; on the
//!   period's last day the period starts again the next day.
//!
//! Burrow derives the flag from the survey, as it does the internal targeting flag, with the
//! rollout the round last set kept on the survey; and lists its key in the public feed's
//! `feature_flag_keys`, which posthog-js checks before showing a survey (PostHog's feed leaves
//! the key out, so there the flag never reaches the browser).

use chrono::{DateTime, Days, NaiveDate, NaiveTime, SecondsFormat, TimeDelta, Utc};
use serde_json::{Number, Value};

use super::schedule::unattended_write;
use super::{Survey, SurveyState, SurveyWrite};
use crate::error::ValidationError;
use crate::feature_flag::{ConditionSet, FeatureFlag};
use crate::patch::Patch;

/// The longest sampling period, in days: a client-controlled length that the schedule lists day
/// by day (PostHog bounds none). A year of days; 52 weeks; 12 months of PostHog's 30 days.
pub const MAX_SAMPLING_DAYS: i64 = 365;

/// The rollout of a sampling flag before the daily round first sets it (PostHog creates the flag
/// at 100 %).
const FULL_ROLLOUT: f64 = 100.0;

wire_enum! {
    /// The unit of a sampling period.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum SamplingIntervalType {
        Day = "day",
        Week = "week",
        Month = "month",
    }
}

impl SamplingIntervalType {
    /// Days in one unit; a month is PostHog's 30.
    fn days(self) -> i64 {
        match self {
            Self::Day => 1,
            Self::Week => 7,
            Self::Month => 30,
        }
    }
}

/// A survey's sampling settings as the client wrote them, and the rollout its round keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSampling {
    /// When the period starts (PostHog: today or later when written).
    pub start_date: Option<DateTime<Utc>>,
    /// `week` unless set (PostHog's default); `null` turns sampling off.
    pub interval_type: Option<SamplingIntervalType>,
    /// The period's length in units of `interval_type`.
    pub interval: Option<i32>,
    /// The responses wanted over the period.
    pub limit: Option<i32>,
    /// The sampling flag's rollout percentage, as the daily round last set it.
    pub rollout: f64,
    /// The UTC day the round last looked at the survey: it looks once a day, as PostHog's task
    /// runs once a day.
    pub checked_on: Option<NaiveDate>,
}

impl Default for ResponseSampling {
    fn default() -> Self {
        Self {
            start_date: None,
            interval_type: Some(SamplingIntervalType::Week),
            interval: None,
            limit: None,
            rollout: FULL_ROLLOUT,
            checked_on: None,
        }
    }
}

/// One day of the schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct DailyLimit {
    /// The day's start: the period's start time of day, `k` days on.
    pub date: DateTime<Utc>,
    /// Responses expected by the day's end, from the period's start.
    pub daily_response_limit: i64,
    /// The share of persons shown the survey that day, rounded to two decimals.
    pub rollout_percentage: f64,
}

/// The sampling fields a write sends, each absent, null or a value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SamplingChanges {
    pub start_date: Patch<DateTime<Utc>>,
    pub interval_type: Patch<SamplingIntervalType>,
    pub interval: Patch<i32>,
    pub limit: Patch<i32>,
}

impl SamplingChanges {
    /// PostHog's check of a sent start date against the clock: today (UTC) or later at `now`.
    ///
    /// # Errors
    /// A start date before today, PostHog's message (with Python's rendering of both dates).
    pub fn check_start_date(&self, now: DateTime<Utc>) -> Result<(), ValidationError> {
        let today = midnight(now.date_naive());
        match self.start_date {
            Patch::Value(start) if start < today => Err(ValidationError::invalid(
                "response_sampling_start_date",
                format!(
                    "Response sampling start date must be today or a future date in UTC. Got {} \
                     when current time is {}",
                    python_str(start),
                    python_str(today)
                ),
            )),
            _ => Ok(()),
        }
    }
}

impl ResponseSampling {
    /// These settings with `changes` applied, checked as PostHog's `validate` checks them (the
    /// start date's check against the clock is [`SamplingChanges::check_start_date`]). A change
    /// of the settings lets the round look at the survey again today.
    ///
    /// PostHog checks the fields a request sends, each alone (a PATCH of the limit without the
    /// start date fails there even when one is stored, and one without the interval is a 500);
    /// Burrow checks the settings the write leaves, so a PATCH may send one field.
    ///
    /// # Errors
    /// An interval of 0; a limit without an interval, a unit or a start date; a period longer
    /// than [`MAX_SAMPLING_DAYS`].
    pub fn changed(&self, changes: &SamplingChanges) -> Result<Self, ValidationError> {
        if changes.interval == Patch::Value(0) {
            return Err(interval_not_positive());
        }
        let next = Self {
            start_date: changes.start_date.apply(self.start_date),
            interval_type: changes.interval_type.apply(self.interval_type),
            interval: changes.interval.apply(self.interval),
            limit: changes.limit.apply(self.limit),
            rollout: self.rollout,
            checked_on: self.checked_on,
        };
        if next.limit.is_some_and(|limit| limit > 0) {
            if next.interval.is_none_or(|interval| interval <= 0) {
                return Err(interval_not_positive());
            }
            if next.interval_type.is_none() {
                return Err(ValidationError::invalid(
                    "response_sampling_interval_type",
                    "Response sampling interval type should be set if response_sampling_limit \
                     is not zero.",
                ));
            }
            if next.start_date.is_none() {
                return Err(ValidationError::invalid(
                    "response_sampling_start_date",
                    "Response sampling start date should be set if response_sampling_start_date \
                     is not zero.",
                ));
            }
        }
        if next.days().is_some_and(|days| days > MAX_SAMPLING_DAYS) {
            return Err(ValidationError::invalid(
                "response_sampling_interval",
                format!("Response sampling interval must be at most {MAX_SAMPLING_DAYS} days."),
            ));
        }
        let settings_changed = (
            next.start_date,
            next.interval_type,
            next.interval,
            next.limit,
        ) != (
            self.start_date,
            self.interval_type,
            self.interval,
            self.limit,
        );
        Ok(Self {
            checked_on: if settings_changed {
                None
            } else {
                next.checked_on
            },
            ..next
        })
    }

    /// The period's length in days, when sampling is on: a unit, a positive interval and limit,
    /// and a start date.
    fn days(&self) -> Option<i64> {
        let unit = self.interval_type?.days();
        let interval = i64::from(self.interval.filter(|interval| *interval > 0)?);
        self.limit.filter(|limit| *limit > 0)?;
        self.start_date?;
        Some(unit * interval)
    }

    /// Whether sampling is on: the survey has a daily schedule and a sampling flag.
    pub fn is_on(&self) -> bool {
        self.days().is_some()
    }

    /// PostHog's daily schedule; `None` when sampling is off.
    pub fn daily_limits(&self) -> Option<Vec<DailyLimit>> {
        let days = self.days()?;
        let start = self.start_date?;
        let limit = i64::from(self.limit?);
        let (per_day, remainder) = (limit / days, limit % days);
        // Accumulated as PostHog accumulates it (a float sum rounded each day), so the shares
        // agree to the last decimal.
        let increment = 100.0 / days as f64;
        let mut rollout = 0.0;
        let mut expected = 0;
        let mut schedule: Vec<DailyLimit> = (0..days)
            .map(|day| {
                rollout += increment;
                expected += per_day + i64::from(day < remainder);
                DailyLimit {
                    date: start + TimeDelta::days(day),
                    daily_response_limit: expected,
                    rollout_percentage: two_decimals(rollout),
                }
            })
            .collect();
        if let Some(last) = schedule.last_mut() {
            last.rollout_percentage = FULL_ROLLOUT;
        }
        Some(schedule)
    }

    /// The schedule as PostHog returns it: a string of JSON (PostHog stores `json.dumps` of the
    /// list in a JSON column), in Python's spacing.
    pub fn daily_limits_text(&self) -> Option<String> {
        let entries: Vec<String> = self
            .daily_limits()?
            .iter()
            .map(|day| {
                format!(
                    "{{\"date\": \"{}\", \"daily_response_limit\": {}, \"rollout_percentage\": {}}}",
                    python_isoformat(day.date),
                    day.daily_response_limit,
                    Value::from(day.rollout_percentage)
                )
            })
            .collect();
        Some(format!("[{}]", entries.join(", ")))
    }
}

/// Whether the daily round looks at a survey in `state` on `today`: what
/// [`SurveyRepository::due_sampling`](super::SurveyRepository::due_sampling) finds (the fake's
/// rule and the contract tests' oracle; the SQL states it in `due_sampling`).
#[cfg(feature = "testing")]
pub fn sampling_due(state: &SurveyState, today: NaiveDate) -> bool {
    let sampling = &state.response_sampling;
    sampling.is_on()
        && state.end_date.is_none()
        && sampling.checked_on.is_none_or(|checked| checked < today)
}

/// The daily round's write of `current` at `now`, the survey having `responses`, by no one (no
/// activity entry, as PostHog's task logs none): `None` when nothing is due (sampling off, the
/// survey stopped, or already looked at today).
pub(crate) fn plan_sampling_write(
    current: &Survey,
    now: DateTime<Utc>,
    responses: u64,
) -> Option<SurveyWrite> {
    let state = &current.state;
    let next = sampling_step(
        &state.response_sampling,
        state.end_date.is_some(),
        now,
        responses,
    )?;
    let state = SurveyState {
        response_sampling: next,
        ..state.clone()
    };
    Some(unattended_write(current, state))
}

/// The round's step for `sampling` of a survey stopped or not (`ended`). On a day of the schedule, the rollout becomes the day's share while the
/// responses are fewer than the day's expected count (PostHog counts the survey's responses of
/// all time, and so does Burrow); on the period's last day, the next period starts tomorrow.
fn sampling_step(
    sampling: &ResponseSampling,
    ended: bool,
    now: DateTime<Utc>,
    responses: u64,
) -> Option<ResponseSampling> {
    let today = now.date_naive();
    if ended || sampling.checked_on == Some(today) {
        return None;
    }
    let schedule = sampling.daily_limits()?;
    let mut next = ResponseSampling {
        checked_on: Some(today),
        ..sampling.clone()
    };
    if let Some(day) = schedule
        .iter()
        .rev()
        .find(|day| day.date.date_naive() == today)
    {
        if i64::try_from(responses).unwrap_or(i64::MAX) < day.daily_response_limit {
            next.rollout = day.rollout_percentage;
        }
        if day.rollout_percentage == FULL_ROLLOUT {
            next.start_date = today.checked_add_days(Days::new(1)).map(midnight);
        }
    }
    Some(next)
}

impl Survey {
    /// The sampling flag's key, PostHog's shape (`survey-targeting-<id>-sampling`), unique per
    /// survey.
    pub fn internal_response_sampling_flag_key(&self) -> Option<String> {
        self.state
            .response_sampling
            .is_on()
            .then(|| format!("survey-targeting-{}-sampling", self.id.0.simple()))
    }

    /// The sampling flag while sampling is on: everyone, at the rollout the round last set.
    pub fn internal_response_sampling_flag(&self) -> Option<FeatureFlag> {
        let key = self.internal_response_sampling_flag_key()?;
        let rollout = Number::from_f64(self.state.response_sampling.rollout)
            .unwrap_or_else(|| Number::from(100));
        let everyone = ConditionSet {
            properties: Some(Vec::new()),
            rollout_percentage: Some(rollout),
            variant: Some(String::new()),
            ..ConditionSet::default()
        };
        Some(self.derived_flag(key, vec![everyone]))
    }
}

fn interval_not_positive() -> ValidationError {
    ValidationError::invalid(
        "response_sampling_interval",
        "Response sampling interval must be greater than 0.",
    )
}

fn midnight(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(NaiveTime::MIN).and_utc()
}

/// `round(value, 2)` as Python rounds (the nearest of the exact binary value, ties to even),
/// which formatting to two decimals does.
fn two_decimals(value: f64) -> f64 {
    format!("{value:.2}").parse().unwrap_or(value)
}

/// Python's `str()` of an aware datetime: `2026-11-29 00:00:00+00:00`.
fn python_str(at: DateTime<Utc>) -> String {
    python_isoformat(at).replacen('T', " ", 1)
}

/// Python's `isoformat()` of an aware datetime: microseconds only when there are some.
fn python_isoformat(at: DateTime<Utc>) -> String {
    let format = if at.timestamp_subsec_micros() == 0 {
        SecondsFormat::Secs
    } else {
        SecondsFormat::Micros
    };
    at.to_rfc3339_opts(format, false)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;

    fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
    }

    /// PostHog's test survey: 500 responses over 10 days from 2024-12-12.
    fn ten_days() -> ResponseSampling {
        ResponseSampling {
            start_date: Some(at(2024, 12, 12, 0)),
            interval_type: Some(SamplingIntervalType::Day),
            interval: Some(10),
            limit: Some(500),
            ..ResponseSampling::default()
        }
    }

    #[test]
    fn the_schedule_spreads_the_limit_and_the_rollout_over_the_days_as_posthog_does() {
        let week = ResponseSampling {
            start_date: Some(at(2026, 11, 29, 10)),
            interval_type: Some(SamplingIntervalType::Week),
            interval: Some(1),
            limit: Some(100),
            ..ResponseSampling::default()
        };
        let schedule = week.daily_limits().unwrap();
        let limits: Vec<i64> = schedule
            .iter()
            .map(|day| day.daily_response_limit)
            .collect();
        assert_eq!(limits, [15, 30, 44, 58, 72, 86, 100]);
        let rollouts: Vec<f64> = schedule.iter().map(|day| day.rollout_percentage).collect();
        assert_eq!(rollouts, [14.29, 28.57, 42.86, 57.14, 71.43, 85.71, 100.0]);
        assert_eq!(schedule[6].date, at(2026, 12, 5, 10));
        // Python's `json.dumps` of the list, as PostHog stores and returns it.
        let text = week.daily_limits_text().unwrap();
        assert!(text.starts_with(
            "[{\"date\": \"2026-11-29T10:00:00+00:00\", \"daily_response_limit\": 15, \
             \"rollout_percentage\": 14.29}, {\"date\": \"2026-11-30T10:00:00+00:00\""
        ));
        assert!(text.ends_with("\"rollout_percentage\": 100.0}]"));
    }

    #[test]
    fn shares_round_as_python_rounds_ties_to_even() {
        let days = ResponseSampling {
            interval: Some(32),
            limit: Some(32),
            ..ten_days()
        };
        let rollouts: Vec<f64> = days.daily_limits().unwrap()[..3]
            .iter()
            .map(|day| day.rollout_percentage)
            .collect();
        assert_eq!(rollouts, [3.12, 6.25, 9.38]);
    }

    #[test]
    fn there_is_no_schedule_without_a_unit_a_limit_or_a_start() {
        for off in [
            ResponseSampling {
                interval_type: None,
                ..ten_days()
            },
            ResponseSampling {
                limit: Some(0),
                ..ten_days()
            },
            ResponseSampling {
                start_date: None,
                ..ten_days()
            },
            ResponseSampling::default(),
        ] {
            assert_eq!(off.daily_limits(), None);
            assert!(!off.is_on());
        }
    }

    #[test]
    fn a_start_date_before_today_is_refused_with_posthogs_message() {
        let now = at(2026, 11, 29, 15);
        let sent = |start| SamplingChanges {
            start_date: Patch::Value(start),
            ..SamplingChanges::default()
        };
        assert!(sent(at(2026, 11, 29, 0)).check_start_date(now).is_ok());
        let error = sent(at(2026, 11, 28, 23))
            .check_start_date(now)
            .unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (
                Some("response_sampling_start_date"),
                "Response sampling start date must be today or a future date in UTC. Got \
                 2026-11-28 23:00:00+00:00 when current time is 2026-11-29 00:00:00+00:00"
            )
        );
    }

    #[test]
    fn the_settings_a_write_leaves_must_make_a_schedule() {
        let refused = |base: &ResponseSampling, changes: SamplingChanges| {
            let error = base.changed(&changes).unwrap_err();
            (error.attr.unwrap(), error.detail)
        };
        let off = ResponseSampling::default();
        let limit = |limit| SamplingChanges {
            limit: Patch::Value(limit),
            ..SamplingChanges::default()
        };
        assert_eq!(
            refused(&off, limit(10)),
            (
                "response_sampling_interval".to_owned(),
                "Response sampling interval must be greater than 0.".to_owned()
            )
        );
        let no_start = ResponseSampling {
            start_date: None,
            ..ten_days()
        };
        assert_eq!(
            refused(&no_start, limit(10)).0,
            "response_sampling_start_date"
        );
        let no_unit = SamplingChanges {
            interval_type: Patch::Null,
            ..SamplingChanges::default()
        };
        assert_eq!(
            refused(&ten_days(), no_unit).0,
            "response_sampling_interval_type"
        );
        let zero = SamplingChanges {
            interval: Patch::Value(0),
            ..SamplingChanges::default()
        };
        assert_eq!(refused(&off, zero).0, "response_sampling_interval");
        let months = SamplingChanges {
            interval_type: Patch::Value(SamplingIntervalType::Month),
            interval: Patch::Value(13),
            ..SamplingChanges::default()
        };
        assert_eq!(
            refused(&ten_days(), months).1,
            "Response sampling interval must be at most 365 days."
        );
        // A limit of 0 turns sampling off, whatever else is set.
        assert!(!ten_days().changed(&limit(0)).unwrap().is_on());
    }

    #[test]
    fn a_change_of_the_settings_lets_the_round_look_again_today() {
        let looked = ResponseSampling {
            checked_on: Some(NaiveDate::from_ymd_opt(2024, 12, 12).unwrap()),
            ..ten_days()
        };
        let same = looked.changed(&SamplingChanges::default()).unwrap();
        assert_eq!(same.checked_on, looked.checked_on);
        let more = SamplingChanges {
            limit: Patch::Value(600),
            ..SamplingChanges::default()
        };
        assert_eq!(looked.changed(&more).unwrap().checked_on, None);
    }

    #[test]
    fn the_round_sets_the_days_share_while_responses_are_below_the_days_count() {
        // PostHog's test: on the second day, with 50 responses (fewer than 100), 20 %.
        let next = sampling_step(&ten_days(), false, at(2024, 12, 13, 12), 50).unwrap();
        assert_eq!(next.rollout, 20.0);
        assert_eq!(next.checked_on, NaiveDate::from_ymd_opt(2024, 12, 13));
        assert_eq!(next.start_date, ten_days().start_date);
        // With the day's count reached, the share stays where it was.
        let reached = sampling_step(&ten_days(), false, at(2024, 12, 13, 12), 100).unwrap();
        assert_eq!(reached.rollout, 100.0);
        // Looked at once a day, and never once stopped.
        assert_eq!(sampling_step(&next, false, at(2024, 12, 13, 23), 0), None);
        assert_eq!(
            sampling_step(&ten_days(), true, at(2024, 12, 13, 12), 0),
            None
        );
    }

    #[test]
    fn on_the_periods_last_day_the_next_period_starts_tomorrow() {
        let next = sampling_step(&ten_days(), false, at(2024, 12, 21, 12), 50).unwrap();
        assert_eq!(next.rollout, 100.0);
        assert_eq!(next.start_date, Some(at(2024, 12, 22, 0)));
        assert_eq!(
            next.daily_limits().unwrap()[0].rollout_percentage,
            10.0,
            "the schedule starts again"
        );
        // Outside the schedule's days the round only notes the day.
        let before = sampling_step(&ten_days(), false, at(2024, 12, 1, 12), 0).unwrap();
        assert_eq!(
            (before.rollout, before.start_date),
            (100.0, ten_days().start_date)
        );
    }
}
