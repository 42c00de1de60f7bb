//! `SurveyResponseRepository` over `survey_events` (every kept event, once per uuid),
//! `survey_responses` (one row per submission, the latest send wins),
//! `survey_response_counts` (per survey id, in a few slots that concurrent captures add to
//! without waiting on each other) and `person_properties` (what the events `$set`): a capture
//! writes all four in one statement, and counting reads a few rows per survey whatever the
//! number of events.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::sync::LazyLock;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{
    Array, Bool, Int4, Int8, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid, Varchar,
};
use diesel_async::{AsyncConnection as _, RunQueryDsl};
use domain::Unexpected;
use domain::activity::NewActivity;
use domain::person::PersonSet;
use domain::ports::{Page, PageRequest};
use domain::survey::SurveyId;
use domain::survey_response::{
    AnswerFilter, CountFilter, DateWindow, EventAggregate, ExportCursor, Forgotten,
    MAX_ANSWER_BYTES, MAX_TALLIED_VALUES, ResponseCounts, ResponseFilter, SearchText,
    StatsAggregates, SurveyEvent, SurveyEventKind, SurveyResponse, SurveyResponseRepository,
    Tallies, Tally, TallyRequest, rows_within,
};
use domain::tenancy::ProjectId;
use domain::webhook::completes;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::postgres::capture_queue::{Capture, CaptureQueue, MOST_EVENTS_TOGETHER};
use crate::postgres::confirmed::confirmed;
use crate::postgres::database::Database;
use crate::postgres::errors::{StorageContext, is_unavailable};
use crate::postgres::paging::{page, window};
use crate::postgres::prepared::prepared;
use crate::postgres::schema::{survey_events, survey_responses};
use crate::postgres::server_watch::mark_unavailable;
use crate::postgres::text::{pg_object, pg_string, pg_text};

/// Survey events, responses and their counters, and what captures `$set` on persons, in
/// PostgreSQL.
pub struct PgSurveyResponseRepository {
    database: Database,
    captures: CaptureQueue,
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
        }
    }
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

/// What [`RECORD_CAPTURE`] answers that the caller needs: the uuids of the events it stored.
#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Array<SqlUuid>)]
    stored: Vec<Uuid>,
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

/// How many counter slots a survey's response count is spread over; the migration's `CHECK`
/// on `survey_response_counts.slot` allows these.
const COUNTER_SLOTS: i32 = 16;

/// The row of a survey's counter a capture writer adds its new responses to: concurrent
/// writers add to different rows, so answers to one survey never queue on one row's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CounterSlot(i32);

impl CounterSlot {
    /// Distinct slots for a node's `writers` (they wrap around past [`COUNTER_SLOTS`]), starting
    /// at a random one, so nodes sharing a database mostly add to different rows too.
    pub(crate) fn for_writers(writers: usize) -> Vec<Self> {
        let first = i32::from(Uuid::new_v4().as_bytes()[0]);
        (first..)
            .take(writers)
            .map(|slot| Self(slot % COUNTER_SLOTS))
            .collect()
    }
}

/// One or more whole captures of a project (those that waited together, `capture_queue.rs`) in
/// one statement, atomic without `BEGIN`/`COMMIT`: the events are inserted
/// (uuids the project has are skipped); the sends among them that are new upsert their
/// submission's response (a later send replaces it, an earlier one does not); new responses are
/// added to the survey's counter in the writer's slot ([`CounterSlot`]); the person sets are
/// merged with jsonb `||`; a survey whose responses reach its `responses_limit` is stopped in the
/// same write (`end_date` now, the limit cleared, as PostHog's task does hours later: its feed
/// entry and internal targeting flag follow at once, through the surveys trigger's notification;
/// captures racing past the limit together may overshoot it by their own responses, and the next
/// one stops it); and, when the project has an enabled webhook, each new send goes to the
/// webhook outbox, once whatever the number of webhooks (an acknowledged answer is delivered
/// even if the process dies next; the dispatcher fans it out, `delivery_queue.rs`; a project
/// without webhooks pays one index probe). Every input is
/// an array, so a batch of any size takes these 19 parameters (PostgreSQL allows 65,535). It
/// answers the uuids of the events it stored.
///
/// The statement lives in the `burrow_record_capture` PL/pgSQL function (migrations
/// `2026-11-24-230000_record_capture_function` and the three after it), so each pooled
/// connection plans it once: sent as
/// text, it was planned for every capture, and planning took longer than running it.
///
/// Concurrent captures lock rows table by table in one order (events, responses, counters,
/// persons; the outbox only inserts), each in key order (the arrays arrive sorted; `ORDER BY`
/// where SQL regroups), so they may wait on each other but never deadlock. That order is the
/// final `SELECT`'s: its subqueries run in turn, each reading its step to the end. Outbox
/// entries are inserted in event order (time, then uuid), which their `seq` keeps.
const RECORD_CAPTURE: &str = "SELECT burrow_record_capture(
    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19
) AS stored";

