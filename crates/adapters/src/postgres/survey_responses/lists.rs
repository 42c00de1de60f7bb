//! A survey's responses read back: Burrow's list's pages, PostHog's list's slices and the
//! export's batches, each within its answer budget, with answers as lists read them.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{
    Bool, Int4, Int8, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid, Varchar,
};
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::ports::{Page, PageRequest};
use domain::survey_response::{
    AnswerFilter, ExportCursor, MAX_ANSWER_BYTES, ResponseContext, ResponseFilter, ResponseSlice,
    SliceRequest, SurveyResponse, rows_within,
};
use domain::tenancy::ProjectId;
use serde_json::Value;
use uuid::Uuid;

use super::answer_sql::{answered, answers_object, items, searched};
use crate::postgres::database::Database;
use crate::postgres::errors::StorageContext;
use crate::postgres::paging::{page, window};
use crate::postgres::schema::survey_responses;
use crate::postgres::text::{contains_pattern, pg_text};

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
    partially_completed: bool,
    context: Value,
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
            partially_completed: row.partially_completed,
            context: ResponseContext::from_stored(&row.context),
            archived: row.archived,
        }
    }
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
            survey_responses::partially_completed,
            survey_responses::context,
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
    let pattern = answers
        .search
        .as_ref()
        .map(|search| contains_pattern(&pg_text(search.as_str())));
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

