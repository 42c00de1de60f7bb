//! `PersonRepository` over the `person_properties` table (one jsonb object per project and
//! distinct id, merged with `||` by the capture's statement, `survey_responses/capture.rs`), with
//! what `/flags` reads beside it: `groups`, `hash_key_overrides` and `cohort_members`. Distinct
//! ids are captured text, so they are looked up as PostgreSQL stores them (`text.rs`).

use std::sync::LazyLock;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Int4, Jsonb, Nullable, Text};
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::cohort::CohortId;
use domain::group::MAX_GROUP_TYPES;
use domain::person::{PersonRepository, Profile, ProfileQuery};
use domain::tenancy::ProjectId;
use serde_json::{Map, Value};

use crate::postgres::errors::StorageContext;
use crate::postgres::prepared::prepared;
use crate::postgres::schema::person_properties;
use crate::postgres::text::pg_text;

crate::postgres::over_the_pool! {
    /// Person properties in PostgreSQL.
    PgPersonRepository
}

/// Everything a `/flags` request asks beyond the person's properties, in one statement: the
/// properties of the groups named (`$3` types and `$4` keys, in the order named, `{}` for one
/// never identified), the person's hash key overrides (when `overrides`), and which of the
/// static cohorts `$5` list them (when `statics`). Each group is a scalar subquery of its own
/// and each part is left out when not asked for: `unnest` with an aggregate, and the parts
/// not asked for, cost PostgreSQL as much again as the person read (`docs/benchmarks.md`).
/// One text for each shape, so at most `(MAX_GROUP_TYPES + 1) × 4` texts are kept prepared.
fn profile_statement(groups: usize, overrides: bool, statics: bool) -> String {
    let group_reads: Vec<String> = (1..=groups)
        .map(|n| {
            format!(
                "coalesce((SELECT properties FROM groups WHERE project_id = $1 \
                 AND group_type = $3[{n}] AND group_key = $4[{n}]), '{{}}')"
            )
        })
        .collect();
    let overrides = if overrides {
        "(SELECT coalesce(jsonb_object_agg(feature_flag_key, hash_key), '{}')
            FROM hash_key_overrides WHERE project_id = $1 AND distinct_id = $2)"
    } else {
        "'{}'::jsonb"
    };
    let statics = if statics {
        "(SELECT coalesce(array_agg(cohort_id), '{}') FROM cohort_members
            WHERE project_id = $1 AND distinct_id = $2 AND cohort_id = ANY($5))"
    } else {
        "'{}'::int4[]"
    };
    format!(
        "SELECT (SELECT properties FROM person_properties WHERE project_id = $1 AND distinct_id = $2)
           AS properties,
         ARRAY[{}]::jsonb[] AS groups,
         {overrides} AS hash_key_overrides,
         {statics} AS static_cohorts",
        group_reads.join(", ")
    )
}

/// [`profile_statement`]'s texts, made once: by number of groups, then overrides, then statics.
static PROFILE_STATEMENTS: LazyLock<Vec<String>> = LazyLock::new(|| {
    (0..=usize::from(MAX_GROUP_TYPES))
        .flat_map(|groups| {
            [(false, false), (false, true), (true, false), (true, true)]
                .map(|(overrides, statics)| profile_statement(groups, overrides, statics))
        })
        .collect()
});

#[derive(QueryableByName)]
struct ProfileRow {
    #[diesel(sql_type = Nullable<Jsonb>)]
    properties: Option<Value>,
    #[diesel(sql_type = Array<Jsonb>)]
    groups: Vec<Value>,
    #[diesel(sql_type = Jsonb)]
    hash_key_overrides: Value,
    #[diesel(sql_type = Array<Int4>)]
    static_cohorts: Vec<i32>,
}

