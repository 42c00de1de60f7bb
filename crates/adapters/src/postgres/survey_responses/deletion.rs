//! Deletions of responses and events (one response, a survey's, a person's), each one statement
//! that keeps the counts and the webhook queue true.

use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Jsonb, Text, Uuid as SqlUuid, Varchar};
use domain::Unexpected;
use domain::activity::NewActivity;
use domain::survey::SurveyId;
use domain::survey_response::Forgotten;
use domain::tenancy::ProjectId;
use uuid::Uuid;

use crate::postgres::confirmed::confirmed;
use crate::postgres::database::Database;
use crate::postgres::errors::StorageContext;
use crate::postgres::text::pg_text;

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

/// One response (`$2` its survey, `$3` a response event of its submission) and the response
/// events of its submission (`SurveyEvent::is_response`, spelled out as `response_event_sql.rs`
/// spells it: the macro cannot reach inside this one); logged as `$4`…`$8` (entry id, survey
/// uuid, user, activity, detail) when there was one.
const DELETE_RESPONSE: &str = forget_statement!(
    before: "submission AS (
    SELECT coalesce(submission_id, uuid::text) AS key, submission_id FROM survey_events e
    WHERE project_id = $1 AND uuid = $3 AND survey_id = $2
      AND (e.event = 'survey sent' OR (e.event IN ('survey dismissed', 'survey abandoned')
           AND e.properties ->> '$survey_partially_completed' = 'true'))
),",
    responses: "r.survey_id = $2 AND r.submission_key = (SELECT key FROM submission)",
    events: "e.survey_id = $2
        AND (e.event = 'survey sent' OR (e.event IN ('survey dismissed', 'survey abandoned')
             AND e.properties ->> '$survey_partially_completed' = 'true'))
        AND (e.submission_id = (SELECT submission_id FROM submission)
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

pub(super) async fn delete_response(
    database: &Database,
    project: ProjectId,
    survey: SurveyId,
    event: Uuid,
    activity: &NewActivity,
) -> Result<bool, Unexpected> {
    let mut conn = database.connection().await?;
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

pub(super) async fn delete_survey_responses(
    database: &Database,
    project: ProjectId,
    survey: SurveyId,
    activity: &NewActivity,
) -> Result<Forgotten, Unexpected> {
    let mut conn = database.connection().await?;
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

pub(super) async fn delete_persons(
    database: &Database,
    project: ProjectId,
    distinct_ids: &[String],
    events: bool,
) -> Result<Forgotten, Unexpected> {
    let stored: Vec<String> = distinct_ids
        .iter()
        .map(|id| pg_text(id).into_owned())
        .collect();
    let mut conn = database.connection().await?;
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
