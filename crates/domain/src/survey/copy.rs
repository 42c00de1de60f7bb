//! Copying a survey into other projects (`duplicate_to_projects`), PostHog's way: the copy is a
//! draft named `<name> (duplicated at <UTC time>)`, keeps what describes the survey (questions,
//! appearance, type, schedule, iterations) and drops what belongs to the source project (its
//! linked flag, the actions, events and flag variant its conditions name; Burrow drops the
//! cancel events too, which without them cancel nothing) and what PostHog's copy leaves out
//! (response sampling, the form builder's layout). Burrow also gives the
//! copy a targeting flag of its own with the source's targeting, and a free name when the one
//! PostHog would pick is taken.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::activity;
use super::plan::{serving_while_running, targeting_flag};
use super::{
    Conditions, Iterations, MAX_NAME_CHARS, Questions, ResponseSampling, Survey, SurveyName,
    SurveyState, SurveyWrite, TargetingFlag, TargetingPlan,
};
use crate::error::ValidationError;
use crate::tenancy::UserId;

/// The longest tail a copy's name gets: ` (duplicated at 2025-01-31 12:00:00)` and a counter.
const TAIL_ROOM: usize = 50;

/// What every candidate name of a copy of `name` starts with: the name itself, shortened so the
/// longest tail still fits. Stores look up taken names by it.
pub(crate) fn name_prefix(name: &str) -> String {
    name.chars().take(MAX_NAME_CHARS - TAIL_ROOM).collect()
}

/// The copy's name: PostHog's `<name> (duplicated at <time>)`, or with ` (2)`, ` (3)`, … when
/// `taken` (the target's names that start with [`name_prefix`]) has it, shortened to fit.
pub(crate) fn copy_name(name: &str, at: DateTime<Utc>, taken: &BTreeSet<String>) -> SurveyName {
    let stamp = format!(" (duplicated at {})", at.format("%Y-%m-%d %H:%M:%S"));
    (1..)
        .map(|n| {
            let tail = if n == 1 {
                stamp.clone()
            } else {
                format!("{stamp} ({n})")
            };
            let room = MAX_NAME_CHARS.saturating_sub(tail.chars().count());
            format!("{}{tail}", name.chars().take(room).collect::<String>())
        })
        .find(|candidate| !taken.contains(candidate))
        .map(SurveyName::fitted)
        .expect("a finite set leaves some counter free")
}

