//! The survey repository's contract: a write stores the planned state and executes its
//! targeting plan exactly, in one all-or-nothing step; the planner is shown the stored survey
//! and only the live flags of the project; lists order and page alike on both stores (their
//! filters and search: `survey_lists.rs`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::survey_writes as writes;
use domain::feature_flag::{FeatureFlag, FlagChanges, FlagFilters, FlagId, FlagKey, NewFlag};
use domain::patch::Patch;
use domain::ports::PageRequest;
use domain::survey::{
    FlagReferences, Iterations, NewSurvey, ReferencedFlags, Schedule, Survey, SurveyChanges,
    SurveyFilter, SurveyId, SurveyName, SurveyState, SurveyType, SurveyWrite, TargetingFlag,
    TargetingPlan,
};
use domain::{DomainError, ValidationError};
use serde_json::json;
use uuid::Uuid;

use crate::stores::{StoredFlag, Stores, all, at};

contract! {
    a_created_survey_stores_the_planned_state_and_its_creator,
    surveys_are_listed_newest_first_in_pages_with_their_count,
    surveys_created_at_the_same_instant_are_listed_by_id_descending,
    the_list_filters_by_archived,
    a_survey_name_is_unique_within_a_project_on_create_and_on_update,
    a_new_targeting_flag_is_created_as_planned_and_owned_by_the_survey,
    an_existing_flag_is_adopted_with_the_planned_changes_without_being_owned,
    a_survey_owns_its_targeting_flag_exactly_when_the_plan_says_so,
    an_update_applies_the_planned_changes_to_the_kept_targeting_flag,
    the_flag_let_go_of_is_deleted_before_the_new_one_is_created_so_its_key_is_free,
    an_update_can_leave_the_survey_without_a_targeting_flag,
    a_plan_deleting_a_flag_that_is_already_deleted_is_not_an_error,
    a_plan_keeping_a_flag_that_is_not_live_is_unexpected_and_writes_nothing,
    a_new_targeting_flag_with_a_taken_key_is_a_conflict_and_writes_nothing,
    a_planner_error_is_returned_as_is_and_nothing_is_written,
    a_name_conflict_rolls_back_the_targeting_changes_made_before_it,
    the_planner_is_shown_only_live_flags_of_the_project,
    the_planner_of_an_update_is_shown_the_survey_as_stored,
    updating_a_missing_or_foreign_survey_is_not_found_without_planning,
    deleting_a_survey_soft_deletes_only_the_targeting_flag_it_owns,
    deleting_a_missing_or_foreign_survey_returns_false,
    deleting_a_survey_whose_owned_flag_is_already_deleted_succeeds,
    a_survey_shows_its_flags_even_when_they_are_deleted,
    a_survey_never_shows_a_flag_of_another_project,
    a_survey_write_naming_a_deleted_flag_is_refused_and_does_not_revive_it,
    revisions_page_as_the_list_does_and_whole_reads_are_what_get_reads,
    a_revision_changes_with_anything_a_whole_survey_shows_and_only_then,
}

/// A flag as a planner may be shown it: who made what is not part of planning.
fn without_creator(flag: FeatureFlag) -> FeatureFlag {
    FeatureFlag {
        created_by: None,
        ..flag
    }
}

fn without_creators(survey: Survey) -> Survey {
    Survey {
        created_by: None,
        linked_flag: survey.linked_flag.map(without_creator),
        targeting_flag: survey.targeting_flag.map(without_creator),
        ..survey
    }
}

/// A draft popover with one question: the smallest state a survey is stored with.
fn state(name: &str) -> SurveyState {
    SurveyState {
        questions: serde_json::from_value(
            json!([{"id": "q1", "type": "open", "question": "Why?"}]),
        )
        .unwrap(),
        ..SurveyState::draft(name.into(), SurveyType::Popover)
    }
}

