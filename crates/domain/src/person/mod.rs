//! Persons as flags see them: the properties known of a `distinct_id` in a project, kept so a
//! flag can target what an SDK once `$set` (a survey's targeting flag turns off for a person who
//! answered it) without the SDK sending it again.

mod port;

pub use port::PersonRepository;

use serde_json::{Map, Value};

use crate::survey_response::MAX_ID_CHARS;

/// What a capture's events `$set` on one person. It is merged into the stored properties as
/// PostHog applies `$set` (each key given replaces the stored value, other stored keys stay),
/// creating the person if needed, in the same write as the capture's events
/// (`SurveyResponseRepository::record`).
#[derive(Debug, Clone, PartialEq)]
pub struct PersonSet {
    pub distinct_id: String,
    pub properties: Map<String, Value>,
}

/// A distinct id as persons are stored and looked up under it: at most [`MAX_ID_CHARS`]
/// characters, as PostHog truncates. Capture stores with it and `/flags` looks up with it, so both
/// name the same person.
pub fn stored_distinct_id(raw: &str) -> String {
    raw.chars().take(MAX_ID_CHARS).collect()
}
