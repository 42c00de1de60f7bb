//! Survey response use cases: capture, counts, the responses themselves, archiving, stats and
//! results per question.

use std::sync::Arc;

use chrono::Utc;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{
    AnswerFilter, AnswerKeys, CaptureBatch, CountFilter, DateWindow, EXPORT_CHUNK_ANSWER_BYTES,
    ExportCursor, ExportFormat, ExportRenderer, Forgotten, ListedResponse, PAGE_ANSWER_BYTES,
    PerQuestionStats, QuestionResults, ResponseCounts, ResponseFilter, ResponseList,
    ResponsesQuery, SearchText, SliceRequest, SurveyResponse, SurveyResponseRepository,
    SurveyResults, SurveyStats, TallyRequest,
};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, Unexpected, ValidationError};
use crate::person::{ProfileSets, stored_distinct_id};
use crate::ports::{Page, PageRequest};
use crate::survey::activity as survey_activity;
use crate::survey::{Question, Questions, Survey, SurveyId, SurveyService};
use crate::tenancy::{ProjectId, UserId};

/// Most persons one bulk deletion names (PostHog's limit).
pub const MAX_BULK_DELETE: usize = 1_000;

/// Most responses read per batch of an export (fewer once their answers pass
/// [`EXPORT_CHUNK_ANSWER_BYTES`]).
const EXPORT_BATCH: u32 = 500;

/// An export in progress: each [`ResponseExport::next_chunk`] reads one batch and renders it.
pub struct ResponseExport {
    responses: Arc<dyn SurveyResponseRepository>,
    project: ProjectId,
    survey_id: String,
    renderer: ExportRenderer,
    questions: Option<Questions>,
    filter: ResponseFilter,
    next: ExportStep,
    /// Rows the next batch asks for: [`EXPORT_BATCH`], or twice as many as the last batch
    /// held when its answers' bytes cut it short, so rows sized but left for the next batch
    /// stay few.
    limit: u32,
}

enum ExportStep {
    Header,
    After(Option<ExportCursor>),
    Done,
}

impl ResponseExport {
    /// The next piece of the file; `None` once it is whole.
    ///
    /// # Errors
    /// `Unexpected` when storage fails (the file is then cut short).
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Unexpected> {
        let after = match self.next {
            ExportStep::Done => return Ok(None),
            ExportStep::Header => {
                self.next = ExportStep::After(None);
                let header = self.renderer.header();
                if !header.is_empty() {
                    return Ok(Some(header));
                }
                None
            }
            ExportStep::After(after) => after,
        };
        let mut batch = self
            .responses
            .responses_after(
                self.project,
                &self.survey_id,
                &self.filter,
                after,
                self.limit,
                EXPORT_CHUNK_ANSWER_BYTES,
            )
            .await?;
        self.limit = u32::try_from(batch.len().saturating_mul(2))
            .unwrap_or(EXPORT_BATCH)
            .clamp(1, EXPORT_BATCH);
        // A batch cut short by its answers' size is no sign of the end: only an empty one is.
        self.next = match batch.last() {
            Some(last) => ExportStep::After(Some(ExportCursor::from(last))),
            None => ExportStep::Done,
        };
        if batch.is_empty() {
            return Ok(None);
        }
        for response in &mut batch {
            response.answers = keyed_by_question(
                std::mem::take(&mut response.answers),
                self.questions.as_ref(),
            );
        }
        Ok(Some(self.renderer.rows(&batch)))
    }
}

pub struct SurveyResponseService {
    responses: Arc<dyn SurveyResponseRepository>,
    surveys: Arc<SurveyService>,
}

/// Which of a survey's responses a listing shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseListing {
    pub filter: ResponseFilter,
    /// Only responses that answered the question with this id.
    pub question: Option<String>,
    /// Only responses with a text answer (to `question` when named) holding this.
    pub search: Option<SearchText>,
}

/// Stats of one survey (`survey` set) or of the project's unarchived surveys.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyStatsReport {
    pub survey: Option<Survey>,
    /// `None` for a project without unarchived surveys (PostHog answers `"stats": {}`).
    pub stats: Option<SurveyStats>,
    /// Each question's stats, when asked for (one survey's only).
    pub per_question: Option<Vec<PerQuestionStats>>,
}

