//! The person port, faked: one property map per project and distinct id, merged like jsonb `||`
//! (by the fake's `SurveyResponseRepository::record`, as captures merge them).

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::error::Unexpected;
use crate::person::{PersonRepository, PersonSet};
use crate::tenancy::ProjectId;

use super::{InMemoryStore, State};

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
}

impl State {
    /// Deletes the persons with these distinct ids; how many there were.
    pub(super) fn forget_persons(&mut self, project: ProjectId, distinct_ids: &[String]) -> u64 {
        let before = self.person_properties.len();
        self.person_properties
            .retain(|p| !(p.project == project && distinct_ids.contains(&p.distinct_id)));
        (before - self.person_properties.len()) as u64
    }

    /// Merges `set` into its person's properties like jsonb `||`, creating the person if needed.
    pub(super) fn merge_person(&mut self, project: ProjectId, set: &PersonSet) {
        let index = match self
            .person_properties
            .iter()
            .position(|p| p.project == project && p.distinct_id == set.distinct_id)
        {
            Some(index) => index,
            None => {
                self.person_properties.push(StoredPerson {
                    project,
                    distinct_id: set.distinct_id.clone(),
                    properties: Map::new(),
                });
                self.person_properties.len() - 1
            }
        };
        let stored = &mut self.person_properties[index].properties;
        stored.extend(set.properties.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}
