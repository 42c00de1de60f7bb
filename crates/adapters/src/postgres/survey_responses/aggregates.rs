//! Stats' totals: shown and dismissed events, sent responses, and who both dismissed and sent.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Timestamptz, Varchar};
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::survey_response::{DateWindow, EventAggregate, StatsAggregates, SurveyEventKind};
use domain::tenancy::ProjectId;

use super::response_event_sql::is_response_event;
use crate::postgres::database::Database;
use crate::postgres::errors::StorageContext;
use crate::postgres::prepared::prepared;

/// Shown events, dismissed events that are no response events, and responses (archived ones
/// left out with `$5`) as sent, per kind; then the persons who both dismissed and sent, as
/// the row `both`.
const AGGREGATES: &str = concat!(
    "
WITH kept AS (
    SELECT event, distinct_id, timestamp FROM survey_events e
    WHERE project_id = $1 AND survey_id = ANY($2)
      AND event IN ('survey shown', 'survey dismissed')
      AND ($3::timestamptz IS NULL OR timestamp >= $3)
      AND ($4::timestamptz IS NULL OR timestamp <= $4)
      AND NOT ",
    is_response_event!("e"),
    "
    UNION ALL
    SELECT 'survey sent', distinct_id, timestamp FROM survey_responses
    WHERE project_id = $1 AND survey_id = ANY($2) AND NOT ($5 AND archived)
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
) both_kinds"
);

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

fn aggregate(row: &AggregateRow) -> EventAggregate {
    EventAggregate {
        total_count: row.total_count.unsigned_abs(),
        unique_persons: row.unique_persons.unsigned_abs(),
        first_seen: row.first_seen,
        last_seen: row.last_seen,
    }
}

pub(super) async fn aggregates(
    database: &Database,
    project: ProjectId,
    survey_ids: &[String],
    window_of_time: DateWindow,
    exclude_archived: bool,
) -> Result<StatsAggregates, Unexpected> {
    let mut conn = database.connection().await?;
    let rows: Vec<AggregateRow> = prepared(
        diesel::sql_query(AGGREGATES)
            .bind::<Int4, _>(project.0)
            .bind::<Array<Varchar>, _>(survey_ids)
            .bind::<Nullable<Timestamptz>, _>(window_of_time.from)
            .bind::<Nullable<Timestamptz>, _>(window_of_time.to)
            .bind::<Bool, _>(exclude_archived),
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
            Some(SurveyEventKind::Abandoned) => {
                return Err(Unexpected::new("the stats counted abandons on their own"));
            }
            None => aggregates.dismissed_and_sent_persons = row.total_count.unsigned_abs(),
        }
    }
    Ok(aggregates)
}
