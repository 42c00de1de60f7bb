//! The port of stored group types and groups. Groups are written by capture, with the events
//! that identify them (`SurveyResponseRepository::record`); `/flags` reads their properties with
//! the person's (`PersonRepository::profile`).

use async_trait::async_trait;

use super::{Group, GroupType, GroupTypeIndex, GroupTypeNames};
use crate::error::{DomainError, Unexpected};
use crate::tenancy::ProjectId;

#[async_trait]
pub trait GroupRepository: Send + Sync {
    /// The project's group types, by index.
    async fn types(&self, project: ProjectId) -> Result<Vec<GroupType>, Unexpected>;

    /// Renames the group types named, all or none.
    ///
    /// # Errors
    /// `NotFound` when one of them does not exist; then nothing is changed.
    async fn rename(
        &self,
        project: ProjectId,
        names: Vec<GroupTypeNames>,
    ) -> Result<(), DomainError>;

    /// Sets a group type's default columns and returns it as written.
    ///
    /// # Errors
    /// `NotFound`.
    async fn set_default_columns(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        columns: Vec<String>,
    ) -> Result<GroupType, DomainError>;

    /// Deletes a group type and its groups; its index is free for the next new type.
    ///
    /// # Errors
    /// `NotFound`.
    async fn delete_type(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
    ) -> Result<(), DomainError>;

    /// One group of a type, by key.
    async fn find(
        &self,
        project: ProjectId,
        index: GroupTypeIndex,
        group_key: &str,
    ) -> Result<Option<Group>, Unexpected>;
}
