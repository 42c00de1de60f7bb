//! Survey use cases: list, get, create, update and delete.

use std::sync::Arc;

use super::plan::{plan_create, plan_update};
use super::{
    FlagReferences, NewSurvey, ReferencedFlags, Survey, SurveyChanges, SurveyFilter, SurveyId,
    SurveyRepository,
};
use crate::error::{DomainError, ValidationCode, ValidationError};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserId};

pub struct SurveyService {
    surveys: Arc<dyn SurveyRepository>,
}

impl SurveyService {
    pub fn new(surveys: Arc<dyn SurveyRepository>) -> Self {
        Self { surveys }
    }

    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<Survey>, DomainError> {
        Ok(self.surveys.list(project, filter, page).await?)
    }

    /// # Errors
    /// `NotFound` for a survey of another project.
    pub async fn get(&self, project: ProjectId, id: SurveyId) -> Result<Survey, DomainError> {
        self.surveys
            .get(project, id)
            .await?
            .ok_or(DomainError::NotFound)
    }

    /// Creates a survey, and its targeting flag when `targeting_flag_filters` is given, in one
    /// transaction.
    ///
    /// # Errors
    /// `Invalid` for any rule broken, including a name already used in the project.
    pub async fn create(
        &self,
        project: ProjectId,
        creator: UserId,
        survey: NewSurvey,
    ) -> Result<Survey, DomainError> {
        let references = references(&survey.changes);
        let planner = |flags: &ReferencedFlags| Ok(plan_create(&survey, flags, creator)?);
        self.surveys
            .create(project, SurveyId::generate(), creator, references, &planner)
            .await
            .map_err(|error| {
                error.conflict_as(|| name_taken("There is already a survey with this name."))
            })
    }

    /// Updates a survey and its targeting flag in one transaction, planned against the stored
    /// (locked) survey so concurrent updates cannot interleave.
    ///
    /// # Errors
    /// `NotFound`, or `Invalid` for any rule broken.
    pub async fn update(
        &self,
        project: ProjectId,
        id: SurveyId,
        editor: UserId,
        changes: SurveyChanges,
    ) -> Result<Survey, DomainError> {
        let planner = |current: &Survey, flags: &ReferencedFlags| {
            Ok(plan_update(current, &changes, flags, editor)?)
        };
        self.surveys
            .update(project, id, references(&changes), &planner)
            .await
            .map_err(|error| {
                error.conflict_as(|| name_taken("There is already another survey with this name."))
            })
    }

    /// Deletes a survey and the targeting flag it created; its linked flag stays.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn delete(&self, project: ProjectId, id: SurveyId) -> Result<(), DomainError> {
        if self.surveys.delete(project, id).await? {
            Ok(())
        } else {
            Err(DomainError::NotFound)
        }
    }
}

/// The flags the changes name by id.
fn references(changes: &SurveyChanges) -> FlagReferences {
    FlagReferences {
        linked: changes.linked_flag_id.value(),
        targeting: changes.targeting_flag_id.value(),
    }
}

fn name_taken(detail: &str) -> ValidationError {
    ValidationError::field("name", ValidationCode::Unique, detail)
}
