//! `SurveyResponseRepository` over `survey_events` (every kept event, once per uuid),
//! `survey_responses` (one row per submission, the latest send wins) and
//! `survey_response_counts` (per survey id, in a few slots that concurrent captures add to
//! without waiting on each other, kept in the same transactions), so counting reads a few rows
//! per survey whatever the number of events.

use std::collections::{BTreeMap, HashSet};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{
    Array, Bool, Int4, Int8, Jsonb, Nullable, Timestamptz, Uuid as SqlUuid, Varchar,
};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use domain::Unexpected;
use domain::ports::{Page, PageRequest};
use domain::survey_response::{
    CountFilter, DateWindow, EventAggregate, ResponseCounts, StatsAggregates, SurveyEvent,
    SurveyEventKind, SurveyResponse, SurveyResponseRepository,
};
use domain::tenancy::ProjectId;
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::database::Database;
use crate::postgres::errors::StorageContext;
use crate::postgres::paging::{page, window};
use crate::postgres::schema::{survey_events, survey_responses};
use crate::postgres::text::{pg_object, pg_text};

/// Survey events and responses in PostgreSQL.
pub struct PgSurveyResponseRepository {
    database: Database,
}

impl PgSurveyResponseRepository {
    /// A repository over the shared pool.
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

/// Rows per multi-row INSERT: eight parameters each stays far below PostgreSQL's 65,535.
const INSERT_CHUNK: usize = 1_000;

#[derive(Insertable)]
#[diesel(table_name = survey_events, check_for_backend(diesel::pg::Pg))]
struct NewEventRow<'a> {
    project_id: i32,
    uuid: Uuid,
    event: &'static str,
    survey_id: &'a str,
    distinct_id: &'a str,
    timestamp: DateTime<Utc>,
    submission_id: Option<&'a str>,
    properties: Value,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = survey_responses, check_for_backend(diesel::pg::Pg))]
struct ResponseRow {
    event_uuid: Uuid,
    distinct_id: String,
    submission_id: Option<String>,
    timestamp: DateTime<Utc>,
    answers: Value,
    completed: Option<bool>,
    archived: bool,
}

impl From<ResponseRow> for SurveyResponse {
    fn from(row: ResponseRow) -> Self {
        Self {
            uuid: row.event_uuid,
            distinct_id: row.distinct_id,
            submission_id: row.submission_id,
            timestamp: row.timestamp,
            answers: match row.answers {
                Value::Object(answers) => answers,
                _ => serde_json::Map::new(),
            },
            completed: row.completed,
            archived: row.archived,
        }
    }
}

#[derive(QueryableByName)]
struct UpsertedResponse {
    #[diesel(sql_type = Varchar)]
    survey_id: String,
    #[diesel(sql_type = Bool)]
    inserted: bool,
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = Varchar)]
    survey_id: String,
    #[diesel(sql_type = Int8)]
    responses: i64,
}

#[derive(QueryableByName)]
struct AggregateRow {
    #[diesel(sql_type = Varchar)]
    event: String,
    #[diesel(sql_type = Int8)]
    total_count: i64,
    #[diesel(sql_type = Int8)]
    unique_persons: i64,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    first_seen: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_seen: Option<DateTime<Utc>>,
}

/// Upserts one response per submission, in key order (so concurrent batches lock rows in the
/// same order), keeping the latest send; reports which rows were new.
const UPSERT_RESPONSES: &str = "
INSERT INTO survey_responses AS r
    (project_id, survey_id, submission_key, submission_id, event_uuid, distinct_id, timestamp,
     answers, completed)
SELECT $1, s.survey_id, s.submission_key, s.submission_id, s.event_uuid, s.distinct_id, s.at,
       s.answers, s.completed
FROM unnest($2::varchar[], $3::varchar[], $4::varchar[], $5::uuid[], $6::varchar[],
            $7::timestamptz[], $8::jsonb[], $9::bool[])
    AS s(survey_id, submission_key, submission_id, event_uuid, distinct_id, at, answers, completed)
