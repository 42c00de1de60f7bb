//! A hosted survey's page (`/external_surveys/{id}/`): what it may show, by the survey's id
//! alone, as PostHog's `public_survey_page` decides it.

use chrono::Utc;

use super::SdkService;
use crate::error::DomainError;
use crate::survey::{Survey, SurveyId, SurveyType};

/// What a hosted survey's page shows.
#[derive(Debug, Clone)]
pub enum HostedSurvey {
    /// A running `external_survey`, and its project's public token for posthog-js.
    Open { survey: Box<Survey>, token: String },
    /// An `external_survey` that was archived or has ended (its name, for the page).
    Closed { name: String },
    /// No such survey, not an `external_survey`, or not launched yet.
    Missing,
}

impl<R> SdkService<R> {
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn hosted_survey(&self, id: SurveyId) -> Result<HostedSurvey, DomainError> {
        let Some(survey) = self.sources.surveys.find(id).await? else {
            return Ok(HostedSurvey::Missing);
        };
        let state = &survey.state;
        let launched = state.start_date.is_some_and(|start| start <= Utc::now());
        if state.survey_type != SurveyType::ExternalSurvey || !launched {
            return Ok(HostedSurvey::Missing);
        }
        if state.archived || state.end_date.is_some() {
            return Ok(HostedSurvey::Closed {
                name: state.name.clone(),
            });
        }
        let Some(project) = self.sources.tenancy.project(survey.project_id).await? else {
            return Ok(HostedSurvey::Missing);
        };
        Ok(HostedSurvey::Open {
            survey: Box::new(survey),
            token: project.api_token,
        })
    }
}
