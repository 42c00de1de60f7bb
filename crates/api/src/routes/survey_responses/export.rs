//! A survey's responses as a file (CSV or JSON Lines), streamed a batch at a time.

use actix_web::http::header::CONTENT_DISPOSITION;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use domain::ValidationError;
use domain::survey::SurveyId;
use domain::survey_response::{ExportFormat, SurveyResponseService};

use super::query::{query_pairs, response_filter};
use crate::error::ApiError;
use crate::extract::{ProjectCaller, Surveys, path_id};

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
        format = ExportFormat::parse(&value)
            .ok_or_else(|| ValidationError::invalid_choice("format", &value))?;
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