ON CONFLICT (project_id, survey_id, submission_key) DO UPDATE SET
    submission_id = EXCLUDED.submission_id,
    event_uuid = EXCLUDED.event_uuid,
    distinct_id = EXCLUDED.distinct_id,
    timestamp = EXCLUDED.timestamp,
    answers = EXCLUDED.answers,
    completed = EXCLUDED.completed
WHERE (r.timestamp, r.event_uuid) < (EXCLUDED.timestamp, EXCLUDED.event_uuid)
RETURNING r.survey_id, (r.xmax = 0) AS inserted";

/// How many counter slots a survey's response count is spread over; the migration's `CHECK`
/// on `survey_response_counts.slot` allows these.
const COUNTER_SLOTS: i32 = 16;

/// Adds new responses to the per-survey counters, in survey id order, in the slot of this
/// connection (`pg_backend_pid()`: a connection runs one transaction at a time, and a pool's
/// connections, opened together, mostly have consecutive pids, so concurrent captures of one
/// survey add to different rows).
const ADD_TO_COUNTS: &str = "
INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses)
SELECT $1, s.survey_id, (pg_backend_pid() % $4)::smallint, s.added
FROM unnest($2::varchar[], $3::int8[]) AS s(survey_id, added)
ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET
    responses = c.responses + EXCLUDED.responses";

/// Adds `$3` (1 or -1) to a survey's archived count, which lives in slot 0 (see the migration):
/// archiving is rare enough not to need spreading. Slot 0 may have no row yet when a response
/// is archived; unarchiving finds the row that archiving made. The inserted row is checked
/// before the conflict is found, so it never holds -1.
const ADD_TO_ARCHIVED: &str = "
INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses, archived)
VALUES ($1, $2, 0, 0, greatest($3, 0))
ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET archived = c.archived + $3";

/// The counters (each survey's slots added up), less responses whose latest send is older than
/// the project's first launch (PostHog's lower bound). Those are found per survey through the
/// list index, so the work grows with the number of surveys (and of such early responses),
/// never with all events.
const COUNT_RESPONSES: &str = "
WITH since AS MATERIALIZED (SELECT min(start_date) AS at FROM surveys WHERE project_id = $1),
counters AS (
    SELECT survey_id, sum(responses)::int8 AS responses, sum(archived)::int8 AS archived
    FROM survey_response_counts
    WHERE project_id = $1 AND ($3::varchar[] IS NULL OR survey_id = ANY($3))
    GROUP BY survey_id
)
SELECT c.survey_id,
       c.responses - early.responses
           - CASE WHEN $2 THEN c.archived - early.archived ELSE 0 END AS responses
FROM counters c
CROSS JOIN since
CROSS JOIN LATERAL (
    SELECT count(*) AS responses, count(*) FILTER (WHERE r.archived) AS archived
    FROM survey_responses r
    WHERE r.project_id = $1 AND r.survey_id = c.survey_id AND r.timestamp < since.at
) early
WHERE since.at IS NOT NULL
ORDER BY c.survey_id";

/// Shown and dismissed events, and non-archived responses as sent, per kind; then the persons
/// who both dismissed and sent, as the row `both`.
const AGGREGATES: &str = "
WITH kept AS (
    SELECT event, distinct_id, timestamp FROM survey_events
    WHERE project_id = $1 AND survey_id = ANY($2)
      AND event IN ('survey shown', 'survey dismissed')
      AND ($3::timestamptz IS NULL OR timestamp >= $3)
      AND ($4::timestamptz IS NULL OR timestamp <= $4)
      AND (event <> 'survey dismissed'
           OR coalesce(properties->>'$survey_partially_completed', '') <> 'true')
    UNION ALL
    SELECT 'survey sent', distinct_id, timestamp FROM survey_responses
    WHERE project_id = $1 AND survey_id = ANY($2) AND NOT archived
      AND ($3::timestamptz IS NULL OR timestamp >= $3)
      AND ($4::timestamptz IS NULL OR timestamp <= $4)
)
SELECT event::varchar AS event, count(*) AS total_count,
       count(DISTINCT distinct_id) AS unique_persons,
       min(timestamp) AS first_seen, max(timestamp) AS last_seen