/// A create planner that writes `state` and `targeting`, whatever flags it is shown.
fn planned(
    state: SurveyState,
    targeting: TargetingPlan,
) -> impl Fn(&ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync {
    move |_| {
        Ok(SurveyWrite {
            state: state.clone(),
            targeting: targeting.clone(),
            activity: None,
        })
    }
}

/// An update planner that keeps the stored state and executes `targeting`.
fn retargeted(
    targeting: TargetingPlan,
) -> impl Fn(&Survey, &ReferencedFlags) -> Result<SurveyWrite, DomainError> + Send + Sync {
    move |current, _| {
        Ok(SurveyWrite {
            state: current.state.clone(),
            targeting: targeting.clone(),
            activity: None,
        })
    }
}

/// A plan that deletes nothing and ends with `flag`.
fn ending_with(flag: TargetingFlag) -> TargetingPlan {
    TargetingPlan {
        delete: None,
        flag: Some(flag),
    }
}

fn existing(id: FlagId, owned: bool, changes: FlagChanges) -> TargetingFlag {
    TargetingFlag::Existing { id, owned, changes }
}

fn switch(active: bool) -> FlagChanges {
    FlagChanges {
        active: Some(active),
        ..FlagChanges::default()
    }
}

fn references(linked: Option<FlagId>, targeting: Option<FlagId>) -> FlagReferences {
    FlagReferences { linked, targeting }
}

fn stored(id: FlagId, key: &str, active: bool, deleted: bool) -> StoredFlag {
    StoredFlag {
        id,
        key: key.into(),
        active,
        deleted,
    }
}

impl Stores {
    /// A new targeting flag created by the user.
    fn new_targeting(&self, key: &str, active: bool) -> TargetingFlag {
        TargetingFlag::New {
            flag: NewFlag {
                active,
                ..self.new_flag(key)
            },
            created_by: self.user.id,
        }
    }

    /// Creates a survey named `name` linking a new flag (`linked`) and with a new targeting
    /// flag of its own (`nps`); returns both the survey and the linked flag.
    async fn linked_and_targeted(&self, name: &str) -> (Survey, FeatureFlag) {
        let linked = self.flag("linked").await;
        let with_link = SurveyState {
            linked_flag_id: Some(linked.id),
            ..state(name)
        };
        let targeting = ending_with(self.new_targeting("nps", true));
        (self.create(with_link, targeting).await, linked)
    }

    /// Creates a survey of the main project with a fresh id, as planned.
    async fn create(&self, state: SurveyState, targeting: TargetingPlan) -> Survey {
        self.try_create(SurveyId::generate(), state, targeting)
            .await
            .expect("creating a survey")
    }

    async fn try_create(
        &self,
        id: SurveyId,
        state: SurveyState,
        targeting: TargetingPlan,
    ) -> Result<Survey, DomainError> {
        writes::create(
            &*self.surveys,
            self.project,
            id,
            &self.user,
            FlagReferences::default(),
            &planned(state, targeting),
        )
        .await
    }

    /// Updates a survey of the main project, keeping its state and executing `targeting`.
    async fn retarget(
        &self,
        id: SurveyId,
        targeting: TargetingPlan,
    ) -> Result<Survey, DomainError> {
        let planner = retargeted(targeting);
        writes::update(
            &*self.surveys,
            self.project,
            id,
            FlagReferences::default(),
            &planner,
        )
        .await
    }

    async fn survey(&self, id: SurveyId) -> Option<Survey> {
        self.surveys.get(self.project, id).await.unwrap()
    }

    async fn names(&self, filter: &SurveyFilter) -> Vec<String> {
        let page = self.surveys.list(self.project, filter, all()).await;
        page.unwrap()
            .items
            .into_iter()
            .map(|survey| survey.state.name)
            .collect()
    }
}

async fn a_created_survey_stores_the_planned_state_and_its_creator(stores: Stores) {
    let mut written = state("NPS");
    written.description = "How likely are you to recommend us?".into();
    written.survey_type = SurveyType::Widget;
    written.conditions = serde_json::from_value(json!({"url": "/pricing"})).unwrap();
    written.appearance = serde_json::from_value(json!({"backgroundColor": "#fff"})).unwrap();
    written.start_date = Some(at("2026-01-02T03:04:05Z"));
    written.responses_limit = Some(100);
    written.schedule = Schedule::Recurring;
    written.iteration_count = Some(2);
    written.iteration_frequency_days = Some(30);
    written.enable_partial_responses = true;
    written.iterations = Iterations {
        start_dates: Some(vec![at("2026-01-02T03:04:05Z"), at("2026-02-01T03:04:05Z")]),
        current: Some(1),
        current_start_date: Some(at("2026-01-02T03:04:05Z")),
    };
    let id = SurveyId::generate();

    let created = stores
        .try_create(id, written.clone(), TargetingPlan::default())
        .await
        .unwrap();
    assert_eq!(created.id, id);
    assert_eq!(created.project_id, stores.project);
    assert_eq!(created.state, written);
    assert_eq!(
        (created.linked_flag.clone(), created.targeting_flag.clone()),
        (None, None)
    );
    assert!(!created.owns_targeting_flag);
    assert_eq!(created.created_by, Some(stores.user.clone()));

    assert_eq!(stores.survey(id).await, Some(created));
    assert_eq!(
        stores.surveys.get(stores.other_project, id).await.unwrap(),
        None
    );
    assert_eq!(stores.survey_count().await, 1);
    assert!(stores.all_flags().await.is_empty());
}

async fn surveys_are_listed_newest_first_in_pages_with_their_count(stores: Stores) {
    for name in ["first", "second", "third"] {
        stores.create(state(name), TargetingPlan::default()).await;
    }
    writes::create(
        &*stores.surveys,
        stores.other_project,
        SurveyId::generate(),
        &stores.user,
        FlagReferences::default(),
        &planned(state("elsewhere"), TargetingPlan::default()),
    )
    .await
    .unwrap();

    assert_eq!(
        stores.names(&SurveyFilter::default()).await,
        ["third", "second", "first"]
    );
    let window = PageRequest {
        limit: 1,
        offset: 1,
    };
    let window = stores
        .surveys
        .list(stores.project, &SurveyFilter::default(), window)
        .await
        .unwrap();
    assert_eq!(window.count, 3);
    let [second] = window.items.as_slice() else {
        panic!("expected one survey, got {:?}", window.items);
    };
    assert_eq!(second.state.name, "second");
    assert_eq!(second.created_by, Some(stores.user.clone()));

    let past_the_end = PageRequest {
        limit: 5,
        offset: 3,
    };
    let past_the_end = stores
        .surveys
        .list(stores.project, &SurveyFilter::default(), past_the_end)
        .await
        .unwrap();
    assert_eq!((past_the_end.count, past_the_end.items.len()), (3, 0));
}

async fn surveys_created_at_the_same_instant_are_listed_by_id_descending(stores: Stores) {
    for (name, id) in [("low", 1), ("high", 3), ("middle", 2)] {
        let id = SurveyId(Uuid::from_u128(id));
        stores
            .try_create(id, state(name), TargetingPlan::default())
            .await
            .unwrap();
    }
    stores
        .set_every_created_at(at("2026-01-01T00:00:00Z"))
        .await;
    assert_eq!(
        stores.names(&SurveyFilter::default()).await,
        ["high", "middle", "low"]
    );
}

async fn the_list_filters_by_archived(stores: Stores) {
    for name in ["first", "second"] {
        stores.create(state(name), TargetingPlan::default()).await;
    }
    let archived = SurveyState {
        archived: true,
        ..state("archived")
    };
    stores.create(archived, TargetingPlan::default()).await;

    let filter = |archived| SurveyFilter {
        archived: Some(archived),
        ..SurveyFilter::default()
    };
    assert_eq!(
        stores.names(&SurveyFilter::default()).await,
        ["archived", "second", "first"]
    );
    assert_eq!(stores.names(&filter(false)).await, ["second", "first"]);
    assert_eq!(stores.names(&filter(true)).await, ["archived"]);
    let live = stores
        .surveys
        .list(stores.project, &filter(false), all())
        .await;
    assert_eq!(live.unwrap().count, 2);
}

async fn a_survey_name_is_unique_within_a_project_on_create_and_on_update(stores: Stores) {
    stores.create(state("NPS"), TargetingPlan::default()).await;

    let again = stores
        .try_create(SurveyId::generate(), state("NPS"), TargetingPlan::default())
        .await;
    assert!(matches!(again, Err(DomainError::Conflict)), "{again:?}");
    assert_eq!(stores.survey_count().await, 1);

    let elsewhere = writes::create(
        &*stores.surveys,
        stores.other_project,
        SurveyId::generate(),
        &stores.user,
        FlagReferences::default(),
        &planned(state("NPS"), TargetingPlan::default()),
    )
    .await
    .unwrap();
    assert_eq!(elsewhere.project_id, stores.other_project);

    let csat = stores.create(state("CSAT"), TargetingPlan::default()).await;
    let renaming = |to: &'static str| {
        move |current: &Survey, _: &ReferencedFlags| {
            Ok(SurveyWrite {
                state: SurveyState {
                    name: to.into(),
                    ..current.state.clone()
                },
                targeting: TargetingPlan::default(),
                activity: None,
            })
        }
    };
    let taken = writes::update(
        &*stores.surveys,
        stores.project,
        csat.id,
        FlagReferences::default(),
        &renaming("NPS"),
    )
    .await;
    assert!(matches!(taken, Err(DomainError::Conflict)), "{taken:?}");
    assert_eq!(stores.survey(csat.id).await, Some(csat.clone()));

    let own = writes::update(
        &*stores.surveys,
        stores.project,
        csat.id,
        FlagReferences::default(),
        &renaming("CSAT"),
    )
    .await;
    assert_eq!(
        own.unwrap().state,
        csat.state,
        "a survey's own name is not taken"
    );
}

