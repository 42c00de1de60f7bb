//! One batch of events captured over the in-memory fakes, for the domain tests that capture
//! (each test file is its own binary, so they include this file by `#[path]`).

use domain::survey_response::{CaptureBatch, CapturedEvent, SurveyResponseService};
use domain::tenancy::ProjectId;

/// Captures `events` into `project` as one batch without `sent_at`: how many were stored.
pub async fn capture_batch(
    responses: &SurveyResponseService,
    project: ProjectId,
    events: Vec<CapturedEvent>,
) -> usize {
    responses
        .capture(
            project,
            CaptureBatch {
                events,
                sent_at: None,
            },
        )
        .await
        .unwrap()
}
