//! Recurring surveys over time, as PostHog's `update_survey_iteration` task and its resume rule
//! keep them: while a survey runs, its current iteration moves on to the last one begun (the
//! internal targeting flag follows, so a person who answered iteration 1 is asked again in
//! iteration 2); once its last iteration has ended, it stops; and a survey resumed after its
//! schedule ended starts its schedule again from the resume.
//!
//! PostHog counts in whole days of the server's calendar and moves on a day late at each
//! boundary; Burrow compares instants: iteration k begins exactly `(k − 1) × frequency` days
//! after the start, and the schedule ends exactly `frequency` days after the last begins.

use chrono::{DateTime, Utc};

use super::plan::{existing, serving_while_running, without_no_ops};
use super::{Iterations, Survey, SurveyState, SurveyWrite, TargetingPlan};
use crate::error::ValidationError;

/// Most surveys one round of [`SurveyService::advance_schedules`] moves on.
///
/// [`SurveyService::advance_schedules`]: super::SurveyService::advance_schedules
pub const SCHEDULE_ROUND: u32 = 100;

/// What the schedule asks of `current` at `now`, written by no one (no activity entry, as
/// PostHog's task logs none for an iteration; its stop logs a system entry, which Burrow's log,
/// whose entries all name a user, leaves out): `None` when nothing is due. Only a running
/// survey moves (launched and not stopped; archived ones too, as PostHog's task takes them);
/// the current iteration only goes forward.
pub(crate) fn plan_schedule_step(current: &Survey, now: DateTime<Utc>) -> Option<SurveyWrite> {
    let next = stepped(&current.state, now)?;
    Some(unattended_write(current, next))
}

/// Whether the schedule of a survey in `state` has a step due at `now`: what
/// [`SurveyRepository::due_schedules`](super::SurveyRepository::due_schedules) finds (the
/// fake's rule and the contract tests' oracle).
#[cfg(feature = "testing")]
pub fn schedule_due(state: &SurveyState, now: DateTime<Utc>) -> bool {
    stepped(state, now).is_some()
}

/// The state after the step due at `now`, if one is.
fn stepped(state: &SurveyState, now: DateTime<Utc>) -> Option<SurveyState> {
    if state.start_date.is_none() || state.end_date.is_some() {
        return None;
    }
    let mut next = state.clone();
    if state
        .iterations
        .final_ended_by(state.iteration_frequency_days, now)
    {
        next.end_date = Some(now);
    } else {
        let (running, start) = state.iterations.running_at(now)?;
        if running <= state.iterations.current.unwrap_or(0) {
            return None;
        }
        next.iterations.current = Some(running);
        next.iterations.current_start_date = Some(start);
    }
    Some(next)
}

/// `after`, the state a user's update planned for `before`, with its schedule started again at
/// `now` when the update resumed it (cleared its end date) after its last iteration ended:
/// without it, the schedule would stop the survey again at once.
///
/// # Errors
/// `iteration_frequency_days` when the new schedule would pass year 9999.
pub(crate) fn reanchored_on_resume(
    before: &SurveyState,
    mut after: SurveyState,
    now: DateTime<Utc>,
) -> Result<SurveyState, ValidationError> {
    let resumed = before.end_date.is_some() && after.end_date.is_none();
    if resumed
        && after.start_date.is_some()
        && after
            .iterations
            .final_ended_by(after.iteration_frequency_days, now)
    {
        after.start_date = Some(now);
        after.iterations = Iterations::compute(
            after.iteration_count,
            after.iteration_frequency_days,
            after.start_date,
            &Iterations::default(),
        )?;
    }
    Ok(after)
}

/// A write of `state` that changes nothing but the survey: its targeting flag, if any, kept and
/// serving exactly while it runs.
pub(super) fn unattended_write(current: &Survey, state: SurveyState) -> SurveyWrite {
    let kept = current
        .targeting_flag
        .as_ref()
        .filter(|flag| !flag.deleted)
        .map(|flag| existing(flag.id, current.owns_targeting_flag));
    let targeting = without_no_ops(
        serving_while_running(
            TargetingPlan {
                delete: None,
                flag: kept,
            },
            &state,
        ),
        [current.targeting_flag.as_ref(), None],
    );
    SurveyWrite {
        state,
        targeting,
        activity: None,
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone as _};

    use super::*;
    use crate::survey::{SurveyId, SurveyType};
    use crate::tenancy::ProjectId;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 9, 0, 0).unwrap()
    }

    fn day(n: i64) -> DateTime<Utc> {
        start() + TimeDelta::days(n)
    }

    /// Three weekly iterations, launched at `start()`, in its first iteration.
    fn recurring() -> Survey {
        let mut state = SurveyState::draft("Pulse".into(), SurveyType::Popover);
        state.start_date = Some(start());
        state.iteration_count = Some(3);
        state.iteration_frequency_days = Some(7);
        state.iterations =
            Iterations::compute(Some(3), Some(7), Some(start()), &Iterations::default()).unwrap();
        Survey {
            id: SurveyId::generate(),
            project_id: ProjectId(1),
            state,
            linked_flag: None,
            targeting_flag: None,
            owns_targeting_flag: false,
            created_at: start(),
            created_by: None,
        }
    }

    #[test]
    fn a_running_survey_moves_on_to_each_iteration_as_it_begins_then_stops() {
        let mut survey = recurring();
        assert!(plan_schedule_step(&survey, day(6)).is_none());
        let second = plan_schedule_step(&survey, day(8)).unwrap();
        assert_eq!(
            (
                second.state.iterations.current,
                second.state.iterations.current_start_date
            ),
            (Some(2), Some(day(7)))
        );
        assert_eq!(second.activity, None);
        survey.state = second.state;
        assert!(plan_schedule_step(&survey, day(9)).is_none());
        // Past the third iteration's end: stopped.
        let stopped = plan_schedule_step(&survey, day(22)).unwrap();
        assert_eq!(stopped.state.end_date, Some(day(22)));
        assert_eq!(stopped.state.iterations.current, Some(2));
    }

    #[test]
    fn drafts_stopped_surveys_and_plain_ones_never_move() {
        let mut draft = recurring();
        draft.state.start_date = None;
        let mut stopped = recurring();
        stopped.state.end_date = Some(day(1));
        let mut plain = recurring();
        plain.state.iteration_count = None;
        plain.state.iterations = Iterations::default();
        for survey in [draft, stopped, plain] {
            assert!(plan_schedule_step(&survey, day(30)).is_none());
        }
    }

    #[test]
    fn a_survey_resumed_after_its_schedule_ended_starts_it_again() {
        let before = SurveyState {
            end_date: Some(day(22)),
            ..recurring().state
        };
        let resumed = SurveyState {
            end_date: None,
            ..before.clone()
        };
        let anchored = reanchored_on_resume(&before, resumed.clone(), day(40)).unwrap();
        assert_eq!(anchored.start_date, Some(day(40)));
        assert_eq!(
            anchored.iterations.start_dates,
            Some(vec![day(40), day(47), day(54)])
        );
        assert_eq!(anchored.iterations.current, Some(1));
        // Resumed within its schedule: kept as it is.
        let early = reanchored_on_resume(&before, resumed.clone(), day(10)).unwrap();
        assert_eq!(early, resumed);
        // Not a resume: kept as it is.
        let same = reanchored_on_resume(&resumed, resumed.clone(), day(40)).unwrap();
        assert_eq!(same, resumed);
    }
}