/// Overrides for each flag the person has none of yet; never replaced.
const KEEP_HASH_KEYS: &str = "\
INSERT INTO hash_key_overrides (project_id, distinct_id, feature_flag_key, hash_key)
SELECT $1, $2, flag_key, $3 FROM unnest($4::text[]) AS flag_key
ON CONFLICT DO NOTHING";

#[async_trait]
impl PersonRepository for PgPersonRepository {
    async fn profile(
        &self,
        project: ProjectId,
        query: &ProfileQuery<'_>,
    ) -> Result<Profile, Unexpected> {
        let distinct_id = pg_text(query.distinct_id);
        let mut conn = self.database.connection().await?;
        let only_properties =
            query.groups.is_empty() && !query.hash_key_overrides && query.static_cohorts.is_empty();
        if only_properties {
            // The common request: one indexed read, as before groups existed.
            let stored = person_properties::table
                .filter(person_properties::project_id.eq(project.0))
                .filter(person_properties::distinct_id.eq(distinct_id.as_ref()))
                .select(person_properties::properties)
                .first::<Value>(&mut conn)
                .await
                .optional_during("loading a person's properties")?;
            return Ok(Profile {
                properties: object(stored)?,
                ..Profile::default()
            });
        }
        let (types, keys): (Vec<String>, Vec<String>) = query
            .groups
            .iter()
            .map(|group| {
                (
                    pg_text(&group.group_type).into_owned(),
                    pg_text(&group.group_key).into_owned(),
                )
            })
            .unzip();
        let statics: Vec<i32> = query.static_cohorts.iter().map(|cohort| cohort.0).collect();
        let shape = types.len() * 4
            + usize::from(query.hash_key_overrides) * 2
            + usize::from(!statics.is_empty());
        let statement = PROFILE_STATEMENTS.get(shape).ok_or_else(|| {
            Unexpected::new("a profile read naming more groups than a project has")
        })?;
        let row = prepared(
            diesel::sql_query(statement.as_str())
                .bind::<Int4, _>(project.0)
                .bind::<Text, _>(distinct_id.as_ref())
                .bind::<Array<Text>, _>(&types)
                .bind::<Array<Text>, _>(&keys)
                .bind::<Array<Int4>, _>(&statics),
        )
        .get_result::<ProfileRow>(&mut conn)
        .await
        .during("loading a person's profile")?;
        let groups = row
            .groups
            .into_iter()
            .map(|group| object(Some(group)))
            .collect::<Result<Vec<_>, _>>()?;
        let hash_key_overrides = match row.hash_key_overrides {
            Value::Object(overrides) => overrides
                .into_iter()
                .filter_map(|(flag, key)| Some((flag, key.as_str()?.to_owned())))
                .collect(),
            _ => return Err(Unexpected::new("hash key overrides are not an object")),
        };
        Ok(Profile {
            properties: object(row.properties)?,
            groups,
            hash_key_overrides,
            static_cohorts: row.static_cohorts.into_iter().map(CohortId).collect(),
        })
    }

    async fn keep_hash_keys(
        &self,
        project: ProjectId,
        distinct_id: &str,
        hash_key: &str,
        flag_keys: &[&str],
    ) -> Result<(), Unexpected> {
        let mut conn = self.database.connection().await?;
        prepared(
            diesel::sql_query(KEEP_HASH_KEYS)
                .bind::<Int4, _>(project.0)
                .bind::<Text, _>(pg_text(distinct_id).as_ref())
                .bind::<Text, _>(pg_text(hash_key).as_ref())
                .bind::<Array<Text>, _>(flag_keys),
        )
        .execute(&mut conn)
        .await
        .during("keeping hash key overrides")?;
        Ok(())
    }
}

/// Stored properties as a map: none stored reads as empty.
fn object(stored: Option<Value>) -> Result<Map<String, Value>, Unexpected> {
    match stored {
        None => Ok(Map::new()),
        Some(Value::Object(properties)) => Ok(properties),
        Some(_) => Err(Unexpected::new("stored properties are not an object")),
    }
}
