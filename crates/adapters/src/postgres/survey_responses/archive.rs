//! Archiving a response (and restoring it) with the survey's archived count, and the archived
//! responses' uuids.

use diesel::prelude::*;
use diesel::sql_types::{Bool, Int4, Int8, Varchar};
use diesel_async::{AsyncConnection as _, RunQueryDsl};
use domain::Unexpected;
use domain::tenancy::ProjectId;
use uuid::Uuid;

use super::response_event_sql::is_response_event;
use crate::postgres::database::Database;
use crate::postgres::errors::StorageContext;
use crate::postgres::schema::{survey_events, survey_responses};

/// Adds `$3` (1 or -1) to a survey's archived count, which lives in slot 0 (see the migration):
/// archiving is rare enough not to need spreading. Slot 0 may have no row yet when a response
/// is archived; unarchiving finds the row that archiving made. The inserted row is checked
/// before the conflict is found, so it never holds -1.
const ADD_TO_ARCHIVED: &str = "
INSERT INTO survey_response_counts AS c (project_id, survey_id, slot, responses, archived)
VALUES ($1, $2, 0, 0, greatest($3, 0))
ON CONFLICT (project_id, survey_id, slot) DO UPDATE SET archived = c.archived + $3";

pub(super) async fn set_archived(
    database: &Database,
    project: ProjectId,
    survey_id: &str,
    event: Uuid,
    archived: bool,
) -> Result<bool, Unexpected> {
    let mut conn = database.connection().await?;
    conn.transaction::<_, diesel::result::Error, _>(async |conn| {
        let key: Option<String> = survey_events::table
            .filter(survey_events::project_id.eq(project.0))
            .filter(survey_events::uuid.eq(event))
            .filter(diesel::dsl::sql::<Bool>(is_response_event!(
                "survey_events"
            )))
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

pub(super) async fn archived_uuids(
    database: &Database,
    project: ProjectId,
    survey_id: &str,
) -> Result<Vec<Uuid>, Unexpected> {
    let mut conn = database.connection().await?;
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
