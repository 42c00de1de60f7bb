//! The use cases of PostHog's group types API (`/groups_types/`) and of finding one group
//! (`/groups/find/`): the types captures created, their display names and console columns,
//! and deleting a type with its groups. Types and groups themselves are made by capture only.

use std::sync::Arc;

use super::{
    Group, GroupRepository, GroupType, GroupTypeIndex, GroupTypeNames, MAX_GROUP_NAME_CHARS,
};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, ValidationError};
use crate::tenancy::ProjectId;

/// Most default columns one group type keeps, each at most [`MAX_GROUP_NAME_CHARS`]
/// characters: the console shows a handful, and every type's are served with the list, so a
/// client cannot grow them without bound.
pub const MAX_DEFAULT_COLUMNS: usize = 100;

pub struct GroupService {
    groups: Arc<dyn GroupRepository>,
}

impl GroupService {
    pub fn new(groups: Arc<dyn GroupRepository>) -> Self {
        Self { groups }
    }

    /// The project's group types, by index.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn types(&self, project: ProjectId) -> Result<Vec<GroupType>, DomainError> {
        Ok(self.groups.types(project).await?)
    }

    /// Renames the types named (all or none) and answers every type, as PostHog's
    /// `update_metadata` does.
    ///
    /// # Errors
    /// `Invalid` for a name longer than [`MAX_GROUP_NAME_CHARS`] (PostHog's column), naming
    /// its field; `NotFound` when one of the types does not exist; `Unexpected`.
    pub async fn update_metadata(
        &self,
        project: ProjectId,
        names: Vec<GroupTypeNames>,
    ) -> Result<Vec<GroupType>, DomainError> {
        for named in &names {
            for (attr, name) in [
                ("name_singular", &named.name_singular),
                ("name_plural", &named.name_plural),
            ] {
                if let Some(Some(name)) = name
                    && name.chars().count() > MAX_GROUP_NAME_CHARS
                {
                    return Err(ValidationError::too_long(attr, MAX_GROUP_NAME_CHARS).into());
                }
            }
        }
        if !names.is_empty() {
            self.groups.rename(project, names).await?;
        }
        self.types(project).await
    }

    /// Sets the columns the console shows for a type's groups.
    ///
    /// # Errors
    /// `Invalid` past [`MAX_DEFAULT_COLUMNS`] columns or for a column longer than
    /// [`MAX_GROUP_NAME_CHARS`]; `NotFound` for a type the project does not have;
    /// `Unexpected`.
    pub async fn set_default_columns(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        columns: Vec<String>,
    ) -> Result<GroupType, DomainError> {
        if columns.len() > MAX_DEFAULT_COLUMNS {
            return Err(ValidationError::invalid(
                "default_columns",
                format!("Ensure this field has no more than {MAX_DEFAULT_COLUMNS} elements."),
            )
            .into());
        }
        if columns
            .iter()
            .any(|column| column.chars().count() > MAX_GROUP_NAME_CHARS)
        {
            return Err(ValidationError::too_long("default_columns", MAX_GROUP_NAME_CHARS).into());
        }
        self.groups
            .set_default_columns(project, index, columns)
            .await
    }

    /// Deletes a type and its groups; the next new type a capture names may take its index.
    ///
    /// # Errors
    /// `NotFound`; `Unexpected`.
    pub async fn delete_type(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
    ) -> Result<(), DomainError> {
        self.groups.delete_type(project, index).await
    }

    /// One group of a type, by key.
    ///
    /// # Errors
    /// `NotFound` for a type or group the project does not have; `Unexpected`.
    pub async fn find(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        group_key: &str,
    ) -> Result<Group, DomainError> {
        self.groups
            .find(project, index, group_key)
            .await?
            .or_not_found()
    }
}