FROM kept GROUP BY event
UNION ALL
SELECT 'both', count(*), 0, NULL, NULL FROM (
    SELECT distinct_id FROM kept GROUP BY distinct_id
    HAVING bool_or(event = 'survey dismissed') AND bool_or(event = 'survey sent')
) both_kinds";

/// The event with its captured text as PostgreSQL can store it, before anything is grouped by
/// that text (so ids that differ only where U+0000 was are one submission, as stored).
fn storable(event: &SurveyEvent) -> SurveyEvent {
    SurveyEvent {
        uuid: event.uuid,
        kind: event.kind,
        survey_id: pg_text(&event.survey_id).into_owned(),
        distinct_id: pg_text(&event.distinct_id).into_owned(),
        timestamp: event.timestamp,
        submission_id: event
            .submission_id
            .as_deref()
            .map(|id| pg_text(id).into_owned()),
        properties: pg_object(event.properties.clone()),
    }
}

/// The responses one batch adds: per submission, its latest new send, in key order.
fn latest_sends<'a>(
    events: impl Iterator<Item = &'a SurveyEvent>,
) -> Vec<(String, &'a SurveyEvent)> {
    let mut latest: BTreeMap<(String, String), &SurveyEvent> = BTreeMap::new();
    for event in events.filter(|e| e.kind == SurveyEventKind::Sent) {
        latest
            .entry((event.survey_id.clone(), event.submission_key()))
            .and_modify(|kept| {
                if (kept.timestamp, kept.uuid) < (event.timestamp, event.uuid) {
                    *kept = event;
                }
            })
            .or_insert(event);
    }
    latest
        .into_iter()
        .map(|((_, key), event)| (key, event))
        .collect()
}

async fn insert_events(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    events: &[&SurveyEvent],
) -> Result<HashSet<Uuid>, diesel::result::Error> {
    let mut inserted = HashSet::new();
    for chunk in events.chunks(INSERT_CHUNK) {
        let rows: Vec<NewEventRow<'_>> = chunk
            .iter()
            .map(|event| NewEventRow {
                project_id: project.0,
                uuid: event.uuid,
                event: event.kind.as_str(),
                survey_id: &event.survey_id,
                distinct_id: &event.distinct_id,
                timestamp: event.timestamp,
                submission_id: event.submission_id.as_deref(),
                properties: Value::Object(event.properties.clone()),
            })
            .collect();
        let uuids: Vec<Uuid> = diesel::insert_into(survey_events::table)
            .values(&rows)
            .on_conflict_do_nothing()
            .returning(survey_events::uuid)
            .get_results(conn)
            .await?;
        inserted.extend(uuids);
    }
    Ok(inserted)
}

