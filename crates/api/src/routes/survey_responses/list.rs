//! PostHog's JSON responses list (`GET …/surveys/{id}/responses/`): a slice of a survey's
//! responses by `offset`/`limit`, each with its answers in question order and where it was
//! answered, as PostHog's clients read it.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use chrono::{DateTime, Utc};
use domain::survey::SurveyId;
use domain::survey_response::{
    AnswerText, ListedAnswer, ListedResponse, ResponseContext, ResponseList, SurveyResponseService,
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::list_query::list_query;
use crate::error::ApiError;
use crate::extract::{ProjectCaller, SurveyQueries, path_id};

/// A slice of the list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyResponsesPage)]
pub(crate) struct ResponseListBody {
    results: Vec<ListedResponseBody>,
    /// More responses follow: the next slice is at `offset + limit`.
    has_more: bool,
    /// The `limit` asked, or fewer when the slice's answers passed 2 MiB (then the slice holds
    /// this many and `has_more` is true).
    limit: u32,
    offset: u64,
}

/// One response: one submission, its answers merged.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyListedResponse)]
struct ListedResponseBody {
    /// Its latest response event's uuid (what archive and delete calls name).
    uuid: Uuid,
    distinct_id: String,
    session_id: Option<String>,
    submitted_at: DateTime<Utc>,
    /// Its answers in question order; questions not answered are left out.
    answers: Vec<ListedAnswerBody>,
    extra: ExtraBody,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyListedAnswer)]
struct ListedAnswerBody {
    question_id: String,
    question_index: usize,
    /// In the survey's base language.
    question_text: String,
    /// `open`, `link`, `rating`, `single_choice` or `multiple_choice`.
    question_type: &'static str,
    answer: AnswerBody,
}

/// Text (a rating as its text: `"9"`), or a multiple choice's choices.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyListedAnswerValue)]
#[serde(untagged)]
enum AnswerBody {
    Text(String),
    Choices(Vec<String>),
}

/// Where and how it was answered, `null` where no event of it said.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SurveyResponseExtra)]
struct ExtraBody {
    device_type: Option<String>,
    browser: Option<String>,
    os: Option<String>,
    geoip_country_code: Option<String>,
    geoip_country_name: Option<String>,
    geoip_city_name: Option<String>,
    current_url: Option<String>,
    /// `$survey_iteration`, as text.
    iteration: Option<String>,
}

impl From<ResponseList> for ResponseListBody {
    fn from(list: ResponseList) -> Self {
        Self {
            results: list.results.into_iter().map(Into::into).collect(),
            has_more: list.has_more,
            limit: list.limit,
            offset: list.offset,
        }
    }
}

impl From<ListedResponse> for ListedResponseBody {
    fn from(response: ListedResponse) -> Self {
        let ResponseContext {
            session_id,
            device_type,
            browser,
            os,
            geoip_country_code,
            geoip_country_name,
            geoip_city_name,
            current_url,
            iteration,
            language: _,
        } = response.context;
        Self {
            uuid: response.uuid,
            distinct_id: response.distinct_id,
            session_id,
            submitted_at: response.submitted_at,
            answers: response.answers.into_iter().map(Into::into).collect(),
            extra: ExtraBody {
                device_type,
                browser,
                os,
                geoip_country_code,
                geoip_country_name,
                geoip_city_name,
                current_url,
                iteration,
            },
        }
    }
}

impl From<ListedAnswer> for ListedAnswerBody {
    fn from(answer: ListedAnswer) -> Self {
        Self {
            question_id: answer.question_id,
            question_index: answer.question_index,
            question_text: answer.question_text,
            question_type: answer.question_type.as_str(),
            answer: match answer.answer {
                AnswerText::Text(text) => AnswerBody::Text(text),
                AnswerText::Choices(choices) => AnswerBody::Choices(choices),
            },
        }
    }
}

/// The survey's responses by PostHog's query parameters (`list_query`), checked once the
/// survey is found, as PostHog checks them.
pub(crate) async fn list(
    request: HttpRequest,
    responses: web::Data<SurveyResponseService>,
    ProjectCaller(access, _): ProjectCaller<SurveyQueries>,
) -> Result<Json<ResponseListBody>, ApiError> {
    let survey = path_id::<SurveyId>(&request)?;
    let list = responses
        .list(
            access.project.id,
            survey,
            list_query(request.query_string()),
        )
        .await?;
    Ok(Json(list.into()))
}
