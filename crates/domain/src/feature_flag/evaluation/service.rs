//! The use case behind `POST /flags/`: every live flag of a project, evaluated for one person.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Evaluation, Person, evaluate};
use crate::error::DomainError;
use crate::feature_flag::FeatureFlagRepository;
use crate::feature_flag::pattern::Patterns;
use crate::person::{PersonRepository, stored_distinct_id};
use crate::survey::{Survey, SurveyService};
use crate::tenancy::ProjectId;

pub struct FlagEvaluationService {
    flags: Arc<dyn FeatureFlagRepository>,
    persons: Arc<dyn PersonRepository>,
    surveys: Arc<SurveyService>,
    patterns: Arc<dyn Patterns>,
}

impl FlagEvaluationService {
    pub fn new(
        flags: Arc<dyn FeatureFlagRepository>,
        persons: Arc<dyn PersonRepository>,
        surveys: Arc<SurveyService>,
        patterns: Arc<dyn Patterns>,
    ) -> Self {
        Self {
            flags,
            persons,
            surveys,
            patterns,
        }
    }

    /// The project's active flags (ordered by id), then the internal targeting flag of each of
    /// its unarchived surveys, evaluated for the person: the properties stored for
    /// `distinct_id`, overridden by the ones the request sent.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn evaluate_all(
        &self,
        project: ProjectId,
        distinct_id: &str,
        sent_properties: &Map<String, Value>,
    ) -> Result<Vec<Evaluation>, DomainError> {
        let mut flags = self.flags.active(project).await?;
        flags.extend(
            self.surveys
                .unarchived(project)
                .await?
                .iter()
                .map(Survey::internal_targeting_flag),
        );
        if flags.is_empty() {
            return Ok(Vec::new());
        }
        let mut properties = self
            .persons
            .properties(project, &stored_distinct_id(distinct_id))
            .await?;
        properties.extend(sent_properties.iter().map(|(k, v)| (k.clone(), v.clone())));
        let person = Person {
            distinct_id: distinct_id.to_owned(),
            properties,
        };
        Ok(flags
            .iter()
            .map(|flag| evaluate(flag, &person, &*self.patterns))
            .collect())
    }
}