async fn a_new_targeting_flag_is_created_as_planned_and_owned_by_the_survey(stores: Stores) {
    let filters = FlagFilters::parse(json!({"groups": [{"rollout_percentage": 25}]})).unwrap();
    let new = NewFlag {
        key: FlagKey::parse("survey-targeting-nps").unwrap(),
        name: "Targeting flag for survey NPS".into(),
        filters: filters.clone(),
        active: true,
        ensure_experience_continuity: true,
        is_remote_configuration: false,
    };
    let plan = ending_with(TargetingFlag::New {
        flag: new,
        created_by: stores.user.id,
    });

    let created = stores.create(state("NPS"), plan).await;
    assert!(created.owns_targeting_flag);
    let targeting = created.targeting_flag.clone().expect("a targeting flag");
    assert_eq!(targeting.project_id, stores.project);
    assert_eq!(targeting.key, "survey-targeting-nps");
    assert_eq!(targeting.name, "Targeting flag for survey NPS");
    assert_eq!(targeting.filters, filters);
    assert!(targeting.active && targeting.ensure_experience_continuity && !targeting.deleted);
    assert_eq!(
        targeting.created_by, None,
        "a survey shows its flags in summary"
    );

    let live = stores
        .flags
        .get(stores.project, targeting.id)
        .await
        .unwrap();
    assert_eq!(live.map(without_creator), Some(targeting));
    assert_eq!(stores.survey(created.id).await, Some(created));
    assert_eq!(stores.all_flags().await.len(), 1);
}