pub(super) async fn responses(
    database: &Database,
    project: ProjectId,
    survey_id: &str,
    filter: &ResponseFilter,
    answers: &AnswerFilter,
    page_request: PageRequest,
    answer_bytes: usize,
) -> Result<Page<SurveyResponse>, Unexpected> {
    let mut conn = database.connection().await?;
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

pub(super) async fn responses_after(
    database: &Database,
    project: ProjectId,
    survey_id: &str,
    filter: &ResponseFilter,
    after: Option<ExportCursor>,
    limit: u32,
    answer_bytes: usize,
) -> Result<Vec<SurveyResponse>, Unexpected> {
    let mut conn = database.connection().await?;
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

/// PostHog's list (`SurveyResponseRepository::slice`) in one statement: the keys of the
/// slice's rows and the one after it, found through the list index (`$1` project, `$2` survey,
/// `$3`/`$4` window, `$5` archived left out; `$6`/`$7` the question's id and index keys, `$8`/
/// `$9` score bounds as decimal text; `$10` limit, `$11` offset), then those rows read with
/// their answers as lists read them, each marked `kept` while the answers and contexts of the
/// rows before it stay under `$12` bytes (the first always), `asked` within the limit. Only
/// the keys are read for the rows `OFFSET` skips.
static SLICE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "
WITH page AS MATERIALIZED (
    SELECT r.submission_key FROM survey_responses r
    WHERE r.project_id = $1 AND r.survey_id = $2
      AND ($3::timestamptz IS NULL OR r.timestamp >= $3)
      AND ($4::timestamptz IS NULL OR r.timestamp <= $4)
      AND NOT ($5 AND r.archived)
      AND ($6::text IS NULL OR EXISTS (
          SELECT 1 FROM (SELECT coalesce({answers} -> $6::text, {answers} -> $7::text) AS v) a
          CROSS JOIN LATERAL (SELECT {number} AS n) s
          WHERE {answered}
            AND ($8::numeric IS NULL OR s.n >= $8::numeric)
            AND ($9::numeric IS NULL OR s.n <= $9::numeric)))
    ORDER BY r.timestamp DESC, r.event_uuid DESC
    LIMIT $10 + 1 OFFSET $11
),
fetched AS (
    SELECT r.event_uuid, r.distinct_id, r.submission_id, r.timestamp, {as_read} AS answers,
           r.completed, r.partially_completed, r.context, r.archived
    FROM page p
    JOIN survey_responses r
      ON r.project_id = $1 AND r.survey_id = $2 AND r.submission_key = p.submission_key
),
running AS (
    SELECT fetched.*,
           row_number() OVER (ORDER BY timestamp DESC, event_uuid DESC) AS n,
           coalesce(sum(octet_length(answers::text) + octet_length(context::text)) OVER (
               ORDER BY timestamp DESC, event_uuid DESC
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS bytes_before
    FROM fetched
)
SELECT event_uuid, distinct_id, submission_id, timestamp,
       CASE WHEN kept THEN answers ELSE '{{}}'::jsonb END AS answers, completed,
       partially_completed, CASE WHEN kept THEN context ELSE '{{}}'::jsonb END AS context,
       archived, kept, n <= $10 AS asked
FROM (SELECT running.*, n <= $10 AND (n = 1 OR bytes_before < $12) AS kept FROM running) x
ORDER BY timestamp DESC, event_uuid DESC",
        answers = answers_object!(),
        number = NUMBER,
        answered = answered!("a.v"),
        as_read = *ANSWERS_AS_READ,
    )
});

/// The answer `a.v` as a number (`numeric_answer`'s rule), `NULL` when it is none: a JSON
/// number, or a string that is a decimal number as written (exponents of two digits at most, so
/// every one is a `numeric`).
const NUMBER: &str = "CASE jsonb_typeof(a.v)
    WHEN 'number' THEN (a.v)::numeric
    WHEN 'string' THEN CASE WHEN (a.v #>> '{}') ~ '^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]{1,2})?$'
                            THEN (a.v #>> '{}')::numeric END
END";

/// One row of [`SLICE`].
#[derive(QueryableByName)]
struct SliceRow {
    #[diesel(sql_type = SqlUuid)]
    event_uuid: Uuid,
    #[diesel(sql_type = Varchar)]
    distinct_id: String,
    #[diesel(sql_type = Nullable<Varchar>)]
    submission_id: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    timestamp: DateTime<Utc>,
    #[diesel(sql_type = Jsonb)]
    answers: Value,
    #[diesel(sql_type = Nullable<Bool>)]
    completed: Option<bool>,
    #[diesel(sql_type = Bool)]
    partially_completed: bool,
    #[diesel(sql_type = Jsonb)]
    context: Value,
    #[diesel(sql_type = Bool)]
    archived: bool,
    #[diesel(sql_type = Bool)]
    kept: bool,
    #[diesel(sql_type = Bool)]
    asked: bool,
}

pub(super) async fn slice(
    database: &Database,
    project: ProjectId,
    survey_id: &str,
    request: &SliceRequest,
    answer_bytes: usize,
) -> Result<ResponseSlice, Unexpected> {
    let mut conn = database.connection().await?;
    let keys = request.question.as_ref();
    // Bounds as decimal text: `f64`'s `Display` never writes an exponent, so `numeric` reads
    // every finite one.
    let bound = |bound: Option<f64>| bound.map(|value| value.to_string());
    let rows: Vec<SliceRow> = diesel::sql_query(SLICE.as_str())
        .bind::<Int4, _>(project.0)
        .bind::<Varchar, _>(survey_id)
        .bind::<Nullable<Timestamptz>, _>(request.window.from)
        .bind::<Nullable<Timestamptz>, _>(request.window.to)
        .bind::<Bool, _>(request.exclude_archived)
        .bind::<Nullable<Text>, _>(keys.map(|keys| keys.id.clone()))
        .bind::<Nullable<Text>, _>(keys.and_then(|keys| keys.index.clone()))
        .bind::<Nullable<Text>, _>(bound(request.score.gte))
        .bind::<Nullable<Text>, _>(bound(request.score.lte))
        .bind::<Int8, _>(i64::from(request.limit))
        .bind::<Int8, _>(i64::try_from(request.offset).unwrap_or(i64::MAX))
        .bind::<Int8, _>(i64::try_from(answer_bytes).unwrap_or(i64::MAX))
        .load(&mut conn)
        .await
        .during("reading a slice of survey responses")?;
    let has_more = rows.iter().any(|row| !row.kept);
    let cut_short = rows.iter().any(|row| row.asked && !row.kept);
    let responses = rows
        .into_iter()
        .filter(|row| row.kept)
        .map(|row| {
            SurveyResponse::from(ResponseRow {
                event_uuid: row.event_uuid,
                distinct_id: row.distinct_id,
                submission_id: row.submission_id,
                timestamp: row.timestamp,
                answers: row.answers,
                completed: row.completed,
                archived: row.archived,
                partially_completed: row.partially_completed,
                context: row.context,
            })
        })
        .collect();
    Ok(ResponseSlice {
        responses,
        has_more,
        cut_short,
    })
}
