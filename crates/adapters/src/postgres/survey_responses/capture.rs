//! The capture statement: one or more captures of a project written in one statement, atomic
//! without `BEGIN`/`COMMIT`.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{
    Array, Bool, Int4, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid, Varchar,
};
use domain::Unexpected;
use domain::group::GroupSet;
use domain::person::{MAX_PROPERTIES_BYTES, PersonSet, ProfileSets, merge_set};
use domain::survey_response::{MAX_RESPONSE_BYTES, SubmissionDraft, SurveyEvent, SurveyEventKind};
use domain::tenancy::ProjectId;
use domain::webhook::completes;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::column;
use crate::postgres::confirmed::confirmed;
use crate::postgres::database::Database;
use crate::postgres::errors::{StorageContext, is_unavailable};
use crate::postgres::prepared::prepared;
use crate::postgres::server_watch::mark_unavailable;
use crate::postgres::text::{pg_object, pg_string, pg_text};

/// One request's capture, as the statement stores it.
pub(super) struct Capture {
    pub(super) project: ProjectId,
    pub(super) events: Vec<SurveyEvent>,
    pub(super) sets: ProfileSets,
}

impl Capture {
    /// The rows it writes at most: its events and its sets (a batch of `$groupidentify` events
    /// has sets and no survey event).
    pub(super) fn rows(&self) -> usize {
        self.events.len() + self.sets.persons.len() + self.sets.groups.len()
    }
}

/// Rows (events and sets) one statement takes at most (always at least one capture, whatever
/// its size): what a statement's parameters hold, and its connection's buffers keep, stays
/// bounded however many captures queue. A connection that wrote a larger capture is closed after
/// it ([`write_captures`]).
pub(super) const MOST_ROWS_TOGETHER: usize = 1_000;

/// What [`RECORD_CAPTURE`] answers that the caller needs: the uuids of the events it stored.
#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Array<SqlUuid>)]
    stored: Vec<Uuid>,
}

/// How many counter slots a survey's response count is spread over; the migration's `CHECK`
/// on `survey_response_counts.slot` allows these.
const COUNTER_SLOTS: i32 = 16;

/// The row of a survey's counter a capture writer adds its new responses to: concurrent
/// writers add to different rows, so answers to one survey never queue on one row's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CounterSlot(i32);

impl CounterSlot {
    /// Distinct slots for a node's `writers` (they wrap around past [`COUNTER_SLOTS`]), starting
    /// at a random one, so nodes sharing a database mostly add to different rows too.
    pub(super) fn for_writers(writers: usize) -> Vec<Self> {
        let first = i32::from(Uuid::new_v4().as_bytes()[0]);
        (first..)
            .take(writers)
            .map(|slot| Self(slot % COUNTER_SLOTS))
            .collect()
    }
}

/// One or more whole captures of a project (those that waited together, `capture_queue.rs`) in
/// one statement, atomic without `BEGIN`/`COMMIT`: the events are inserted
/// (uuids the project has are skipped); each submission some of whose response events are new
/// upserts its response with the draft of the statement's response events of it (merged in
/// time order in Rust, `SubmissionDraft`), merged into the stored response in SQL as
/// `SurveyResponseRepository::record` states (a later draft overrides, an earlier one fills
/// in, and answers and context that would pass [`MAX_RESPONSE_BYTES`] stay as stored); new
/// responses are added to the survey's counter in the writer's slot ([`CounterSlot`]); the person sets are
/// merged with jsonb `||` (a stored `$last_seen_survey_date` later than the set's kept, as
/// `merge_set` keeps it), unless the person's properties would then weigh more than
/// [`MAX_PROPERTIES_BYTES`] (the set is dropped, and so for groups); a survey whose responses reach its `responses_limit` is stopped in the
/// same write (`end_date` now, the limit cleared, as PostHog's task does hours later: its feed
/// entry and internal targeting flag follow at once, through the surveys trigger's notification;
/// captures racing past the limit together may overshoot it by their own responses, and the next
/// one stops it); the group sets name their types, and those the project lacks are inserted with
/// its lowest free indices in the order the sets first name them (never past index 4; an index
/// or name another capture took meanwhile is skipped, `ON CONFLICT DO NOTHING`), then the sets
/// of the types that existed before the statement or that it inserted are merged into their
/// groups with jsonb `||` (the rest are dropped, as the repository's contract says); and, when
/// the project has an enabled webhook, each new send goes to the webhook outbox, once whatever
/// the number of webhooks (an acknowledged answer is delivered even if the process dies next;
/// the dispatcher fans it out, `delivery_queue.rs`; a project without webhooks pays one index
/// probe). Every input is an array, so a batch of any size takes these 31 parameters
/// (PostgreSQL allows 65,535). It answers the uuids of the events it stored.
///
/// The statement is sent kept prepared (`prepared.rs`), so each pooled connection plans it
/// once: sent as text, it was planned for every capture, and planning took longer than running
/// it. (Releases before this one called it as the PL/pgSQL function `burrow_record_capture`,
/// which measured no faster: `docs/benchmarks.md`.)
///
/// Concurrent captures lock rows table by table in one order (events, responses, counters,
/// persons, group types, groups; the outbox only inserts), each in key order (the arrays arrive
/// sorted; `ORDER BY` where SQL regroups), so they may wait on each other but never deadlock.
/// That order is the final `SELECT`'s: its subqueries run in turn, each reading its step to the
/// end. Outbox entries are inserted in event order (time, then uuid), which their `seq` keeps.
const RECORD_CAPTURE: &str = include_str!("record_capture.sql");

