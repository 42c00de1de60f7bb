//! `SurveyResponseRepository` over `survey_events` (every kept event, once per uuid),
//! `survey_responses` (one row per submission, its response events merged),
//! `survey_response_counts` (per survey id, in a few slots that concurrent captures add to
//! without waiting on each other), `person_properties` (what the events `$set`) and
//! `group_types` and `groups` (what `$groupidentify` events name and `$group_set`): a capture
//! writes them all in one statement, and counting reads a few rows per survey whatever the
//! number of events.

mod aggregates;
mod answer_sql;
mod archive;
mod capture;
mod capture_queue;
mod counts;
mod deletion;
mod lists;
mod response_event_sql;
mod tallies;

use async_trait::async_trait;
use domain::Unexpected;
use domain::activity::NewActivity;
use domain::person::ProfileSets;
use domain::ports::{Page, PageRequest};
use domain::survey::SurveyId;
use domain::survey_response::{
    AnswerFilter, CountFilter, DateWindow, ExportCursor, Forgotten, ResponseCounts, ResponseFilter,
    ResponseSlice, SliceRequest, StatsAggregates, SurveyEvent, SurveyResponse,
    SurveyResponseRepository, Tallies, TallyRequest,
};
use domain::tenancy::ProjectId;
use uuid::Uuid;

use std::sync::Arc;

use crate::postgres::database::Database;
use crate::postgres::replica::Replica;
use capture::{Capture, storable};
use capture_queue::CaptureQueue;

/// Survey events, responses and their counters, and what captures `$set` on persons, in
/// PostgreSQL.
pub struct PgSurveyResponseRepository {
    database: Database,
    captures: CaptureQueue,
    /// Where statistics and exports read while it is within its lag bound.
    replica: Option<Arc<Replica>>,
}

impl PgSurveyResponseRepository {
    /// A repository over the shared pool; captures are written on the quarter of its
    /// connections kept for them, one statement on each at most (on two cores, 2 of 8 wrote the
    /// most captures a second: 4 wrote 15 % fewer, 8 a third fewer, their commits competing for
    /// the same CPU; docs/benchmarks.md).
    pub fn new(database: Database) -> Self {
        let writers = database.capture_writers();
        Self {
            captures: CaptureQueue::new(database.clone(), writers),
            database,
            replica: None,
        }
    }

    /// Statistics and exports read from `replica` while it is within its lag bound.
    #[must_use]
    pub fn with_replica(mut self, replica: Arc<Replica>) -> Self {
        self.replica = Some(replica);
        self
    }

    /// Where a read that tolerates a bounded lag goes (statistics, exports): the replica while
    /// it is fresh and has a connection free, else the primary.
    fn lag_tolerant(&self) -> &Database {
        self.replica
            .as_deref()
            .map_or(&self.database, |replica| replica.or(&self.database))
    }
}

/// One column of a statement's array parameter: `field` of every item.
fn column<'a, T, U>(items: &'a [T], field: impl FnMut(&'a T) -> U) -> Vec<U> {
    items.iter().map(field).collect()
}

#[async_trait]
impl SurveyResponseRepository for PgSurveyResponseRepository {
    async fn record(
        &self,
        project: ProjectId,
        events: Vec<SurveyEvent>,
        sets: ProfileSets,
    ) -> Result<usize, Unexpected> {
        self.captures
            .record(Capture {
                project,
                events: events.into_iter().map(storable).collect(),
                sets,
            })
            .await
    }

    async fn counts(
        &self,
        project: ProjectId,
        filter: &CountFilter,
    ) -> Result<ResponseCounts, Unexpected> {
        counts::counts(&self.database, project, filter).await
    }

    async fn responses(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        answers: &AnswerFilter,
        page_request: PageRequest,
        answer_bytes: usize,
    ) -> Result<Page<SurveyResponse>, Unexpected> {
        lists::responses(
            &self.database,
            project,
            survey_id,
            filter,
            answers,
            page_request,
            answer_bytes,
        )
        .await
    }

    async fn slice(
        &self,
        project: ProjectId,
        survey_id: &str,
        request: &SliceRequest,
        answer_bytes: usize,
    ) -> Result<ResponseSlice, Unexpected> {
        lists::slice(&self.database, project, survey_id, request, answer_bytes).await
    }

    async fn responses_after(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        after: Option<ExportCursor>,
        limit: u32,
        answer_bytes: usize,
    ) -> Result<Vec<SurveyResponse>, Unexpected> {
        lists::responses_after(
            self.lag_tolerant(),
            project,
            survey_id,
            filter,
            after,
            limit,
            answer_bytes,
        )
        .await
    }

    async fn tallies(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        questions: &[TallyRequest],
    ) -> Result<Tallies, Unexpected> {
        tallies::tallies(self.lag_tolerant(), project, survey_id, filter, questions).await
    }

    async fn set_archived(
        &self,
        project: ProjectId,
        survey_id: &str,
        event: Uuid,
        archived: bool,
    ) -> Result<bool, Unexpected> {
        archive::set_archived(&self.database, project, survey_id, event, archived).await
    }

    async fn delete_response(
        &self,
        project: ProjectId,
        survey: SurveyId,
        event: Uuid,
        activity: &NewActivity,
    ) -> Result<bool, Unexpected> {
        deletion::delete_response(&self.database, project, survey, event, activity).await
    }

    async fn delete_survey_responses(
        &self,
        project: ProjectId,
        survey: SurveyId,
        activity: &NewActivity,
    ) -> Result<Forgotten, Unexpected> {
        deletion::delete_survey_responses(&self.database, project, survey, activity).await
    }

    async fn delete_persons(
        &self,
        project: ProjectId,
        distinct_ids: &[String],
        events: bool,
    ) -> Result<Forgotten, Unexpected> {
        deletion::delete_persons(&self.database, project, distinct_ids, events).await
    }

    async fn archived_uuids(
        &self,
        project: ProjectId,
        survey_id: &str,
    ) -> Result<Vec<Uuid>, Unexpected> {
        archive::archived_uuids(&self.database, project, survey_id).await
    }

    async fn aggregates(
        &self,
        project: ProjectId,
        survey_ids: &[String],
        window: DateWindow,
        exclude_archived: bool,
    ) -> Result<StatsAggregates, Unexpected> {
        aggregates::aggregates(
            self.lag_tolerant(),
            project,
            survey_ids,
            window,
            exclude_archived,
        )
        .await
    }
}
