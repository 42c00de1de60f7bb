//! The port of stored survey events and the responses they add up to.

use async_trait::async_trait;
use uuid::Uuid;

use super::{
    AnswerFilter, CountFilter, DateWindow, ExportCursor, ResponseCounts, ResponseFilter,
    ResponseSlice, SliceRequest, StatsAggregates, SurveyEvent, SurveyResponse, Tallies,
    TallyRequest,
};
use crate::activity::NewActivity;
use crate::error::Unexpected;
use crate::person::ProfileSets;
use crate::ports::{Page, PageRequest};
use crate::survey::SurveyId;
use crate::tenancy::ProjectId;

/// What a deletion removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// Persons whose stored properties went.
    pub persons: u64,
    pub events: u64,
    pub responses: u64,
}

#[async_trait]
pub trait SurveyResponseRepository: Send + Sync {
    /// Stores one capture whole or not at all: the events; for each submission some of whose
    /// response events ([`SurveyEvent::is_response`]) are new, its response, the capture's
    /// response events of the submission merged in time order into a
    /// [`SubmissionDraft`](super::SubmissionDraft) and the draft merged into the response: when
    /// the draft's latest event is later than the response's (by time, then uuid), its answers
    /// and context values override the response's and its latest event becomes the response's;
    /// otherwise (events arriving after later ones, or a retry) it only fills in the answer keys
    /// and context values the response lacks. `completed` is the latest one sent either way,
    /// `archived` stays, and merged answers and context that would pass
    /// [`MAX_RESPONSE_BYTES`](super::MAX_RESPONSE_BYTES) stay as stored; each of
    /// `sets.persons` merged into its person's properties; and each of `sets.groups` merged
    /// into its group's properties the same way (the group created if new). A group set
    /// naming a type the project does not have gives the type the lowest free index, in the
    /// order the sets name new types; past [`MAX_GROUP_TYPES`](crate::group::MAX_GROUP_TYPES)
    /// types its sets are dropped, as PostHog's ingestion drops them. (A type another capture creates at the same
    /// instant may find its index taken by this one's: its sets are then dropped too, and the
    /// group's next identify stores them.) An event whose uuid the project already has is
    /// skipped, so a retried batch stores no event twice (its sets merge again, to the same
    /// properties). Returns how many events were new.
    ///
    /// In the same write, when the project has an enabled webhook, each new `survey sent` goes
    /// to the webhook outbox, once whatever the number of webhooks, in `(timestamp, uuid)`
    /// order, saying whether it created its submission's response (the earliest new send of a
    /// submission this write created; else it updated it) and whether it
    /// [`completes`](crate::webhook::completes) it. The dispatcher makes the deliveries
    /// ([`DeliveryQueue::fan_out`](crate::webhook::DeliveryQueue::fan_out)).
    ///
    /// Takes the events and sets whole: a store may keep them while the write waits (captures
    /// queue for a writer), and a copy of a large batch is what a burst of them runs out of.
    ///
    /// # Errors
    /// `Unexpected` when storage fails; then nothing is stored.
    async fn record(
        &self,
        project: ProjectId,
        events: Vec<SurveyEvent>,
        sets: ProfileSets,
    ) -> Result<usize, Unexpected>;

    /// Responses by `$survey_id` whose latest event is at or after the earliest `start_date` of
    /// the project's surveys (PostHog's bound), empty when no survey was ever launched. The work
    /// is proportional to the number of survey ids, not of events.
    async fn counts(
        &self,
        project: ProjectId,
        filter: &CountFilter,
    ) -> Result<ResponseCounts, Unexpected>;

    /// A survey's responses that `filter` and `answers` keep, newest first (ties by uuid,
    /// descending); `count` is how many there are.
    ///
    /// These rules are the one statement of what both stores implement (the fake in Rust, the
    /// PostgreSQL store in SQL; the contract tests hold them to it), and [`tallies`](Self::tallies)
    /// shares them:
    /// - A question's *answer* is the value under its [`AnswerKeys`](super::AnswerKeys) `id`,
    ///   else under its `index` (older SDKs); it is *given* unless absent, `null`, `""` or `[]`.
    ///   A capture stores given answers only ([`SubmissionDraft`](super::SubmissionDraft)), so
    ///   an answer left blank under its id is read under its index, as PostHog reads it.
    /// - With `answers.question`, a response is kept when that answer is given and, with a
    ///   search, the search is found in it; without a question, a search keeps a response when
    ///   it is found in any of its answers.
    /// - A search is found in an answer when one of the answer's texts (the answer itself when a
    ///   string, its strings when a list; numbers and objects are never searched) contains it as
    ///   a substring, ignoring case; `%`, `_` and `\` are ordinary characters.
    ///
    /// Answers are read as lists read them: each answer longer than
    /// [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES) (a text answer's text, another answer's
    /// JSON text; stored before capture refused them) reads as a string of the first
    /// `MAX_ANSWER_BYTES` characters of that text, so no read holds an answer of any size.
    ///
    /// The page ends early, after fewer than `page.limit` rows, once the answers read (their
    /// JSON text, as read) pass `answer_bytes`: the rows kept are
    /// [`rows_within`](super::rows_within) that budget, at least one; `count` is still the whole
    /// list's, and the next page starts after the last row kept.
    async fn responses(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        answers: &AnswerFilter,
        page: PageRequest,
        answer_bytes: usize,
    ) -> Result<Page<SurveyResponse>, Unexpected>;