/// What one survey's stats read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsOptions {
    /// `date_from`/`date_to` as sent.
    pub window: DateWindow,
    /// Leave archived responses out of the counts (not of the per-question stats, as PostHog).
    pub exclude_archived: bool,
    /// Add each question's stats.
    pub per_question: bool,
}

impl SurveyResponseService {
    pub fn new(responses: Arc<dyn SurveyResponseRepository>, surveys: Arc<SurveyService>) -> Self {
        Self { responses, surveys }
    }

    /// Stores the batch's survey events (other events are dropped) together with what they
    /// `$set` on their persons, so flags (a survey's own targeting flag first) see that the
    /// person answered or dismissed it, and what its `$groupidentify` events set on their groups,
    /// which group flags target. Returns how many events were new.
    ///
    /// # Errors
    /// `Invalid` for a malformed event (nothing of the batch is stored); `Unexpected`.
    pub async fn capture(
        &self,
        project: ProjectId,
        batch: CaptureBatch,
    ) -> Result<usize, DomainError> {
        let now = Utc::now();
        let events = batch.survey_events(now)?;
        let sets = ProfileSets {
            persons: batch.person_sets(now),
            groups: batch.group_sets(),
        };
        if events.is_empty() && sets.is_empty() {
            return Ok(0);
        }
        // The batch as received is not needed while the write waits: a burst of large batches
        // holds one copy of each fewer.
        drop(batch);
        Ok(self.responses.record(project, events, sets).await?)
    }

    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn counts(
        &self,
        project: ProjectId,
        filter: &CountFilter,
    ) -> Result<ResponseCounts, DomainError> {
        Ok(self.responses.counts(project, filter).await?)
    }

