//! Survey responses: the `survey shown` / `survey dismissed` / `survey sent` /
//! `survey abandoned` events the SDKs capture, the responses they add up to (one per submission),
//! and what is read back from them (counts, the responses themselves, stats, results per
//! question).

mod capture;
mod context;
mod export;
mod filter;
mod limits;
mod listing;
mod merge;
mod per_question;
mod port;
mod results;
mod score;
mod service;
mod stats;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::ValidationError;

pub use capture::{
    CaptureBatch, CapturedEvent, ENROLLMENT_EVENT, ENROLLMENT_PREFIX, MAX_ID_CHARS,
    keeps_properties,
};
pub use context::{CONTEXT_PROPERTIES, ResponseContext};
pub use export::{ExportCursor, ExportFormat, ExportRenderer};
pub use filter::{AnswerFilter, AnswerKeys, MAX_SEARCH_CHARS, ResponseFilter, SearchText};
pub use limits::{
    EXPORT_CHUNK_ANSWER_BYTES, MAX_ANSWER_BYTES, MAX_EVENT_BYTES, MAX_RESPONSE_BYTES,
    PAGE_ANSWER_BYTES, rows_within,
};
pub use listing::{
    AnswerText, DEFAULT_LIST_LIMIT, ListedAnswer, ListedResponse, MAX_LIST_LIMIT, ResponseList,
    ResponseSlice, ResponsesQuery, SliceRequest,
};
#[cfg(feature = "testing")]
pub(crate) use merge::within_response_bound;
pub use merge::{SubmissionDraft, is_given};
pub use per_question::{PerQuestionStats, choice_translations};
pub use port::{Forgotten, SurveyResponseRepository};
pub use results::{
    MAX_TALLIED_VALUES, QuestionResults, SurveyResults, Tallies, Tally, TallyRequest, ValueCount,
};
pub use score::{ScoreRange, numeric_answer};
pub(crate) use service::keyed_by_question;
pub use service::{
    ResponseExport, ResponseListing, StatsOptions, SurveyResponseService, SurveyStatsReport,
};
pub use stats::{EventAggregate, EventStats, StatsAggregates, SurveyRates, SurveyStats};

wire_enum! {
    /// The survey events Burrow keeps, by the name the SDKs send; every other event is accepted
    /// and dropped. posthog-js sends `survey abandoned` when a page unloads with a survey in
    /// progress.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum SurveyEventKind {
        Shown = "survey shown",
        Dismissed = "survey dismissed",
        Sent = "survey sent",
        Abandoned = "survey abandoned",
    }
}

/// One stored survey event, as the capture endpoints accepted it.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyEvent {
    pub uuid: Uuid,
    pub kind: SurveyEventKind,
    /// `$survey_id` as sent; not checked against the project's surveys, as PostHog does not.
    pub survey_id: String,
    pub distinct_id: String,
    pub timestamp: DateTime<Utc>,
    /// `$survey_submission_id`; partial sends of one submission repeat it.
    pub submission_id: Option<String>,
    /// The event's `$survey_*` properties.
    pub properties: Map<String, Value>,
}

impl SurveyEvent {
    /// What makes sends one response: the submission id, or the event itself without one.
    pub fn submission_key(&self) -> String {
        self.submission_id
            .clone()
            .unwrap_or_else(|| self.uuid.to_string())
    }

    /// `$survey_response_<suffix>` values by suffix; the bare legacy `$survey_response` is
    /// question 0's answer, so it is kept under `"0"` unless a suffixed `0` exists.
    pub fn answers(&self) -> Map<String, Value> {
        let mut answers = Map::new();
        for (key, value) in &self.properties {
            if let Some(suffix) = key.strip_prefix("$survey_response_") {
                answers.insert(suffix.to_owned(), value.clone());
            }
        }
        if let Some(value) = self.properties.get("$survey_response") {
            answers
                .entry("0".to_owned())
                .or_insert_with(|| value.clone());
        }
        answers
    }

    /// `$survey_completed`, when the SDK said.
    pub fn completed(&self) -> Option<bool> {
        self.properties
            .get("$survey_completed")
            .and_then(Value::as_bool)
    }

    /// `$survey_partially_completed`: `true`, or `"true"` as text (what a dismissal or an
    /// abandon of a survey answered in part carries).
    pub fn partially_completed(&self) -> bool {
        match self.properties.get("$survey_partially_completed") {
            Some(Value::Bool(partial)) => *partial,
            Some(Value::String(partial)) => partial == "true",
            _ => false,
        }
    }

    /// Whether the event is part of its submission's response, as PostHog's
    /// `RESPONSE_EVENT_FILTER` reads events: every `survey sent`, and a `survey dismissed` or
    /// `survey abandoned` of a survey answered in part ([`Self::partially_completed`]). Such a
    /// closure is counted as sent, never as dismissed.
    pub fn is_response(&self) -> bool {
        match self.kind {
            SurveyEventKind::Sent => true,
            SurveyEventKind::Dismissed | SurveyEventKind::Abandoned => self.partially_completed(),
            SurveyEventKind::Shown => false,
        }
    }
}

/// One response: a submission's response events ([`SurveyEvent::is_response`]) merged
/// ([`SubmissionDraft`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyResponse {
    /// The uuid of the submission's latest response event; archive calls name it.
    pub uuid: Uuid,
    pub distinct_id: String,
    pub submission_id: Option<String>,
    /// The latest response event's time.
    pub timestamp: DateTime<Utc>,
    /// Answers by question id (legacy index keys mapped to ids by the service): each the latest
    /// given one of the submission.
    pub answers: Map<String, Value>,
    pub completed: Option<bool>,
    /// The latest response event closed the survey answered in part (a partially completed
    /// dismissal or abandon) rather than sending it.
    pub partially_completed: bool,
    /// Where and in which iteration and language it was answered.
    pub context: ResponseContext,
    pub archived: bool,
}

/// Which responses `responses_count` counts besides PostHog's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CountFilter {
    /// Only these `$survey_id`s (`None`: all).
    pub survey_ids: Option<Vec<String>>,
    /// Leave archived responses out.
    pub exclude_archived: bool,
}

/// Response counts by `$survey_id`; surveys without responses are absent.
pub type ResponseCounts = BTreeMap<String, u64>;

/// A closed time window; either end may be open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateWindow {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

impl DateWindow {
    /// A window from `date_from`/`date_to` as clients send them.
    ///
    /// # Errors
    /// `Invalid` (PostHog's message) when `from` is after `to`.
    pub fn new(
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
    ) -> Result<Self, ValidationError> {
        if let (Some(from), Some(to)) = (from, to)
            && from > to
        {
            return Err(ValidationError::invalid_input(
                "date_from must be before date_to",
            ));
        }
        Ok(Self { from, to })
    }

    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.from.is_none_or(|from| at >= from) && self.to.is_none_or(|to| at <= to)
    }

    /// This window narrowed to `[from, to]` where those are given.
    pub fn within(self, from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>) -> Self {
        Self {
            from: later(self.from, from),
            to: earlier(self.to, to),
        }
    }
}

fn later(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn earlier(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
