//! Static cohorts' `cohort_members`, by distinct id, and the persons (`person_properties`) they
//! name: the statements the repository's reads and the transaction's writes share. Distinct ids
//! are stored and looked up as PostgreSQL stores text (`text.rs`).

use diesel::dsl::count_star;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Jsonb, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Unexpected;
use domain::cohort::{CohortId, CohortPerson, MemberCounts};
use domain::ports::{Page, PageRequest};
use domain::survey_response::rows_within;
use domain::tenancy::ProjectId;
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::errors::StorageContext;
use crate::postgres::paging::page;
use crate::postgres::schema::{cohort_members, person_properties};
use crate::postgres::text::pg_text;

/// How many distinct ids each of `cohorts` lists, for those listing any.
pub(super) async fn counts(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    cohorts: &[CohortId],
) -> Result<Vec<(CohortId, u64)>, Unexpected> {
    let ids: Vec<i32> = cohorts.iter().map(|id| id.0).collect();
    let rows = cohort_members::table
        .filter(cohort_members::project_id.eq(project.0))
        .filter(cohort_members::cohort_id.eq_any(ids))
        .group_by(cohort_members::cohort_id)
        .select((cohort_members::cohort_id, count_star()))
        .load::<(i32, i64)>(conn)
        .await
        .during("counting cohorts' members")?;
    Ok(rows
        .into_iter()
        .map(|(id, count)| (CohortId(id), count.unsigned_abs()))
        .collect())
}

/// How many distinct ids `cohort` lists, and the project's cohorts together.
pub(super) async fn totals(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    cohort: CohortId,
) -> Result<MemberCounts, Unexpected> {
    let of_project = || cohort_members::table.filter(cohort_members::project_id.eq(project.0));
    let project_total = of_project()
        .count()
        .get_result::<i64>(&mut *conn)
        .await
        .during("counting a project's cohort members")?;
    let cohort_total = of_project()
        .filter(cohort_members::cohort_id.eq(cohort.0))
        .count()
        .get_result::<i64>(conn)
        .await
        .during("counting a cohort's members")?;
    Ok(MemberCounts {
        cohort: cohort_total.unsigned_abs(),
        project: project_total.unsigned_abs(),
    })
}

/// The distinct ids of the project's persons with these UUIDs (`person_properties_uuid_idx`).
pub(super) async fn distinct_ids_of(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    uuids: &[Uuid],
) -> Result<Vec<String>, Unexpected> {
    person_properties::table
        .filter(person_properties::project_id.eq(project.0))
        .filter(person_properties::uuid.eq_any(uuids))
        .select(person_properties::distinct_id)
        .load::<String>(conn)
        .await
        .during("finding persons by uuid")
}

/// Lists the distinct ids in the cohort in one statement (one array bound, whatever their
/// number), those listed already skipped; how many were new.
pub(super) async fn add(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    cohort: CohortId,
    distinct_ids: &[String],
) -> Result<u64, Unexpected> {
    let stored: Vec<String> = distinct_ids
        .iter()
        .map(|id| pg_text(id).into_owned())
        .collect();
    let added = diesel::sql_query(
        "INSERT INTO cohort_members (project_id, distinct_id, cohort_id) \
         SELECT $1, listed, $2 FROM unnest($3::text[]) AS listed \
         ON CONFLICT DO NOTHING",
    )
    .bind::<Integer, _>(project.0)
    .bind::<Integer, _>(cohort.0)
    .bind::<Array<Text>, _>(stored)
    .execute(conn)
    .await
    .during("listing cohort members")?;
    Ok(added as u64)
}

/// Stops listing the distinct ids in the cohort; all of them for `None`.
pub(super) async fn remove(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    cohort: CohortId,
    distinct_ids: Option<&[String]>,
) -> Result<(), Unexpected> {
    let listed = cohort_members::table
        .filter(cohort_members::project_id.eq(project.0))
        .filter(cohort_members::cohort_id.eq(cohort.0));
    match distinct_ids {
        Some(ids) => {
            diesel::delete(listed.filter(cohort_members::distinct_id.eq_any(ids)))
                .execute(conn)
                .await
        }
        None => diesel::delete(listed).execute(conn).await,
    }
    .during("removing cohort members")?;
    Ok(())
}

/// A member with a person stored under their distinct id.
#[derive(QueryableByName)]
struct PersonRow {
    #[diesel(sql_type = SqlUuid)]
    uuid: Uuid,
    #[diesel(sql_type = Text)]
    distinct_id: String,
    #[diesel(sql_type = Jsonb)]
    properties: Value,
}

/// A member of a window, and the size of their person's properties as JSON text.
#[derive(QueryableByName)]
struct SizedRow {
    #[diesel(sql_type = Text)]
    distinct_id: String,
    #[diesel(sql_type = Integer)]
    size: i32,
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

/// The members joined to their persons: `FROM` and `WHERE` of the reads of [`persons`].
const CAPTURED_MEMBERS: &str = "FROM cohort_members m JOIN person_properties p \
     ON p.project_id = m.project_id AND p.distinct_id = m.distinct_id \
     WHERE m.project_id = $1 AND m.cohort_id = $2";

/// One page of the cohort's captured members, by distinct id in byte order (as every store
/// orders them), and how many there are. The window's sizes are read first, then only the
/// persons within `properties_bytes` (`rows_within`), so a page never holds more properties
/// than its budget and one person.
pub(super) async fn persons(
    conn: &mut AsyncPgConnection,
    project: ProjectId,
    cohort: CohortId,
    request: PageRequest,
    properties_bytes: usize,
) -> Result<Page<CohortPerson>, Unexpected> {
    let count = diesel::sql_query(format!("SELECT count(*) AS count {CAPTURED_MEMBERS}"))
        .bind::<Integer, _>(project.0)
        .bind::<Integer, _>(cohort.0)
        .get_result::<CountRow>(&mut *conn)
        .await
        .during("counting a cohort's persons")?;
    let sized = diesel::sql_query(format!(
        "SELECT m.distinct_id, octet_length(p.properties::text) AS size {CAPTURED_MEMBERS} \
         ORDER BY m.distinct_id COLLATE \"C\" LIMIT $3 OFFSET $4"
    ))
    .bind::<Integer, _>(project.0)
    .bind::<Integer, _>(cohort.0)
    .bind::<BigInt, _>(i64::from(request.limit))
    // Offsets past i64 are past every list: the page is empty.
    .bind::<BigInt, _>(i64::try_from(request.offset).unwrap_or(i64::MAX))
    .load::<SizedRow>(&mut *conn)
    .await
    .during("sizing a cohort's persons")?;
    let kept = rows_within(
        sized
            .iter()
            .map(|row| usize::try_from(row.size).unwrap_or(0)),
        properties_bytes,
    );
    let kept: Vec<&str> = sized[..kept]
        .iter()
        .map(|row| row.distinct_id.as_str())
        .collect();
    let rows = diesel::sql_query(
        "SELECT uuid, distinct_id, properties FROM person_properties \
         WHERE project_id = $1 AND distinct_id = ANY($2) ORDER BY distinct_id COLLATE \"C\"",
    )
    .bind::<Integer, _>(project.0)
    .bind::<Array<Text>, _>(kept)
    .load::<PersonRow>(conn)
    .await
    .during("listing a cohort's persons")?;
    let persons = rows
        .into_iter()
        .map(|row| match row.properties {
            Value::Object(properties) => Ok(CohortPerson {
                uuid: row.uuid,
                distinct_id: row.distinct_id,
                properties,
            }),
            _ => Err(Unexpected::new(
                "a person's stored properties are not an object",
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(page(count.count, persons))
}
