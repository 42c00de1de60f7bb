//! A survey's results per question, as the console charts them.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::survey::SurveyId;
use domain::survey_response::{QuestionResults, SurveyResponseService, SurveyResults, ValueCount};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::query::response_filter;
use crate::error::ApiError;
use crate::extract::{ProjectCaller, Surveys, path_id};

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
