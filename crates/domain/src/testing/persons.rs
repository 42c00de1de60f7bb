//! The person port, faked: one property map per project and distinct id, merged like jsonb `||`
//! (by the fake's `SurveyResponseRepository::record`, as captures merge them); hash key
//! overrides, and static cohorts' members (written by the fake's `CohortRepository`).

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::cohort::CohortId;
use crate::error::Unexpected;
use crate::person::{
    PersonRepository, PersonSet, Profile, ProfileQuery, merge_set, within_properties_bound,
};
use crate::tenancy::ProjectId;

use super::{InMemoryStore, State};

#[derive(Debug, Clone)]
pub(super) struct StoredPerson {
    pub(super) project: ProjectId,
    pub(super) distinct_id: String,
    pub(super) properties: Map<String, Value>,
    /// PostHog's person `uuid`, random, given when the person is first stored (static cohorts
    /// name persons by it).
    pub(super) uuid: uuid::Uuid,
}

#[async_trait]
impl PersonRepository for InMemoryStore {
    async fn profile(
        &self,
        project: ProjectId,
        query: &ProfileQuery<'_>,
    ) -> Result<Profile, Unexpected> {
        let state = self.lock();
        let properties = state
            .person_properties
            .iter()
            .find(|p| p.project == project && p.distinct_id == query.distinct_id)
            .map(|p| p.properties.clone())
            .unwrap_or_default();
        let groups = query
            .groups
            .iter()
            .map(|group| state.group_properties(project, group))
            .collect();
        let hash_key_overrides = if query.hash_key_overrides {
            state
                .hash_key_overrides
                .iter()
                .filter(|o| o.project == project && o.distinct_id == query.distinct_id)
                .map(|o| (o.flag_key.clone(), o.hash_key.clone()))
                .collect()
        } else {
            HashMap::new()
        };
        let static_cohorts = query
            .static_cohorts
            .iter()
            .copied()
            .filter(|cohort| {
                state.cohort_members.iter().any(|m| {
                    m.project == project
                        && m.cohort == *cohort
                        && m.distinct_id == query.distinct_id
                })
            })
            .collect();
        Ok(Profile {
            properties,
            groups,
            hash_key_overrides,
            static_cohorts,
        })
    }

    async fn keep_hash_keys(
        &self,
        project: ProjectId,
        distinct_id: &str,
        hash_key: &str,
        flag_keys: &[&str],
    ) -> Result<(), Unexpected> {
        let mut state = self.lock();
        for flag_key in flag_keys {
            let kept = state.hash_key_overrides.iter().any(|o| {
                o.project == project && o.distinct_id == distinct_id && o.flag_key == *flag_key
            });
            if !kept {
                state.hash_key_overrides.push(HashKeyOverride {
                    project,
                    distinct_id: distinct_id.to_owned(),
                    flag_key: (*flag_key).to_owned(),
                    hash_key: hash_key.to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// A person's hash key for one flag ensuring experience continuity.
#[derive(Debug, Clone)]
pub(super) struct HashKeyOverride {
    project: ProjectId,
    distinct_id: String,
    flag_key: String,
    hash_key: String,
}

/// One person listed by a static cohort.
#[derive(Debug, Clone)]
pub(super) struct CohortMember {
    pub(super) project: ProjectId,
    pub(super) cohort: CohortId,
    pub(super) distinct_id: String,
}

impl State {
    /// Deletes the persons with these distinct ids; how many there were.
    pub(super) fn forget_persons(&mut self, project: ProjectId, distinct_ids: &[String]) -> u64 {
        let before = self.person_properties.len();
        self.person_properties
            .retain(|p| !(p.project == project && distinct_ids.contains(&p.distinct_id)));
        (before - self.person_properties.len()) as u64
    }

    /// Merges `set` into its person's properties like jsonb `||` (but an older
    /// `$last_seen_survey_date`, [`merge_set`]), creating the person if needed; a set that
    /// would carry them past [`MAX_PROPERTIES_BYTES`](crate::person::MAX_PROPERTIES_BYTES) is dropped.
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
                    uuid: uuid::Uuid::new_v4(),
                });
                self.person_properties.len() - 1
            }
        };
        let stored = &mut self.person_properties[index].properties;
        let mut merged = stored.clone();
        merge_set(&mut merged, set.properties.clone());
        if within_properties_bound(&merged) {
            *stored = merged;
        }
    }
}

/// The properties stored for the person alone, empty for a person never seen: what tests read
/// back after a capture `$set` them.
pub async fn person_properties(
    persons: &dyn PersonRepository,
    project: ProjectId,
    distinct_id: &str,
) -> Result<Map<String, Value>, Unexpected> {
    let query = ProfileQuery {
        distinct_id,
        groups: &[],
        hash_key_overrides: false,
        static_cohorts: &[],
    };
    Ok(persons.profile(project, &query).await?.properties)
}
