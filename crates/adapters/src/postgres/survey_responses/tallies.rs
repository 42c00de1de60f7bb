//! A survey's results per question, added up in SQL in one pass over its kept responses.

use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Text, Timestamptz, Varchar};
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::survey_response::{
    MAX_ANSWER_BYTES, MAX_TALLIED_VALUES, ResponseFilter, Tallies, Tally, TallyRequest,
};
use domain::tenancy::ProjectId;

use super::answer_sql::{answered, answers_object, items};
use super::column;
use crate::postgres::database::Database;
use crate::postgres::errors::StorageContext;
use crate::postgres::prepared::prepared;

/// The survey `$2`'s responses that the filter keeps (`$3`…`$5`: window, archived left out),
/// and for each question of `$6`…`$9` (order, id key, legacy index key, whether values are
/// counted): how many answered it, its values given (the `$10` most given, ties by value
/// bytewise, as the port's `tallies` orders them; each its first `$11` characters,
/// as it cuts them) and how many other values were given. One pass over the kept
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

pub(super) async fn tallies(
    database: &Database,
    project: ProjectId,
    survey_id: &str,
    filter: &ResponseFilter,
    questions: &[TallyRequest],
) -> Result<Tallies, Unexpected> {
    let order: Vec<i32> = (0..).take(questions.len()).collect();
    let mut conn = database.connection().await?;
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
