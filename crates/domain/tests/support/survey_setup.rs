//! The survey service over the in-memory fakes, a popover survey made with it, and events as
//! capture receives them, for the domain's survey response and webhook tests (each test file is
//! its own binary, so they include this file by `#[path]`).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::patch::Patch;
use domain::survey::{
    NewSurvey, Questions, Survey, SurveyChanges, SurveyName, SurveyService, SurveyType,
};
use domain::survey_response::CapturedEvent;
use domain::tenancy::{ProjectId, UserId};
use domain::testing::{InMemoryStore, someone};
use serde_json::Value;
use uuid::Uuid;

/// A survey service keeping its surveys and their targeting flags in `store`.
pub fn survey_service(store: &InMemoryStore) -> Arc<SurveyService> {
    Arc::new(SurveyService::new(
        Arc::new(store.clone()),
        Arc::new(store.clone()),
    ))
}

/// Creates, as `user`, a popover survey in `project` named `name` asking `questions`
/// (PostHog's JSON), started at `start_date` if one is given.
pub async fn popover_survey(
    surveys: &SurveyService,
    project: ProjectId,
    user: UserId,
    name: &str,
    questions: Value,
    start_date: Option<DateTime<Utc>>,
) -> Survey {
    surveys
        .create(
            project,
            &someone(user),
            NewSurvey::new(SurveyChanges {
                name: Patch::Value(SurveyName::parse(name).unwrap()),
                survey_type: Patch::Value(SurveyType::Popover),
                questions: Patch::Value(Questions::parse(questions).unwrap()),
                start_date: start_date.map_or(Patch::Absent, Patch::Value),
                ..SurveyChanges::default()
            })
            .unwrap(),
        )
        .await
        .unwrap()
}

/// A `name` event at `at` with these properties (a JSON object; anything else is none), with a
/// fresh uuid and no top-level distinct id or offset.
pub fn captured_event(name: &str, properties: Value, at: DateTime<Utc>) -> CapturedEvent {
    CapturedEvent {
        event: name.into(),
        uuid: Some(Uuid::now_v7()),
        distinct_id: None,
        timestamp: Some(at),
        offset_ms: None,
        properties: properties.as_object().cloned().unwrap_or_default(),
    }
}