async fn an_existing_flag_is_adopted_with_the_planned_changes_without_being_owned(stores: Stores) {
    let adopted = stores.flag("adopted").await;
    let plan = ending_with(existing(adopted.id, false, switch(false)));

    let created = stores.create(state("Adopter"), plan).await;
    assert!(!created.owns_targeting_flag);
    let targeting = created.targeting_flag.clone().expect("a targeting flag");
    assert_eq!(targeting.id, adopted.id);
    assert!(!targeting.active, "switched off as planned");
    let live = stores.flags.get(stores.project, adopted.id).await.unwrap();
    assert_eq!(
        live,
        Some(FeatureFlag {
            active: false,
            ..adopted
        })
    );
    assert_eq!(stores.all_flags().await.len(), 1, "no flag was created");
}

async fn a_survey_owns_its_targeting_flag_exactly_when_the_plan_says_so(stores: Stores) {
    let flag = stores.flag("adopted").await;
    let owned = ending_with(existing(flag.id, true, FlagChanges::default()));
    let survey = stores.create(state("Owner"), owned).await;
    assert!(survey.owns_targeting_flag);

    let let_go = ending_with(existing(flag.id, false, FlagChanges::default()));
    let updated = stores.retarget(survey.id, let_go).await.unwrap();
    assert!(!updated.owns_targeting_flag);
    assert_eq!(updated.targeting_flag.map(|f| f.id), Some(flag.id));
    stores
        .delete_survey(stores.project, survey.id)
        .await
        .unwrap();
    assert_eq!(
        stores.all_flags().await,
        [stored(flag.id, "adopted", true, false)],
        "a flag the survey no longer owns outlives it"
    );
}

async fn an_update_applies_the_planned_changes_to_the_kept_targeting_flag(stores: Stores) {
    let created = stores
        .create(
            state("NPS"),
            ending_with(stores.new_targeting("nps", false)),
        )
        .await;
    let flag = created.targeting_flag.clone().unwrap();
    let filters = FlagFilters::parse(json!({"groups": [{"rollout_percentage": 10}]})).unwrap();
    let mut next = created.state.clone();
    next.description = "Launched".into();
    next.start_date = Some(at("2026-03-01T00:00:00Z"));
    let changes = FlagChanges {
        filters: Some(filters.clone()),
        active: Some(true),
        ..FlagChanges::default()
    };
    let planner = |_: &Survey, _: &ReferencedFlags| {
        Ok(SurveyWrite {
            state: next.clone(),
            targeting: ending_with(existing(flag.id, true, changes.clone())),
            activity: None,
        })
    };

    let updated = writes::update(
        &*stores.surveys,
        stores.project,
        created.id,
        FlagReferences::default(),
        &planner,
    )
    .await
    .unwrap();
    assert_eq!(updated.state, next);
    assert_eq!(updated.created_at, created.created_at);
    assert!(updated.owns_targeting_flag);
    let kept = updated.targeting_flag.clone().unwrap();
    assert_eq!((kept.id, kept.key.as_str()), (flag.id, "nps"));
    assert_eq!(kept.filters, filters);
    assert!(kept.active);
    assert_eq!(stores.survey(created.id).await, Some(updated));
    assert_eq!(
        stores.all_flags().await,
        [stored(flag.id, "nps", true, false)]
    );
}

async fn the_flag_let_go_of_is_deleted_before_the_new_one_is_created_so_its_key_is_free(
    stores: Stores,
) {
    let created = stores
        .create(state("NPS"), ending_with(stores.new_targeting("nps", true)))
        .await;
    let old = created.targeting_flag.clone().unwrap();

    let plan = TargetingPlan {
        delete: Some(old.id),
        flag: Some(stores.new_targeting("nps", true)),
    };
    let updated = stores.retarget(created.id, plan).await.unwrap();
    let new = updated.targeting_flag.clone().unwrap();
    assert_ne!(new.id, old.id);
    assert_eq!(new.key, "nps");
    assert!(new.active && !new.deleted);
    assert!(updated.owns_targeting_flag);
    assert_eq!(
        stores.flags.get(stores.project, old.id).await.unwrap(),
        None
    );
    assert_eq!(
        stores.all_flags().await,
        [
            stored(old.id, "nps", false, true),
            stored(new.id, "nps", true, false)
        ]
    );
}

async fn an_update_can_leave_the_survey_without_a_targeting_flag(stores: Stores) {
    let adopted = stores.flag("adopted").await;
    let plan = ending_with(existing(adopted.id, false, FlagChanges::default()));
    let created = stores.create(state("Adopter"), plan).await;

    let updated = stores
        .retarget(created.id, TargetingPlan::default())
        .await
        .unwrap();
    assert_eq!(updated.targeting_flag, None);
    assert!(!updated.owns_targeting_flag);
    assert_eq!(stores.survey(created.id).await, Some(updated));
    let live = stores.flags.get(stores.project, adopted.id).await.unwrap();
    assert_eq!(
        live,
        Some(adopted),
        "a flag let go of without `delete` is left alone"
    );
}

