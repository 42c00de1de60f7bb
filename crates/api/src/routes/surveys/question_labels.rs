//! `GET /api/projects/{project_id}/surveys/question_labels/`: PostHog's labels of the project's
//! survey questions, each named by its id.

use actix_web::web::{self, Json};
use domain::survey::{QuestionLabel, SurveyService};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::ApiError;
use crate::extract::{ProjectCaller, Surveys};

/// One question of a survey.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct QuestionLabelResponse {
    question_id: String,
    question_text: String,
    /// Where the question sits among the survey's questions, from 0.
    question_index: usize,
    survey_id: Uuid,
    survey_name: String,
}

impl From<QuestionLabel> for QuestionLabelResponse {
    fn from(label: QuestionLabel) -> Self {
        Self {
            question_id: label.question_id,
            question_text: label.question_text,
            question_index: label.question_index,
            survey_id: label.survey_id.0,
            survey_name: label.survey_name,
        }
    }
}

/// `{"labels": [...]}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct QuestionLabels {
    labels: Vec<QuestionLabelResponse>,
}

/// The labels of the questions of the project's newest surveys (`MAX_LABELLED_SURVEYS`).
pub(crate) async fn question_labels(
    surveys: web::Data<SurveyService>,
    ProjectCaller(access, _): ProjectCaller<Surveys>,
) -> Result<Json<QuestionLabels>, ApiError> {
    let labels = surveys.question_labels(access.project.id).await?;
    Ok(Json(QuestionLabels {
        labels: labels.into_iter().map(Into::into).collect(),
    }))
}
