//! `responses_count`: how many responses each survey has.

use actix_web::HttpRequest;
use actix_web::web::{self, Json};
use domain::survey_response::{CountFilter, ResponseCounts, SurveyResponseService};

use super::query::{is_true, query_pairs};
use crate::error::ApiError;
use crate::extract::{ProjectCaller, Surveys};

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