/// Adds `$3` (1 or -1) to a survey's archived count, which lives in slot 0 (see the migration):
/// archiving is rare enough not to need spreading. Slot 0 may have no row yet when a response
/// is archived; unarchiving finds the row that archiving made. The inserted row is checked
/// before the conflict is found, so it never holds -1.
const ADD_TO_ARCHIVED: &str = "
INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses, archived)
VALUES ($1, $2, 0, 0, greatest($3, 0))
ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET archived = c.archived + $3";

/// A deletion of responses and events (which ones, the invoker's SQL says), written as one
/// statement: their pending webhook deliveries go too (nothing deleted is sent afterwards), and
/// each survey's counts lose the deleted responses in slot 0 (responses may go below zero there,
/// the sum stays exact; `archived` lives in slot 0 only, so it stays a true count). `$1` is the
/// project; `$before` adds CTEs the selections use, `$after` CTEs that read `gone`, `$persons`
/// the count of persons deleted. The final `SELECT` reads events, responses, counters and
/// persons in that order, the order captures lock them in, so the two never deadlock.
macro_rules! forget_statement {
    (before: $before:literal, responses: $responses:literal, events: $events:literal,
     after: $after:literal, persons: $persons:literal) => {
        concat!(
            "WITH ", $before, "
gone AS (
    DELETE FROM survey_responses r WHERE r.project_id = $1 AND (", $responses, ")
    RETURNING r.survey_id, r.archived
),
events AS (
    DELETE FROM survey_events e WHERE e.project_id = $1 AND (", $events, ")
    RETURNING e.uuid
),
deliveries AS (
    DELETE FROM webhook_deliveries d
    WHERE d.project_id = $1 AND d.state = 'pending' AND d.event_uuid IN (SELECT uuid FROM events)
    RETURNING 1
),
counted AS (
    INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses)
    SELECT $1, survey_id, 0, -count(*) FROM gone GROUP BY survey_id ORDER BY survey_id
    ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET
        responses = c.responses + EXCLUDED.responses,
        archived = c.archived - (
            SELECT count(*) FROM gone g WHERE g.survey_id = EXCLUDED.survey_id AND g.archived)
    RETURNING 1
)", $after, "
SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM gone) AS responses,
       (SELECT count(*) FROM counted) AS counted, (SELECT count(*) FROM deliveries) AS deliveries,
       ", $persons, " AS persons"
        )
    };
}

/// One response (`$2` its survey, `$3` a `survey sent` event of its submission) and the sends
/// of its submission; logged as `$4`…`$8` (entry id, survey uuid, user, activity, detail) when
/// there was one.
const DELETE_RESPONSE: &str = forget_statement!(
    before: "submission AS (
    SELECT coalesce(submission_id, uuid::text) AS key, submission_id FROM survey_events
    WHERE project_id = $1 AND uuid = $3 AND survey_id = $2 AND event = 'survey sent'
),",
    responses: "r.survey_id = $2 AND r.submission_key = (SELECT key FROM submission)",
    events: "e.survey_id = $2 AND e.event = 'survey sent' AND (
        e.submission_id = (SELECT submission_id FROM submission)
        OR (e.uuid = $3 AND EXISTS (SELECT 1 FROM submission)))",
    after: ",
logged AS (
    INSERT INTO survey_activity (id, project_id, survey_id, user_id, activity, detail)
    SELECT $4, $1, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM gone)
    RETURNING 1
)",
    persons: "0::int8"
);

/// Every response and event of the survey `$2`, logged as `$3`…`$7` (entry id, survey uuid,
/// user, activity, detail).
const DELETE_SURVEY_RESPONSES: &str = forget_statement!(
    before: "",
    responses: "r.survey_id = $2",
    events: "e.survey_id = $2",
    after: ",
logged AS (
    INSERT INTO survey_activity (id, project_id, survey_id, user_id, activity, detail)
    VALUES ($3, $1, $4, $5, $6, $7)
    RETURNING 1
)",
    persons: "0::int8"
);

