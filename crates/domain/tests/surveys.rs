//! Survey validation and targeting rules, over the in-memory fakes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, Utc};
use domain::ValidationError;
use domain::cohort::{CohortFilters, CohortService, NewCohort};
use domain::feature_flag::{
    FeatureFlagRepository, FeatureFlagService, FlagFilters, FlagFiltersPatch, FlagId, FlagKey,
    NewFlag,
};
use domain::patch::Patch;
use domain::ports::PageRequest;
use domain::survey::{
    Appearance, Conditions, FormContent, MAX_LABELLED_SURVEYS, MAX_PROJECT_SURVEYS, NewSurvey,
    Questions, RenderedSurveys, Rendering, SamplingChanges, SamplingIntervalType, Schedule,
    SearchMatch, SearchTerm, SentBaseLanguage, Survey, SurveyChanges, SurveyFilter, SurveyId,
    SurveyName, SurveyRepository, SurveyService, SurveyTranslations, SurveyType, Switch,
};
use domain::tenancy::{ProjectId, UserId};
use domain::testing::{InMemoryStore, TimedMemories, someone};
use domain::{DomainError, Unexpected};
use serde_json::{Value, json};

const PROJECT: ProjectId = ProjectId(1);
const OTHER_PROJECT: ProjectId = ProjectId(2);
const USER: UserId = UserId(1);

struct World {
    store: InMemoryStore,
    surveys: SurveyService,
    flags: FeatureFlagService,
}

fn world() -> World {
    let store = InMemoryStore::new();
    World {
        surveys: SurveyService::new(Arc::new(store.clone()), Arc::new(store.clone())),
        flags: FeatureFlagService::new(Arc::new(store.clone()), Arc::new(store.clone())),
        store,
    }
}

/// Test shorthand: a JSON body as the command the HTTP layer makes of it. Values are assumed
/// to be of the right JSON type (the HTTP layer's type checks are tested there); the domain's
/// own field rules (name, questions, appearance, conditions) run as they do for a real request.
fn changes(value: Value) -> Result<SurveyChanges, ValidationError> {
    let body = value.as_object().expect("an object");
    let field = |name: &str| match body.get(name) {
        None => Patch::Absent,
        Some(Value::Null) => Patch::Null,
        Some(value) => Patch::Value(value.clone()),
    };
    let text = |name: &str| field(name).map(|v| v.as_str().expect("a string").to_owned());
    let integer = |name: &str| {
        field(name).map(|v| i32::try_from(v.as_i64().expect("an integer")).expect("an i32"))
    };
    let date = |name: &str| {
        field(name).map(|v| {
            v.as_str()
                .expect("a date")
                .parse::<DateTime<Utc>>()
                .expect("RFC 3339")
        })
    };
    Ok(SurveyChanges {
        name: text("name").try_map(|name| SurveyName::parse(&name))?,
        description: text("description"),
        survey_type: text("type").map(|t| SurveyType::parse(&t).expect("a survey type")),
        schedule: text("schedule").map(|s| Schedule::parse(&s).expect("a schedule")),
        linked_flag_id: integer("linked_flag_id").map(FlagId),
        targeting_flag_id: integer("targeting_flag_id").map(FlagId),
        targeting_flag_filters: body
            .get("targeting_flag_filters")
            .and_then(Value::as_object)
            .filter(|filters| !filters.is_empty())
            .map(FlagFiltersPatch::parse)
            .transpose()?,
        remove_targeting_flag: body
            .get("remove_targeting_flag")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        questions: field("questions").try_map(Questions::parse)?,
        conditions: field("conditions").try_map(Conditions::parse)?,
        appearance: field("appearance").try_map(Appearance::parse)?,
        start_date: date("start_date"),
        end_date: date("end_date"),
        archived: body.get("archived").and_then(Value::as_bool),
        responses_limit: integer("responses_limit"),
        iteration_count: integer("iteration_count"),
        iteration_frequency_days: integer("iteration_frequency_days"),
        enable_partial_responses: field("enable_partial_responses")
            .map(|v| v.as_bool().expect("a boolean")),
        enable_iframe_embedding: field("enable_iframe_embedding")
            .map(|v| v.as_bool().expect("a boolean")),
        response_sampling: SamplingChanges {
            start_date: date("response_sampling_start_date"),
            interval_type: text("response_sampling_interval_type")
                .map(|t| SamplingIntervalType::parse(&t).expect("an interval type")),
            interval: integer("response_sampling_interval"),
            limit: integer("response_sampling_limit"),
        },
        form_content: field("form_content").try_map(FormContent::parse)?,
        base_language: text("base_language")
            .value()
            .map(SentBaseLanguage::parse)
            .transpose()?,
        translations: field("translations").try_map(SurveyTranslations::parse)?,
    })
}

