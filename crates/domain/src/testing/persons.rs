//! The person port, faked: one property map per project and distinct id, merged like jsonb `||`.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::error::Unexpected;
use crate::person::PersonRepository;
use crate::tenancy::ProjectId;

use super::InMemoryStore;

#[derive(Debug, Clone)]
pub(super) struct StoredPerson {
    project: ProjectId,
    distinct_id: String,
    properties: Map<String, Value>,
}

#[async_trait]
impl PersonRepository for InMemoryStore {
    async fn properties(
        &self,
        project: ProjectId,
        distinct_id: &str,
    ) -> Result<Map<String, Value>, Unexpected> {
        Ok(self
            .lock()
            .person_properties
            .iter()
            .find(|p| p.project == project && p.distinct_id == distinct_id)
            .map(|p| p.properties.clone())
            .unwrap_or_default())
    }

    async fn merge_properties(
        &self,
        project: ProjectId,
        distinct_id: &str,
        set: &Map<String, Value>,
    ) -> Result<(), Unexpected> {
        let mut state = self.lock();
        let index = match state
            .person_properties
            .iter()
            .position(|p| p.project == project && p.distinct_id == distinct_id)
        {
            Some(index) => index,
            None => {
                state.person_properties.push(StoredPerson {
                    project,
                    distinct_id: distinct_id.to_owned(),
                    properties: Map::new(),
                });
                state.person_properties.len() - 1
            }
        };
        let stored = &mut state.person_properties[index].properties;
        stored.extend(set.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(())
    }
}