/// The persons `$2` (distinct ids): their stored properties, and with `$3` their events and
/// responses.
const DELETE_PERSONS: &str = forget_statement!(
    before: "persons AS (
    DELETE FROM person_properties p WHERE p.project_id = $1 AND p.distinct_id = ANY($2)
    RETURNING 1
),",
    responses: "$3 AND r.distinct_id = ANY($2)",
    events: "$3 AND e.distinct_id = ANY($2)",
    after: "",
    persons: "(SELECT count(*) FROM persons)"
);

/// What a deletion statement counted.
#[derive(QueryableByName)]
struct ForgottenRows {
    #[diesel(sql_type = Int8)]
    responses: i64,
    #[diesel(sql_type = Int8)]
    events: i64,
    #[diesel(sql_type = Int8)]
    persons: i64,
}

impl From<ForgottenRows> for Forgotten {
    fn from(rows: ForgottenRows) -> Self {
        Self {
            persons: rows.persons.unsigned_abs(),
            events: rows.events.unsigned_abs(),
            responses: rows.responses.unsigned_abs(),
        }
    }
}

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

/// A response's answers as an object (a stored value of another shape reads as none), so the
/// jsonb functions below never meet a shape they refuse.
macro_rules! answers_object {
    () => {
        "CASE jsonb_typeof(answers) WHEN 'object' THEN answers ELSE '{}'::jsonb END"
    };
}

/// Whether the answer `v` (an SQL expression naming a jsonb value) was given:
/// `domain::survey_response::is_answered`.
macro_rules! answered {
    ($v:literal) => {
        concat!(
            $v,
            " IS NOT NULL AND ",
            $v,
            " NOT IN ('null'::jsonb, '\"\"'::jsonb, '[]'::jsonb)"
        )
    };
}

/// The items of the answer `v`: its elements when it is a list, itself otherwise.
macro_rules! items {
    ($v:literal) => {
        concat!(
            "jsonb_array_elements(CASE jsonb_typeof(",
            $v,
            ") WHEN 'array' THEN ",
            $v,
            " ELSE jsonb_build_array(",
            $v,
            ") END)"
        )
    };
}

/// Whether the answer `v` has a string item matching the `ILIKE` pattern bound next:
/// `domain::survey_response::answer_texts` searched.
macro_rules! searched {
    ($v:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM ",
            items!($v),
            " e WHERE jsonb_typeof(e) = 'string' AND e #>> '{}' ILIKE "
        )
    };
}