    /// A survey's responses that `listing` keeps, newest first, answers keyed by question id.
    ///
    /// # Errors
    /// `NotFound` for a survey of another project; `Invalid` (`attr: question`) for a question
    /// the survey does not have; `Unexpected`.
    pub async fn responses(
        &self,
        project: ProjectId,
        survey: SurveyId,
        listing: &ResponseListing,
        page: PageRequest,
    ) -> Result<Page<SurveyResponse>, DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        let question = match &listing.question {
            None => None,
            Some(id) => Some(question_keys(survey.state.questions.as_ref(), id)?),
        };
        let answers = AnswerFilter {
            question,
            search: listing.search.clone(),
        };
        let page = self
            .responses
            .responses(
                project,
                &survey.id.0.to_string(),
                &listing.filter,
                &answers,
                page,
                PAGE_ANSWER_BYTES,
            )
            .await?;
        let questions = survey.state.questions.as_ref();
        Ok(page.map(|mut response| {
            response.answers = keyed_by_question(response.answers, questions);
            response
        }))
    }

    /// PostHog's responses list: a slice of the survey's responses by `query`, newest first
    /// (ties by uuid, descending), each with its given answers in question order. A
    /// `question_id` the survey does not have lists nothing, as PostHog does. The slice ends
    /// early once its answers and contexts pass [`PAGE_ANSWER_BYTES`] (its `limit` then says
    /// how many it holds).
    ///
    /// # Errors
    /// `NotFound` for a survey of another project, checked before `query`'s own error (as
    /// PostHog finds the survey before reading its query); `Invalid` for a query whose
    /// parameters do not go together ([`ResponsesQuery::checked`]); `Unexpected`.
    pub async fn list(
        &self,
        project: ProjectId,
        survey: SurveyId,
        query: Result<ResponsesQuery, ValidationError>,
    ) -> Result<ResponseList, DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        let query = query?.checked()?;
        let questions = survey.state.questions.as_ref();
        let question = match &query.question_id {
            None => None,
            Some(id) => {
                let keys = questions
                    .map(AnswerKeys::of)
                    .unwrap_or_default()
                    .into_iter()
                    .flatten()
                    .find(|keys| &keys.id == id);
                match keys {
                    Some(keys) => Some(keys),
                    None => {
                        return Ok(ResponseList {
                            results: Vec::new(),
                            has_more: false,
                            limit: query.limit,
                            offset: query.offset,
                        });
                    }
                }
            }
        };
        let request = SliceRequest {
            window: query.window(&survey, Utc::now()),
            exclude_archived: query.exclude_archived,
            question,
            score: query.score,
            offset: query.offset,
            limit: query.limit,
        };
        let slice = self
            .responses
            .slice(
                project,
                &survey.id.0.to_string(),
                &request,
                PAGE_ANSWER_BYTES,
            )
            .await?;
        let held = u32::try_from(slice.responses.len()).unwrap_or(u32::MAX);
        Ok(ResponseList {
            results: slice
                .responses
                .into_iter()
                .map(|response| {
                    ListedResponse::new(response, questions, query.question_id.as_deref())
                })
                .collect(),
            has_more: slice.has_more,
            limit: if slice.cut_short { held } else { query.limit },
            offset: query.offset,
        })
    }

    /// An export of a survey's responses, read and rendered a batch at a time as the caller
    /// pulls it.
    ///
    /// # Errors
    /// `NotFound` for a survey the project does not have.
    pub async fn export(
        &self,
        project: ProjectId,
        survey: SurveyId,
        format: ExportFormat,
        filter: ResponseFilter,
    ) -> Result<ResponseExport, DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        Ok(ResponseExport {
            responses: Arc::clone(&self.responses),
            project,
            survey_id: survey.id.0.to_string(),
            renderer: ExportRenderer::new(format, survey.state.questions.as_ref()),
            questions: survey.state.questions,
            filter,
            next: ExportStep::Header,
            limit: EXPORT_BATCH,
        })
    }

    /// Archives or restores one response, named by the uuid of one of its response events.
    ///
    /// # Errors
    /// `NotFound` for an unknown survey or response; `Unexpected`.
    pub async fn set_archived(
        &self,
        project: ProjectId,
        survey: SurveyId,
        response: Uuid,
        archived: bool,
    ) -> Result<(), DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        let found = self
            .responses
            .set_archived(project, &survey.id.0.to_string(), response, archived)
            .await?;
        found.then_some(()).or_not_found()
    }

    /// Deletes a response and the response events behind it; counts and stats follow, and the survey's
    /// activity says who deleted which.
    ///
    /// # Errors
    /// `NotFound` for a survey the project does not have, or a response the survey does not.
    pub async fn delete_response(
        &self,
        project: ProjectId,
        user: UserId,
        survey: SurveyId,
        response: Uuid,
    ) -> Result<(), DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        let entry = survey_activity::response_deleted(&survey.state.name, response, user);
        let found = self
            .responses
            .delete_response(project, survey.id, response, &entry)
            .await?;
        found.then_some(()).or_not_found()
    }

    /// Deletes every response and event of a survey (test data, a draft's answers), recorded in
    /// its activity.
    ///
    /// # Errors
    /// `NotFound` for a survey the project does not have.
    pub async fn reset(
        &self,
        project: ProjectId,
        user: UserId,
        survey: SurveyId,
    ) -> Result<Forgotten, DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        let entry = survey_activity::responses_reset(&survey.state.name, user);
        Ok(self
            .responses
            .delete_survey_responses(project, survey.id, &entry)
            .await?)
    }

    /// A data-subject request: the persons' stored properties and, with `events`, every survey
    /// event and response of theirs in the project.
    ///
    /// # Errors
    /// `Invalid` for no distinct ids or more than [`MAX_BULK_DELETE`].
    pub async fn delete_persons(
        &self,
        project: ProjectId,
        distinct_ids: &[String],
        events: bool,
    ) -> Result<Forgotten, DomainError> {
        if distinct_ids.is_empty() {
            return Err(ValidationError::required("distinct_ids").into());
        }
        if distinct_ids.len() > MAX_BULK_DELETE {
            return Err(ValidationError::invalid(
                "distinct_ids",
                format!("You can only pass {MAX_BULK_DELETE} distinct_ids at a time."),
            )
            .into());
        }
        let stored: Vec<String> = distinct_ids
            .iter()
            .map(|id| stored_distinct_id(id))
            .collect();
        Ok(self
            .responses
            .delete_persons(project, &stored, events)
            .await?)
    }

    /// # Errors
    /// `NotFound` for an unknown survey; `Unexpected`.
    pub async fn archived_uuids(
        &self,
        project: ProjectId,
        survey: SurveyId,
    ) -> Result<Vec<Uuid>, DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        Ok(self
            .responses
            .archived_uuids(project, &survey.id.0.to_string())
            .await?)
    }

    /// One survey's stats within `options.window`, narrowed to the survey's run (from its
    /// start, or creation when never launched, to its end), archived responses left out with
    /// `exclude_archived`, as PostHog does; with `per_question`, each question's stats over
    /// the window as sent, else the survey's run (not narrowed, archived responses counted:
    /// PostHog's per-question read).
    ///
    /// # Errors
    /// `NotFound` for an unknown survey; `Unexpected`.
    pub async fn survey_stats(
        &self,
        project: ProjectId,
        survey: SurveyId,
        options: StatsOptions,
    ) -> Result<SurveyStatsReport, DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        let survey_id = survey.id.0.to_string();
        let aggregates = self
            .responses
            .aggregates(
                project,
                std::slice::from_ref(&survey_id),
                run_window(&survey, options.window),
                options.exclude_archived,
            )
            .await?;
        let per_question = if options.per_question {
            Some(self.per_question(project, &survey, options.window).await?)
        } else {
            None
        };
        Ok(SurveyStatsReport {
            survey: Some(survey),
            stats: Some(SurveyStats::from_aggregates(&aggregates)),
            per_question,
        })
    }

    /// Each question's stats over `window`'s sent bounds, else the survey's run (to now).
    async fn per_question(
        &self,
        project: ProjectId,
        survey: &Survey,
        window: DateWindow,
    ) -> Result<Vec<PerQuestionStats>, DomainError> {
        let Some(questions) = survey.state.questions.as_ref() else {
            return Ok(Vec::new());
        };
        let filter = ResponseFilter {
            window: DateWindow {
                from: Some(
                    window
                        .from
                        .unwrap_or(survey.state.start_date.unwrap_or(survey.created_at)),
                ),
                to: Some(
                    window
                        .to
                        .unwrap_or(survey.state.end_date.unwrap_or(Utc::now())),
                ),
            },
            exclude_archived: false,
        };
        let named: Vec<(usize, &Question, AnswerKeys)> = questions
            .iter()
            .zip(AnswerKeys::of(questions))
            .enumerate()
            .filter_map(|(index, (question, keys))| Some((index, question, keys?)))
            .collect();
        let requests: Vec<TallyRequest> = named
            .iter()
            .map(|(_, question, keys)| TallyRequest {
                keys: keys.clone(),
                values: counts_values(question),
            })
            .collect();
        let tallies = self
            .responses
            .tallies(project, &survey.id.0.to_string(), &filter, &requests)
            .await?;
        Ok(named
            .into_iter()
            .zip(tallies.questions)
            .map(|((index, question, _), tally)| PerQuestionStats::new(index, question, tally))
            .collect())
    }

    /// A survey's results per question within `filter`, its window narrowed to the survey's
    /// run as [`Self::survey_stats`] narrows it, so the responses counted are the stats' sends.
    ///
    /// # Errors
    /// `NotFound` for an unknown survey; `Unexpected`.
    pub async fn results(
        &self,
        project: ProjectId,
        survey: SurveyId,
        filter: ResponseFilter,
    ) -> Result<SurveyResults, DomainError> {
        let survey = self.surveys.get(project, survey).await?;
        let filter = ResponseFilter {
            window: run_window(&survey, filter.window),
            ..filter
        };
        let named: Vec<(&Question, AnswerKeys)> = survey
            .state
            .questions
            .as_ref()
            .map(|questions| {
                questions
                    .iter()
                    .zip(AnswerKeys::of(questions))
                    .filter_map(|(question, keys)| Some((question, keys?)))
                    .collect()
            })
            .unwrap_or_default();
        let requests: Vec<TallyRequest> = named
            .iter()
            .map(|(question, keys)| TallyRequest {
                keys: keys.clone(),
                values: counts_values(question),
            })
            .collect();
        let tallies = self
            .responses
            .tallies(project, &survey.id.0.to_string(), &filter, &requests)
            .await?;
        Ok(SurveyResults {
            window: filter.window,
            responses: tallies.responses,
            questions: named
                .into_iter()
                .zip(tallies.questions)
                .map(|((question, keys), tally)| QuestionResults::new(keys.id, question, tally))
                .collect(),
        })
    }

    /// Stats over the project's unarchived surveys within `window` (not narrowed to their
    /// runs; archived responses counted, as PostHog counts them).
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn project_stats(
        &self,
        project: ProjectId,
        window: DateWindow,
    ) -> Result<SurveyStatsReport, DomainError> {
        let ids: Vec<String> = self
            .surveys
            .unarchived(project)
            .await?
            .iter()
            .map(|survey| survey.id.0.to_string())
            .collect();
        let stats = if ids.is_empty() {
            None
        } else {
            let aggregates = self
                .responses
                .aggregates(project, &ids, window, false)
                .await?;
            Some(SurveyStats::from_aggregates(&aggregates))
        };
        Ok(SurveyStatsReport {
            survey: None,
            stats,
            per_question: None,
        })
    }
}

