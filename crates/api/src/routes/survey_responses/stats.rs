//! Survey stats: shown, dismissed and sent events with their rates, for one survey or the
//! project's.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::survey::SurveyId;
use domain::survey_response::{
    EventStats, SurveyRates, SurveyResponseService, SurveyStats, SurveyStatsReport,
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::query::date_window;
use crate::error::ApiError;
use crate::extract::{ProjectCaller, Surveys, path_id};

/// PostHog's stats body; `survey_id`, `start_date` and `end_date` only for one survey.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyStats)]
pub(crate) struct StatsBody {
    #[serde(flatten)]
    #[schema(value_type = SurveyDatesPart)]
    survey: Option<SurveyDates>,
    stats: StatsByEvent,
    rates: RatesBody,
}

/// How `SurveyDates` reads inside the stats body: there for one survey's stats, absent for the
/// project's (schema only).
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes a flattened optional part for the OpenAPI document"
)]
struct SurveyDatesPart {
    #[schema(required = false)]
    survey_id: Uuid,
    #[schema(required = false)]
    start_date: Option<DateTime<Utc>>,
    #[schema(required = false)]
    end_date: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize)]
struct SurveyDates {
    survey_id: Uuid,
    start_date: Option<DateTime<Utc>>,
    end_date: Option<DateTime<Utc>>,
}

/// Keyed by event name, as PostHog's clients read it; `{}` without surveys.
#[derive(Debug, Default, Serialize, ToSchema)]
struct StatsByEvent {
    #[serde(rename = "survey shown", skip_serializing_if = "Option::is_none")]
    shown: Option<EventStatsBody>,
    #[serde(rename = "survey dismissed", skip_serializing_if = "Option::is_none")]
    dismissed: Option<EventStatsBody>,
    #[serde(rename = "survey sent", skip_serializing_if = "Option::is_none")]
    sent: Option<EventStatsBody>,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = EventStats)]
struct EventStatsBody {
    total_count: u64,
    total_count_only_seen: u64,
    unique_persons: u64,
    unique_persons_only_seen: u64,
    first_seen: Option<DateTime<Utc>>,
    last_seen: Option<DateTime<Utc>>,
}

impl From<EventStats> for EventStatsBody {
    fn from(stats: EventStats) -> Self {
        Self {
            total_count: stats.total_count,
            total_count_only_seen: stats.total_count_only_seen,
            unique_persons: stats.unique_persons,
            unique_persons_only_seen: stats.unique_persons_only_seen,
            first_seen: stats.first_seen,
            last_seen: stats.last_seen,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyRates)]
struct RatesBody {
    response_rate: f64,
    dismissal_rate: f64,
    unique_users_response_rate: f64,
    unique_users_dismissal_rate: f64,
}

impl From<SurveyRates> for RatesBody {
    fn from(rates: SurveyRates) -> Self {
        Self {
            response_rate: rates.response_rate,
            dismissal_rate: rates.dismissal_rate,
            unique_users_response_rate: rates.unique_users_response_rate,
            unique_users_dismissal_rate: rates.unique_users_dismissal_rate,
        }
    }
}

impl From<SurveyStatsReport> for StatsBody {
    fn from(report: SurveyStatsReport) -> Self {
        let rates = report
            .stats
            .as_ref()
            .map(SurveyStats::rates)
            .unwrap_or_default();
        let by_event = |stats: SurveyStats| StatsByEvent {
            shown: Some(stats.shown.into()),
            dismissed: Some(stats.dismissed.into()),
            sent: Some(stats.sent.into()),
        };
        Self {
            survey: report.survey.map(|survey| SurveyDates {
                survey_id: survey.id.0,
                start_date: survey.state.start_date,
                end_date: survey.state.end_date,
            }),
            stats: report.stats.map_or_else(StatsByEvent::default, by_event),
            rates: rates.into(),
        }
    }
}

/// One survey's stats within `date_from`/`date_to` and its run.
pub(crate) async fn survey_stats(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<StatsBody>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let window = date_window(&request)?;
    let report = responses
        .survey_stats(access.project.id, survey, window)
        .await?;
    Ok(Json(report.into()))
}

/// Stats over the project's unarchived surveys.
pub(crate) async fn project_stats(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<StatsBody>, ApiError> {
    let window = date_window(&request)?;
    let report = responses.project_stats(access.project.id, window).await?;
    Ok(Json(report.into()))
}
