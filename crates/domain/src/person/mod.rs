//! Persons as flags see them: the properties known of a `distinct_id` in a project, kept so a
//! flag can target what an SDK once `$set` (a survey's targeting flag turns off for a person who
//! answered it) without the SDK sending it again; with them, what `/flags` reads in the same
//! breath (the groups a request names, hash key overrides, static cohort membership).

mod port;
mod set_merge;

pub use port::PersonRepository;
pub use set_merge::{LAST_SEEN_SURVEY_DATE, last_seen_survey_date, merge_set};

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::cohort::CohortId;
use crate::group::{GroupKey, GroupSet};
use crate::survey_response::MAX_ID_CHARS;

/// What `/flags` asks storage about one request, besides the person's properties.
#[derive(Debug, Clone, Copy)]
pub struct ProfileQuery<'a> {
    /// As stored ([`stored_distinct_id`]).
    pub distinct_id: &'a str,
    /// The groups the request names whose types the project's flags aggregate by.
    pub groups: &'a [GroupKey],
    /// Whether to read the person's hash key overrides: the project has flags that ensure
    /// experience continuity.
    pub hash_key_overrides: bool,
    /// The static cohorts the project's flags name, whose membership to read.
    pub static_cohorts: &'a [CohortId],
}

/// What storage holds of one request's person and groups.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Profile {
    pub properties: Map<String, Value>,
    /// The stored properties of each group of [`ProfileQuery::groups`], at its index (empty
    /// for a group never identified).
    pub groups: Vec<Map<String, Value>>,
    /// By flag key: the id the flag hashes for this person instead of their distinct id.
    pub hash_key_overrides: HashMap<String, String>,
    /// Those of [`ProfileQuery::static_cohorts`] that list the person.
    pub static_cohorts: Vec<CohortId>,
}

/// What a capture's events `$set` on one person. It is merged into the stored properties as
/// PostHog applies `$set` (each key given replaces the stored value, other stored keys stay;
/// [`merge_set`]: an older `$last_seen_survey_date` does not replace a newer one), creating the
/// person if needed, in the same write as the capture's events
/// (`SurveyResponseRepository::record`).
#[derive(Debug, Clone, PartialEq)]
pub struct PersonSet {
    pub distinct_id: String,
    pub properties: Map<String, Value>,
}

/// The most a person's or a group's stored properties may weigh, in bytes as stored (PostHog's
/// `check_properties_size`, 640 KiB). A set that would carry them past it is dropped, as PostHog
/// rejects the update, and the capture still succeeds (the sets of one person or group written
/// together, in one capture or in captures that wait together, are merged first and weighed as
/// one): `/flags` reads a person's and their
/// groups' properties on every request, so a client holding the public token must not grow
/// them without end.
pub const MAX_PROPERTIES_BYTES: usize = 655_360;

/// Whether properties weigh at most [`MAX_PROPERTIES_BYTES`], counted as their JSON text (what
/// PostgreSQL's `jsonb` stores them in, give or take a few bytes a key): the fakes' check (the
/// adapters' SQL checks the same bound).
#[cfg(feature = "testing")]
pub fn within_properties_bound(properties: &Map<String, Value>) -> bool {
    serde_json::to_vec(properties).is_ok_and(|bytes| bytes.len() <= MAX_PROPERTIES_BYTES)
}

/// What one capture sets beside its events: each person's `$set` and each group's
/// `$group_set`, written with the events (`SurveyResponseRepository::record`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProfileSets {
    pub persons: Vec<PersonSet>,
    pub groups: Vec<GroupSet>,
}

impl ProfileSets {
    /// Whether there is nothing to set.
    pub fn is_empty(&self) -> bool {
        self.persons.is_empty() && self.groups.is_empty()
    }
}

/// A distinct id as persons are stored and looked up under it: at most [`MAX_ID_CHARS`]
/// characters, as PostHog truncates. Capture stores with it and `/flags` looks up with it, so both
/// name the same person.
pub fn stored_distinct_id(raw: &str) -> String {
    raw.chars().take(MAX_ID_CHARS).collect()
}
