//! What a project's surveys were answered: `responses_count`, each survey's responses, their
//! export and archive, stats, and results per question, all read from the events the capture
//! endpoints stored.

use actix_web::http::header::CONTENT_DISPOSITION;
use actix_web::web::{self, Bytes, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::ValidationError;
use domain::error::ValidationCode;
use domain::patch::Patch;
use domain::survey::SurveyId;
use domain::survey_response::{
    CountFilter, DateWindow, EventStats, ExportFormat, Forgotten, QuestionResults, ResponseCounts,
    ResponseFilter, ResponseListing, SearchText, SurveyRates, SurveyResponse,
    SurveyResponseService, SurveyResults, SurveyStats, SurveyStatsReport, ValueCount,
};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{
    JsonObject, Paginated, Pagination, Persons, ProjectCaller, ResponseUuid, Surveys, path_id,
};
use crate::fields::{Fields, parse_datetime};

/// `{"<survey id>": <responses>}`; `?survey_ids=a,b` and `?exclude_archived=true` narrow it.
pub(crate) async fn responses_count(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<ResponseCounts>, ApiError> {
    let mut filter = CountFilter::default();
    for (key, value) in query_pairs(&request) {
        match key.as_str() {
            "survey_ids" => {
                let ids: Vec<String> = value
                    .split(',')
                    .map(str::trim)
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned)
                    .collect();
                filter.survey_ids = (!ids.is_empty()).then_some(ids);
            }
            "exclude_archived" => filter.exclude_archived = is_true(&value),
            _ => {}
        }
    }
    Ok(Json(responses.counts(access.project.id, &filter).await?))
}

/// One response as listed.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyResponse)]
pub(crate) struct ResponseBody {
    uuid: Uuid,
    distinct_id: String,
    submission_id: Option<String>,
    timestamp: DateTime<Utc>,
    #[schema(value_type = Object)]
    answers: Map<String, Value>,
    completed: Option<bool>,
    archived: bool,
}

impl From<SurveyResponse> for ResponseBody {
    fn from(response: SurveyResponse) -> Self {
        Self {
            uuid: response.uuid,
            distinct_id: response.distinct_id,
            submission_id: response.submission_id,
            timestamp: response.timestamp,
            answers: response.answers,
            completed: response.completed,
            archived: response.archived,
        }
    }
}

/// A survey's responses, newest first, within `date_from`/`date_to`; `exclude_archived=true`
/// leaves archived ones out, `question=<id>` keeps those that answered it, and `search=<text>`
/// those with a text answer (to that question, or any) holding the text, ignoring case. A page
/// ends early once its answers pass the page byte budget; `next` continues after its last row.
pub(crate) async fn list(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    pagination: Pagination,
) -> Result<Json<Paginated<ResponseBody>>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let mut listing = ResponseListing {
        filter: response_filter(&request)?,
        ..ResponseListing::default()
    };
    for (key, value) in query_pairs(&request) {
        match key.as_str() {
            "question" if !value.is_empty() => listing.question = Some(value),
            "search" => listing.search = SearchText::parse(&value)?,
            _ => {}
        }
    }
    let page = responses
        .responses(
            access.project.id,
            survey,
            &listing,
            pagination.page_request(),
        )
        .await?;
    Ok(Json(Paginated::ending_early(
        &request,
        pagination,
        page.map(Into::into),
    )))
}

/// The survey's responses as a file (`?format=csv`, the default, or `jsonl`), newest first,
/// within `date_from`/`date_to`, without archived ones with `exclude_archived=true`; streamed a
/// batch at a time (at most 500 responses, ending early once their answers pass the export
/// chunk's bytes), so any number of responses, of any size, takes the memory of one batch.
pub(crate) async fn export(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<HttpResponse, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let filter = response_filter(&request)?;
    let mut format = ExportFormat::Csv;
    for (_, value) in query_pairs(&request)
        .into_iter()
        .filter(|(key, _)| key == "format")
    {
        format = ExportFormat::parse(&value).ok_or_else(|| {
            ValidationError::field(
                "format",
                ValidationCode::InvalidChoice,
                format!("\"{value}\" is not a valid choice."),
            )
        })?;
    }
    let export = responses
        .export(access.project.id, survey, format, filter)
        .await?;
    let chunks = futures_util::stream::try_unfold(export, |mut export| async move {
        let chunk = export.next_chunk().await.map_err(|error| {
            tracing::error!(error = %error, "an export was cut short");
            std::io::Error::other("the export could not be read to its end")
        })?;
        Ok::<_, std::io::Error>(chunk.map(|chunk| (Bytes::from(chunk), export)))
    });
    Ok(HttpResponse::Ok()
        .content_type(format.media_type())
        .insert_header((
            CONTENT_DISPOSITION,
            format!(
                "attachment; filename=\"survey-{}-responses.{}\"",
                survey.0,
                format.extension()
            ),
        ))
        .streaming(chunks))
}