async fn a_plan_deleting_a_flag_that_is_already_deleted_is_not_an_error(stores: Stores) {
    let gone = stores.flag("gone").await;
    stores.delete_flag(gone.id).await;
    let created = stores.create(state("NPS"), TargetingPlan::default()).await;

    let plan = TargetingPlan {
        delete: Some(gone.id),
        flag: Some(stores.new_targeting("fresh", false)),
    };
    let updated = stores.retarget(created.id, plan).await.unwrap();
    let fresh = updated.targeting_flag.unwrap();
    assert_eq!(
        stores.all_flags().await,
        [
            stored(gone.id, "gone", false, true),
            stored(fresh.id, "fresh", false, false)
        ]
    );
}

async fn a_plan_keeping_a_flag_that_is_not_live_is_unexpected_and_writes_nothing(stores: Stores) {
    let gone = stores.flag("gone").await;
    stores.delete_flag(gone.id).await;
    let foreign = stores.flag_in(stores.other_project, "foreign").await;
    let survey = stores.create(state("NPS"), TargetingPlan::default()).await;
    let flags_before = stores.all_flags().await;

    for (id, changes) in [
        (gone.id, FlagChanges::default()),
        (gone.id, switch(true)),
        (foreign.id, FlagChanges::default()),
        (foreign.id, switch(false)),
        (FlagId(gone.id.0 + 1000), FlagChanges::default()),
    ] {
        let plan = ending_with(existing(id, false, changes));
        let created = stores
            .try_create(SurveyId::generate(), state("Other"), plan.clone())
            .await;
        assert!(
            matches!(created, Err(DomainError::Unexpected(_))),
            "{created:?}"
        );
        let updated = stores.retarget(survey.id, plan).await;
        assert!(
            matches!(updated, Err(DomainError::Unexpected(_))),
            "{updated:?}"
        );
    }
    assert_eq!(stores.survey_count().await, 1);
    assert_eq!(stores.survey(survey.id).await, Some(survey));
    assert_eq!(stores.all_flags().await, flags_before);
    assert_eq!(
        stores.all_other_flags().await,
        [stored(foreign.id, "foreign", true, false)]
    );
}

async fn a_new_targeting_flag_with_a_taken_key_is_a_conflict_and_writes_nothing(stores: Stores) {
    let taken = stores.flag("taken").await;
    let plan = ending_with(stores.new_targeting("taken", true));
    let created = stores
        .try_create(SurveyId::generate(), state("NPS"), plan)
        .await;
    assert!(matches!(created, Err(DomainError::Conflict)), "{created:?}");
    assert_eq!(stores.survey_count().await, 0);
    assert_eq!(
        stores.all_flags().await,
        [stored(taken.id, "taken", true, false)]
    );
}

async fn a_planner_error_is_returned_as_is_and_nothing_is_written(stores: Stores) {
    let refusal = || ValidationError::invalid("questions", "planned to fail");
    let failing_create =
        |_: &ReferencedFlags| -> Result<SurveyWrite, DomainError> { Err(refusal().into()) };
    let created = writes::create(
        &*stores.surveys,
        stores.project,
        SurveyId::generate(),
        &stores.user,
        FlagReferences::default(),
        &failing_create,
    )
    .await;
    match created {
        Err(DomainError::Invalid(error)) => assert_eq!(error, refusal()),
        other => panic!("expected the planner's error, got {other:?}"),
    }
    assert_eq!(stores.survey_count().await, 0);
    assert!(stores.all_flags().await.is_empty());

    let survey = stores
        .create(state("NPS"), ending_with(stores.new_targeting("nps", true)))
        .await;
    let flags_before = stores.all_flags().await;
    let failing_update = |_: &Survey, _: &ReferencedFlags| -> Result<SurveyWrite, DomainError> {
        Err(DomainError::NotFound)
    };
    let updated = writes::update(
        &*stores.surveys,
        stores.project,
        survey.id,
        FlagReferences::default(),
        &failing_update,
    )
    .await;
    assert!(matches!(updated, Err(DomainError::NotFound)), "{updated:?}");
    assert_eq!(stores.survey(survey.id).await, Some(survey));
    assert_eq!(stores.all_flags().await, flags_before);
}