/// The survey `$2`'s responses that the filter keeps (`$3`…`$5`: window, archived left out),
/// and for each question of `$6`…`$9` (order, id key, legacy index key, whether values are
/// counted): how many answered it, its values given (the `$10` most given, ties by value
/// bytewise, as `domain::survey_response::ranked` orders them; each its first `$11` characters,
/// as `tallied_values` cuts them) and how many other values were given. One pass over the kept
/// responses; rows are told apart by `kind`.
const TALLIES: &str = concat!(
    "
WITH kept AS (
    SELECT ",
    answers_object!(),
    " AS answers FROM survey_responses
    WHERE project_id = $1 AND survey_id = $2
      AND ($3::timestamptz IS NULL OR timestamp >= $3)
      AND ($4::timestamptz IS NULL OR timestamp <= $4)
      AND NOT ($5 AND archived)
),
questions AS (
    SELECT * FROM unnest($6::int4[], $7::text[], $8::text[], $9::bool[])
        AS q(ord, id_key, index_key, counted)
),
answered AS (
    SELECT q.ord, q.counted, a.v
    FROM kept CROSS JOIN questions q
    CROSS JOIN LATERAL (
        SELECT coalesce(kept.answers -> q.id_key, kept.answers -> q.index_key) AS v
    ) a
    WHERE ",
    answered!("a.v"),
    "
),
given AS (
    SELECT answered.ord, left(e #>> '{}', $11) AS value, count(*) AS n
    FROM answered CROSS JOIN LATERAL ",
    items!("answered.v"),
    " e
    WHERE answered.counted AND jsonb_typeof(e) IN ('string', 'number')
    GROUP BY answered.ord, left(e #>> '{}', $11)
),
ranked AS (
    SELECT ord, value, n,
           row_number() OVER (PARTITION BY ord ORDER BY n DESC, value COLLATE \"C\") AS rank
    FROM given
)
SELECT 'responses'::text AS kind, 0 AS ord, NULL::text AS value, count(*)::int8 AS n FROM kept
UNION ALL
SELECT 'answered', ord, NULL, count(*)::int8 FROM answered GROUP BY ord
UNION ALL
SELECT 'value', ord, value, n::int8 FROM ranked WHERE rank <= $10
UNION ALL
SELECT 'others', ord, NULL, sum(n)::int8 FROM ranked WHERE rank > $10 GROUP BY ord"
);

/// One row of [`TALLIES`].
#[derive(QueryableByName)]
struct TallyRow {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Int4)]
    ord: i32,
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
    #[diesel(sql_type = Int8)]
    n: i64,
}

/// An `ILIKE` pattern finding `search` anywhere: its `\`, `%` and `_` escaped, so they match
/// themselves.
fn contains_pattern(search: &SearchText) -> String {
    let mut pattern = String::from("%");
    for c in pg_text(search.as_str()).chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Writes captures of one project with one [`RECORD_CAPTURE`] statement, as if one after the
/// other: one copy of each uuid (a retried event is one event), each submission's latest send,
/// each person's sets merged in turn, new responses counted in `slot`. Answers the uuids of the
/// events that were new.
///
/// A connection keeps buffers as large as the largest statement it sent for as long as it lives
/// (tokio-postgres never shrinks them), so after more events than the queue puts in one
/// statement (one large batch), the connection is closed rather than pooled: a burst of large
/// batches leaves no memory behind.
pub(crate) async fn write_captures(
    database: &Database,
    slot: CounterSlot,
    captures: &[&Capture],
) -> Result<HashSet<Uuid>, Unexpected> {
    let Some(project) = captures.first().map(|capture| capture.project) else {
        return Ok(HashSet::new());
    };
    // In uuid order, so concurrent statements lock events in one order.
    let mut unique: BTreeMap<Uuid, &SurveyEvent> = BTreeMap::new();
    for event in captures.iter().flat_map(|capture| &capture.events) {
        unique.entry(event.uuid).or_insert(event);
    }
    let events: Vec<&SurveyEvent> = unique.into_values().collect();
    let sends = latest_sends(events.iter().copied());
    let answers: Vec<Map<String, Value>> = sends.iter().map(|(_, e)| e.answers()).collect();
    let outbox = webhook_sends(&events);
    let (distinct_ids, properties): (Vec<String>, Vec<Value>) =
        storable_sets(captures.iter().flat_map(|capture| &capture.person_sets))
            .into_iter()
            .map(|(distinct_id, set)| (distinct_id, Value::Object(set)))
            .unzip();
    let mut conn = database.writer_connection().await?;
    let recorded: Recorded = confirmed(
        prepared(
            diesel::sql_query(RECORD_CAPTURE)
                .bind::<Int4, _>(project.0)
                .bind::<Array<SqlUuid>, _>(column(&events, |e| e.uuid))
                .bind::<Array<Varchar>, _>(column(&events, |e| e.kind.as_str()))
                .bind::<Array<Varchar>, _>(column(&events, |e| &e.survey_id))
                .bind::<Array<Varchar>, _>(column(&events, |e| &e.distinct_id))
                .bind::<Array<Timestamptz>, _>(column(&events, |e| e.timestamp))
                .bind::<Array<Nullable<Varchar>>, _>(column(&events, |e| e.submission_id.as_ref()))
                .bind::<Array<Jsonb>, _>(column(&events, |e| JsonbObject(&e.properties)))
                .bind::<Array<SqlUuid>, _>(column(&sends, |(_, e)| e.uuid))
                .bind::<Array<Varchar>, _>(column(&sends, |(key, _)| key))
                .bind::<Array<Jsonb>, _>(column(&answers, JsonbObject))
                .bind::<Array<Nullable<Bool>>, _>(column(&sends, |(_, e)| e.completed()))
                .bind::<Int4, _>(slot.0)
                .bind::<Array<Text>, _>(distinct_ids)
                .bind::<Array<Jsonb>, _>(properties)
                .bind::<Array<SqlUuid>, _>(column(&outbox, |send| send.uuid))
                .bind::<Array<Varchar>, _>(column(&outbox, |send| &send.submission_key))
                .bind::<Array<Bool>, _>(column(&outbox, |send| send.earliest))
                .bind::<Array<Bool>, _>(column(&outbox, |send| send.completes)),
        ),
        &mut conn,
    )
    .await
    .inspect_err(|error| {
        if is_unavailable(error) {
            mark_unavailable(&mut conn);
        }
    })
    .during("recording a capture")?;
    if events.len() > MOST_EVENTS_TOGETHER {
        Database::close(conn);
    }
    Ok(recorded.stored.into_iter().collect())
}

/// A JSON object bound as `jsonb` from where it lies: a capture's properties are written without
/// a `Value` copy of each being built first (a batch's peak memory is a few copies of its
/// events).
#[derive(Debug)]
struct JsonbObject<'a>(&'a Map<String, Value>);

impl ToSql<Jsonb, Pg> for JsonbObject<'_> {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        // jsonb's binary format: its version, 1, then the JSON text.
        out.write_all(&[1])?;
        serde_json::to_writer(out, self.0)?;
        Ok(IsNull::No)
    }
}

