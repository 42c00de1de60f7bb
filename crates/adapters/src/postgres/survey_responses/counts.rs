//! Response counts: each survey's counter slots added up, less what PostHog's lower bound
//! leaves out.

use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Varchar};
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::survey_response::{CountFilter, ResponseCounts};
use domain::tenancy::ProjectId;

#[cfg(feature = "testing")]
use super::PgSurveyResponseRepository;
use crate::postgres::database::Database;
use crate::postgres::errors::StorageContext;
use crate::postgres::prepared::prepared;
#[cfg(feature = "testing")]
use crate::postgres::query_plan::PlanLine;

/// The counters (each survey's slots added up), less responses whose latest event is older than
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

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = Varchar)]
    survey_id: String,
    #[diesel(sql_type = Int8)]
    responses: i64,
}

pub(super) async fn counts(
    database: &Database,
    project: ProjectId,
    filter: &CountFilter,
) -> Result<ResponseCounts, Unexpected> {
    let mut conn = database.connection().await?;
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

#[cfg(feature = "testing")]
impl PgSurveyResponseRepository {
    /// PostgreSQL's plan for `counts`, so tests can show it reads no events and scans no table
    /// whole, however many events there are.
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
