//! Survey use cases: list, get, create, update (PATCH and PUT) and delete.

use std::sync::Arc;

use serde_json::{Map, Value};
use uuid::Uuid;

use super::input::SurveyInput;
use super::plan::{ReferencedFlags, plan_create, plan_update};
use super::{NewSurvey, Survey, SurveyError, SurveyFilter, SurveyRepository, SurveyUpdate};
use crate::error::{ValidationCode, ValidationError};
use crate::feature_flag::FeatureFlagRepository;
use crate::input::Patch;
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserId};

/// PATCH changes the fields sent; PUT also requires `name` and `type` (absent fields are kept,
/// as DRF does), with the same validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateMode {
    Partial,
    Full,
}

pub struct SurveyService {
    surveys: Arc<dyn SurveyRepository>,
    flags: Arc<dyn FeatureFlagRepository>,
}

impl SurveyService {
    pub fn new(surveys: Arc<dyn SurveyRepository>, flags: Arc<dyn FeatureFlagRepository>) -> Self {
        Self { surveys, flags }
    }

    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<Survey>, SurveyError> {
        Ok(self.surveys.list(project, filter, page).await?)
    }

    /// # Errors
    /// `NotFound` for a malformed id or a survey of another project.
    pub async fn get(&self, project: ProjectId, id: &str) -> Result<Survey, SurveyError> {
        let id = parse_id(id)?;
        self.surveys
            .get(project, id)
            .await?
            .ok_or(SurveyError::NotFound)
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
        body: &Map<String, Value>,
    ) -> Result<Survey, SurveyError> {
        let input = SurveyInput::parse(body)?;
        let flags = self.referenced_flags(project, &input).await?;
        let (state, targeting) = plan_create(&input, &flags, project, creator)?;
        let survey = NewSurvey {
            id: Uuid::now_v7(),
            project_id: project,
            state,
            created_by: Some(creator),
            targeting,
        };
        self.surveys
            .create(survey)
            .await
            .map_err(|error| name_taken_as(error, "There is already a survey with this name."))
    }

    /// Updates a survey and its targeting flag in one transaction, planned against the stored
    /// (locked) survey so concurrent updates cannot interleave.
    ///
    /// # Errors
    /// `NotFound`, or `Invalid` for any rule broken.
    pub async fn update(
        &self,
        project: ProjectId,
        id: &str,
        editor: UserId,
        body: &Map<String, Value>,
        mode: UpdateMode,
    ) -> Result<Survey, SurveyError> {
        let id = parse_id(id)?;
        let input = SurveyInput::parse(body)?;
        if mode == UpdateMode::Full {
            if input.name.is_absent() {
                return Err(ValidationError::required("name").into());
            }
            if input.survey_type.is_absent() {
                return Err(ValidationError::required("type").into());
            }
        }
        let flags = self.referenced_flags(project, &input).await?;
        let planner = |current: &Survey| {
            let (state, targeting) = plan_update(current, &input, &flags, editor)?;
            Ok(SurveyUpdate { state, targeting })
        };
        self.surveys
            .update(project, id, &planner)
            .await
            .map_err(|error| {
                name_taken_as(error, "There is already another survey with this name.")
            })
    }

    /// Deletes a survey and the targeting flag it created; its linked flag stays.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn delete(&self, project: ProjectId, id: &str) -> Result<(), SurveyError> {
        let id = parse_id(id)?;
        if self.surveys.delete(project, id).await? {
            Ok(())
        } else {
            Err(SurveyError::NotFound)
        }
    }

    /// The live flags of this project that the request names.
    async fn referenced_flags(
        &self,
        project: ProjectId,
        input: &SurveyInput,
    ) -> Result<ReferencedFlags, SurveyError> {
        let mut flags = ReferencedFlags::default();
        if let Patch::Value(id) = input.linked_flag_id {
            flags.linked = self.flags.get(project, id).await?;
        }
        if let Patch::Value(id) = input.targeting_flag_id {
            flags.targeting = self.flags.get(project, id).await?;
        }
        Ok(flags)
    }
}

fn parse_id(raw: &str) -> Result<Uuid, SurveyError> {
    Uuid::parse_str(raw).map_err(|_| SurveyError::NotFound)
}

fn name_taken_as(error: SurveyError, detail: &str) -> SurveyError {
    match error {
        SurveyError::NameTaken => {
            ValidationError::field("name", ValidationCode::Unique, detail).into()
        }
        other => other,
    }
}
