//! Response sampling and the form builder's layout on both stores: a survey's sampling settings, its rollout and the day the
//! round last looked round-trip as written, and `SurveyRepository::due_sampling` finds exactly
//! the surveys `sampling_due` holds of (sampling, not stopped, not yet looked at that day), of
//! every project, at most as many as asked.

use chrono::{Duration, Utc};
use domain::survey::{
    FormContent, ResponseSampling, SamplingIntervalType, SurveyId, SurveyState, SurveyType,
    sampling_due,
};
use domain::tenancy::ProjectId;
use serde_json::json;

use crate::stores::Stores;
use crate::survey_writes as writes;

contract! {
    sampling_settings_round_trip_and_due_sampling_finds_the_surveys_to_look_at,
    form_content_round_trips_as_written,
}

/// A survey of `project` asking for 100 responses a week from today, looked at `checked_days_ago`
/// (none: never), sampling unless `off`, stopped if `stopped`.
async fn create(
    stores: &Stores,
    project: ProjectId,
    name: &str,
    checked_days_ago: Option<i64>,
    off: bool,
    stopped: bool,
) -> SurveyId {
    let now = Utc::now();
    let mut state = SurveyState::draft(name.into(), SurveyType::Popover);
    state.start_date = Some(now);
    state.end_date = stopped.then_some(now);
    state.response_sampling = ResponseSampling {
        start_date: Some(now),
        interval_type: Some(SamplingIntervalType::Week),
        interval: Some(1),
        limit: Some(if off { 0 } else { 100 }),
        rollout: 28.57,
        checked_on: checked_days_ago.map(|days| (now - Duration::days(days)).date_naive()),
    };
    writes::create_as_is(&*stores.surveys, project, &stores.user, state).await
}

async fn sampling_settings_round_trip_and_due_sampling_finds_the_surveys_to_look_at(
    stores: Stores,
) {
    let (main, other) = (stores.project, stores.other_project);
    let never = create(&stores, main, "Never looked", None, false, false).await;
    let yesterday = create(&stores, other, "Looked yesterday", Some(1), false, false).await;
    let today = create(&stores, main, "Looked today", Some(0), false, false).await;
    let off = create(&stores, main, "Off", None, true, false).await;
    let stopped = create(&stores, main, "Stopped", None, false, true).await;
    let now = Utc::now();

    let stored = stores.surveys.get(main, never).await.unwrap().unwrap();
    assert_eq!(stored.state.response_sampling.rollout, 28.57);
    assert_eq!(
        stored.state.response_sampling.interval_type,
        Some(SamplingIntervalType::Week)
    );
    assert!(stored.internal_response_sampling_flag().is_some());

    let mine = [never, yesterday, today, off, stopped];
    let found: Vec<(ProjectId, SurveyId)> = stores
        .surveys
        .due_sampling(now.date_naive(), 1_000)
        .await
        .unwrap()
        .into_iter()
        .filter(|(_, id)| mine.contains(id))
        .collect();
    let mut expected = vec![(main, never), (other, yesterday)];
    expected.sort_by_key(|(project, id)| (project.0, id.0));
    assert_eq!(found, expected);
    // The rule the stores implement.
    for (project, id) in [
        (main, never),
        (other, yesterday),
        (main, today),
        (main, off),
        (main, stopped),
    ] {
        let survey = stores.surveys.get(project, id).await.unwrap().unwrap();
        assert_eq!(
            sampling_due(&survey.state, now.date_naive()),
            expected.contains(&(project, id)),
            "{}",
            survey.state.name
        );
    }
    let first = stores
        .surveys
        .due_sampling(now.date_naive(), 1)
        .await
        .unwrap();
    assert_eq!(first.len(), 1);
}

async fn form_content_round_trips_as_written(stores: Stores) {
    let document = json!({"type": "doc", "content": [{"type": "heading", "attrs": {"level": 2}}]});
    let mut state = SurveyState::draft("Form".into(), SurveyType::Popover);
    state.form_content = Some(FormContent::parse(document.clone()).unwrap());
    let id = writes::create_as_is(&*stores.surveys, stores.project, &stores.user, state).await;
    let stored = stores
        .surveys
        .get(stores.project, id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        serde_json::to_value(stored.state.form_content).unwrap(),
        document
    );
}