fn detail(error: DomainError) -> (Option<String>, String) {
    match error {
        DomainError::Invalid(e) => (e.attr, e.detail),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

const TARGETING: &str = r#"{"groups": [{"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}], "rollout_percentage": 50}]}"#;

impl World {
    async fn create(&self, value: Value) -> Result<Survey, DomainError> {
        self.create_in(PROJECT, value).await
    }

    async fn create_in(&self, project: ProjectId, value: Value) -> Result<Survey, DomainError> {
        let survey = NewSurvey::new(changes(value)?)?;
        self.surveys.create(project, &someone(USER), survey).await
    }

    async fn patch(&self, survey: &Survey, value: Value) -> Result<Survey, DomainError> {
        self.surveys
            .update(PROJECT, survey.id, USER, changes(value)?)
            .await
    }

    /// A flag with this key and (optionally) filters.
    async fn flag(&self, project: ProjectId, key: &str, filters: Option<Value>) -> FlagId {
        let flag = NewFlag {
            key: FlagKey::parse(key).unwrap(),
            name: String::new(),
            filters: filters.map_or_else(FlagFilters::default, |f| FlagFilters::parse(f).unwrap()),
            active: true,
            ensure_experience_continuity: false,
            is_remote_configuration: false,
        };
        self.flags
            .create(project, &someone(USER), flag)
            .await
            .unwrap()
            .id
    }

    async fn targeted(&self, name: &str) -> Survey {
        let filters: Value = serde_json::from_str(TARGETING).unwrap();
        self.create(json!({"name": name, "type": "popover", "targeting_flag_filters": filters}))
            .await
            .unwrap()
    }

    fn targeting_active(&self, survey: &Survey) -> bool {
        let id = survey
            .targeting_flag
            .as_ref()
            .expect("has a targeting flag")
            .id;
        self.store
            .all_flags(PROJECT)
            .into_iter()
            .find(|f| f.id == id)
            .unwrap()
            .active
    }
}

#[tokio::test]
async fn a_minimal_survey_gets_defaults_and_question_ids() {
    let world = world();
    let survey = world
        .create(json!({"name": "NPS", "type": "popover", "questions": [{"type": "open", "question": "Why?"}]}))
        .await
        .unwrap();
    assert_eq!(survey.state.description, "");
    assert_eq!(survey.state.schedule.as_str(), "once");
    assert!(!survey.state.archived);
    let questions = survey.state.questions.unwrap();
    assert!(
        questions
            .iter()
            .all(|question| question.base().id.is_some())
    );
}

#[tokio::test]
async fn name_and_type_are_required_on_create_and_put() {
    let world = world();
    assert_eq!(
        detail(world.create(json!({"type": "popover"})).await.unwrap_err()),
        (Some("name".into()), "This field is required.".into())
    );
    assert_eq!(
        detail(world.create(json!({"name": "X"})).await.unwrap_err()),
        (Some("type".into()), "This field is required.".into())
    );
    let survey = world
        .create(json!({"name": "X", "type": "api"}))
        .await
        .unwrap();
    let put = changes(json!({"name": "Y"}))
        .unwrap()
        .require_name_and_type()
        .unwrap_err();
    assert_eq!(put.attr.as_deref(), Some("type"));
    assert!(world.patch(&survey, json!({"name": "Y"})).await.is_ok());
}

#[tokio::test]
async fn names_are_unique_per_project_with_distinct_messages_for_create_and_rename() {
    let world = world();
    let first = world
        .create(json!({"name": "Taken", "type": "popover", "archived": true}))
        .await
        .unwrap();
    let again = world
        .create(json!({"name": "Taken", "type": "popover"}))
        .await
        .unwrap_err();
    assert_eq!(
        detail(again),
        (
            Some("name".into()),
            "There is already a survey with this name.".into()
        )
    );

    let other = world
        .create(json!({"name": "Other", "type": "popover"}))
        .await
        .unwrap();
    let rename = world
        .patch(&other, json!({"name": "Taken"}))
        .await
        .unwrap_err();
    assert_eq!(
        detail(rename).1,
        "There is already another survey with this name."
    );
    assert!(
        world.patch(&first, json!({"name": "Taken"})).await.is_ok(),
        "renaming to its own name is fine"
    );

    let elsewhere = world
        .create_in(OTHER_PROJECT, json!({"name": "Taken", "type": "popover"}))
        .await;
    assert!(elsewhere.is_ok(), "names are unique per project only");
}

#[tokio::test]
async fn targeting_filters_create_an_inactive_flag_named_after_the_survey() {
    let world = world();
    let survey = world.targeted("Onboarding").await;
    let flag = survey.targeting_flag.clone().unwrap();
    assert!(survey.owns_targeting_flag);
    assert_eq!(flag.name, "Targeting flag for survey Onboarding");
    let suffix = flag.key.strip_prefix("survey-targeting-").unwrap();
    assert_eq!(suffix.len(), 10);
    assert!(
        suffix
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert!(!flag.active);
    assert_eq!(
        flag.filters.to_json()["groups"][0]["rollout_percentage"],
        50
    );
}

#[tokio::test]
async fn targeting_that_reaches_everyone_is_refused_and_nothing_is_created() {
    let world = world();
    for filters in [
        json!({"groups": [{"properties": [], "rollout_percentage": 100}]}),
        json!({"groups": [{"rollout_percentage": null}]}),
    ] {
        let error = world
            .create(json!({"name": "All", "type": "popover", "targeting_flag_filters": filters}))
            .await
            .unwrap_err();
        assert_eq!(
            detail(error).1,
            "Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting"
        );
    }
    assert_eq!(world.store.survey_count(), 0);
    assert!(world.store.all_flags(PROJECT).is_empty());
}

#[tokio::test]
async fn targeting_filters_a_live_cohort_of_the_project() {
    let world = world();
    let cohorts = CohortService::new(Arc::new(world.store.clone()), Arc::new(world.store.clone()));
    let filters = CohortFilters::parse(&json!({"properties": {"type": "AND", "values": [
        {"key": "plan", "value": "pro", "type": "person", "operator": "exact"}]}}))
    .unwrap();
    let new_cohort = NewCohort {
        name: "Pro".to_owned(),
        description: String::new(),
        filters,
        is_static: false,
    };
    let cohort = cohorts
        .create(PROJECT, &someone(USER), new_cohort, Vec::new())
        .await
        .unwrap()
        .cohort;
    let targeting = |id: i32| {
        json!({"groups": [{"properties": [
        {"key": "id", "type": "cohort", "value": id, "operator": "in"}], "rollout_percentage": 100}]})
    };

    let survey = world
        .create(json!({"name": "Pros", "type": "popover",
                       "targeting_flag_filters": targeting(cohort.id.0)}))
        .await
        .unwrap();
    assert_eq!(
        survey.targeting_flag.unwrap().filters.cohort_ids(),
        [cohort.id]
    );
    for (project, id) in [(PROJECT, cohort.id.0 + 1), (OTHER_PROJECT, cohort.id.0)] {
        let refused = world
            .create_in(
                project,
                json!({"name": "Nobody", "type": "popover",
                                       "targeting_flag_filters": targeting(id)}),
            )
            .await
            .unwrap_err();
        assert_eq!(
            detail(refused),
            (
                Some("targeting_flag_filters".to_owned()),
                format!("Cohort with id {id} does not exist")
            )
        );
    }
}

#[tokio::test]
async fn the_targeting_flag_follows_launch_stop_resume_and_archive() {
    let world = world();
    let survey = world.targeted("Lifecycle").await;
    let launched = world
        .patch(&survey, json!({"start_date": "2024-05-22T14:40:09Z"}))
        .await
        .unwrap();
    assert!(world.targeting_active(&launched));
    let stopped = world
        .patch(&survey, json!({"end_date": "2024-06-01T00:00:00Z"}))
        .await
        .unwrap();
    assert!(!world.targeting_active(&stopped));
    let renamed = world
        .patch(&survey, json!({"name": "Renamed while stopped"}))
        .await
        .unwrap();
    assert!(
        !world.targeting_active(&renamed),
        "a rename must not reactivate a stopped survey"
    );
    let resumed = world
        .patch(&survey, json!({"end_date": null}))
        .await
        .unwrap();
    assert!(world.targeting_active(&resumed));
    let archived = world
        .patch(&survey, json!({"archived": true}))
        .await
        .unwrap();
    assert!(!world.targeting_active(&archived));
}

#[tokio::test]
async fn patching_targeting_filters_merges_top_level_keys_and_replaces_groups() {
    let world = world();
    let survey = world.targeted("Merge").await;
    let updated = world
        .patch(&survey, json!({"targeting_flag_filters": {"groups": [{"properties": [{"key": "plan", "value": "pro", "type": "person"}], "rollout_percentage": 10}], "payloads": {}}}))
        .await
        .unwrap();
    let flag = updated.targeting_flag.unwrap();
    assert_eq!(
        flag.id,
        survey.targeting_flag.unwrap().id,
        "the same flag is updated"
    );
    assert_eq!(
        flag.filters.to_json()["groups"].as_array().unwrap().len(),
        1
    );
    assert_eq!(
        flag.filters.to_json()["groups"][0]["rollout_percentage"],
        10
    );
    assert_eq!(flag.filters.to_json()["payloads"], json!({}));
}

#[tokio::test]
async fn removing_the_targeting_flag_deletes_it() {
    let world = world();
    let survey = world.targeted("Remove").await;
    let flag = survey.targeting_flag.clone().unwrap().id;
    let updated = world
        .patch(&survey, json!({"remove_targeting_flag": true}))
        .await
        .unwrap();
    assert!(updated.targeting_flag.is_none());
    assert!(
        FeatureFlagRepository::get(&world.store, PROJECT, flag)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_survey_without_targeting_gets_a_new_flag_on_patch() {
    let world = world();
    let survey = world
        .create(json!({"name": "Later", "type": "popover", "start_date": "2024-01-01T00:00:00Z"}))
        .await
        .unwrap();
    let filters: Value = serde_json::from_str(TARGETING).unwrap();
    let updated = world
        .patch(&survey, json!({"targeting_flag_filters": filters}))
        .await
        .unwrap();
    assert!(
        world.targeting_active(&updated),
        "a running survey's new flag is active"
    );
}

#[tokio::test]
async fn deleting_a_survey_deletes_its_own_targeting_flag_but_keeps_linked_and_adopted_flags() {
    let world = world();
    let linked = world.flag(PROJECT, "linked", None).await;
    let adopted = world.flag(PROJECT, "adopted", None).await;
    let owned = world.targeted("Owner").await;
    world.surveys.delete(PROJECT, owned.id, USER).await.unwrap();
    let owned_flag = owned.targeting_flag.unwrap().id;
    assert!(
        FeatureFlagRepository::get(&world.store, PROJECT, owned_flag)
            .await
            .unwrap()
            .is_none()
    );

    let adopter = world
        .create(json!({"name": "Adopter", "type": "popover", "linked_flag_id": linked.0, "targeting_flag_id": adopted.0}))
        .await
        .unwrap();
    assert!(!adopter.owns_targeting_flag);
    world
        .surveys
        .delete(PROJECT, adopter.id, USER)
        .await
        .unwrap();
    assert!(
        FeatureFlagRepository::get(&world.store, PROJECT, linked)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        FeatureFlagRepository::get(&world.store, PROJECT, adopted)
            .await
            .unwrap()
            .is_some()
    );
    let again = world
        .surveys
        .delete(PROJECT, adopter.id, USER)
        .await
        .unwrap_err();
    assert!(matches!(again, DomainError::NotFound));
}

#[tokio::test]
async fn flags_must_belong_to_the_project() {
    let world = world();
    let foreign = world.flag(OTHER_PROJECT, "foreign", None).await;
    let linked = world
        .create(json!({"name": "L", "type": "popover", "linked_flag_id": foreign.0}))
        .await
        .unwrap_err();
    assert_eq!(
        detail(linked),
        (
            Some("linked_flag_id".into()),
            "Feature Flag with this ID does not exist".into()
        )
    );
    let targeting = world
        .create(json!({"name": "T", "type": "popover", "targeting_flag_id": foreign.0}))
        .await
        .unwrap_err();
    assert_eq!(
        detail(targeting).1,
        "Targeting Feature Flag with this ID does not exist"
    );
}

#[tokio::test]
async fn a_deleted_linked_flag_still_shows_on_the_survey() {
    let world = world();
    let flag = world.flag(PROJECT, "soon-gone", None).await;
    let survey = world
        .create(json!({"name": "S", "type": "popover", "linked_flag_id": flag.0}))
        .await
        .unwrap();
    world.flags.delete(PROJECT, flag).await.unwrap();
    let reread = world.surveys.get(PROJECT, survey.id).await.unwrap();
    assert!(reread.linked_flag.unwrap().deleted);
}

#[tokio::test]
async fn linked_flag_variants_must_exist() {
    let world = world();
    let boolean = world.flag(PROJECT, "boolean", None).await;
    let multi = world
        .flag(PROJECT, "multi", Some(json!({"groups": [], "multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 50}]}})))
        .await;
    let with = |flag: Option<FlagId>, variant: &str| {
        let mut value = json!({"name": format!("V {variant} {flag:?}"), "type": "popover", "conditions": {"linkedFlagVariant": variant}});
        if let Some(flag) = flag {
            value["linked_flag_id"] = json!(flag.0);
        }
        value
    };
    assert_eq!(
        detail(world.create(with(None, "a")).await.unwrap_err()).1,
        "linkedFlagVariant can only be used when a linked_flag_id is specified"
    );
    assert_eq!(
        detail(world.create(with(Some(boolean), "a")).await.unwrap_err()).1,
        "Feature flag variant 'a' specified but the linked feature flag has no variants"
    );
    assert_eq!(
        detail(world.create(with(Some(multi), "c")).await.unwrap_err()).1,
        "Feature flag variant 'c' does not exist. Available variants: a, b"
    );
    assert!(world.create(with(Some(multi), "b")).await.is_ok());
    assert!(world.create(with(Some(boolean), "any")).await.is_ok());
}

#[tokio::test]
async fn external_surveys_refuse_targeting_and_page_conditions() {
    let world = world();
    let flag = world.flag(PROJECT, "f", None).await;
    let cases = [
        (
            json!({"linked_flag_id": flag.0}),
            "linked_flag_id is not allowed for external surveys",
        ),
        (
            json!({"targeting_flag_filters": serde_json::from_str::<Value>(TARGETING).unwrap()}),
            "targeting_flag_filters is not allowed for external surveys",
        ),
        (
            json!({"conditions": {"url": "x", "actions": {"values": [{"id": 1}]}, "events": {"values": []}}}),
            "The following condition fields are not allowed for external surveys: url, actions",
        ),
        (
            json!({"appearance": {"surveyPopupDelaySeconds": 5}}),
            "surveyPopupDelaySeconds is not allowed for external surveys",
        ),
    ];
    for (extra, message) in cases {
        let mut value = json!({"name": "External", "type": "external_survey"});
        value
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        assert_eq!(detail(world.create(value).await.unwrap_err()).1, message);
    }
}

#[tokio::test]
async fn shuffling_and_branching_cannot_be_combined() {
    let world = world();
    let survey = world
        .create(json!({"name": "B", "type": "popover", "questions": [
            {"type": "single_choice", "question": "A", "choices": ["x"], "branching": {"type": "end"}},
            {"type": "open", "question": "B"}
        ]}))
        .await
        .unwrap();
    let error = world
        .patch(&survey, json!({"appearance": {"shuffleQuestions": true}}))
        .await
        .unwrap_err();
    assert_eq!(
        detail(error),
        (
            None,
            "Question shuffling and question branching cannot be used together. Please disable one of these features.".to_owned()
        )
    );
}

#[tokio::test]
async fn open_answer_validation_rules_are_checked_and_kept_as_sent() {
    let world = world();
    let rules = json!([{"type": "min_length", "value": 3}, {"type": "email"}]);
    let survey = world
        .create(json!({"name": "Rules", "type": "popover", "questions": [
            {"type": "open", "question": "Email?", "validation": rules}
        ]}))
        .await
        .unwrap();
    let questions = serde_json::to_value(survey.state.questions.as_ref().unwrap()).unwrap();
    assert_eq!(questions[0]["validation"], rules);
    let error = world
        .patch(&survey, json!({"questions": [
            {"type": "open", "question": "Email?",
             "validation": [{"type": "min_length", "value": 9}, {"type": "max_length", "value": 4}]}
        ]}))
        .await
        .unwrap_err();
    assert_eq!(
        detail(error),
        (
            Some("questions".to_owned()),
            "Minimum length cannot be greater than maximum length".to_owned()
        )
    );
}

#[tokio::test]
async fn the_end_date_cannot_precede_the_start_date() {
    let world = world();
    let error = world
        .create(json!({"name": "D", "type": "popover", "start_date": "2024-02-01T00:00:00Z", "end_date": "2024-01-01T00:00:00Z"}))
        .await
        .unwrap_err();
    assert_eq!(detail(error).0.as_deref(), Some("end_date"));
}

#[tokio::test]
async fn recurring_surveys_compute_iterations_and_cannot_shrink_below_the_current_one() {
    let world = world();
    let survey = world
        .create(json!({"name": "R", "type": "popover", "schedule": "recurring", "iteration_count": 2, "iteration_frequency_days": 30, "start_date": "2024-05-22T14:40:09Z"}))
        .await
        .unwrap();
    let dates: Vec<String> = survey
        .state
        .iterations
        .start_dates
        .clone()
        .unwrap()
        .iter()
        .map(|d| d.to_rfc3339())
        .collect();
    assert_eq!(
        dates,
        ["2024-05-22T14:40:09+00:00", "2024-06-21T14:40:09+00:00"]
    );
    assert_eq!(survey.state.iterations.current, Some(1));
    assert!(
        world
            .patch(&survey, json!({"iteration_count": 1}))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_failed_update_changes_nothing() {
    let world = world();
    let survey = world
        .create(json!({"name": "Stable", "type": "popover"}))
        .await
        .unwrap();
    let filters: Value = serde_json::from_str(TARGETING).unwrap();
    let error = world
        .patch(&survey, json!({"name": "Changed", "targeting_flag_filters": filters, "start_date": "2024-02-01T00:00:00Z", "end_date": "2024-01-01T00:00:00Z"}))
        .await;
    assert!(error.is_err());
    let reread = world.surveys.get(PROJECT, survey.id).await.unwrap();
    assert_eq!(reread.state.name, "Stable");
    assert!(world.store.all_flags(PROJECT).is_empty());
}

#[tokio::test]
async fn unknown_and_foreign_ids_are_not_found() {
    let world = world();
    let survey = world
        .create(json!({"name": "Mine", "type": "popover"}))
        .await
        .unwrap();
    assert!(matches!(
        world.surveys.get(PROJECT, SurveyId::generate()).await,
        Err(DomainError::NotFound)
    ));
    assert!(matches!(
        world.surveys.get(OTHER_PROJECT, survey.id).await,
        Err(DomainError::NotFound)
    ));
}

#[tokio::test]
async fn a_project_holds_at_most_its_bound_of_surveys_and_a_deletion_frees_a_place() {
    let world = world();
    world
        .store
        .fill_with_surveys(PROJECT, MAX_PROJECT_SURVEYS - 1);
    let last = world
        .create(json!({"name": "Last", "type": "api"}))
        .await
        .unwrap();
    let past = world
        .create(json!({"name": "One more", "type": "api"}))
        .await;
    assert_eq!(
        detail(past.unwrap_err()),
        (
            None,
            "A project may have at most 100000 surveys.".to_owned()
        )
    );
    // Another project is not held back.
    world
        .create_in(OTHER_PROJECT, json!({"name": "Theirs", "type": "api"}))
        .await
        .unwrap();
    world.surveys.delete(PROJECT, last.id, USER).await.unwrap();
    world
        .create(json!({"name": "One more", "type": "api"}))
        .await
        .unwrap();
}

#[tokio::test]
async fn lists_filter_by_archived_newest_first() {
    let world = world();
    world
        .create(json!({"name": "Product feedback", "type": "popover"}))
        .await
        .unwrap();
    world
        .create(json!({"name": "Pricing", "type": "popover", "archived": true}))
        .await
        .unwrap();
    world
        .create(json!({"name": "Churn", "type": "popover"}))
        .await
        .unwrap();
    let page = PageRequest {
        limit: 10,
        offset: 0,
    };
    let names = |surveys: Vec<Survey>| {
        surveys
            .into_iter()
            .map(|s| s.state.name)
            .collect::<Vec<_>>()
    };

    let all = SurveyRepository::list(&world.store, PROJECT, &SurveyFilter::default(), page)
        .await
        .unwrap();
    assert_eq!(names(all.items), ["Churn", "Pricing", "Product feedback"]);
    let live = SurveyFilter {
        archived: Some(false),
        ..SurveyFilter::default()
    };
    let live = SurveyRepository::list(&world.store, PROJECT, &live, page)
        .await
        .unwrap();
    assert_eq!(
        (live.count, names(live.items)),
        (2, vec!["Churn".to_owned(), "Product feedback".to_owned()])
    );
}

/// Renders the name alone (not counted: `render`'s count belongs to the test below).
fn name_only(survey: Survey) -> Result<NameAndLink, Unexpected> {
    Ok(NameAndLink(survey.state.name, None))
}

#[tokio::test]
async fn a_search_answers_exact_matches_only_and_similar_ones_when_none_is_exact() {
    let world = world();
    for (name, description, archived) in [
        ("Onboarding feedback", "", false),
        ("Landing", "Shown on the landing page", false),
        ("Pricing page", "", true),
    ] {
        world
            .create(json!({"name": name, "type": "popover", "description": description, "archived": archived}))
            .await
            .unwrap();
    }
    let rendered = RenderedSurveys::new(Arc::new(world.store.clone()), name_only, &TimedMemories);
    let search = async |filter: SurveyFilter, term: &str| {
        let term = SearchTerm::parse(term).unwrap();
        let page = PageRequest {
            limit: 10,
            offset: 0,
        };
        let listed = rendered.list(PROJECT, filter, term, page).await.unwrap();
        let names: Vec<String> = listed.page.items.into_iter().map(|r| r.0).collect();
        (listed.matched, listed.page.count, names)
    };
    let exact = Some(SearchMatch::Exact);
    let similar = Some(SearchMatch::Similar);
    // "Onboarding feedback" is similar to "landing", but "Landing" holds it.
    assert_eq!(
        search(SurveyFilter::default(), "LANDING").await,
        (exact, 1, vec!["Landing".to_owned()])
    );
    assert_eq!(
        search(SurveyFilter::default(), " onbording ").await,
        (
            similar,
            2,
            vec!["Onboarding feedback".to_owned(), "Landing".to_owned()]
        )
    );
    let unarchived = SurveyFilter {
        archived: Some(false),
        ..SurveyFilter::default()
    };
    assert_eq!(
        search(SurveyFilter::default(), "page").await,
        (
            exact,
            2,
            vec!["Pricing page".to_owned(), "Landing".to_owned()]
        )
    );
    // The tier is decided among what the filters keep: "Pricing page", the one survey holding
    // "pricing", is archived; without it the similar tier answers, and nothing is similar enough.
    assert_eq!(
        search(unarchived.clone(), "pricing").await,
        (similar, 0, Vec::new())
    );
    // A blank search is no search: newest first, no tier.
    assert_eq!(
        search(unarchived, " ").await,
        (
            None,
            2,
            vec!["Landing".to_owned(), "Onboarding feedback".to_owned()]
        )
    );
}

#[tokio::test]
async fn a_targeting_flag_deleted_elsewhere_is_replaced_not_revived() {
    let world = world();
    let survey = world.targeted("Orphaned").await;
    let old = survey.targeting_flag.clone().unwrap().id;
    world.flags.delete(PROJECT, old).await.unwrap();
    let renamed = world
        .patch(&survey, json!({"name": "Still orphaned"}))
        .await
        .unwrap();
    assert!(
        renamed.targeting_flag.is_none(),
        "the deleted flag is let go of"
    );
    let filters: Value = serde_json::from_str(TARGETING).unwrap();
    let retargeted = world
        .patch(&survey, json!({"targeting_flag_filters": filters}))
        .await
        .unwrap();
    let new = retargeted.targeting_flag.unwrap();
    assert_ne!(new.id, old);
    assert!(!new.deleted);
    let old_flag = world
        .store
        .all_flags(PROJECT)
        .into_iter()
        .find(|f| f.id == old)
        .unwrap();
    assert!(old_flag.deleted && !old_flag.active);
}

/// What `RenderedSurveys` renders in these tests: the name, and whether the linked flag is deleted.
#[derive(Debug, Clone, PartialEq)]
struct NameAndLink(String, Option<bool>);

impl Rendering for NameAndLink {
    fn bytes(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap()
    }
}

static RENDERINGS: AtomicUsize = AtomicUsize::new(0);

/// Renders the name and whether the linked flag is deleted, counting.
fn render(survey: Survey) -> Result<NameAndLink, Unexpected> {
    RENDERINGS.fetch_add(1, Ordering::SeqCst);
    Ok(NameAndLink(
        survey.state.name,
        survey.linked_flag.map(|flag| flag.deleted),
    ))
}

/// Rendered reads render a survey once per revision: reads after it reuse the rendering, and
/// a write of the survey or of a flag it shows makes the next read render it again. (The only
/// test of this binary that renders, so the count is its own.)
#[tokio::test]
async fn rendered_reads_render_each_survey_once_until_it_or_a_flag_it_shows_changes() {
    let world = world();
    let rendered = RenderedSurveys::new(Arc::new(world.store.clone()), render, &TimedMemories);
    let renderings = || RENDERINGS.load(Ordering::SeqCst);
    let linked = world.flag(PROJECT, "linked", None).await;
    let first = world
        .create(json!({"name": "first", "type": "popover", "linked_flag_id": linked.0}))
        .await
        .unwrap();
    world
        .create(json!({"name": "second", "type": "popover"}))
        .await
        .unwrap();
    let names = async || {
        let listed = rendered
            .list(
                PROJECT,
                SurveyFilter::default(),
                None,
                PageRequest {
                    limit: 10,
                    offset: 0,
                },
            )
            .await
            .unwrap();
        assert_eq!(listed.matched, None);
        (listed.page.count, listed.page.items)
    };

    let both = (
        2,
        vec![
            NameAndLink("second".into(), None),
            NameAndLink("first".into(), Some(false)),
        ],
    );
    assert_eq!(names().await, both);
    assert_eq!(renderings(), 2);
    assert_eq!(names().await, both);
    assert_eq!(
        rendered.get(PROJECT, first.id).await.unwrap(),
        NameAndLink("first".into(), Some(false))
    );
    assert_eq!(renderings(), 2, "nothing changed, nothing rendered again");

    world
        .patch(&first, json!({"name": "renamed"}))
        .await
        .unwrap();
    assert_eq!(
        rendered.get(PROJECT, first.id).await.unwrap(),
        NameAndLink("renamed".into(), Some(false))
    );
    assert_eq!(renderings(), 3);

    world.flags.delete(PROJECT, linked).await.unwrap();
    assert_eq!(
        names().await.1[1],
        NameAndLink("renamed".into(), Some(true))
    );
    assert_eq!(renderings(), 4, "only the survey showing the flag");

    let missing = rendered.get(PROJECT, SurveyId::generate()).await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
    let foreign = rendered.get(OTHER_PROJECT, first.id).await;
    assert!(matches!(foreign, Err(DomainError::NotFound)), "{foreign:?}");
}

/// The survey's log, newest first: each entry's activity and its changes.
async fn logged(world: &World, survey: &Survey) -> Vec<(String, Value)> {
    let page = PageRequest {
        limit: 10,
        offset: 0,
    };
    let log = world
        .surveys
        .activity(PROJECT, Some(survey.id), page)
        .await
        .unwrap();
    log.entries
        .into_iter()
        .map(|entry| (entry.activity, entry.detail["changes"].clone()))
        .collect()
}

#[tokio::test]
async fn launch_and_stop_set_their_date_switch_the_targeting_flag_and_log_it_once() {
    let world = world();
    let survey = world.targeted("Lifecycle").await;
    assert!(!world.targeting_active(&survey));
    let before = chrono::Utc::now();
    let launched = world
        .surveys
        .switch(PROJECT, survey.id, USER, Switch::Launch)
        .await
        .unwrap();
    let start = launched.state.start_date.expect("launched");
    assert!(start >= before - chrono::Duration::milliseconds(1) && start <= chrono::Utc::now());
    assert_eq!(
        start.timestamp_subsec_nanos() % 1000,
        0,
        "to the microsecond"
    );
    assert!(world.targeting_active(&launched));
    assert!(launched.internal_targeting_flag(None).active);
    assert_eq!(
        Some(launched.clone()),
        SurveyRepository::get(&world.store, PROJECT, survey.id)
            .await
            .unwrap(),
        "the answer is the survey as stored"
    );

    let again = world
        .surveys
        .switch(PROJECT, survey.id, USER, Switch::Launch)
        .await
        .unwrap();
    assert_eq!(
        again.state.start_date,
        Some(start),
        "launched already: nothing changes"
    );

    let stopped = world
        .surveys
        .switch(PROJECT, survey.id, USER, Switch::Stop)
        .await
        .unwrap();
    let end = stopped.state.end_date.expect("stopped");
    assert!(!world.targeting_active(&stopped));
    assert!(!stopped.internal_targeting_flag(None).active);
    world
        .surveys
        .switch(PROJECT, survey.id, USER, Switch::Stop)
        .await
        .unwrap();

    let change = |field: &str, before: Value, after: chrono::DateTime<chrono::Utc>| json!([{"type": "Survey", "action": "changed", "field": field, "before": before, "after": after}]);
    assert_eq!(
        logged(&world, &survey).await,
        [
            ("stopped".to_owned(), change("end_date", Value::Null, end)),
            (
                "launched".to_owned(),
                change("start_date", Value::Null, start)
            ),
            ("created".to_owned(), Value::Null),
        ],
        "the no-ops are not logged"
    );
}

#[tokio::test]
async fn launch_and_stop_refuse_archived_and_ended_surveys_and_other_projects() {
    let world = world();
    let archived = world
        .create(json!({"name": "Archived", "type": "popover", "archived": true}))
        .await
        .unwrap();
    for (switch, message) in [
        (
            Switch::Launch,
            "Cannot launch an archived survey. Unarchive it first.",
        ),
        (
            Switch::Stop,
            "Cannot stop an archived survey. Unarchive it first if needed.",
        ),
    ] {
        let refused = world
            .surveys
            .switch(PROJECT, archived.id, USER, switch)
            .await;
        assert_eq!(detail(refused.unwrap_err()), (None, message.to_owned()));
    }
    let ended = world
        .create(json!({"name": "Ended", "type": "popover", "start_date": "2024-01-01T00:00:00Z", "end_date": "2024-02-01T00:00:00Z"}))
        .await
        .unwrap();
    let refused = world
        .surveys
        .switch(PROJECT, ended.id, USER, Switch::Launch)
        .await;
    assert_eq!(
        detail(refused.unwrap_err()),
        (
            None,
            "Cannot launch a survey with end_date in the past. Extend the end_date first."
                .to_owned()
        )
    );
    let stored = SurveyRepository::get(&world.store, PROJECT, ended.id).await;
    assert_eq!(
        stored.unwrap().map(|survey| survey.state),
        Some(ended.state.clone()),
        "a refusal writes nothing"
    );
    for switch in [Switch::Launch, Switch::Stop] {
        let foreign = world
            .surveys
            .switch(OTHER_PROJECT, ended.id, USER, switch)
            .await;
        assert!(matches!(foreign, Err(DomainError::NotFound)), "{foreign:?}");
    }
}

#[tokio::test]
async fn question_labels_cover_the_newest_surveys_up_to_the_bound() {
    let world = world();
    let oldest = world
        .create(json!({"name": "Oldest", "type": "popover", "questions": [{"id": "q-old", "type": "open", "question": "Old?"}]}))
        .await
        .unwrap();
    for index in 1..MAX_LABELLED_SURVEYS {
        world
            .create(json!({"name": format!("Survey {index}"), "type": "api",
                           "questions": [{"id": format!("q-{index}"), "type": "open", "question": "?"}]}))
            .await
            .unwrap();
    }
    let labels = world.surveys.question_labels(PROJECT).await.unwrap();
    assert_eq!(labels.len(), MAX_LABELLED_SURVEYS as usize);
    assert_eq!(labels.last().unwrap().question_id, "q-old");
    assert_eq!(labels.last().unwrap().survey_id, oldest.id);

    world
        .create(
            json!({"name": "Newest", "type": "popover", "archived": true,
                       "questions": [{"id": "q-new", "type": "open", "question": "New?"}]}),
        )
        .await
        .unwrap();
    let labels = world.surveys.question_labels(PROJECT).await.unwrap();
    assert_eq!(labels.len(), MAX_LABELLED_SURVEYS as usize);
    assert_eq!(
        (
            labels[0].question_id.as_str(),
            labels[0].survey_name.as_str()
        ),
        ("q-new", "Newest"),
        "archived surveys are labelled"
    );
    assert!(
        labels.iter().all(|label| label.survey_id != oldest.id),
        "the oldest survey is past the bound"
    );
    assert!(
        world
            .surveys
            .question_labels(OTHER_PROJECT)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_sampling_round_reaches_every_project_however_many_surveys_one_has_due() {
    let world = world();
    let now = Utc::now();
    let sampled = |name: String| {
        json!({"name": name, "type": "popover", "start_date": now.to_rfc3339(),
               "response_sampling_start_date": now.to_rfc3339(),
               "response_sampling_interval_type": "day", "response_sampling_interval": 10,
               "response_sampling_limit": 100})
    };
    let create = async |project: ProjectId, name: String| {
        let survey = NewSurvey::new(changes(sampled(name)).unwrap()).unwrap();
        world
            .surveys
            .create(project, &someone(USER), survey)
            .await
            .unwrap()
    };
    // More due in one project than a round takes.
    for n in 0..150 {
        create(PROJECT, format!("Busy {n}")).await;
    }
    let other = create(OTHER_PROJECT, "Quiet".into()).await;
    assert_eq!(other.state.response_sampling.rollout, 100.0);
    // The server's loop: rounds again at once while one finds work.
    let mut rounds = 0;
    while world
        .surveys
        .advance_response_sampling(&world.store, now)
        .await
        .unwrap()
        > 0
    {
        rounds += 1;
    }
    assert_eq!(rounds, 2, "150 + 1 due, 100 a round");
    let looked = world.surveys.get(OTHER_PROJECT, other.id).await.unwrap();
    let sampling = &looked.state.response_sampling;
    assert_eq!(sampling.checked_on, Some(now.date_naive()));
    assert_eq!(sampling.rollout, 10.0, "the first of ten days' share");
    assert_eq!(
        world
            .surveys
            .advance_response_sampling(&world.store, now)
            .await
            .unwrap(),
        0,
        "looked at once a day"
    );
}
