//! Surveys: the entity, its rules, and the use cases behind `/api/projects/{id}/surveys/`.
//!
//! The HTTP layer reads a body into a command (`NewSurvey`, `SurveyChanges`), checking each
//! field on its way in. `writes` runs each write as one transaction of the store's primitives:
//! with the survey and the flags it names locked, `plan` turns the command into what to write
//! (cross-field rules, targeting flag changes, computed iterations, the activity entry), and
//! the primitives write exactly that.

pub mod activity;
mod command;
pub mod condition_triggers;
mod copy;
mod display_language;
mod form_content;
mod html;
mod internal_flag;
mod iterations;
mod lifecycle;
mod list_filter;
mod name;
mod plan;
mod port;
mod question;
mod question_labels;
mod question_parser;
mod question_translations;
mod questions;
mod rendered;
mod response_sampling;
mod schedule;
mod search;
mod service;
mod settings;
mod translations;
mod validation_rules;
pub mod writes;

pub use writes::MAX_PROJECT_SURVEYS;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::feature_flag::{FeatureFlag, FlagChanges, FlagId, NewFlag};
use crate::tenancy::{ProjectId, UserBasic, UserId};

pub use command::{NewSurvey, SurveyChanges};
pub use display_language::is_right_to_left;
pub use form_content::{FormContent, MAX_FORM_CONTENT_BYTES};
pub use iterations::{Iterations, MAX_FREQUENCY_DAYS, MAX_ITERATIONS};
pub use lifecycle::Switch;
pub use list_filter::{MAX_FILTERED_IDS, SurveyFilter, SurveyStatus};
pub use name::{MAX_NAME_CHARS, SurveyName};
pub use port::{
    CopyTarget, DeletedSurvey, FlagLock, FlagReferences, OwnedNewFlag, ReferencedFlags, SurveyLock,
    SurveyRecord, SurveyRepository, SurveyTransaction, SurveyWrite,
};
pub use question::{
    BRANCHING_TYPES, BranchTarget, Branching, BranchingRule, ChoiceQuestion, ContentType, END,
    LinkQuestion, OpenQuestion, Question, QuestionBase, QuestionType, RatingDisplay,
    RatingQuestion, question_keys,
};
pub use question_labels::{MAX_LABELLED_SURVEYS, QuestionLabel, question_labels};
pub use question_translations::{QuestionTranslation, QuestionTranslations};
pub use questions::Questions;
pub use rendered::{RenderedPage, RenderedSurveys, Rendering};
#[cfg(feature = "testing")]
pub use response_sampling::sampling_due;
pub use response_sampling::{
    DailyLimit, MAX_SAMPLING_DAYS, ResponseSampling, SamplingChanges, SamplingIntervalType,
};
pub use schedule::SCHEDULE_ROUND;
#[cfg(feature = "testing")]
pub use schedule::schedule_due;
pub use search::{
    DESCRIPTION_SIMILARITY, DESCRIPTION_WEIGHT, MAX_SEARCH_CHARS, NAME_SIMILARITY, SearchMatch,
    SearchTerm, SurveySearch,
};
pub use service::SurveyService;
pub use settings::{
    Appearance, ConditionValues, Conditions, MatchType, appearance_keys, condition_keys,
};
pub use translations::{
    LanguageCode, MAX_LANGUAGE_CHARS, MAX_TRANSLATION_LANGUAGES, MAX_TRANSLATIONS_BYTES,
    SentBaseLanguage, SurveyTranslation, SurveyTranslations, translation_keys,
};

/// A survey's UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SurveyId(pub Uuid);

impl SurveyId {
    /// A new id; v7 ids grow with time, so ties on `created_at` order as creation did.
    pub fn generate() -> Self {
        Self(Uuid::now_v7())
    }
}

/// Which stored version of a survey, as read whole (with its creator and its flags), a read
/// found: it changes whenever anything a whole survey shows does, so two reads with one
/// revision found the same survey. What lets a rendering be kept and reused
/// ([`RenderedSurveys`]) while the store only answers revisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SurveyRevision(pub u128);

wire_enum! {
    /// How a survey is shown.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum SurveyType {
        Popover = "popover",
        Widget = "widget",
        Button = "button",
        Email = "email",
        FullScreen = "full_screen",
        Api = "api",
        ExternalSurvey = "external_survey",
    }
}

wire_enum! {
    /// Whether a survey is shown once, on a recurring schedule, or always.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum Schedule {
        #[default]
        Once = "once",
        Recurring = "recurring",
        Always = "always",
    }
}

/// Everything about a survey that a client writes, plus what is computed from it.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyState {
    pub name: String,
    pub description: String,
    pub survey_type: SurveyType,
    pub linked_flag_id: Option<FlagId>,
    pub questions: Option<Questions>,
    pub conditions: Option<Conditions>,
    pub appearance: Option<Appearance>,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub archived: bool,
    pub responses_limit: Option<i32>,
    pub schedule: Schedule,
    pub iteration_count: Option<i32>,
    pub iteration_frequency_days: Option<i32>,
    pub enable_partial_responses: bool,
    /// The language the survey's own texts are in (`en` unless set).
    pub base_language: LanguageCode,
    /// Its texts in other languages, keyed by language.
    pub translations: Option<SurveyTranslations>,
    /// Whether its hosted page (`external_survey`) may be shown in another site's frame.
    pub enable_iframe_embedding: bool,
    /// How many responses it asks for over which period, and its sampling flag's rollout.
    pub response_sampling: ResponseSampling,
    /// The form builder's layout, kept for the client that wrote it.
    pub form_content: Option<FormContent>,
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
            base_language: LanguageCode::default(),
            translations: None,
            enable_iframe_embedding: false,
            response_sampling: ResponseSampling::default(),
            form_content: None,
            iterations: Iterations::default(),
        }
    }

    /// Whether the survey is live: launched, not stopped, not archived. Its targeting flag is
    /// active exactly then.
    pub fn is_running(&self) -> bool {
        self.start_date.is_some() && self.end_date.is_none() && !self.archived
    }
}

/// A stored survey with the flags it points at (as a survey shows them: without their creators).
#[derive(Debug, Clone, PartialEq)]
pub struct Survey {
    pub id: SurveyId,
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

/// What happens to a survey's targeting flag in one write. Stores execute it as it is: first
/// soft-delete `delete`, then point the survey at `flag` (or at none).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TargetingPlan {
    /// A flag the survey owned and lets go of.
    pub delete: Option<FlagId>,
    /// The flag the survey ends up with.
    pub flag: Option<TargetingFlag>,
}

/// The targeting flag a survey ends up with.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetingFlag {
    /// Create this flag; the survey owns it (and deletes it when it goes).
    New { flag: NewFlag, created_by: UserId },
    /// Keep or adopt a live flag of the project, applying `changes` to it.
    Existing {
        id: FlagId,
        owned: bool,
        changes: FlagChanges,
    },
}

impl TargetingFlag {
    /// Whether the survey owns the flag: exactly when it was created for it.
    pub fn owned(&self) -> bool {
        match self {
            Self::New { .. } => true,
            Self::Existing { owned, .. } => *owned,
        }
    }
}
