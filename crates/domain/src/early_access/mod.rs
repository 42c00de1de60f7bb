//! Early access features: a feature in a release stage that persons may opt into from the site
//! (posthog-js's `getEarlyAccessFeatures` / `updateEarlyAccessFeatureEnrollment`). Each has a
//! flag; while the feature is in a release stage, the flag's `super_groups` serve whoever set
//! `$feature_enrollment/<flag key>` to true, whatever the flag's other conditions say.

mod port;
mod service;

pub use port::EarlyAccessRepository;
pub use service::{EarlyAccessRequest, EarlyAccessService, MAX_PROJECT_FEATURES};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::feature_flag::FlagId;
use crate::tenancy::ProjectId;

/// An early access feature's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EarlyAccessId(pub Uuid);

wire_enum! {
    /// Where a feature stands, as PostHog names it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Stage {
        Draft = "draft",
        Concept = "concept",
        Alpha = "alpha",
        Beta = "beta",
        GeneralAvailability = "general-availability",
        Archived = "archived",
    }
}

impl Stage {
    /// PostHog's `ReleaseStage`: while in one, enrollment serves the flag.
    pub fn is_release(self) -> bool {
        matches!(
            self,
            Self::Concept | Self::Alpha | Self::Beta | Self::GeneralAvailability
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct EarlyAccessFeature {
    pub id: EarlyAccessId,
    pub project_id: ProjectId,
    pub name: String,
    pub description: String,
    pub stage: Stage,
    pub documentation_url: String,
    pub flag_id: FlagId,
    /// The key of its flag (read with the feature): what posthog-js enrolls by.
    pub flag_key: String,
    pub created_at: DateTime<Utc>,
}

/// A feature to store: what the service made of a create request, its flag settled.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEarlyAccessFeature {
    pub name: String,
    pub description: String,
    pub stage: Stage,
    pub documentation_url: String,
    pub flag_id: FlagId,
}

/// Changes to a feature; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EarlyAccessChanges {
    pub name: Option<String>,
    pub description: Option<String>,
    pub stage: Option<Stage>,
    pub documentation_url: Option<String>,
}