    /// PostHog's list: the survey's responses within `request.window` (both ends inclusive),
    /// archived ones left out with `exclude_archived`, with `question` those that gave it an
    /// answer (as [`responses`](Self::responses) defines both) and with `score` those whose
    /// answer to it is a number within the range ([`ScoreRange::contains`](super::ScoreRange::contains));
    /// newest first (ties by uuid, descending), the first `offset` skipped, at most `limit`;
    /// `has_more` when another follows. Answers read as [`responses`](Self::responses) reads
    /// them, and the slice ends early, the same way, once its answers and contexts (their JSON
    /// text, as read) pass `answer_bytes`: then `cut_short` and `has_more` are set. One
    /// statement over the list index, skipping `offset` rows of it.
    async fn slice(
        &self,
        project: ProjectId,
        survey_id: &str,
        request: &SliceRequest,
        answer_bytes: usize,
    ) -> Result<ResponseSlice, Unexpected>;

    /// How many of a survey's responses `filter` keeps and, for each of `questions` in order,
    /// its [`Tally`](super::Tally): added up in one read of those responses, never returning
    /// them.
    ///
    /// `answered` counts the responses whose answer to the question is given (as
    /// [`responses`](Self::responses) defines both). With `values`, each given answer gives
    /// values: a string is one (its first [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES)
    /// characters), a number one (its JSON text), a list each of its strings and numbers,
    /// anything else none. The values given most are listed, most first, ties by value
    /// (bytewise), at most [`MAX_TALLIED_VALUES`](super::MAX_TALLIED_VALUES); `others` adds up
    /// how often the rest were given.
    async fn tallies(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        questions: &[TallyRequest],
    ) -> Result<Tallies, Unexpected>;

    /// Up to `limit` of a survey's responses that `filter` keeps, sorted after `after` (newest
    /// first, ties by uuid descending; from the newest without `after`): one batch of an export,
    /// found through the list index whatever the batch's place. Answers read as
    /// [`responses`](Self::responses) reads them, and the batch ends early, the same way, once
    /// they pass `answer_bytes`; it is empty only past the last response.
    async fn responses_after(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        after: Option<ExportCursor>,
        limit: u32,
        answer_bytes: usize,
    ) -> Result<Vec<SurveyResponse>, Unexpected>;

    /// Archives (or restores) the response that the response event `event` belongs to, with
    /// the counts, in one transaction. `false` when the survey has no such response.
    async fn set_archived(
        &self,
        project: ProjectId,
        survey_id: &str,
        event: Uuid,
        archived: bool,
    ) -> Result<bool, Unexpected>;

    /// Deletes the response the response event `event` belongs to, with its submission's
    /// response events and their pending webhook deliveries, takes it off the counts, and logs
    /// `activity` in the survey's log, in one write. `false` when the survey has no such
    /// response.
    ///
    /// # Errors
    /// `Unexpected` when storage fails; then nothing is deleted.
    async fn delete_response(
        &self,
        project: ProjectId,
        survey: SurveyId,
        event: Uuid,
        activity: &NewActivity,
    ) -> Result<bool, Unexpected>;

    /// Deletes every response and event of a survey (and their pending webhook deliveries),
    /// emptying its counts, and logs `activity`, in one write.
    ///
    /// # Errors
    /// `Unexpected` when storage fails; then nothing is deleted.
    async fn delete_survey_responses(
        &self,
        project: ProjectId,
        survey: SurveyId,
        activity: &NewActivity,
    ) -> Result<Forgotten, Unexpected>;

    /// Deletes the stored properties of the persons with these distinct ids and, with `events`,
    /// every survey event and response of theirs in the project (with their pending webhook
    /// deliveries, off the counts), in one write.
    ///
    /// # Errors
    /// `Unexpected` when storage fails; then nothing is deleted.
    async fn delete_persons(
        &self,
        project: ProjectId,
        distinct_ids: &[String],
        events: bool,
    ) -> Result<Forgotten, Unexpected>;

    /// The uuids of a survey's archived responses, newest first.
    async fn archived_uuids(
        &self,
        project: ProjectId,
        survey_id: &str,
    ) -> Result<Vec<Uuid>, Unexpected>;

    /// Totals of the surveys' events within `window`: shown and dismissed events, and
    /// responses for sent (by their time; archived ones left out with `exclude_archived`); and
    /// how many persons both dismissed and sent. A dismissal that is a response event
    /// ([`SurveyEvent::is_response`]) is counted as sent, through its response, never as a
    /// dismissal, as PostHog does; abandons are counted only so.
    async fn aggregates(
        &self,
        project: ProjectId,
        survey_ids: &[String],
        window: DateWindow,
        exclude_archived: bool,
    ) -> Result<StatsAggregates, Unexpected>;
}