/// Writes captures of one project with one [`RECORD_CAPTURE`] statement, as if one after the
/// other: one copy of each uuid (a retried event is one event), each submission's response
/// events merged, each person's and group's sets merged in turn, new responses counted in
/// `slot`. Answers the uuids of the events that were new.
///
/// A connection keeps buffers as large as the largest statement it sent for as long as it lives
/// (tokio-postgres never shrinks them), so after more rows than the queue puts in one
/// statement (one large batch), the connection is closed rather than pooled: a burst of large
/// batches leaves no memory behind.
pub(super) async fn write_captures(
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
    let drafts = SubmissionDraft::of_events(events.iter().copied());
    let contexts: Vec<Map<String, Value>> = drafts.iter().map(|d| d.context.to_stored()).collect();
    let outbox = webhook_sends(&events);
    let (distinct_ids, properties): (Vec<String>, Vec<Value>) =
        storable_sets(captures.iter().flat_map(|capture| &capture.sets.persons))
            .into_iter()
            .map(|(distinct_id, set)| (distinct_id, Value::Object(set)))
            .unzip();
    let groups = StorableGroups::of(captures.iter().flat_map(|capture| &capture.sets.groups));
    let rows: usize = captures.iter().map(|capture| capture.rows()).sum();
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
                .bind::<Array<SqlUuid>, _>(column(&drafts, |d| d.uuid))
                .bind::<Array<Varchar>, _>(column(&drafts, |d| &d.submission_key))
                .bind::<Array<Jsonb>, _>(column(&drafts, |d| JsonbObject(&d.answers)))
                .bind::<Array<Nullable<Bool>>, _>(column(&drafts, |d| d.completed))
                .bind::<Int4, _>(slot.0)
                .bind::<Array<Text>, _>(distinct_ids)
                .bind::<Array<Jsonb>, _>(properties)
                .bind::<Array<SqlUuid>, _>(column(&outbox, |send| send.uuid))
                .bind::<Array<Varchar>, _>(column(&outbox, |send| &send.submission_key))
                .bind::<Array<Bool>, _>(column(&outbox, |send| send.earliest))
                .bind::<Array<Bool>, _>(column(&outbox, |send| send.completes))
                .bind::<Array<Text>, _>(groups.named_types)
                .bind::<Array<Text>, _>(groups.types)
                .bind::<Array<Text>, _>(groups.keys)
                .bind::<Array<Jsonb>, _>(groups.properties)
                .bind::<Int4, _>(MAX_PROPERTIES_BYTES as i32)
                .bind::<Array<Varchar>, _>(column(&drafts, |d| &d.survey_id))
                .bind::<Array<Nullable<Varchar>>, _>(column(&drafts, |d| d.submission_id.as_ref()))
                .bind::<Array<Varchar>, _>(column(&drafts, |d| &d.distinct_id))
                .bind::<Array<Timestamptz>, _>(column(&drafts, |d| d.timestamp))
                .bind::<Array<Bool>, _>(column(&drafts, |d| d.partially_completed))
                .bind::<Array<Jsonb>, _>(column(&contexts, JsonbObject))
                .bind::<Int4, _>(MAX_RESPONSE_BYTES as i32),
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
    if rows > MOST_ROWS_TOGETHER {
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
pub(super) fn storable(event: SurveyEvent) -> SurveyEvent {
    SurveyEvent {
        survey_id: pg_string(event.survey_id),
        distinct_id: pg_string(event.distinct_id),
        submission_id: event.submission_id.map(pg_string),
        properties: pg_object(event.properties),
        ..event
    }
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

/// The group sets as the statement takes them, stored as `text.rs` stores text.
struct StorableGroups {
    /// Each type the sets name, once, in the order they first name it: new types get free
    /// indices in this order.
    named_types: Vec<String>,
    /// One set per group, in `(type, key)` order so groups are locked in key order; sets of one
    /// group (alike as stored) merged in turn.
    types: Vec<String>,
    keys: Vec<String>,
    properties: Vec<Value>,
}

impl StorableGroups {
    fn of<'a>(sets: impl Iterator<Item = &'a GroupSet>) -> Self {
        let mut named_types: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut merged: BTreeMap<(String, String), Map<String, Value>> = BTreeMap::new();
        for set in sets {
            let group_type = pg_text(&set.group_type).into_owned();
            if seen.insert(group_type.clone()) {
                named_types.push(group_type.clone());
            }
            merged
                .entry((group_type, pg_text(&set.group_key).into_owned()))
                .or_default()
                .extend(pg_object(set.properties.clone()));
        }
        let mut groups = Self {
            named_types,
            types: Vec::with_capacity(merged.len()),
            keys: Vec::with_capacity(merged.len()),
            properties: Vec::with_capacity(merged.len()),
        };
        for ((group_type, key), properties) in merged {
            groups.types.push(group_type);
            groups.keys.push(key);
            groups.properties.push(Value::Object(properties));
        }
        groups
    }
}

/// The person sets as stored (`text.rs`), keyed by distinct id so persons are locked in key
/// order; sets whose ids are stored alike are merged in turn ([`merge_set`]: captures that
/// waited together may hold a person's last-seen dates out of order), as the statement could
/// not upsert one person twice.
fn storable_sets<'a>(
    sets: impl Iterator<Item = &'a PersonSet>,
) -> BTreeMap<String, Map<String, Value>> {
    let mut stored: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for set in sets {
        let merged = stored
            .entry(pg_text(&set.distinct_id).into_owned())
            .or_default();
        merge_set(merged, pg_object(set.properties.clone()));
    }
    stored
}
