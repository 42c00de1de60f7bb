//! Which of a project's surveys a list keeps: PostHog's list filters (`ids`, `type`, `archived`,
//! `created_by`, `status`) and its search, typed. What each keeps is stated here and on
//! `SurveyRepository::list`; every store applies them before paging.

use super::search::SurveySearch;
use super::{SurveyId, SurveyState, SurveyType};
use crate::tenancy::UserId;

/// Most ids one `?ids=` names: as many surveys as the largest page of a list shows.
pub const MAX_FILTERED_IDS: usize = 1000;

/// What a list keeps; the default keeps every survey of the project, newest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SurveyFilter {
    /// Only these surveys; an id of no survey of the project keeps nothing (PostHog omits it
    /// silently). At most [`MAX_FILTERED_IDS`].
    pub ids: Option<Vec<SurveyId>>,
    pub survey_type: Option<SurveyType>,
    pub archived: Option<bool>,
    /// Only the surveys this user created.
    pub created_by: Option<UserId>,
    pub status: Option<SurveyStatus>,
    /// Only the surveys matching a search in its tier, most relevant first.
    pub search: Option<SurveySearch>,
}

wire_enum! {
    /// PostHog's list `status`, read off the dates alone (archived surveys included).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum SurveyStatus {
        /// Never launched: no `start_date`.
        Draft = "draft",
        /// Launched (even for a start still to come) and not stopped: no `end_date`.
        Running = "running",
        /// Stopped: an `end_date`, even one still to come.
        Complete = "complete",
    }
}

impl SurveyStatus {
    /// Whether a survey in `state` has this status.
    pub fn holds(self, state: &SurveyState) -> bool {
        match self {
            Self::Draft => state.start_date.is_none(),
            Self::Running => state.start_date.is_some() && state.end_date.is_none(),
            Self::Complete => state.end_date.is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;

    #[test]
    fn the_status_is_read_off_the_dates_alone() {
        let draft = SurveyState::draft("NPS".into(), SurveyType::Popover);
        let running = SurveyState {
            start_date: Some(Utc::now() + chrono::Duration::days(1)),
            archived: true,
            ..draft.clone()
        };
        let complete = SurveyState {
            end_date: Some(Utc::now() + chrono::Duration::days(1)),
            ..draft.clone()
        };
        let statuses = |state: &SurveyState| {
            SurveyStatus::ALL
                .into_iter()
                .filter(|status| status.holds(state))
                .collect::<Vec<_>>()
        };
        assert_eq!(statuses(&draft), [SurveyStatus::Draft]);
        assert_eq!(statuses(&running), [SurveyStatus::Running]);
        // Stopped without ever being launched: still without a start, and stopped.
        assert_eq!(
            statuses(&complete),
            [SurveyStatus::Draft, SurveyStatus::Complete]
        );
    }
}
