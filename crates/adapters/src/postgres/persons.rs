//! `PersonRepository` over the `person_properties` table: one jsonb object per project and
//! distinct id, merged with `||` by the capture's statement (`survey_responses/capture.rs`).
//! Distinct ids are captured text, so they are looked up as PostgreSQL stores them (`text.rs`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::person::PersonRepository;
use domain::tenancy::ProjectId;
use serde_json::{Map, Value};

use crate::postgres::errors::StorageContext;
use crate::postgres::schema::person_properties;
use crate::postgres::text::pg_text;

crate::postgres::over_the_pool! {
    /// Person properties in PostgreSQL.
    PgPersonRepository
}

#[async_trait]
impl PersonRepository for PgPersonRepository {
    async fn properties(
        &self,
        project: ProjectId,
        distinct_id: &str,
    ) -> Result<Map<String, Value>, Unexpected> {
        let distinct_id = pg_text(distinct_id);
        let mut conn = self.database.connection().await?;
        let stored = person_properties::table
            .filter(person_properties::project_id.eq(project.0))
            .filter(person_properties::distinct_id.eq(distinct_id.as_ref()))
            .select(person_properties::properties)
            .first::<Value>(&mut conn)
            .await
            .optional()
            .during("loading a person's properties")?;
        match stored {
            None => Ok(Map::new()),
            Some(Value::Object(properties)) => Ok(properties),
            Some(_) => Err(Unexpected::new(
                "a person's stored properties are not an object",
            )),
        }
    }
}