/// The event with its captured text as PostgreSQL can store it, before anything is grouped by
/// that text (so ids that differ only where U+0000 was are one submission, as stored).
fn storable(event: SurveyEvent) -> SurveyEvent {
    SurveyEvent {
        survey_id: pg_string(event.survey_id),
        distinct_id: pg_string(event.distinct_id),
        submission_id: event.submission_id.map(pg_string),
        properties: pg_object(event.properties),
        ..event
    }
}

/// Per submission, the batch's latest send, in key order. The statement upserts it only if
/// that event is new: one stored already made its submission's response at least as late as
/// itself, and so as every send of this batch, which then has nothing to change there.
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

/// A send as the webhook outbox needs it.
struct WebhookSend {
    uuid: Uuid,
    submission_key: String,
    /// The batch's earliest send of its submission: it created the response if the statement
    /// inserted one.
    earliest: bool,
    completes: bool,
}

/// Every send of the batch, marking each submission's earliest (by time, then uuid).
fn webhook_sends(events: &[&SurveyEvent]) -> Vec<WebhookSend> {
    let mut earliest: BTreeMap<(&str, String), (DateTime<Utc>, Uuid)> = BTreeMap::new();
    for event in events.iter().filter(|e| e.kind == SurveyEventKind::Sent) {
        let at = (event.timestamp, event.uuid);
        earliest
            .entry((event.survey_id.as_str(), event.submission_key()))
            .and_modify(|first| *first = (*first).min(at))
            .or_insert(at);
    }
    events
        .iter()
        .filter(|e| e.kind == SurveyEventKind::Sent)
        .map(|event| {
            let submission_key = event.submission_key();
            let first = earliest.get(&(event.survey_id.as_str(), submission_key.clone()));
            WebhookSend {
                uuid: event.uuid,
                earliest: first == Some(&(event.timestamp, event.uuid)),
                submission_key,
                completes: completes(event),
            }
        })
        .collect()
}

/// The person sets as stored (`text.rs`), keyed by distinct id so persons are locked in key
/// order; sets whose ids are stored alike are merged in turn, as the statement could not upsert
/// one person twice.
fn storable_sets<'a>(
    sets: impl Iterator<Item = &'a PersonSet>,
) -> BTreeMap<String, Map<String, Value>> {
    let mut stored: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for set in sets {
        stored
            .entry(pg_text(&set.distinct_id).into_owned())
            .or_default()
            .extend(pg_object(set.properties.clone()));
    }
    stored
}

/// One column of a statement's array parameter: `field` of every item.
fn column<'a, T, U>(items: &'a [T], field: impl FnMut(&'a T) -> U) -> Vec<U> {
    items.iter().map(field).collect()
}