/// Whether a question's tally counts each value given: ratings and choices.
fn counts_values(question: &Question) -> bool {
    matches!(
        question,
        Question::Rating(_) | Question::SingleChoice(_) | Question::MultipleChoice(_)
    )
}

/// `window` narrowed to the survey's run: from its start (its creation when never launched)
/// to its end, as PostHog narrows a survey's stats.
fn run_window(survey: &Survey, window: DateWindow) -> DateWindow {
    let run_start = survey.state.start_date.unwrap_or(survey.created_at);
    window.within(Some(run_start), survey.state.end_date)
}

/// The stored keys of the survey's question `id`.
fn question_keys(questions: Option<&Questions>, id: &str) -> Result<AnswerKeys, ValidationError> {
    questions
        .map(AnswerKeys::of)
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .find(|keys| keys.id == id)
        .ok_or_else(|| {
            ValidationError::invalid("question", "The survey has no question with this id.")
        })
}

/// Answers keyed by question id: legacy keys (`$survey_response` is question 0,
/// `$survey_response_<n>` question n) become the id of the question at that index, unless the
/// key is itself a question id.
pub(crate) fn keyed_by_question(
    answers: Map<String, Value>,
    questions: Option<&Questions>,
) -> Map<String, Value> {
    let ids: Vec<&str> = questions
        .map(|questions| {
            questions
                .iter()
                .map(|q| q.base().id.as_deref().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    let mut keyed = Map::new();
    for (key, value) in answers {
        let by_index = key
            .parse::<usize>()
            .ok()
            .filter(|_| !ids.contains(&key.as_str()))
            .and_then(|index| ids.get(index))
            .filter(|id| !id.is_empty());
        match by_index {
            // A question's own key wins over a legacy key naming the same question.
            Some(id) => {
                keyed.entry((*id).to_owned()).or_insert(value);
            }
            None => {
                keyed.insert(key, value);
            }
        }
    }
    keyed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Open questions with these ids.
    fn questions(ids: [&str; 2]) -> Questions {
        Questions::parse(Value::Array(
            ids.map(|id| json!({"type": "open", "question": "Q", "id": id}))
                .to_vec(),
        ))
        .unwrap()
    }

    #[test]
    fn legacy_index_keys_become_question_ids() {
        let questions = questions(["first", "second"]);
        let answers = json!({"0": "a", "1": "b", "first": "kept", "7": "no such question"});
        let keyed = keyed_by_question(answers.as_object().unwrap().clone(), Some(&questions));
        assert_eq!(
            Value::Object(keyed),
            json!({"first": "kept", "second": "b", "7": "no such question"})
        );
    }

    #[test]
    fn a_key_that_is_a_question_id_stays() {
        let questions = questions(["1", "0"]);
        let answers = json!({"0": "zero"});
        let keyed = keyed_by_question(answers.as_object().unwrap().clone(), Some(&questions));
        assert_eq!(Value::Object(keyed), json!({"0": "zero"}));
    }

    #[test]
    fn an_inverted_window_is_refused() {
        let later = Utc::now();
        let earlier = later - chrono::Duration::days(1);
        assert!(DateWindow::new(Some(earlier), Some(later)).is_ok());
        let error = DateWindow::new(Some(later), Some(earlier)).unwrap_err();
        assert_eq!(error.detail, "date_from must be before date_to");
    }
}
