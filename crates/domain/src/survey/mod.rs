//! Surveys: the entity, its rules, and the use cases behind `/api/projects/{id}/surveys/`.
//!
//! A request body is read into a `SurveyInput` (field checks, sanitizing), then planned against
//! the stored survey (cross-field rules, targeting flag changes, computed iterations), and the
//! plan is written by the repository in one transaction.

mod html;
mod input;
mod iterations;
mod plan;
mod questions;
mod service;
mod settings;

use std::fmt;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::{Unexpected, ValidationError};
use crate::feature_flag::{FeatureFlag, FlagId, NewFlag};
use crate::ports::{Page, PageRequest};
use crate::tenancy::{ProjectId, UserBasic, UserId};

pub use input::SurveyInput;
pub use iterations::Iterations;
pub use service::{SurveyService, UpdateMode};

/// How a survey is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurveyType {
    Popover,
    Widget,
    Button,
    Email,
    FullScreen,
    Api,
    ExternalSurvey,
}

impl SurveyType {
    pub const ALL: [Self; 7] = [
        Self::Popover,
        Self::Widget,
        Self::Button,
        Self::Email,
        Self::FullScreen,
        Self::Api,
        Self::ExternalSurvey,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Popover => "popover",
            Self::Widget => "widget",
            Self::Button => "button",
            Self::Email => "email",
            Self::FullScreen => "full_screen",
            Self::Api => "api",
            Self::ExternalSurvey => "external_survey",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == raw)
    }
}

impl fmt::Display for SurveyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a survey is shown once, on a recurring schedule, or always.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    #[default]
    Once,
    Recurring,
    Always,
}

impl Schedule {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Recurring => "recurring",
            Self::Always => "always",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Once, Self::Recurring, Self::Always]
            .into_iter()
            .find(|s| s.as_str() == raw)
    }
}

/// Everything about a survey that a client writes, plus what is computed from it.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyState {
    pub name: String,
    pub description: String,
    pub survey_type: SurveyType,
    pub linked_flag_id: Option<FlagId>,
    /// A list of question objects, each with an `id`.
    pub questions: Option<Value>,
    pub conditions: Option<Map<String, Value>>,
    pub appearance: Option<Map<String, Value>>,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub archived: bool,
    pub responses_limit: Option<i32>,
    pub schedule: Schedule,
    pub iteration_count: Option<i32>,
    pub iteration_frequency_days: Option<i32>,
    pub enable_partial_responses: bool,
    /// Derived from the iteration fields and `start_date` on every write.
    pub iterations: Iterations,
}

impl SurveyState {
    /// A new survey's state: the given name and type, every other field at its default.
    pub fn draft(name: String, survey_type: SurveyType) -> Self {
        Self {
            name,
            description: String::new(),
            survey_type,
            linked_flag_id: None,
            questions: None,
            conditions: None,
            appearance: None,
            start_date: None,
            end_date: None,
            archived: false,
            responses_limit: None,
            schedule: Schedule::Once,
            iteration_count: None,
            iteration_frequency_days: None,
            enable_partial_responses: false,
            iterations: Iterations::default(),
        }
    }

    /// Whether the survey is live: launched, not stopped, not archived. Its targeting flag is
    /// active exactly then.
    pub fn is_running(&self) -> bool {
        self.start_date.is_some() && self.end_date.is_none() && !self.archived
    }
}

/// A stored survey with the flags it points at.
#[derive(Debug, Clone, PartialEq)]
pub struct Survey {
    pub id: Uuid,
    pub project_id: ProjectId,
    pub state: SurveyState,
    /// Shown even when deleted (with `deleted: true`).
    pub linked_flag: Option<FeatureFlag>,
    pub targeting_flag: Option<FeatureFlag>,
    /// Whether the targeting flag was created for this survey (and dies with it) rather than
    /// adopted through `targeting_flag_id`.
    pub owns_targeting_flag: bool,
    pub created_at: DateTime<Utc>,
    pub created_by: Option<UserBasic>,
}

/// How the targeting flag changes in one write, applied in this order: detach, attach,
/// merge filters, then set `active` on whatever flag the survey ends up with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TargetingPlan {
    pub detach: Option<Detach>,
    pub attach: Option<Attach>,
    /// New filters for the kept targeting flag.
    pub filters: Option<Map<String, Value>>,
    pub active: bool,
}

/// Drop the survey's targeting flag; `delete` soft-deletes it too (only flags the survey owns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detach {
    pub flag: FlagId,
    pub delete: bool,
}

/// Give the survey a targeting flag.
#[derive(Debug, Clone, PartialEq)]
pub enum Attach {
    /// Create this flag; the survey owns it.
    New(NewFlag),
    /// Adopt a live flag of the same project; the survey does not own it.
    Existing(FlagId),
}

/// A survey to insert.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSurvey {
    pub id: Uuid,
    pub project_id: ProjectId,
    pub state: SurveyState,
    pub created_by: Option<UserId>,
    pub targeting: TargetingPlan,
}

/// The new state of an existing survey and its targeting flag.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyUpdate {
    pub state: SurveyState,
    pub targeting: TargetingPlan,
}

/// List filters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SurveyFilter {
    /// Every term must appear (case-insensitively) in the name or the description.
    pub search: Vec<String>,
    pub archived: Option<bool>,
}

impl SurveyFilter {
    /// Splits `?search=` into terms on whitespace and commas, as DRF's SearchFilter does.
    pub fn with_search(mut self, raw: &str) -> Self {
        self.search = raw
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|term| !term.is_empty())
            .map(str::to_owned)
            .collect();
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SurveyError {
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    #[error("Not found.")]
    NotFound,
    /// Another survey of the project has the name.
    #[error("survey name already taken in this project")]
    NameTaken,
    #[error(transparent)]
    Unexpected(#[from] Unexpected),
}

/// The planning step of an update: given the survey as stored (and locked), what to write.
pub type UpdatePlanner<'a> =
    dyn Fn(&Survey) -> Result<SurveyUpdate, SurveyError> + Send + Sync + 'a;

/// Stored surveys; every write is one transaction including its targeting flag changes.
#[async_trait::async_trait]
pub trait SurveyRepository: Send + Sync {
    /// The project's surveys matching `filter`, newest first (ties by id, descending), with
    /// their flags and creators, in a fixed number of queries.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn list(
        &self,
        project: ProjectId,
        filter: &SurveyFilter,
        page: PageRequest,
    ) -> Result<Page<Survey>, Unexpected>;

    /// # Errors
    /// `Unexpected` when storage fails.
    async fn get(&self, project: ProjectId, id: Uuid) -> Result<Option<Survey>, Unexpected>;

    /// Inserts the survey after applying its targeting plan, atomically.
    ///
    /// # Errors
    /// `NameTaken` when the project has a survey of that name (nothing is written);
    /// `Unexpected` otherwise.
    async fn create(&self, survey: NewSurvey) -> Result<Survey, SurveyError>;

    /// Locks the survey, asks `planner` what to write given its stored state, and writes it,
    /// atomically. An error from the planner is returned as is and nothing is written.
    ///
    /// # Errors
    /// `NotFound`, `NameTaken`, the planner's errors, `Unexpected`.
    async fn update(
        &self,
        project: ProjectId,
        id: Uuid,
        planner: &UpdatePlanner<'_>,
    ) -> Result<Survey, SurveyError>;

    /// Deletes the survey and soft-deletes the targeting flag it owns, atomically; returns
    /// whether the survey existed.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    async fn delete(&self, project: ProjectId, id: Uuid) -> Result<bool, Unexpected>;
}
