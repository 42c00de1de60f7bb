//! Survey stats: shown, dismissed and sent events with their rates, for one survey (with each
//! question's stats when asked) or the project's.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::survey::SurveyId;
use domain::survey_response::{
    EventStats, PerQuestionStats, StatsOptions, SurveyRates, SurveyResponseService, SurveyStats,
    SurveyStatsReport,
};
use serde::{Serialize, Serializer};
use utoipa::ToSchema;

use super::query::{date_window, is_true, query_pairs};
use crate::error::ApiError;
use crate::extract::{ProjectCaller, Surveys, path_id};

/// PostHog's stats body, in its key order; `survey_id`, `start_date` and `end_date` only for one
/// survey, `per_question_stats` only when asked.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyStats)]
pub(crate) struct StatsBody {
    stats: StatsByEvent,
    rates: RatesBody,
    #[serde(flatten)]
    #[schema(value_type = SurveyDatesPart)]
    survey: Option<SurveyDates>,
    /// With `include_per_question_stats=true`: each question's stats, in the survey's order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    per_question_stats: Option<Vec<PerQuestionBody>>,
}

/// How `SurveyDates` reads inside the stats body: there for one survey's stats, absent for the
/// project's (schema only).
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes a flattened optional part for the OpenAPI document"
)]
struct SurveyDatesPart {
    /// The survey's id as the path gave it.
    #[schema(required = false)]
    survey_id: String,
    #[schema(required = false)]
    start_date: Option<DateTime<Utc>>,
    #[schema(required = false)]
    end_date: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize)]
struct SurveyDates {
    survey_id: String,
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

/// One question's stats.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyQuestionStats)]
struct PerQuestionBody {
    question_id: String,
    question_index: usize,
    question_text: String,
    /// `open`, `link`, `rating`, `single_choice` or `multiple_choice`.
    question_type: &'static str,
    /// Responses that answered it.
    response_count: u64,
    /// Ratings and choices: each answer given and how often, the most given first (choices
    /// under their base text; other text under `"<other>"`, last). `{}` for open and link
    /// questions.
    #[serde(serialize_with = "in_order")]
    #[schema(value_type = std::collections::HashMap<String, u64>)]
    distribution: Vec<(String, u64)>,
    /// A rating's average over its numeric answers.
    average: Option<f64>,
}

/// Pairs as a JSON object, keys in their order.
fn in_order<S: Serializer>(pairs: &[(String, u64)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(pairs.iter().map(|(key, count)| (key, count)))
}

impl From<PerQuestionStats> for PerQuestionBody {
    fn from(stats: PerQuestionStats) -> Self {
        Self {
            question_id: stats.question_id,
            question_index: stats.question_index,
            question_text: stats.question_text,
            question_type: stats.question_type.as_str(),
            response_count: stats.response_count,
            distribution: stats.distribution,
            average: stats.average,
        }
    }
}

impl StatsBody {
    /// The report as answered, `survey_id` as the path gave it.
    fn new(report: SurveyStatsReport, survey_id: Option<&str>) -> Self {
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
            stats: report.stats.map_or_else(StatsByEvent::default, by_event),
            rates: rates.into(),
            survey: report.survey.map(|survey| SurveyDates {
                survey_id: survey_id.map_or_else(|| survey.id.0.to_string(), str::to_owned),
                start_date: survey.state.start_date,
                end_date: survey.state.end_date,
            }),
            per_question_stats: report
                .per_question
                .map(|stats| stats.into_iter().map(Into::into).collect()),
        }
    }
}

/// One survey's stats within `date_from`/`date_to` and its run; archived responses left out
/// with `exclude_archived=true`, each question's stats added with
/// `include_per_question_stats=true`.
pub(crate) async fn survey_stats(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<StatsBody>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let mut options = StatsOptions {
        window: date_window(&request)?,
        ..StatsOptions::default()
    };
    for (key, value) in query_pairs(&request) {
        match key.as_str() {
            "exclude_archived" => options.exclude_archived = is_true(&value),
            "include_per_question_stats" => options.per_question = is_true(&value),
            _ => {}
        }
    }
    let report = responses
        .survey_stats(access.project.id, survey, options)
        .await?;
    Ok(Json(StatsBody::new(
        report,
        request.match_info().get("survey_id"),
    )))
}

/// Stats over the project's unarchived surveys.
pub(crate) async fn project_stats(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<StatsBody>, ApiError> {
    let window = date_window(&request)?;
    let report = responses.project_stats(access.project.id, window).await?;
    Ok(Json(StatsBody::new(report, None)))
}
