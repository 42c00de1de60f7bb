//! The commands a client sends about surveys, already read off the wire and checked field by
//! field (`SurveyName::parse`, `Questions::parse`, `Appearance::parse`, …). Rules across fields and against the stored
//! survey run later, in `plan`.

use super::form_content::FormContent;
use super::name::SurveyName;
use super::questions::Questions;
use super::response_sampling::SamplingChanges;
use super::settings::{Appearance, Conditions};
use super::translations::{SentBaseLanguage, SurveyTranslations};
use super::{Schedule, SurveyType};
use crate::error::ValidationError;
use crate::feature_flag::{FlagFiltersPatch, FlagId};
use crate::patch::Patch;
use chrono::{DateTime, Utc};

/// What a create or update sets; absent fields are left as they are (or at their defaults).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SurveyChanges {
    pub name: Patch<SurveyName>,
    pub description: Patch<String>,
    pub survey_type: Patch<SurveyType>,
    pub schedule: Patch<Schedule>,
    pub linked_flag_id: Patch<FlagId>,
    pub targeting_flag_id: Patch<FlagId>,
    /// `None`: no targeting change. Merged into a kept targeting flag's filters, else the
    /// filters of a new one.
    pub targeting_flag_filters: Option<FlagFiltersPatch>,
    pub remove_targeting_flag: bool,
    pub questions: Patch<Questions>,
    pub conditions: Patch<Conditions>,
    pub appearance: Patch<Appearance>,
    pub start_date: Patch<DateTime<Utc>>,
    pub end_date: Patch<DateTime<Utc>>,
    pub archived: Option<bool>,
    pub responses_limit: Patch<i32>,
    pub iteration_count: Patch<i32>,
    pub iteration_frequency_days: Patch<i32>,
    pub enable_partial_responses: Patch<bool>,
    pub enable_iframe_embedding: Patch<bool>,
    pub response_sampling: SamplingChanges,
    pub form_content: Patch<FormContent>,
    /// Never null (`This field may not be null.`).
    pub base_language: Option<SentBaseLanguage>,
    /// Keys as sent: checked against the base language and the stored keys in `plan`.
    pub translations: Patch<SurveyTranslations>,
}

impl SurveyChanges {
    /// A whole survey (create, PUT) needs a name and a type.
    ///
    /// # Errors
    /// `This field is required.` for `name`, then for `type`.
    pub fn require_name_and_type(&self) -> Result<(), ValidationError> {
        if self.name.is_absent() {
            return Err(ValidationError::required("name"));
        }
        if self.survey_type.is_absent() {
            return Err(ValidationError::required("type"));
        }
        Ok(())
    }
}

/// A survey to create: changes over the defaults, with the name and type every survey needs.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSurvey {
    pub(crate) name: SurveyName,
    pub(crate) survey_type: SurveyType,
    pub(crate) changes: SurveyChanges,
}

impl NewSurvey {
    /// # Errors
    /// `name` or `type` missing.
    pub fn new(changes: SurveyChanges) -> Result<Self, ValidationError> {
        changes.require_name_and_type()?;
        let (Patch::Value(name), Patch::Value(survey_type)) =
            (changes.name.clone(), changes.survey_type)
        else {
            return Err(ValidationError::required("name"));
        };
        Ok(Self {
            name,
            survey_type,
            changes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_survey_needs_a_name_then_a_type() {
        let error = NewSurvey::new(SurveyChanges::default()).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("name"));
        let error = NewSurvey::new(SurveyChanges {
            name: Patch::Value(SurveyName::parse("Hi").unwrap()),
            ..SurveyChanges::default()
        })
        .unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (Some("type"), "This field is required.")
        );
        assert!(
            NewSurvey::new(SurveyChanges {
                name: Patch::Value(SurveyName::parse("Hi").unwrap()),
                survey_type: Patch::Value(SurveyType::Api),
                ..SurveyChanges::default()
            })
            .is_ok()
        );
    }
}