/// Deletes a response and the sends behind it.
pub(crate) async fn delete(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<HttpResponse, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let ResponseUuid(response) = path_id(&request)?;
    responses
        .delete_response(
            access.project.id,
            access.principal.user.id,
            survey,
            response,
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// What a deletion removed.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeletedBody {
    /// Persons whose stored properties were deleted.
    persons_deleted: u64,
    events_deleted: u64,
    responses_deleted: u64,
}

impl From<Forgotten> for DeletedBody {
    fn from(forgotten: Forgotten) -> Self {
        Self {
            persons_deleted: forgotten.persons,
            events_deleted: forgotten.events,
            responses_deleted: forgotten.responses,
        }
    }
}

/// Deletes every response and event of the survey (test data, a draft's answers).
pub(crate) async fn reset(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<DeletedBody>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let forgotten = responses
        .reset(access.project.id, access.principal.user.id, survey)
        .await?;
    Ok(Json(forgotten.into()))
}

/// The body of `persons/bulk_delete/`.
#[derive(ToSchema)]
pub(crate) struct BulkDeleteWrite {
    /// The persons' distinct ids, 1 to 1,000.
    #[schema(max_items = 1000)]
    distinct_ids: Vec<String>,
    /// Also delete every survey event and response of theirs.
    #[schema(required = false)]
    delete_events: bool,
}

impl BulkDeleteWrite {
    /// Reads `distinct_ids` (strings, or numbers as SDKs send ids) and `delete_events`.
    fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        let invalid =
            |detail: &str| ValidationError::field("distinct_ids", ValidationCode::Invalid, detail);
        let distinct_ids = match fields.raw("distinct_ids") {
            Patch::Value(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(id) => Ok(id.clone()),
                    Value::Number(id) => Ok(id.to_string()),
                    _ => Err(invalid("Each distinct id must be a string.")),
                })
                .collect::<Result<Vec<_>, _>>()?,
            Patch::Absent | Patch::Null => Vec::new(),
            Patch::Value(_) => return Err(invalid("Expected a list of distinct ids.")),
        };
        Ok(Self {
            distinct_ids,
            delete_events: fields.boolean("delete_events")?.value().unwrap_or(false),
        })
    }
}

/// A data-subject request: the persons' stored properties and, with `delete_events`, their
/// survey events and responses.
pub(crate) async fn delete_persons(
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Persons>,
    JsonObject(body): JsonObject,
) -> Result<Json<DeletedBody>, ApiError> {
    let write = BulkDeleteWrite::read(&body)?;
    let forgotten = responses
        .delete_persons(access.project.id, &write.distinct_ids, write.delete_events)
        .await?;
    Ok(Json(forgotten.into()))
}

pub(crate) async fn archive(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    caller: ProjectCaller<Surveys>,
) -> Result<Json<Value>, ApiError> {
    set_archived(&request, &responses, caller, true).await
}

pub(crate) async fn unarchive(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    caller: ProjectCaller<Surveys>,
) -> Result<Json<Value>, ApiError> {
    set_archived(&request, &responses, caller, false).await
}

async fn set_archived(
    request: &HttpRequest,
    responses: &SurveyResponseService,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
    archived: bool,
) -> Result<Json<Value>, ApiError> {
    let survey = path_id::<SurveyId>(request)?;
    let ResponseUuid(response) = path_id(request)?;
    responses
        .set_archived(access.project.id, survey, response, archived)
        .await?;
    Ok(Json(serde_json::json!({"success": true})))
}