/// A response's answers as lists read them (the port's rule): each answer longer than
/// [`MAX_ANSWER_BYTES`] (a text answer's text, another answer's JSON text; stored before capture
/// refused them) as a string of its first `MAX_ANSWER_BYTES` characters. The object is rebuilt
/// only when one of its answers is cut (the aggregate's `HAVING` leaves no row otherwise), and
/// read once: every reference to a large column detoasts it again.
static ANSWERS_AS_READ: LazyLock<String> = LazyLock::new(|| {
    format!(
        "coalesce((
            SELECT jsonb_object_agg(a.k, CASE WHEN a.over THEN to_jsonb(left(a.v #>> '{{}}', {limit}))
                                              ELSE a.v END)
            FROM (SELECT e.k, e.v,
                         CASE jsonb_typeof(e.v) WHEN 'string' THEN octet_length(e.v #>> '{{}}')
                                                ELSE octet_length(e.v::text) END > {limit} AS over
                  FROM jsonb_each({answers}) AS e(k, v)) a
            HAVING bool_or(a.over)), answers)",
        limit = MAX_ANSWER_BYTES,
        answers = answers_object!(),
    )
});

/// The size of [`ANSWERS_AS_READ`]: what a page's or an export batch's byte budget counts.
static ANSWER_BYTES_AS_READ: LazyLock<String> =
    LazyLock::new(|| format!("octet_length(({})::text)", *ANSWERS_AS_READ));

/// Where a row sits in list order, and the size of its answers as read.
type SizedRow = (DateTime<Utc>, Uuid, i32);

/// The rows of `sized` (a window of one survey's responses in list order, sizes read first)
/// that fit `answer_bytes`, read with their answers as lists read them: a read never holds
/// more answers than its budget (and one row) whatever the rows' sizes.
async fn rows_within_budget(
    conn: &mut diesel_async::AsyncPgConnection,
    project: ProjectId,
    survey_id: &str,
    sized: &[SizedRow],
    answer_bytes: usize,
) -> Result<Vec<SurveyResponse>, Unexpected> {
    let kept = rows_within(
        sized
            .iter()
            .map(|(_, _, bytes)| usize::try_from(*bytes).unwrap_or(0)),
        answer_bytes,
    );
    let places: Vec<(DateTime<Utc>, Uuid)> = sized[..kept]
        .iter()
        .map(|(timestamp, uuid, _)| (*timestamp, *uuid))
        .collect();
    let Some(rows) = these(project, survey_id, &places) else {
        return Ok(Vec::new());
    };
    let rows: Vec<ResponseRow> = rows
        .select((
            survey_responses::event_uuid,
            survey_responses::distinct_id,
            survey_responses::submission_id,
            survey_responses::timestamp,
            diesel::dsl::sql::<Jsonb>(&ANSWERS_AS_READ),
            survey_responses::completed,
            survey_responses::archived,
        ))
        .load(conn)
        .await
        .during("reading survey responses")?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// The answer sizes of these rows of one survey, in list order.
async fn sizes(
    conn: &mut diesel_async::AsyncPgConnection,
    project: ProjectId,
    survey_id: &str,
    places: &[(DateTime<Utc>, Uuid)],
) -> Result<Vec<SizedRow>, Unexpected> {
    let Some(rows) = these(project, survey_id, places) else {
        return Ok(Vec::new());
    };
    rows.select(sized_rows())
        .load(conn)
        .await
        .during("sizing survey responses")
}

/// The rows of one survey at these places (time and uuid, in list order), in list order:
/// found through the list index by their time range. `None` for no places.
fn these<'a>(
    project: ProjectId,
    survey_id: &'a str,
    places: &[(DateTime<Utc>, Uuid)],
) -> Option<survey_responses::BoxedQuery<'a, diesel::pg::Pg>> {
    let ((newest, _), (oldest, _)) = (places.first()?, places.last()?);
    Some(
        survey_responses::table
            .filter(survey_responses::project_id.eq(project.0))
            .filter(survey_responses::survey_id.eq(survey_id))
            .filter(survey_responses::timestamp.le(*newest))
            .filter(survey_responses::timestamp.ge(*oldest))
            .filter(
                survey_responses::event_uuid
                    .eq_any(places.iter().map(|(_, uuid)| *uuid).collect::<Vec<_>>()),
            )
            .order((
                survey_responses::timestamp.desc(),
                survey_responses::event_uuid.desc(),
            ))
            .into_boxed(),
    )
}

/// What [`rows_within_budget`] takes of each row of a window, in list order.
fn sized_rows() -> (
    survey_responses::timestamp,
    survey_responses::event_uuid,
    diesel::expression::SqlLiteral<Int4>,
) {
    (
        survey_responses::timestamp,
        survey_responses::event_uuid,
        diesel::dsl::sql::<Int4>(&ANSWER_BYTES_AS_READ),
    )
}

/// A survey's responses that the filter keeps.
fn kept<'a>(
    project: ProjectId,
    survey_id: &'a str,
    filter: &ResponseFilter,
) -> survey_responses::BoxedQuery<'a, diesel::pg::Pg> {
    let mut query = survey_responses::table
        .filter(survey_responses::project_id.eq(project.0))
        .filter(survey_responses::survey_id.eq(survey_id))
        .into_boxed();
    if let Some(from) = filter.window.from {
        query = query.filter(survey_responses::timestamp.ge(from));
    }
    if let Some(to) = filter.window.to {
        query = query.filter(survey_responses::timestamp.le(to));
    }
    if filter.exclude_archived {
        query = query.filter(survey_responses::archived.eq(false));
    }
    query
}

