//! Which surveys' schedules have a step due, on both stores: `SurveyRepository::due_schedules`
//! finds exactly the surveys `schedule_due` holds of (a running recurring survey whose next
//! iteration has begun, or whose last one has ended), of every project, at most as many as
//! asked.

use chrono::{DateTime, Duration, Utc};
use domain::survey::{Iterations, SurveyId, SurveyState, SurveyType, schedule_due};
use domain::tenancy::ProjectId;

use crate::stores::Stores;
use crate::survey_writes as writes;

contract! {
    due_schedules_are_the_running_recurring_surveys_with_a_step_to_take,
}

/// A survey of `project` launched `days_ago`, with `count` iterations of a week (none: no
/// schedule), in iteration `current`, stopped if `stopped`.
async fn create(
    stores: &Stores,
    project: ProjectId,
    name: &str,
    days_ago: Option<i64>,
    count: Option<i32>,
    current: i32,
    stopped: bool,
) -> SurveyId {
    let now = Utc::now();
    let start = days_ago.map(|days| now - Duration::days(days));
    let mut state = SurveyState::draft(name.into(), SurveyType::Popover);
    state.start_date = start;
    state.end_date = stopped.then_some(now);
    state.iteration_count = count;
    state.iteration_frequency_days = count.map(|_| 7);
    state.iterations =
        Iterations::compute(count, Some(7), start, &Iterations::default()).expect("a schedule");
    if state.iterations.current.is_some() {
        state.iterations.current = Some(current);
    }
    writes::create_as_is(&*stores.surveys, project, &stores.user, state).await
}

async fn due_schedules_are_the_running_recurring_surveys_with_a_step_to_take(stores: Stores) {
    let (main, other) = (stores.project, stores.other_project);
    let next_begun = create(&stores, main, "Next begun", Some(8), Some(3), 1, false).await;
    let in_step = create(&stores, main, "In step", Some(8), Some(3), 2, false).await;
    let ended = create(&stores, other, "Ended", Some(30), Some(2), 2, false).await;
    create(&stores, main, "Draft", None, Some(3), 1, false).await;
    create(&stores, main, "Stopped", Some(30), Some(2), 1, true).await;
    create(&stores, main, "Plain", Some(30), None, 1, false).await;
    let now = Utc::now();
    let mine = [next_begun, in_step, ended];
    let due = |found: Vec<(ProjectId, SurveyId)>| -> Vec<(ProjectId, SurveyId)> {
        found
            .into_iter()
            .filter(|(_, id)| mine.contains(id))
            .collect()
    };
    let found = due(stores.surveys.due_schedules(now, 1_000).await.unwrap());
    let mut expected = vec![(main, next_begun), (other, ended)];
    expected.sort_by_key(|(project, id)| (project.0, id.0));
    assert_eq!(found, expected);
    // The rule the stores implement.
    for (project, id) in [(main, next_begun), (main, in_step), (other, ended)] {
        let survey = stores.surveys.get(project, id).await.unwrap().unwrap();
        assert_eq!(
            schedule_due(&survey.state, now),
            expected.contains(&(project, id)),
            "{}",
            survey.state.name
        );
    }
    let first = stores.surveys.due_schedules(now, 1).await.unwrap();
    assert_eq!(first.len(), 1);
    assert!(!due_at(&stores, now - Duration::days(2), next_begun).await);
}

/// Whether `survey` is among the due ones at `at`.
async fn due_at(stores: &Stores, at: DateTime<Utc>, survey: SurveyId) -> bool {
    let found = stores.surveys.due_schedules(at, 1_000).await.unwrap();
    found.iter().any(|(_, id)| *id == survey)
}
