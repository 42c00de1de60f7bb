//! The group port, faked: group types by index, groups by type name and key, their
//! properties merged like jsonb `||` (by the fake's `SurveyResponseRepository::record`, as
//! captures merge them).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::error::{DomainError, Unexpected};
use crate::group::{
    Group, GroupKey, GroupRepository, GroupSet, GroupType, GroupTypeIndex, GroupTypeNames,
    MAX_GROUP_TYPES,
};
use crate::person::within_properties_bound;
use crate::tenancy::ProjectId;

use super::{InMemoryStore, State};

#[derive(Debug, Clone)]
pub(super) struct StoredGroupType {
    project: ProjectId,
    group_type: GroupType,
}

#[derive(Debug, Clone)]
pub(super) struct StoredGroup {
    project: ProjectId,
    group_type: String,
    group_key: String,
    properties: Map<String, Value>,
    created_at: DateTime<Utc>,
}

#[async_trait]
impl GroupRepository for InMemoryStore {
    async fn types(&self, project: ProjectId) -> Result<Vec<GroupType>, Unexpected> {
        Ok(self.lock().group_types_of(project))
    }

    async fn rename(
        &self,
        project: ProjectId,
        names: Vec<GroupTypeNames>,
    ) -> Result<(), DomainError> {
        let mut state = self.lock();
        let known = state.group_types_of(project);
        if names
            .iter()
            .any(|named| !known.iter().any(|t| t.index == named.index))
        {
            return Err(DomainError::NotFound);
        }
        for named in names {
            let stored = state
                .group_types
                .iter_mut()
                .find(|t| t.project == project && t.group_type.index == named.index)
                .ok_or(DomainError::NotFound)?;
            if let Some(singular) = named.name_singular {
                stored.group_type.name_singular = singular;
            }
            if let Some(plural) = named.name_plural {
                stored.group_type.name_plural = plural;
            }
        }
        Ok(())
    }

    async fn set_default_columns(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        columns: Vec<String>,
    ) -> Result<GroupType, DomainError> {
        let mut state = self.lock();
        let stored = state
            .group_types
            .iter_mut()
            .find(|t| t.project == project && t.group_type.index == index)
            .ok_or(DomainError::NotFound)?;
        stored.group_type.default_columns = Some(columns);
        Ok(stored.group_type.clone())
    }

    async fn delete_type(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
    ) -> Result<(), DomainError> {
        let mut state = self.lock();
        let position = state
            .group_types
            .iter()
            .position(|t| t.project == project && t.group_type.index == index)
            .ok_or(DomainError::NotFound)?;
        let removed = state.group_types.remove(position);
        let name = removed.group_type.group_type;
        state
            .groups
            .retain(|g| !(g.project == project && g.group_type == name));
        Ok(())
    }

    async fn find(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        group_key: &str,
    ) -> Result<Option<Group>, Unexpected> {
        let state = self.lock();
        let Some(group_type) = state
            .group_types_of(project)
            .into_iter()
            .find(|t| t.index == index)
        else {
            return Ok(None);
        };
        Ok(state
            .groups
            .iter()
            .find(|g| {
                g.project == project
                    && g.group_type == group_type.group_type
                    && g.group_key == group_key
            })
            .map(|g| Group {
                index,
                group_key: g.group_key.clone(),
                properties: g.properties.clone(),
                created_at: g.created_at,
            }))
    }
}

impl State {
    fn group_types_of(&self, project: ProjectId) -> Vec<GroupType> {
        let mut types: Vec<GroupType> = self
            .group_types
            .iter()
            .filter(|t| t.project == project)
            .map(|t| t.group_type.clone())
            .collect();
        types.sort_by_key(|t| t.index);
        types
    }

    /// The stored properties of a group; empty for one never identified.
    pub(super) fn group_properties(
        &self,
        project: ProjectId,
        group: &GroupKey,
    ) -> Map<String, Value> {
        self.groups
            .iter()
            .find(|g| {
                g.project == project
                    && g.group_type == group.group_type
                    && g.group_key == group.group_key
            })
            .map(|g| g.properties.clone())
            .unwrap_or_default()
    }

    /// Merges `set` into its group's properties like jsonb `||`, giving its type the lowest free
    /// index when new; a set naming a type past [`MAX_GROUP_TYPES`], or one that would carry the
    /// properties past [`MAX_PROPERTIES_BYTES`](crate::person::MAX_PROPERTIES_BYTES), is dropped.
    pub(super) fn merge_group(&mut self, project: ProjectId, set: &GroupSet) {
        let types = self.group_types_of(project);
        if !types.iter().any(|t| t.group_type == set.group_type) {
            let free = (0..MAX_GROUP_TYPES)
                .filter_map(|index| GroupTypeIndex::new(u64::from(index)))
                .find(|index| !types.iter().any(|t| t.index == *index));
            let Some(index) = free else {
                return;
            };
            self.group_types.push(StoredGroupType {
                project,
                group_type: GroupType {
                    index,
                    group_type: set.group_type.clone(),
                    name_singular: None,
                    name_plural: None,
                    default_columns: None,
                    created_at: Utc::now(),
                },
            });
        }
        match self.groups.iter_mut().find(|g| {
            g.project == project && g.group_type == set.group_type && g.group_key == set.group_key
        }) {
            Some(stored) => {
                let mut merged = stored.properties.clone();
                merged.extend(set.properties.clone());
                if within_properties_bound(&merged) {
                    stored.properties = merged;
                }
            }
            None => self.groups.push(StoredGroup {
                project,
                group_type: set.group_type.clone(),
                group_key: set.group_key.clone(),
                properties: if within_properties_bound(&set.properties) {
                    set.properties.clone()
                } else {
                    Map::new()
                },
                created_at: Utc::now(),
            }),
        }
    }
}
