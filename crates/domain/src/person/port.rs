//! The port of stored person properties.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::error::Unexpected;
use crate::tenancy::ProjectId;

#[async_trait]
pub trait PersonRepository: Send + Sync {
    /// The properties stored for the person; empty for a person never seen.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn properties(
        &self,
        project: ProjectId,
        distinct_id: &str,
    ) -> Result<Map<String, Value>, Unexpected>;

    /// Merges `set` into the person's properties, as PostHog applies an event's `$set`: each key
    /// given replaces the stored value, other stored keys stay. Creates the person if needed.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn merge_properties(
        &self,
        project: ProjectId,
        distinct_id: &str,
        set: &Map<String, Value>,
    ) -> Result<(), Unexpected>;
}