async fn a_name_conflict_rolls_back_the_targeting_changes_made_before_it(stores: Stores) {
    stores
        .create(state("Taken"), TargetingPlan::default())
        .await;
    let survey = stores
        .create(state("NPS"), ending_with(stores.new_targeting("nps", true)))
        .await;
    let old = survey.targeting_flag.clone().unwrap();
    let flags_before = stores.all_flags().await;

    let taken_name = stores
        .try_create(
            SurveyId::generate(),
            state("Taken"),
            ending_with(stores.new_targeting("second", true)),
        )
        .await;
    assert!(
        matches!(taken_name, Err(DomainError::Conflict)),
        "{taken_name:?}"
    );
    assert_eq!(stores.survey_count().await, 2);
    assert_eq!(stores.all_flags().await, flags_before);

    let renaming = |current: &Survey, _: &ReferencedFlags| {
        Ok(SurveyWrite {
            state: SurveyState {
                name: "Taken".into(),
                ..current.state.clone()
            },
            targeting: TargetingPlan {
                delete: Some(old.id),
                flag: Some(stores.new_targeting("replacement", true)),
            },
            activity: None,
        })
    };
    let renamed = writes::update(
        &*stores.surveys,
        stores.project,
        survey.id,
        FlagReferences::default(),
        &renaming,
    )
    .await;
    assert!(matches!(renamed, Err(DomainError::Conflict)), "{renamed:?}");
    assert_eq!(stores.survey(survey.id).await, Some(survey));
    assert_eq!(
        stores.all_flags().await,
        flags_before,
        "the old flag lives on"
    );
}

async fn the_planner_is_shown_only_live_flags_of_the_project(stores: Stores) {
    let live = stores.flag("live").await;
    let gone = stores.flag("gone").await;
    stores.delete_flag(gone.id).await;
    let foreign = stores.flag_in(stores.other_project, "foreign").await;
    let missing = FlagId(live.id.0 + 1000);
    let shown = Mutex::new(Vec::new());
    let record = |flags: &ReferencedFlags| {
        let flags = ReferencedFlags {
            linked: flags.linked.clone().map(without_creator),
            targeting: flags.targeting.clone().map(without_creator),
        };
        shown.lock().unwrap().push(flags);
    };
    let write = |state: SurveyState| SurveyWrite {
        state,
        targeting: TargetingPlan::default(),
        activity: None,
    };

    for (index, (linked, targeting)) in [(live.id, gone.id), (foreign.id, missing)]
        .into_iter()
        .enumerate()
    {
        let planner = |flags: &ReferencedFlags| {
            record(flags);
            Ok(write(state(&format!("Survey {index}"))))
        };
        writes::create(
            &*stores.surveys,
            stores.project,
            SurveyId::generate(),
            &stores.user,
            references(Some(linked), Some(targeting)),
            &planner,
        )
        .await
        .unwrap();
    }
    let survey = stores
        .create(state("Updated"), TargetingPlan::default())
        .await;
    let planner = |current: &Survey, flags: &ReferencedFlags| {
        record(flags);
        Ok(write(current.state.clone()))
    };
    for (linked, targeting) in [(gone.id, live.id), (missing, foreign.id)] {
        writes::update(
            &*stores.surveys,
            stores.project,
            survey.id,
            references(Some(linked), Some(targeting)),
            &planner,
        )
        .await
        .unwrap();
    }

    let live = stores
        .flags
        .get(stores.project, live.id)
        .await
        .unwrap()
        .map(without_creator);
    let nothing = ReferencedFlags::default();
    assert_eq!(
        *shown.lock().unwrap(),
        [
            ReferencedFlags {
                linked: live.clone(),
                targeting: None,
            },
            nothing.clone(),
            ReferencedFlags {
                linked: None,
                targeting: live,
            },
            nothing,
        ]
    );
}

async fn the_planner_of_an_update_is_shown_the_survey_as_stored(stores: Stores) {
    let (created, linked) = stores.linked_and_targeted("NPS").await;
    stores.delete_flag(linked.id).await;
    let stored = stores.survey(created.id).await.unwrap();
    assert!(stored.linked_flag.as_ref().unwrap().deleted);

    let shown = Mutex::new(None);
    let planner = |current: &Survey, _: &ReferencedFlags| {
        *shown.lock().unwrap() = Some(without_creators(current.clone()));
        Ok(SurveyWrite {
            state: current.state.clone(),
            targeting: TargetingPlan::default(),
            activity: None,
        })
    };
    writes::update(
        &*stores.surveys,
        stores.project,
        created.id,
        FlagReferences::default(),
        &planner,
    )
    .await
    .unwrap();
    assert_eq!(shown.into_inner().unwrap(), Some(without_creators(stored)));
}

async fn updating_a_missing_or_foreign_survey_is_not_found_without_planning(stores: Stores) {
    let created = stores.create(state("NPS"), TargetingPlan::default()).await;
    let planned = AtomicBool::new(false);
    let planner = |current: &Survey, _: &ReferencedFlags| {
        planned.store(true, Ordering::SeqCst);
        Ok(SurveyWrite {
            state: current.state.clone(),
            targeting: TargetingPlan::default(),
            activity: None,
        })
    };
    let none = FlagReferences::default();

    let foreign = writes::update(
        &*stores.surveys,
        stores.other_project,
        created.id,
        none,
        &planner,
    )
    .await;
    assert!(matches!(foreign, Err(DomainError::NotFound)), "{foreign:?}");
    let missing = writes::update(
        &*stores.surveys,
        stores.project,
        SurveyId::generate(),
        none,
        &planner,
    )
    .await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
    assert!(!planned.load(Ordering::SeqCst));
    assert_eq!(stores.survey(created.id).await, Some(created));
}