/// `query` narrowed to the responses whose answers `answers` keeps.
fn with_answers<'a>(
    query: survey_responses::BoxedQuery<'a, diesel::pg::Pg>,
    answers: &AnswerFilter,
) -> survey_responses::BoxedQuery<'a, diesel::pg::Pg> {
    use diesel::dsl::sql;
    let pattern = answers.search.as_ref().map(contains_pattern);
    match (&answers.question, pattern) {
        (None, None) => query,
        (None, Some(pattern)) => query.filter(
            sql::<Bool>(concat!(
                "EXISTS (SELECT 1 FROM jsonb_each(",
                answers_object!(),
                ") a(k, v) WHERE ",
                searched!("a.v")
            ))
            .bind::<Text, _>(pattern)
            .sql("))"),
        ),
        (Some(keys), pattern) => {
            // The question's answer as `a.v`, found by its id, then by its legacy index.
            let answer = sql::<Bool>("EXISTS (SELECT 1 FROM (SELECT coalesce(answers -> ")
                .bind::<Text, _>(keys.id.clone())
                .sql(", answers -> ")
                .bind::<Nullable<Text>, _>(keys.index.clone())
                .sql(") AS v) a WHERE ")
                .sql(answered!("a.v"));
            match pattern {
                None => query.filter(answer.sql(")")),
                Some(pattern) => query.filter(
                    answer
                        .sql(" AND ")
                        .sql(searched!("a.v"))
                        .bind::<Text, _>(pattern)
                        .sql("))"),
                ),
            }
        }
    }
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
pub(crate) struct PlanLine {
    #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
    pub(crate) line: String,
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
        events: Vec<SurveyEvent>,
        person_sets: Vec<PersonSet>,
    ) -> Result<usize, Unexpected> {
        self.captures
            .record(Capture {
                project,
                events: events.into_iter().map(storable).collect(),
                person_sets,
            })
            .await
    }

    async fn counts(
        &self,
        project: ProjectId,
        filter: &CountFilter,
    ) -> Result<ResponseCounts, Unexpected> {
        let mut conn = self.database.connection().await?;
        let rows: Vec<CountRow> = prepared(
            diesel::sql_query(COUNT_RESPONSES)
                .bind::<Int4, _>(project.0)
                .bind::<Bool, _>(filter.exclude_archived)
                .bind::<Nullable<Array<Varchar>>, _>(filter.survey_ids.as_ref()),
        )
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
        filter: &ResponseFilter,
        answers: &AnswerFilter,
        page_request: PageRequest,
        answer_bytes: usize,
    ) -> Result<Page<SurveyResponse>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let count = with_answers(kept(project, survey_id, filter), answers)
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting survey responses")?;
        // The page's rows first (PostgreSQL would compute a select list for the rows an OFFSET
        // skips too), then the sizes of those rows alone.
        let in_window: Vec<(DateTime<Utc>, Uuid)> = window(
            with_answers(kept(project, survey_id, filter), answers)
                .order((
                    survey_responses::timestamp.desc(),
                    survey_responses::event_uuid.desc(),
                ))
                .select((survey_responses::timestamp, survey_responses::event_uuid)),
            page_request,
        )
        .load(&mut conn)
        .await
        .during("listing survey responses")?;
        let sized = sizes(&mut conn, project, survey_id, &in_window).await?;
        let items = rows_within_budget(&mut conn, project, survey_id, &sized, answer_bytes).await?;
        Ok(page(count, items))
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
        let mut conn = self.database.connection().await?;
        let mut query = kept(project, survey_id, filter);
        if let Some(after) = after {
            // (timestamp, uuid) < (after's): the row-value comparison, spelled out so the list
            // index serves it.
            query = query.filter(
                survey_responses::timestamp
                    .lt(after.timestamp)
                    .or(survey_responses::timestamp
                        .eq(after.timestamp)
                        .and(survey_responses::event_uuid.lt(after.uuid))),
            );
        }
        let sized: Vec<SizedRow> = query
            .order((
                survey_responses::timestamp.desc(),
                survey_responses::event_uuid.desc(),
            ))
            .limit(i64::from(limit))
            .select(sized_rows())
            .load(&mut conn)
            .await
            .during("sizing a batch of an export")?;
        rows_within_budget(&mut conn, project, survey_id, &sized, answer_bytes).await
    }

    async fn tallies(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        questions: &[TallyRequest],
    ) -> Result<Tallies, Unexpected> {
        let order: Vec<i32> = (0..).take(questions.len()).collect();
        let mut conn = self.database.connection().await?;
        let rows: Vec<TallyRow> = prepared(
            diesel::sql_query(TALLIES)
                .bind::<Int4, _>(project.0)
                .bind::<Varchar, _>(survey_id)
                .bind::<Nullable<Timestamptz>, _>(filter.window.from)
                .bind::<Nullable<Timestamptz>, _>(filter.window.to)
                .bind::<Bool, _>(filter.exclude_archived)
                .bind::<Array<Int4>, _>(order)
                .bind::<Array<Text>, _>(column(questions, |q| &q.keys.id))
                .bind::<Array<Nullable<Text>>, _>(column(questions, |q| q.keys.index.as_ref()))
                .bind::<Array<Bool>, _>(column(questions, |q| q.values))
                .bind::<Int8, _>(i64::try_from(MAX_TALLIED_VALUES).unwrap_or(i64::MAX))
                .bind::<Int4, _>(i32::try_from(MAX_ANSWER_BYTES).unwrap_or(i32::MAX)),
        )
        .load(&mut conn)
        .await
        .during("adding up a survey's answers")?;
        let mut tallies = Tallies {
            responses: 0,
            questions: vec![Tally::default(); questions.len()],
        };
        let mut values: Vec<Vec<(String, u64)>> = vec![Vec::new(); questions.len()];
        for row in rows {
            let n = row.n.unsigned_abs();
            let at = usize::try_from(row.ord).unwrap_or(usize::MAX);
            match (row.kind.as_str(), tallies.questions.get_mut(at)) {
                ("responses", _) => tallies.responses = n,
                ("answered", Some(tally)) => tally.answered = n,
                ("others", Some(tally)) => tally.others = n,
                ("value", Some(_)) => values[at].push((row.value.unwrap_or_default(), n)),
                _ => return Err(Unexpected::new("the tallies named no question asked")),
            }
        }
        for (tally, mut listed) in tallies.questions.iter_mut().zip(values) {
            // Rows come in no order; a tally lists the most given first, ties by value.
            listed.sort_by(|(a, a_n), (b, b_n)| b_n.cmp(a_n).then_with(|| a.cmp(b)));
            tally.values = listed;
        }
        Ok(tallies)
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

    async fn delete_response(
        &self,
        project: ProjectId,
        survey: SurveyId,
        event: Uuid,
        activity: &NewActivity,
    ) -> Result<bool, Unexpected> {
        let mut conn = self.database.connection().await?;
        let forgotten: ForgottenRows = confirmed(
            diesel::sql_query(DELETE_RESPONSE)
                .bind::<Int4, _>(project.0)
                .bind::<Varchar, _>(survey.0.to_string())
                .bind::<SqlUuid, _>(event)
                .bind::<SqlUuid, _>(Uuid::now_v7())
                .bind::<SqlUuid, _>(survey.0)
                .bind::<Int4, _>(activity.user.0)
                .bind::<Varchar, _>(activity.activity)
                .bind::<Jsonb, _>(&activity.detail),
            &mut conn,
        )
        .await
        .during("deleting a survey response")?;
        Ok(forgotten.responses > 0)
    }

    async fn delete_survey_responses(
        &self,
        project: ProjectId,
        survey: SurveyId,
        activity: &NewActivity,
    ) -> Result<Forgotten, Unexpected> {
        let mut conn = self.database.connection().await?;
        let forgotten: ForgottenRows = confirmed(
            diesel::sql_query(DELETE_SURVEY_RESPONSES)
                .bind::<Int4, _>(project.0)
                .bind::<Varchar, _>(survey.0.to_string())
                .bind::<SqlUuid, _>(Uuid::now_v7())
                .bind::<SqlUuid, _>(survey.0)
                .bind::<Int4, _>(activity.user.0)
                .bind::<Varchar, _>(activity.activity)
                .bind::<Jsonb, _>(&activity.detail),
            &mut conn,
        )
        .await
        .during("deleting a survey's responses")?;
        Ok(forgotten.into())
    }

    async fn delete_persons(
        &self,
        project: ProjectId,
        distinct_ids: &[String],
        events: bool,
    ) -> Result<Forgotten, Unexpected> {
        let stored: Vec<String> = distinct_ids
            .iter()
            .map(|id| pg_text(id).into_owned())
            .collect();
        let mut conn = self.database.connection().await?;
        let forgotten: ForgottenRows = confirmed(
            diesel::sql_query(DELETE_PERSONS)
                .bind::<Int4, _>(project.0)
                .bind::<Array<Text>, _>(&stored)
                .bind::<Bool, _>(events),
            &mut conn,
        )
        .await
        .during("deleting persons")?;
        Ok(forgotten.into())
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
        let rows: Vec<AggregateRow> = prepared(
            diesel::sql_query(AGGREGATES)
                .bind::<Int4, _>(project.0)
                .bind::<Array<Varchar>, _>(survey_ids)
                .bind::<Nullable<Timestamptz>, _>(window_of_time.from)
                .bind::<Nullable<Timestamptz>, _>(window_of_time.to),
        )
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