/// The uuids of the survey's archived responses, newest first.
pub(crate) async fn archived_uuids(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<Vec<Uuid>>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    Ok(Json(
        responses.archived_uuids(access.project.id, survey).await?,
    ))
}

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
#[derive(Debug, Serialize, ToSchema)]
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
            stats: report.stats.map_or(
                StatsByEvent {
                    shown: None,
                    dismissed: None,
                    sent: None,
                },
                by_event,
            ),
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

/// A survey's results per question, as the console charts them.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyResults)]
pub(crate) struct ResultsBody {
    survey_id: Uuid,
    /// The window read: the one asked, narrowed to the survey's run as stats are.
    date_from: Option<DateTime<Utc>>,
    date_to: Option<DateTime<Utc>>,
    /// Responses in the window (archived ones left out with `exclude_archived=true`).
    responses: u64,
    questions: Vec<QuestionResultsBody>,
}

/// One question's results.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyQuestionResults)]
struct QuestionResultsBody {
    id: String,
    /// `open`, `link`, `rating`, `single_choice` or `multiple_choice`.
    #[serde(rename = "type")]
    kind: &'static str,
    question: String,
    /// Responses that answered it (not `null`, `""` or `[]`).
    answered: u64,
    /// Ratings: each value of the scale in order (0–10 for a scale of 10, else from 1), then
    /// any other value given; choices: each choice in order, then other values given (open
    /// choices), the most given first, at most 100 of those. Empty for open and link questions.
    counts: Vec<ValueCountBody>,
    /// Answers with values beyond those listed.
    others: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyValueCount)]
struct ValueCountBody {
    value: String,
    count: u64,
}

impl From<ValueCount> for ValueCountBody {
    fn from(count: ValueCount) -> Self {
        Self {
            value: count.value,
            count: count.count,
        }
    }
}

impl From<QuestionResults> for QuestionResultsBody {
    fn from(results: QuestionResults) -> Self {
        Self {
            id: results.id,
            kind: results.kind.as_str(),
            question: results.question,
            answered: results.answered,
            counts: results.counts.into_iter().map(Into::into).collect(),
            others: results.others,
        }
    }
}

/// One survey's results per question within `date_from`/`date_to` (narrowed to its run),
/// without archived responses with `exclude_archived=true`: added up by the database, so a
/// survey of any size answers in one small body.
pub(crate) async fn results(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<ResultsBody>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let filter = response_filter(&request)?;
    let SurveyResults {
        window,
        responses: count,
        questions,
    } = responses.results(access.project.id, survey, filter).await?;
    Ok(Json(ResultsBody {
        survey_id: survey.0,
        date_from: window.from,
        date_to: window.to,
        responses: count,
        questions: questions.into_iter().map(Into::into).collect(),
    }))
}

/// `date_from`/`date_to` and `exclude_archived`, as the list, the export and the results read
/// them.
fn response_filter(request: &HttpRequest) -> Result<ResponseFilter, ApiError> {
    Ok(ResponseFilter {
        window: date_window(request)?,
        exclude_archived: query_pairs(request)
            .iter()
            .any(|(key, value)| key == "exclude_archived" && is_true(value)),
    })
}

fn query_pairs(request: &HttpRequest) -> Vec<(String, String)> {
    url::form_urlencoded::parse(request.query_string().as_bytes())
        .into_owned()
        .collect()
}

fn is_true(value: &str) -> bool {
    matches!(value.to_ascii_lowercase().as_str(), "true" | "1")
}

/// `date_from`/`date_to` (ISO 8601), with PostHog's messages.
fn date_window(request: &HttpRequest) -> Result<DateWindow, ApiError> {
    let mut from = None;
    let mut to = None;
    for (key, value) in query_pairs(request) {
        let slot = match key.as_str() {
            "date_from" => &mut from,
            "date_to" => &mut to,
            _ => continue,
        };
        if value.is_empty() {
            continue;
        }
        *slot = Some(parse_datetime(&value).ok_or_else(|| {
            ValidationError::general(
                ValidationCode::Invalid,
                "Invalid date format. Please use ISO 8601 format with timezone info \
                 (e.g. 2024-01-01T00:00:00Z or 2024-01-01T00:00:00+00:00)",
            )
        })?);
    }
    Ok(DateWindow::new(from, to)?)
}
