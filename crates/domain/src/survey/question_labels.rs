//! PostHog's `question_labels`: each question of the project's surveys named by its id, with its
//! text and where it sits, so a client can label answers keyed by question id.

use super::{Survey, SurveyId};

/// How many surveys, the newest, a `question_labels` answer is about. A project's surveys are
/// many and each may hold as many questions as a request body carries, so the answer is bounded
/// by surveys, whole: as many as the largest page of the surveys list (its `MAX_LIMIT`), whose
/// answer already shows every one of these questions in full, so labels never cost more than a
/// list page of the same surveys. A bound in bytes instead would cut a survey's questions in
/// the middle.
pub const MAX_LABELLED_SURVEYS: u32 = 1000;

/// One question of a survey.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionLabel {
    pub survey_id: SurveyId,
    pub survey_name: String,
    pub question_id: String,
    pub question_text: String,
    /// Where the question sits among the survey's questions, from 0.
    pub question_index: usize,
}

/// The labels of `surveys`' questions, in the surveys' order and then the questions'. A question
/// without an id (or with an empty one) has no label, as in PostHog, but keeps its place in the
/// numbering.
pub fn question_labels(surveys: &[Survey]) -> Vec<QuestionLabel> {
    surveys
        .iter()
        .flat_map(|survey| {
            let questions = survey.state.questions.iter().flat_map(|q| q.iter());
            questions
                .enumerate()
                .filter_map(move |(question_index, question)| {
                    let base = question.base();
                    let question_id = base.id.as_deref().filter(|id| !id.is_empty())?;
                    Some(QuestionLabel {
                        survey_id: survey.id,
                        survey_name: survey.state.name.clone(),
                        question_id: question_id.to_owned(),
                        question_text: base.question.clone(),
                        question_index,
                    })
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::*;
    use crate::survey::{Questions, SurveyState, SurveyType};
    use crate::tenancy::ProjectId;

    fn survey(name: &str, questions: Option<serde_json::Value>) -> Survey {
        Survey {
            id: SurveyId::generate(),
            project_id: ProjectId(1),
            state: SurveyState {
                questions: questions.map(|q| Questions::parse(q).unwrap()),
                ..SurveyState::draft(name.into(), SurveyType::Popover)
            },
            linked_flag: None,
            targeting_flag: None,
            owns_targeting_flag: false,
            created_at: Utc::now(),
            created_by: None,
        }
    }

    #[test]
    fn each_question_with_an_id_is_labelled_where_it_sits() {
        let nps = survey(
            "NPS",
            Some(json!([
                {"id": "q-score", "type": "rating", "question": "How likely?"},
                {"id": "", "type": "open", "question": "Unlabelled"},
                {"id": "q-why", "type": "open", "question": "Why?"},
            ])),
        );
        let empty = survey("Empty", None);
        let churn = survey(
            "Churn",
            Some(json!([{"id": "q-left", "type": "open", "question": "Why did you leave?"}])),
        );
        let labels = question_labels(&[nps.clone(), empty, churn.clone()]);
        let shown: Vec<_> = labels
            .iter()
            .map(|l| {
                (
                    l.survey_id,
                    l.survey_name.as_str(),
                    l.question_id.as_str(),
                    l.question_text.as_str(),
                    l.question_index,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                (nps.id, "NPS", "q-score", "How likely?", 0),
                (nps.id, "NPS", "q-why", "Why?", 2),
                (churn.id, "Churn", "q-left", "Why did you leave?", 0),
            ]
        );
    }
}