/// What to store for the copy of `source` named `name`: a draft (not launched, not stopped, not
/// archived) without the source project's objects, with fresh question ids and, when the source
/// has live targeting, a new inactive targeting flag it owns.
///
/// # Errors
/// Only if the source's targeting filters no longer parse, which stored filters always do.
pub(crate) fn plan_copy(
    source: &Survey,
    name: SurveyName,
    creator: UserId,
) -> Result<SurveyWrite, ValidationError> {
    let from = &source.state;
    let state = SurveyState {
        name: name.into_string(),
        linked_flag_id: None,
        questions: from.questions.clone().map(Questions::with_fresh_ids),
        conditions: from
            .conditions
            .clone()
            .map(Conditions::without_project_objects),
        start_date: None,
        end_date: None,
        archived: false,
        // PostHog's copy leaves both out.
        response_sampling: ResponseSampling::default(),
        form_content: None,
        iterations: Iterations::compute(
            from.iteration_count,
            from.iteration_frequency_days,
            None,
            &Iterations::default(),
        )?,
        ..from.clone()
    };
    let flag = match source.targeting_flag.as_ref().filter(|flag| !flag.deleted) {
        Some(targeting) => Some(TargetingFlag::New {
            flag: targeting_flag(&state.name, targeting.filters.clone())?,
            created_by: creator,
        }),
        None => None,
    };
    let targeting = serving_while_running(TargetingPlan { delete: None, flag }, &state);
    let activity = Some(activity::copied(&state.name, source.id, creator));
    Ok(SurveyWrite {
        state,
        targeting,
        activity,
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;
    use serde_json::{Map, Value, json};
    use uuid::Uuid;

    use super::*;
    use crate::feature_flag::{FeatureFlag, FlagFilters, FlagId};
    use crate::survey::{Schedule, SurveyId, SurveyType};
    use crate::tenancy::ProjectId;

    const CREATOR: UserId = UserId(9);

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 1, 31, 12, 0, 5).unwrap()
    }

    fn taken(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    fn filters() -> Map<String, Value> {
        json!({"groups": [{"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}], "rollout_percentage": 50}]})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn source(targeting_deleted: Option<bool>) -> Survey {
        let mut state = SurveyState::draft("Onboarding".into(), SurveyType::Widget);
        state.description = "Why we ask".into();
        state.linked_flag_id = Some(FlagId(4));
        state.questions = serde_json::from_value(json!([
            {"id": "q1", "type": "open", "question": "Why?"},
            {"id": 5, "type": "rating", "question": "How much?", "scale": 5}
        ]))
        .unwrap();
        state.conditions = serde_json::from_value(
            json!({"url": "/welcome", "linkedFlagVariant": "b", "actions": {"values": [{"id": 1}]}, "events": {"values": [{"name": "x"}]}}),
        )
        .unwrap();
        state.appearance = serde_json::from_value(json!({"position": "left"})).unwrap();
        state.start_date = Some(at());
        state.end_date = Some(at());
        state.archived = true;
        state.responses_limit = Some(100);
        state.schedule = Schedule::Recurring;
        state.iteration_count = Some(3);
        state.iteration_frequency_days = Some(7);
        state.enable_partial_responses = true;
        state.iterations =
            Iterations::compute(Some(3), Some(7), Some(at()), &Iterations::default()).unwrap();
        Survey {
            id: SurveyId::generate(),
            project_id: ProjectId(1),
            state,
            linked_flag: None,
            targeting_flag: targeting_deleted.map(|deleted| FeatureFlag {
                id: FlagId(8),
                project_id: ProjectId(1),
                name: "Targeting flag for survey Onboarding".into(),
                key: "survey-targeting-0123456789".into(),
                filters: FlagFilters::parse(Value::Object(filters())).unwrap(),
                deleted,
                active: true,
                ensure_experience_continuity: false,
                is_remote_configuration: false,
                created_at: at(),
                created_by: None,
            }),
            owns_targeting_flag: true,
            created_at: at(),
            created_by: None,
        }
    }

    #[test]
    fn a_copy_is_named_as_posthog_names_it_when_that_name_is_free() {
        assert_eq!(
            copy_name("Onboarding", at(), &taken(&["Onboarding"])).as_str(),
            "Onboarding (duplicated at 2025-01-31 12:00:05)"
        );
    }

    #[test]
    fn a_taken_name_gets_the_first_free_counter() {
        let taken = taken(&[
            "Onboarding (duplicated at 2025-01-31 12:00:05)",
            "Onboarding (duplicated at 2025-01-31 12:00:05) (2)",
        ]);
        assert_eq!(
            copy_name("Onboarding", at(), &taken).as_str(),
            "Onboarding (duplicated at 2025-01-31 12:00:05) (3)"
        );
    }

    #[test]
    fn a_long_name_is_shortened_so_the_copy_name_fits_and_keeps_the_prefix() {
        let long = "x".repeat(MAX_NAME_CHARS);
        let first = copy_name(&long, at(), &BTreeSet::new()).into_string();
        assert_eq!(first.chars().count(), MAX_NAME_CHARS);
        assert!(first.ends_with(" (duplicated at 2025-01-31 12:00:05)"));
        let second = copy_name(&long, at(), &BTreeSet::from([first.clone()])).into_string();
        assert_eq!(second.chars().count(), MAX_NAME_CHARS);
        assert!(second.ends_with(" (2)"));
        for name in [first, second] {
            assert!(name.starts_with(&name_prefix(&long)));
        }
    }

    #[test]
    fn a_copy_is_a_draft_that_keeps_the_content_and_drops_the_source_projects_objects() {
        let source = source(None);
        let write = plan_copy(&source, SurveyName::parse("Copy").unwrap(), CREATOR).unwrap();
        let state = &write.state;
        assert_eq!(state.name, "Copy");
        assert_eq!(
            (state.start_date, state.end_date, state.archived),
            (None, None, false)
        );
        assert_eq!(state.linked_flag_id, None);
        assert_eq!(
            serde_json::to_value(&state.conditions).unwrap(),
            json!({"url": "/welcome"})
        );
        assert_eq!(
            (
                &state.description,
                state.survey_type,
                &state.appearance,
                state.schedule,
                state.responses_limit,
                state.iteration_count,
                state.iteration_frequency_days,
                state.enable_partial_responses,
            ),
            (
                &source.state.description,
                SurveyType::Widget,
                &source.state.appearance,
                Schedule::Recurring,
                Some(100),
                Some(3),
                Some(7),
                true,
            )
        );
        assert_eq!(
            state.iterations.start_dates, None,
            "no schedule before launch"
        );
        let questions = serde_json::to_value(&state.questions).unwrap();
        assert_eq!(questions.as_array().unwrap().len(), 2);
        assert_eq!(questions[1]["scale"], 5);
        assert_ne!(questions[0]["id"], "q1");
        assert!(
            Uuid::parse_str(questions[1]["id"].as_str().unwrap()).is_ok(),
            "even an id sent as a number is replaced"
        );
        assert_eq!(write.targeting, TargetingPlan::default());
        let activity = write.activity.unwrap();
        assert_eq!((activity.user, activity.activity), (CREATOR, "created"));
        assert_eq!(
            activity.detail["changes"][0]["after"],
            source.id.0.to_string()
        );
    }

    #[test]
    fn live_targeting_is_copied_into_a_new_inactive_flag_the_copy_owns() {
        let write = plan_copy(
            &source(Some(false)),
            SurveyName::parse("Copy").unwrap(),
            CREATOR,
        )
        .unwrap();
        let Some(TargetingFlag::New { flag, created_by }) = write.targeting.flag else {
            panic!("expected a new flag: {:?}", write.targeting);
        };
        assert_eq!(created_by, CREATOR);
        assert_eq!(flag.filters.to_json(), filters());
        assert_eq!(flag.name, "Targeting flag for survey Copy");
        assert!(!flag.active);
        assert!(flag.key.as_str().starts_with("survey-targeting-"));

        let deleted = plan_copy(
            &source(Some(true)),
            SurveyName::parse("Copy").unwrap(),
            CREATOR,
        )
        .unwrap();
        assert_eq!(deleted.targeting, TargetingPlan::default());
    }
}
