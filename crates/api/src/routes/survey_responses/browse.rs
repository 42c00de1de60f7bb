//! Burrow's own list of a survey's responses (`…/responses/browse/`, what the console pages):
//! counted, a page at a time with `next` links, narrowed by window, question and search.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::survey::SurveyId;
use domain::survey_response::{ResponseListing, SearchText, SurveyResponse, SurveyResponseService};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use super::query::{query_pairs, response_filter};
use crate::error::ApiError;
use crate::extract::{Paginated, Pagination, ProjectCaller, Surveys, path_id};

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
    /// The translation the person answered in (`$survey_language`); `null` for the base
    /// language.
    language: Option<String>,
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
            language: response.context.language,
        }
    }
}

/// A survey's responses, newest first, within `date_from`/`date_to`; `exclude_archived=true`
/// leaves archived ones out, `question=<id>` keeps those that answered it, and `search=<text>`
/// those with a text answer (to that question, or any) holding the text, ignoring case. A page
/// ends early once its answers pass the page byte budget; `next` continues after its last row.
pub(crate) async fn browse(
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
    Ok(Json(Paginated::ending_early(&request, pagination, page)))
}
