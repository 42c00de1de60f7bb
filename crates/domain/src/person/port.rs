//! The port of stored person properties, as `/flags` reads them. They are written by capture,
//! together with the events that `$set` them (`SurveyResponseRepository::record`).

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::error::Unexpected;
use crate::tenancy::ProjectId;

#[async_trait]
pub trait PersonRepository: Send + Sync {
    /// The properties stored for the person; empty for a person never seen.
    async fn properties(
        &self,
        project: ProjectId,
        distinct_id: &str,
    ) -> Result<Map<String, Value>, Unexpected>;
}