async fn deleting_a_survey_soft_deletes_only_the_targeting_flag_it_owns(stores: Stores) {
    let linked = stores.flag("linked").await;
    let adopted = stores.flag("adopted").await;
    let owner_state = SurveyState {
        linked_flag_id: Some(linked.id),
        ..state("Owner")
    };
    let owner = stores
        .create(
            owner_state,
            ending_with(stores.new_targeting("owned", true)),
        )
        .await;
    let owned = owner.targeting_flag.clone().unwrap();
    let adopting = ending_with(existing(adopted.id, false, FlagChanges::default()));
    let adopter = stores.create(state("Adopter"), adopting).await;

    stores
        .delete_survey(stores.project, owner.id)
        .await
        .unwrap();
    stores
        .delete_survey(stores.project, adopter.id)
        .await
        .unwrap();

    assert_eq!(stores.survey_count().await, 0);
    assert_eq!(stores.survey(owner.id).await, None);
    assert_eq!(
        stores.all_flags().await,
        [
            stored(linked.id, "linked", true, false),
            stored(adopted.id, "adopted", true, false),
            stored(owned.id, "owned", false, true),
        ]
    );
}

async fn deleting_a_missing_or_foreign_survey_returns_false(stores: Stores) {
    let owner = stores
        .create(
            state("Owner"),
            ending_with(stores.new_targeting("owned", true)),
        )
        .await;
    let foreign = stores.delete_survey(stores.other_project, owner.id).await;
    assert!(matches!(foreign, Err(DomainError::NotFound)), "{foreign:?}");
    let missing = stores
        .delete_survey(stores.project, SurveyId::generate())
        .await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
    assert_eq!(stores.survey(owner.id).await, Some(owner.clone()));
    stores
        .delete_survey(stores.project, owner.id)
        .await
        .unwrap();
    let again = stores.delete_survey(stores.project, owner.id).await;
    assert!(
        matches!(again, Err(DomainError::NotFound)),
        "a survey is deleted once: {again:?}"
    );
}

async fn deleting_a_survey_whose_owned_flag_is_already_deleted_succeeds(stores: Stores) {
    let owner = stores
        .create(
            state("Owner"),
            ending_with(stores.new_targeting("owned", true)),
        )
        .await;
    let owned = owner.targeting_flag.unwrap();
    stores.delete_flag(owned.id).await;

    stores
        .delete_survey(stores.project, owner.id)
        .await
        .unwrap();
    assert_eq!(stores.survey_count().await, 0);
    assert_eq!(
        stores.all_flags().await,
        [stored(owned.id, "owned", false, true)]
    );
}

async fn a_survey_shows_its_flags_even_when_they_are_deleted(stores: Stores) {
    let (created, linked) = stores.linked_and_targeted("NPS").await;
    let targeting = created.targeting_flag.clone().unwrap();
    let deleted_link = stores.delete_flag(linked.id).await;
    let deleted_targeting = stores.delete_flag(targeting.id).await;

    let shown = stores.survey(created.id).await.unwrap();
    assert_eq!(shown.state.linked_flag_id, Some(linked.id));
    assert_eq!(shown.linked_flag, Some(without_creator(deleted_link)));
    assert_eq!(
        shown.targeting_flag,
        Some(without_creator(deleted_targeting))
    );
    let listed = stores
        .surveys
        .list(stores.project, &SurveyFilter::default(), all())
        .await
        .unwrap();
    assert_eq!(listed.items, [shown]);
}

/// A plan never names another project's flag (it is shown only the project's), but if one did,
/// the survey would still not show it: nothing crosses projects.
async fn a_survey_never_shows_a_flag_of_another_project(stores: Stores) {
    let foreign = stores.flag_in(stores.other_project, "foreign").await;
    let linking = SurveyState {
        linked_flag_id: Some(foreign.id),
        ..state("NPS")
    };
    let created = stores.create(linking, TargetingPlan::default()).await;
    assert_eq!(created.state.linked_flag_id, Some(foreign.id));
    assert_eq!(created.linked_flag, None);
    assert_eq!(stores.survey(created.id).await, Some(created));
}

