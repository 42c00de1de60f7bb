//! PostHog's dedicated launch and stop (`POST …/launch/`, `…/stop/`): each sets one date to now,
//! after PostHog's checks, or changes nothing when the survey is launched or stopped already.
//! The write itself is planned as a PATCH of that date is (`plan_update`), so the survey's
//! targeting flag and its SDK feed follow it as they follow a PATCH; only the activity entry
//! differs (`launched`, `stopped`).

use chrono::{DateTime, Utc};

use super::activity;
use super::command::SurveyChanges;
use super::plan::plan_update;
use super::{ReferencedFlags, Survey, SurveyWrite};
use crate::error::ValidationError;
use crate::patch::Patch;
use crate::tenancy::UserId;

/// Which of the two a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// `start_date` becomes now.
    Launch,
    /// `end_date` becomes now.
    Stop,
}

/// What to write for `switch` at `now`; `None` when it changes nothing (launched already: a
/// start before now; stopped already: an end before now), which PostHog answers with the survey
/// as it is and records nothing.
///
/// # Errors
/// PostHog's refusals (`attr: null`), checked in its order: an archived survey; a launch of a
/// survey whose end has passed. A stop of a survey whose start is still to come breaks the rule
/// every write keeps (`End date must not be before the start date.`), which PostHog does not
/// have.
pub(crate) fn plan_switch(
    current: &Survey,
    switch: Switch,
    now: DateTime<Utc>,
    editor: UserId,
) -> Result<Option<SurveyWrite>, ValidationError> {
    let state = &current.state;
    let passed = |date: Option<DateTime<Utc>>| date.is_some_and(|date| date <= now);
    let (changes, activity, field, before) = match switch {
        Switch::Launch => {
            if state.archived {
                return Err(ValidationError::invalid_input(
                    "Cannot launch an archived survey. Unarchive it first.",
                ));
            }
            if passed(state.end_date) {
                return Err(ValidationError::invalid_input(
                    "Cannot launch a survey with end_date in the past. Extend the end_date first.",
                ));
            }
            if passed(state.start_date) {
                return Ok(None);
            }
            let changes = SurveyChanges {
                start_date: Patch::Value(now),
                ..SurveyChanges::default()
            };
            (changes, "launched", "start_date", state.start_date)
        }
        Switch::Stop => {
            if state.archived {
                return Err(ValidationError::invalid_input(
                    "Cannot stop an archived survey. Unarchive it first if needed.",
                ));
            }
            if passed(state.end_date) {
                return Ok(None);
            }
            let changes = SurveyChanges {
                end_date: Patch::Value(now),
                ..SurveyChanges::default()
            };
            (changes, "stopped", "end_date", state.end_date)
        }
    };
    // The changes name no flag: the plan is made against the survey's own flags alone.
    let mut write = plan_update(current, &changes, &ReferencedFlags::default(), editor)?;
    write.activity = Some(activity::switched(
        activity,
        &state.name,
        field,
        before,
        now,
        editor,
    ));
    Ok(Some(write))
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone as _};

    use super::*;
    use crate::survey::{SurveyId, SurveyState, SurveyType};
    use crate::tenancy::ProjectId;

    const EDITOR: UserId = UserId(7);

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap()
    }

    fn survey(start: Option<DateTime<Utc>>, end: Option<DateTime<Utc>>, archived: bool) -> Survey {
        Survey {
            id: SurveyId::generate(),
            project_id: ProjectId(1),
            state: SurveyState {
                start_date: start,
                end_date: end,
                archived,
                ..SurveyState::draft("NPS".into(), SurveyType::Popover)
            },
            linked_flag: None,
            targeting_flag: None,
            owns_targeting_flag: false,
            created_at: now() - Duration::days(30),
            created_by: None,
        }
    }

    fn refusal(current: &Survey, switch: Switch) -> (Option<String>, String, &'static str) {
        let error = plan_switch(current, switch, now(), EDITOR).unwrap_err();
        (error.attr, error.detail, error.code.as_str())
    }

    #[test]
    fn a_launch_sets_the_start_to_now_and_records_it() {
        let later = Some(now() + Duration::days(3));
        for start in [None, later] {
            let write = plan_switch(&survey(start, None, false), Switch::Launch, now(), EDITOR)
                .unwrap()
                .unwrap();
            assert_eq!(write.state.start_date, Some(now()));
            let activity = write.activity.unwrap();
            assert_eq!((activity.activity, activity.user), ("launched", EDITOR));
            assert_eq!(
                activity.detail["changes"][0]["before"],
                serde_json::json!(start)
            );
        }
    }

    #[test]
    fn a_launched_survey_is_launched_again_as_a_no_op() {
        for start in [now(), now() - Duration::days(1)] {
            let launched = survey(Some(start), None, false);
            assert_eq!(
                plan_switch(&launched, Switch::Launch, now(), EDITOR).unwrap(),
                None
            );
        }
    }

    #[test]
    fn launching_is_refused_when_archived_first_then_when_ended() {
        let ended = Some(now());
        assert_eq!(
            refusal(&survey(None, ended, true), Switch::Launch),
            (
                None,
                "Cannot launch an archived survey. Unarchive it first.".into(),
                "invalid_input"
            )
        );
        assert_eq!(
            refusal(&survey(None, ended, false), Switch::Launch),
            (
                None,
                "Cannot launch a survey with end_date in the past. Extend the end_date first."
                    .into(),
                "invalid_input"
            )
        );
        // An end still to come does not stop a launch.
        let ending = survey(None, Some(now() + Duration::days(1)), false);
        assert!(plan_switch(&ending, Switch::Launch, now(), EDITOR).is_ok());
    }

    #[test]
    fn a_stop_sets_the_end_to_now_unless_stopped_already() {
        let start = Some(now() - Duration::days(1));
        for end in [None, Some(now() + Duration::days(1))] {
            let write = plan_switch(&survey(start, end, false), Switch::Stop, now(), EDITOR)
                .unwrap()
                .unwrap();
            assert_eq!(write.state.end_date, Some(now()));
            let activity = write.activity.unwrap();
            assert_eq!(activity.activity, "stopped");
            assert_eq!(activity.detail["changes"][0]["field"], "end_date");
        }
        let never_launched = plan_switch(&survey(None, None, false), Switch::Stop, now(), EDITOR);
        assert!(never_launched.unwrap().is_some());
        let stopped = survey(start, Some(now()), false);
        assert_eq!(
            plan_switch(&stopped, Switch::Stop, now(), EDITOR).unwrap(),
            None
        );
    }

    #[test]
    fn stopping_is_refused_when_archived_even_if_stopped_already() {
        let stopped_and_archived = survey(Some(now()), Some(now()), true);
        assert_eq!(
            refusal(&stopped_and_archived, Switch::Stop),
            (
                None,
                "Cannot stop an archived survey. Unarchive it first if needed.".into(),
                "invalid_input"
            )
        );
    }

    #[test]
    fn stopping_a_survey_whose_start_is_to_come_breaks_the_date_rule() {
        let scheduled = survey(Some(now() + Duration::days(1)), None, false);
        let (attr, detail, _) = refusal(&scheduled, Switch::Stop);
        assert_eq!(
            (attr.as_deref(), detail.as_str()),
            (
                Some("end_date"),
                "End date must not be before the start date."
            )
        );
    }
}