async fn upsert_responses(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    sends: &[(String, &SurveyEvent)],
) -> Result<BTreeMap<String, i64>, diesel::result::Error> {
    let mut added: BTreeMap<String, i64> = BTreeMap::new();
    for chunk in sends.chunks(INSERT_CHUNK) {
        let upserted: Vec<UpsertedResponse> = diesel::sql_query(UPSERT_RESPONSES)
            .bind::<Int4, _>(project.0)
            .bind::<Array<Varchar>, _>(chunk.iter().map(|(_, e)| &e.survey_id).collect::<Vec<_>>())
            .bind::<Array<Varchar>, _>(chunk.iter().map(|(key, _)| key).collect::<Vec<_>>())
            .bind::<Array<Nullable<Varchar>>, _>(
                chunk
                    .iter()
                    .map(|(_, e)| e.submission_id.as_ref())
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<SqlUuid>, _>(chunk.iter().map(|(_, e)| e.uuid).collect::<Vec<_>>())
            .bind::<Array<Varchar>, _>(
                chunk
                    .iter()
                    .map(|(_, e)| &e.distinct_id)
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Timestamptz>, _>(
                chunk.iter().map(|(_, e)| e.timestamp).collect::<Vec<_>>(),
            )
            .bind::<Array<Jsonb>, _>(
                chunk
                    .iter()
                    .map(|(_, e)| Value::Object(e.answers()))
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Nullable<Bool>>, _>(
                chunk.iter().map(|(_, e)| e.completed()).collect::<Vec<_>>(),
            )
            .load(conn)
            .await?;
        for row in upserted.into_iter().filter(|row| row.inserted) {
            *added.entry(row.survey_id).or_insert(0) += 1;
        }
    }
    Ok(added)
}

async fn add_to_counts(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    added: BTreeMap<String, i64>,
) -> Result<(), diesel::result::Error> {
    if added.is_empty() {
        return Ok(());
    }
    let (survey_ids, counts): (Vec<String>, Vec<i64>) = added.into_iter().unzip();
    diesel::sql_query(ADD_TO_COUNTS)
        .bind::<Int4, _>(project.0)
        .bind::<Array<Varchar>, _>(survey_ids)
        .bind::<Array<Int8>, _>(counts)
        .bind::<Int4, _>(COUNTER_SLOTS)
        .execute(conn)
        .await?;
    Ok(())
}

/// A survey's responses within the window.
fn in_window(
    project: ProjectId,
    survey_id: &str,
    window: DateWindow,
) -> survey_responses::BoxedQuery<'_, diesel::pg::Pg> {
    let mut query = survey_responses::table
        .filter(survey_responses::project_id.eq(project.0))
        .filter(survey_responses::survey_id.eq(survey_id))
        .into_boxed();
    if let Some(from) = window.from {
        query = query.filter(survey_responses::timestamp.ge(from));
    }
    if let Some(to) = window.to {
        query = query.filter(survey_responses::timestamp.le(to));
    }
    query
}

fn aggregate(row: &AggregateRow) -> EventAggregate {
    EventAggregate {
        total_count: row.total_count.unsigned_abs(),
        unique_persons: row.unique_persons.unsigned_abs(),
        first_seen: row.first_seen,
        last_seen: row.last_seen,
    }
}

/// One line of `EXPLAIN`'s output.
#[cfg(feature = "testing")]
#[derive(QueryableByName)]
struct PlanLine {
    #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
    line: String,
}

#[cfg(feature = "testing")]
impl PgSurveyResponseRepository {
    /// PostgreSQL's plan for `counts`, so tests can show it reads no events and scans no table
    /// whole, however many events there are.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn counts_plan(&self, project: ProjectId) -> Result<String, Unexpected> {
        let mut conn = self.database.connection().await?;
        let lines: Vec<PlanLine> = diesel::sql_query(format!("EXPLAIN {COUNT_RESPONSES}"))
            .bind::<Int4, _>(project.0)
            .bind::<Bool, _>(true)
            .bind::<Nullable<Array<Varchar>>, _>(None::<Vec<String>>)
            .load(&mut conn)
            .await
            .during("explaining the counts query")?;
        Ok(lines
            .into_iter()
            .map(|l| l.line)
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

#[async_trait]
impl SurveyResponseRepository for PgSurveyResponseRepository {
    async fn record(
        &self,
        project: ProjectId,
        events: &[SurveyEvent],
    ) -> Result<usize, Unexpected> {
        // One copy of each uuid, in uuid order: a retried event inside one batch is one event.
        let mut unique: BTreeMap<Uuid, &SurveyEvent> = BTreeMap::new();
        for event in events {
            unique.entry(event.uuid).or_insert(event);
        }
        let stored: Vec<SurveyEvent> = unique.into_values().map(storable).collect();
        let unique: Vec<&SurveyEvent> = stored.iter().collect();
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            let inserted = insert_events(conn, project, &unique).await?;
            let sends = latest_sends(
                unique
                    .iter()
                    .copied()
                    .filter(|e| inserted.contains(&e.uuid)),
            );
            let added = upsert_responses(conn, project, &sends).await?;
            add_to_counts(conn, project, added).await?;
            Ok(inserted.len())
        })
        .await
        .during("recording survey events")
    }

    async fn counts(
        &self,
        project: ProjectId,
        filter: &CountFilter,
    ) -> Result<ResponseCounts, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows: Vec<CountRow> = diesel::sql_query(COUNT_RESPONSES)
            .bind::<Int4, _>(project.0)
            .bind::<Bool, _>(filter.exclude_archived)
            .bind::<Nullable<Array<Varchar>>, _>(filter.survey_ids.as_ref())
            .load(&mut conn)
            .await
            .during("counting survey responses")?;
        Ok(rows
            .into_iter()
            .filter(|row| row.responses > 0)
            .map(|row| (row.survey_id, row.responses.unsigned_abs()))
            .collect())
    }

    async fn responses(
        &self,
        project: ProjectId,
        survey_id: &str,
        window_of_time: DateWindow,
        page_request: PageRequest,
    ) -> Result<Page<SurveyResponse>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let count = in_window(project, survey_id, window_of_time)
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting survey responses")?;
        let rows: Vec<ResponseRow> = window(
            in_window(project, survey_id, window_of_time)
                .order((
                    survey_responses::timestamp.desc(),
                    survey_responses::event_uuid.desc(),
                ))
                .select(ResponseRow::as_select()),
            page_request,
        )
        .load(&mut conn)
        .await
        .during("listing survey responses")?;
        Ok(page(count, rows.into_iter().map(Into::into).collect()))
    }

    async fn set_archived(
        &self,
        project: ProjectId,
        survey_id: &str,
        event: Uuid,
        archived: bool,
    ) -> Result<bool, Unexpected> {
        let mut conn = self.database.connection().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            let key: Option<String> = survey_events::table
                .filter(survey_events::project_id.eq(project.0))
                .filter(survey_events::uuid.eq(event))
                .filter(survey_events::event.eq(SurveyEventKind::Sent.as_str()))
                .filter(survey_events::survey_id.eq(survey_id))
                .select(diesel::dsl::sql::<Varchar>(
                    "coalesce(submission_id, uuid::text)",
                ))
                .first(conn)
                .await
                .optional()?;
            let Some(key) = key else {
                return Ok(false);
            };
            let response = survey_responses::table
                .find((project.0, survey_id, &key))
                .select(survey_responses::archived)
                .for_update()
                .first::<bool>(conn)
                .await
                .optional()?;
            match response {
                None => Ok(false),
                Some(current) if current == archived => Ok(true),
                Some(_) => {
                    diesel::update(survey_responses::table.find((project.0, survey_id, &key)))
                        .set(survey_responses::archived.eq(archived))
                        .execute(conn)
                        .await?;
                    diesel::sql_query(ADD_TO_ARCHIVED)
                        .bind::<Int4, _>(project.0)
                        .bind::<Varchar, _>(survey_id)
                        .bind::<Int8, _>(if archived { 1 } else { -1 })
                        .execute(conn)
                        .await?;
                    Ok(true)
                }
            }
        })
        .await
        .during("archiving a survey response")
    }

    async fn archived_uuids(
        &self,
        project: ProjectId,
        survey_id: &str,
    ) -> Result<Vec<Uuid>, Unexpected> {
        let mut conn = self.database.connection().await?;
        survey_responses::table
            .filter(survey_responses::project_id.eq(project.0))
            .filter(survey_responses::survey_id.eq(survey_id))
            .filter(survey_responses::archived.eq(true))
            .order((
                survey_responses::timestamp.desc(),
                survey_responses::event_uuid.desc(),
            ))
            .select(survey_responses::event_uuid)
            .load(&mut conn)
            .await
            .during("listing archived survey responses")
    }

    async fn aggregates(
        &self,
        project: ProjectId,
        survey_ids: &[String],
        window_of_time: DateWindow,
    ) -> Result<StatsAggregates, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows: Vec<AggregateRow> = diesel::sql_query(AGGREGATES)
            .bind::<Int4, _>(project.0)
            .bind::<Array<Varchar>, _>(survey_ids)
            .bind::<Nullable<Timestamptz>, _>(window_of_time.from)
            .bind::<Nullable<Timestamptz>, _>(window_of_time.to)
            .load(&mut conn)
            .await
            .during("adding up survey events")?;
        let mut aggregates = StatsAggregates::default();
        for row in &rows {
            match SurveyEventKind::parse(&row.event) {
                Some(SurveyEventKind::Shown) => aggregates.shown = aggregate(row),
                Some(SurveyEventKind::Dismissed) => aggregates.dismissed = aggregate(row),
                Some(SurveyEventKind::Sent) => aggregates.sent = aggregate(row),
                None => aggregates.dismissed_and_sent_persons = row.total_count.unsigned_abs(),
            }
        }
        Ok(aggregates)
    }
}