/// The domain's side of "check references inside the writing transaction": a flag deleted
/// before the write is not among the referenced flags, so the plan refuses it (PostgreSQL's
/// side, a deletion racing the write, is in `postgres`).
async fn a_survey_write_naming_a_deleted_flag_is_refused_and_does_not_revive_it(stores: Stores) {
    let service = stores.survey_service();
    let gone = stores.flag("gone").await;
    stores.delete_flag(gone.id).await;
    let launched = || SurveyChanges {
        name: Patch::Value(SurveyName::parse("NPS").unwrap()),
        survey_type: Patch::Value(SurveyType::Popover),
        start_date: Patch::Value(at("2026-01-01T00:00:00Z")),
        ..SurveyChanges::default()
    };
    let survey = service
        .create(
            stores.project,
            &stores.user,
            NewSurvey::new(launched()).unwrap(),
        )
        .await
        .unwrap();

    let targeting = |changes: SurveyChanges| SurveyChanges {
        targeting_flag_id: Patch::Value(gone.id),
        ..changes
    };
    let linked = |changes: SurveyChanges| SurveyChanges {
        linked_flag_id: Patch::Value(gone.id),
        ..changes
    };
    let naming: [(&str, &dyn Fn(SurveyChanges) -> SurveyChanges); 2] = [
        ("targeting_flag_id", &targeting),
        ("linked_flag_id", &linked),
    ];
    for (attr, naming) in naming {
        let refused = |result: Result<Survey, DomainError>| match result {
            Err(DomainError::Invalid(error)) => assert_eq!(error.attr.as_deref(), Some(attr)),
            other => panic!("expected {attr} to be refused, got {other:?}"),
        };
        let changes = naming(SurveyChanges::default());
        refused(
            service
                .update(stores.project, survey.id, stores.user.id, changes)
                .await,
        );
        let other = naming(SurveyChanges {
            name: Patch::Value(SurveyName::parse("Other").unwrap()),
            ..launched()
        });
        let other = NewSurvey::new(other).unwrap();
        refused(service.create(stores.project, &stores.user, other).await);
    }
    assert_eq!(stores.survey_count().await, 1);
    assert_eq!(stores.survey(survey.id).await, Some(survey));
    assert_eq!(
        stores.all_flags().await,
        [stored(gone.id, "gone", false, true)]
    );
}

async fn revisions_page_as_the_list_does_and_whole_reads_are_what_get_reads(stores: Stores) {
    stores.linked_and_targeted("linked").await;
    for name in ["plain", "archived"] {
        let archived = name == "archived";
        let written = SurveyState {
            archived,
            ..state(name)
        };
        stores.create(written, TargetingPlan::default()).await;
    }
    let filter = SurveyFilter {
        archived: Some(false),
        ..SurveyFilter::default()
    };
    let window = PageRequest {
        limit: 5,
        offset: 0,
    };

    let listed = stores
        .surveys
        .list(stores.project, &filter, window)
        .await
        .unwrap();
    let revisions = stores
        .surveys
        .revisions(stores.project, &filter, window)
        .await
        .unwrap();
    assert_eq!(revisions.count, listed.count);
    let ids: Vec<SurveyId> = revisions.items.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, listed.items.iter().map(|s| s.id).collect::<Vec<_>>());

    let mut whole = stores.surveys.whole(stores.project, &ids).await.unwrap();
    whole.sort_by_key(|(survey, _)| std::cmp::Reverse((survey.created_at, survey.id)));
    assert_eq!(
        whole,
        listed
            .items
            .into_iter()
            .zip(revisions.items.iter().map(|(_, r)| *r))
            .collect::<Vec<_>>()
    );
    for (id, revision) in &revisions.items {
        let one = stores.surveys.revision(stores.project, *id).await.unwrap();
        assert_eq!(one, Some(*revision));
        assert_eq!(
            stores
                .surveys
                .revision(stores.other_project, *id)
                .await
                .unwrap(),
            None
        );
    }
    assert!(
        stores
            .surveys
            .whole(stores.other_project, &ids)
            .await
            .unwrap()
            .is_empty()
    );
    let unknown = SurveyId::generate();
    assert_eq!(
        stores
            .surveys
            .revision(stores.project, unknown)
            .await
            .unwrap(),
        None
    );
}

/// A revision stays while nothing a whole survey shows changes, and changes with the survey,
/// its linked flag and its targeting flag.
async fn a_revision_changes_with_anything_a_whole_survey_shows_and_only_then(stores: Stores) {
    let (created, linked) = stores.linked_and_targeted("NPS").await;
    let untouched = stores
        .create(state("other"), TargetingPlan::default())
        .await;
    let revision = async |id: SurveyId| {
        stores
            .surveys
            .revision(stores.project, id)
            .await
            .unwrap()
            .unwrap()
    };
    let other = revision(untouched.id).await;
    let mut seen = vec![revision(created.id).await];
    assert_eq!(revision(created.id).await, seen[0], "read again, unchanged");

    let rename = SurveyChanges {
        name: Patch::Value(SurveyName::parse("Net promoter score").unwrap()),
        ..SurveyChanges::default()
    };
    stores
        .survey_service()
        .update(stores.project, created.id, stores.user.id, rename)
        .await
        .unwrap();
    seen.push(revision(created.id).await);
    stores.delete_flag(linked.id).await;
    seen.push(revision(created.id).await);
    stores
        .delete_flag(created.targeting_flag.as_ref().unwrap().id)
        .await;
    seen.push(revision(created.id).await);

    let distinct: std::collections::HashSet<_> = seen.iter().collect();
    assert_eq!(distinct.len(), seen.len(), "{seen:?}");
    assert_eq!(
        revision(untouched.id).await,
        other,
        "another survey's writes change nothing"
    );
}
