//! Contract tests of the PostgreSQL survey repository against a real database: the targeting
//! flag changes of every write, atomicity, search and assembly.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};

use adapters::{PgFeatureFlagRepository, PgSurveyRepository};
use chrono::{DateTime, Utc};
use domain::feature_flag::{FeatureFlag, FeatureFlagRepository, FlagChanges, NewFlag};
use domain::ports::PageRequest;
use domain::survey::{
    Attach, Detach, Iterations, NewSurvey, Schedule, Survey, SurveyError, SurveyFilter,
    SurveyRepository, SurveyState, SurveyType, SurveyUpdate, TargetingPlan,
};
use domain::{Unexpected, ValidationError};
use serde_json::{Map, Value, json};
use support::Tenant;
use uuid::Uuid;

struct Repos {
    tenant: Tenant,
    flags: PgFeatureFlagRepository,
    surveys: PgSurveyRepository,
}

async fn repos() -> Repos {
    let tenant = Tenant::create().await;
    Repos {
        flags: PgFeatureFlagRepository::new(tenant.db.database.clone()),
        surveys: PgSurveyRepository::new(tenant.db.database.clone()),
        tenant,
    }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn at(raw: &str) -> DateTime<Utc> {
    raw.parse().expect("a timestamp")
}

fn all() -> PageRequest {
    PageRequest {
        limit: 100,
        offset: 0,
    }
}

fn state(name: &str) -> SurveyState {
    SurveyState {
        questions: Some(json!([{"id": "q1", "type": "open", "question": "Why?"}])),
        ..SurveyState::draft(name.into(), SurveyType::Popover)
    }
}

impl Repos {
    fn new_flag(&self, key: &str) -> NewFlag {
        NewFlag {
            project_id: self.tenant.project,
            name: format!("Targeting {key}"),
            key: key.into(),
            filters: object(json!({"groups": [{"properties": [], "rollout_percentage": 100}]})),
            active: false,
            ensure_experience_continuity: false,
            created_by: Some(self.tenant.user_id()),
        }
    }

    fn new_survey(&self, state: SurveyState, targeting: TargetingPlan) -> NewSurvey {
        NewSurvey {
            // v7 ids grow with time, so ties on created_at order as creation does.
            id: Uuid::now_v7(),
            project_id: self.tenant.project,
            state,
            created_by: Some(self.tenant.user_id()),
            targeting,
        }
    }

    /// A plain survey with no targeting flag.
    async fn plain(&self, state: SurveyState) -> Survey {
        self.surveys
            .create(self.new_survey(state, TargetingPlan::default()))
            .await
            .unwrap()
    }

    /// A survey that owns a new targeting flag with `key`.
    async fn targeted(&self, name: &str, key: &str, active: bool) -> Survey {
        let plan = TargetingPlan {
            attach: Some(Attach::New(self.new_flag(key))),
            active,
            ..TargetingPlan::default()
        };
        self.surveys
            .create(self.new_survey(state(name), plan))
            .await
            .unwrap()
    }

    /// A flag as stored, deleted or not (`get` hides deleted flags).
    async fn stored_flag(&self, survey: Uuid, linked: bool) -> FeatureFlag {
        let survey = self
            .surveys
            .get(self.tenant.project, survey)
            .await
            .unwrap()
            .expect("the survey exists");
        if linked {
            survey.linked_flag.expect("a linked flag")
        } else {
            survey.targeting_flag.expect("a targeting flag")
        }
    }

    async fn names(&self, filter: &SurveyFilter) -> Vec<String> {
        self.surveys
            .list(self.tenant.project, filter, all())
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|survey| survey.state.name)
            .collect()
    }
}

/// A planner that keeps the state and changes the targeting as given.
fn retarget(
    plan: TargetingPlan,
) -> impl Fn(&Survey) -> Result<SurveyUpdate, SurveyError> + Send + Sync {
    move |current: &Survey| {
        Ok(SurveyUpdate {
            state: current.state.clone(),
            targeting: plan.clone(),
        })
    }
}

#[tokio::test]
async fn creating_a_survey_with_a_new_targeting_flag_stores_the_flag_owned_and_active_as_planned() {
    let repos = repos().await;
    let mut written = state("NPS");
    written.description = "How likely are you to recommend us?".into();
    written.survey_type = SurveyType::Widget;
    written.conditions = Some(object(json!({"url": "/pricing"})));
    written.appearance = Some(object(json!({"backgroundColor": "#fff"})));
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
    let flag = repos.new_flag("survey-targeting-nps");
    let new = repos.new_survey(
        written.clone(),
        TargetingPlan {
            attach: Some(Attach::New(flag.clone())),
            active: true,
            ..TargetingPlan::default()
        },
    );

    let created = repos.surveys.create(new.clone()).await.unwrap();
    assert_eq!(created.id, new.id);
    assert_eq!(created.project_id, repos.tenant.project);
    assert_eq!(created.state, written);
    assert!(created.owns_targeting_flag);
    assert_eq!(created.linked_flag, None);
    assert_eq!(created.created_by, Some(repos.tenant.user.clone()));
    let targeting = created.targeting_flag.clone().expect("a targeting flag");
    assert_eq!(targeting.key, "survey-targeting-nps");
    assert_eq!(targeting.filters, flag.filters);
    assert!(
        targeting.active,
        "the plan's `active` wins over the new flag's"
    );
    assert!(!targeting.deleted);
    assert_eq!(targeting.created_by, Some(repos.tenant.user.clone()));

    let stored_flag = repos
        .flags
        .get(repos.tenant.project, targeting.id)
        .await
        .unwrap();
    assert_eq!(stored_flag, Some(targeting));
    assert_eq!(
        repos
            .surveys
            .get(repos.tenant.project, created.id)
            .await
            .unwrap(),
        Some(created)
    );
}

#[tokio::test]
async fn a_survey_adopting_an_existing_flag_does_not_own_it_and_switches_it_as_planned() {
    let repos = repos().await;
    let mut live = repos.new_flag("adopted");
    live.active = true;
    let adopted = repos.flags.create(live).await.unwrap();
    let new = repos.new_survey(
        state("Adopter"),
        TargetingPlan {
            attach: Some(Attach::Existing(adopted.id)),
            active: false,
            ..TargetingPlan::default()
        },
    );
    let created = repos.surveys.create(new).await.unwrap();
    assert!(!created.owns_targeting_flag);
    let targeting = created.targeting_flag.expect("a targeting flag");
    assert_eq!(targeting.id, adopted.id);
    assert!(!targeting.active);
}

#[tokio::test]
async fn a_taken_name_is_name_taken_and_leaves_neither_survey_nor_flag() {
    let repos = repos().await;
    repos.targeted("NPS", "first-flag", true).await;
    let surveys_before = repos.tenant.db.count_rows("surveys").await;
    let flags_before = repos.tenant.db.count_rows("feature_flags").await;
    assert_eq!((surveys_before, flags_before), (1, 1));

    let again = repos.new_survey(
        state("NPS"),
        TargetingPlan {
            attach: Some(Attach::New(repos.new_flag("second-flag"))),
            active: true,
            ..TargetingPlan::default()
        },
    );
    let result = repos.surveys.create(again).await;
    assert!(matches!(result, Err(SurveyError::NameTaken)), "{result:?}");
    assert_eq!(repos.tenant.db.count_rows("surveys").await, surveys_before);
    assert_eq!(
        repos.tenant.db.count_rows("feature_flags").await,
        flags_before
    );

    // Names are unique per project only.
    let mut elsewhere = repos.new_survey(state("NPS"), TargetingPlan::default());
    elsewhere.project_id = repos.tenant.other_project;
    let elsewhere = repos.surveys.create(elsewhere).await.unwrap();
    assert_eq!(elsewhere.project_id, repos.tenant.other_project);
}

#[tokio::test]
async fn two_concurrent_creates_with_one_name_yield_one_survey_and_one_name_taken() {
    let repos = repos().await;
    let first = PgSurveyRepository::new(repos.tenant.db.database.clone());
    let second = PgSurveyRepository::new(repos.tenant.db.database.clone());
    let plan = |key: &str| TargetingPlan {
        attach: Some(Attach::New(repos.new_flag(key))),
        active: true,
        ..TargetingPlan::default()
    };
    let (a, b) = tokio::join!(
        first.create(repos.new_survey(state("Race"), plan("flag-a"))),
        second.create(repos.new_survey(state("Race"), plan("flag-b"))),
    );
    let (winner, loser) = match (a, b) {
        (Ok(survey), Err(error)) | (Err(error), Ok(survey)) => (survey, error),
        other => panic!("expected one success and one failure, got {other:?}"),
    };
    assert!(matches!(loser, SurveyError::NameTaken), "{loser:?}");
    assert_eq!(winner.state.name, "Race");
    assert_eq!(repos.tenant.db.count_rows("surveys").await, 1);
    assert_eq!(
        repos.tenant.db.count_rows("feature_flags").await,
        1,
        "the loser's flag was rolled back"
    );
}

#[tokio::test]
async fn an_update_writes_the_planned_state_replaces_filters_and_recomputes_active() {
    let repos = repos().await;
    let linked = repos.flags.create(repos.new_flag("linked")).await.unwrap();
    let created = repos.targeted("NPS", "nps-targeting", false).await;
    let targeting_id = created.targeting_flag.as_ref().unwrap().id;
    let filters = object(json!({"groups": [{"properties": [], "rollout_percentage": 25}]}));

    let mut next = created.state.clone();
    next.description = "Launched".into();
    next.linked_flag_id = Some(linked.id);
    next.start_date = Some(at("2026-03-01T00:00:00Z"));
    next.conditions = Some(object(json!({"url": "/home"})));
    next.questions = None;
    next.schedule = Schedule::Recurring;
    next.iteration_count = Some(3);
    next.iteration_frequency_days = Some(7);
    next.iterations = Iterations {
        start_dates: Some(vec![
            at("2026-03-01T00:00:00Z"),
            at("2026-03-08T00:00:00Z"),
            at("2026-03-15T00:00:00Z"),
        ]),
        current: Some(1),
        current_start_date: Some(at("2026-03-01T00:00:00Z")),
    };
    let seen = AtomicBool::new(false);
    let planner = |current: &Survey| {
        assert_eq!(current, &created, "the planner sees the stored survey");
        seen.store(true, Ordering::SeqCst);
        Ok(SurveyUpdate {
            state: next.clone(),
            targeting: TargetingPlan {
                filters: Some(filters.clone()),
                active: true,
                ..TargetingPlan::default()
            },
        })
    };

    let updated = repos
        .surveys
        .update(repos.tenant.project, created.id, &planner)
        .await
        .unwrap();
    assert!(seen.load(Ordering::SeqCst));
    assert_eq!(updated.state, next);
    assert_eq!(updated.created_at, created.created_at);
    assert_eq!(updated.linked_flag.as_ref().map(|f| f.id), Some(linked.id));
    assert!(updated.owns_targeting_flag);
    let targeting = updated.targeting_flag.clone().unwrap();
    assert_eq!(targeting.id, targeting_id);
    assert_eq!(targeting.filters, filters);
    assert!(targeting.active);
    assert_eq!(
        repos
            .surveys
            .get(repos.tenant.project, created.id)
            .await
            .unwrap(),
        Some(updated.clone())
    );

    // Stopping the survey switches its flag off again, and clears what the state clears.
    let mut stopped = next.clone();
    stopped.end_date = Some(at("2026-04-01T00:00:00Z"));
    stopped.conditions = None;
    stopped.linked_flag_id = None;
    let stop = |_: &Survey| {
        Ok(SurveyUpdate {
            state: stopped.clone(),
            targeting: TargetingPlan::default(),
        })
    };
    let updated = repos
        .surveys
        .update(repos.tenant.project, created.id, &stop)
        .await
        .unwrap();
    assert_eq!(updated.state, stopped);
    assert_eq!(updated.linked_flag, None);
    assert!(!updated.targeting_flag.unwrap().active);
}

#[tokio::test]
async fn detaching_with_delete_soft_deletes_the_owned_flag_and_attaching_replaces_it() {
    let repos = repos().await;
    let created = repos.targeted("NPS", "old-targeting", true).await;
    let old = created.targeting_flag.clone().unwrap();

    let plan = TargetingPlan {
        detach: Some(Detach {
            flag: old.id,
            delete: true,
        }),
        attach: Some(Attach::New(repos.new_flag("new-targeting"))),
        active: true,
        ..TargetingPlan::default()
    };
    let updated = repos
        .surveys
        .update(repos.tenant.project, created.id, &retarget(plan))
        .await
        .unwrap();
    let new = updated.targeting_flag.clone().unwrap();
    assert_ne!(new.id, old.id);
    assert_eq!(new.key, "new-targeting");
    assert!(new.active);
    assert!(updated.owns_targeting_flag);
    assert_eq!(
        repos.flags.get(repos.tenant.project, old.id).await.unwrap(),
        None,
        "the old flag is deleted"
    );
    assert_eq!(repos.tenant.db.count_rows("feature_flags").await, 2);

    // Detaching without a replacement leaves the survey untargeted.
    let plan = TargetingPlan {
        detach: Some(Detach {
            flag: new.id,
            delete: true,
        }),
        active: true,
        ..TargetingPlan::default()
    };
    let updated = repos
        .surveys
        .update(repos.tenant.project, created.id, &retarget(plan))
        .await
        .unwrap();
    assert_eq!(updated.targeting_flag, None);
    assert!(!updated.owns_targeting_flag);
    let listed = repos.flags.list(repos.tenant.project, all()).await.unwrap();
    assert_eq!(listed.count, 0, "both targeting flags are deleted");
}

#[tokio::test]
async fn detaching_without_delete_keeps_the_flag_live() {
    let repos = repos().await;
    let adopted = repos.flags.create(repos.new_flag("adopted")).await.unwrap();
    let created = repos
        .surveys
        .create(repos.new_survey(
            state("Adopter"),
            TargetingPlan {
                attach: Some(Attach::Existing(adopted.id)),
                active: true,
                ..TargetingPlan::default()
            },
        ))
        .await
        .unwrap();
    let plan = TargetingPlan {
        detach: Some(Detach {
            flag: adopted.id,
            delete: false,
        }),
        active: false,
        ..TargetingPlan::default()
    };
    let updated = repos
        .surveys
        .update(repos.tenant.project, created.id, &retarget(plan))
        .await
        .unwrap();
    assert_eq!(updated.targeting_flag, None);
    let kept = repos
        .flags
        .get(repos.tenant.project, adopted.id)
        .await
        .unwrap()
        .expect("the adopted flag is still live");
    assert!(
        kept.active,
        "a detached flag is no longer switched by the survey"
    );
}

#[tokio::test]
async fn a_planner_error_is_returned_and_nothing_is_written() {
    let repos = repos().await;
    let created = repos.targeted("NPS", "nps-targeting", true).await;
    let flags_before = repos.tenant.db.count_rows("feature_flags").await;

    let failing = |_: &Survey| -> Result<SurveyUpdate, SurveyError> {
        Err(ValidationError::required("name").into())
    };
    let result = repos
        .surveys
        .update(repos.tenant.project, created.id, &failing)
        .await;
    match result {
        Err(SurveyError::Invalid(error)) => assert_eq!(error.attr.as_deref(), Some("name")),
        other => panic!("expected the planner's error, got {other:?}"),
    }
    assert_eq!(
        repos
            .surveys
            .get(repos.tenant.project, created.id)
            .await
            .unwrap(),
        Some(created.clone())
    );
    assert_eq!(
        repos.tenant.db.count_rows("feature_flags").await,
        flags_before
    );

    // A name conflict found while writing rolls back the flag changes made before it.
    repos.plain(state("Taken")).await;
    let renaming = |current: &Survey| {
        Ok(SurveyUpdate {
            state: SurveyState {
                name: "Taken".into(),
                ..current.state.clone()
            },
            targeting: TargetingPlan {
                detach: Some(Detach {
                    flag: current.targeting_flag.as_ref().unwrap().id,
                    delete: true,
                }),
                attach: Some(Attach::New(repos.new_flag("replacement"))),
                active: true,
                ..TargetingPlan::default()
            },
        })
    };
    let result = repos
        .surveys
        .update(repos.tenant.project, created.id, &renaming)
        .await;
    assert!(matches!(result, Err(SurveyError::NameTaken)), "{result:?}");
    assert_eq!(
        repos
            .surveys
            .get(repos.tenant.project, created.id)
            .await
            .unwrap(),
        Some(created)
    );
    assert_eq!(
        repos.tenant.db.count_rows("feature_flags").await,
        flags_before
    );
}

#[tokio::test]
async fn updating_a_missing_or_foreign_survey_is_not_found_without_planning() {
    let repos = repos().await;
    let created = repos.plain(state("NPS")).await;
    let planned = AtomicBool::new(false);
    let planner = |current: &Survey| {
        planned.store(true, Ordering::SeqCst);
        Ok(SurveyUpdate {
            state: current.state.clone(),
            targeting: TargetingPlan::default(),
        })
    };
    let foreign = repos
        .surveys
        .update(repos.tenant.other_project, created.id, &planner)
        .await;
    assert!(matches!(foreign, Err(SurveyError::NotFound)), "{foreign:?}");
    let missing = repos
        .surveys
        .update(repos.tenant.project, Uuid::now_v7(), &planner)
        .await;
    assert!(matches!(missing, Err(SurveyError::NotFound)), "{missing:?}");
    assert!(!planned.load(Ordering::SeqCst));
    assert_eq!(
        repos
            .surveys
            .get(repos.tenant.other_project, created.id)
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn search_matches_every_term_case_insensitively_in_name_or_description_and_literally() {
    let repos = repos().await;
    let mut onboarding = state("Onboarding feedback");
    onboarding.description = "Asked after SIGNUP".into();
    repos.plain(onboarding).await;
    repos.plain(state("Pricing feedback")).await;
    repos.plain(state("100% satisfied")).await;
    repos.plain(state("1000 satisfied")).await;
    repos.plain(state("a_b test")).await;
    repos.plain(state("axb test")).await;
    repos.plain(state(r"back\slash")).await;

    let search = |raw: &str| SurveyFilter::default().with_search(raw);
    assert_eq!(
        repos.names(&search("FEEDBACK")).await,
        ["Pricing feedback", "Onboarding feedback"]
    );
    assert_eq!(
        repos.names(&search("feedback signup")).await,
        ["Onboarding feedback"],
        "terms are ANDed, across name and description"
    );
    assert_eq!(
        repos.names(&search("feedback, nothing")).await,
        Vec::<String>::new()
    );
    assert_eq!(repos.names(&search("100%")).await, ["100% satisfied"]);
    assert_eq!(repos.names(&search("a_b")).await, ["a_b test"]);
    assert_eq!(repos.names(&search(r"k\s")).await, [r"back\slash"]);
    assert_eq!(
        repos
            .surveys
            .list(repos.tenant.project, &search("satisfied"), all())
            .await
            .unwrap()
            .count,
        2
    );
}

#[tokio::test]
async fn the_list_filters_by_archived_and_pages_newest_first() {
    let repos = repos().await;
    for name in ["first", "second", "third"] {
        repos.plain(state(name)).await;
    }
    let mut archived = state("archived");
    archived.archived = true;
    repos.plain(archived).await;
    let mut elsewhere = repos.new_survey(state("elsewhere"), TargetingPlan::default());
    elsewhere.project_id = repos.tenant.other_project;
    repos.surveys.create(elsewhere).await.unwrap();

    assert_eq!(
        repos.names(&SurveyFilter::default()).await,
        ["archived", "third", "second", "first"]
    );
    let live = SurveyFilter {
        archived: Some(false),
        ..SurveyFilter::default()
    };
    assert_eq!(repos.names(&live).await, ["third", "second", "first"]);
    let only_archived = SurveyFilter {
        archived: Some(true),
        ..SurveyFilter::default()
    };
    assert_eq!(repos.names(&only_archived).await, ["archived"]);

    let window = repos
        .surveys
        .list(
            repos.tenant.project,
            &live,
            PageRequest {
                limit: 1,
                offset: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(window.count, 3);
    assert_eq!(window.items.len(), 1);
    assert_eq!(window.items[0].state.name, "second");
    assert_eq!(window.items[0].created_by, Some(repos.tenant.user.clone()));
}

#[tokio::test]
async fn listed_surveys_show_their_flags_including_a_deleted_linked_flag() {
    let repos = repos().await;
    let linked = repos.flags.create(repos.new_flag("linked")).await.unwrap();
    let mut with_link = state("Linked");
    with_link.linked_flag_id = Some(linked.id);
    let linked_survey = repos.plain(with_link).await;
    repos.targeted("Targeted", "targeting", true).await;
    let mut anonymous = repos.new_survey(state("Anonymous"), TargetingPlan::default());
    anonymous.created_by = None;
    repos.surveys.create(anonymous).await.unwrap();

    repos
        .flags
        .update(
            repos.tenant.project,
            linked.id,
            FlagChanges {
                deleted: Some(true),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();

    let page = repos
        .surveys
        .list(repos.tenant.project, &SurveyFilter::default(), all())
        .await
        .unwrap();
    let [anonymous, targeted, linked_listed] = page.items.as_slice() else {
        panic!("expected three surveys, got {:?}", page.items);
    };
    assert_eq!(anonymous.created_by, None);
    assert_eq!(targeted.linked_flag, None);
    let targeting = targeted.targeting_flag.as_ref().unwrap();
    assert_eq!(targeting.key, "targeting");
    assert_eq!(targeting.created_by, Some(repos.tenant.user.clone()));
    let shown = linked_listed.linked_flag.as_ref().expect("still shown");
    assert_eq!(shown.id, linked.id);
    assert!(shown.deleted);
    assert!(!shown.active);
    assert_eq!(linked_listed.state.linked_flag_id, Some(linked.id));
    assert_eq!(
        repos.stored_flag(linked_survey.id, true).await.key,
        "linked"
    );
}

#[tokio::test]
async fn deleting_a_survey_soft_deletes_its_owned_flag_but_keeps_linked_and_adopted_flags() {
    let repos = repos().await;
    let linked = repos.flags.create(repos.new_flag("linked")).await.unwrap();
    let adopted = repos.flags.create(repos.new_flag("adopted")).await.unwrap();

    let mut owner_state = state("Owner");
    owner_state.linked_flag_id = Some(linked.id);
    let owner = repos
        .surveys
        .create(repos.new_survey(
            owner_state,
            TargetingPlan {
                attach: Some(Attach::New(repos.new_flag("owned"))),
                active: true,
                ..TargetingPlan::default()
            },
        ))
        .await
        .unwrap();
    let owned = repos.stored_flag(owner.id, false).await;
    let adopter = repos
        .surveys
        .create(repos.new_survey(
            state("Adopter"),
            TargetingPlan {
                attach: Some(Attach::Existing(adopted.id)),
                active: true,
                ..TargetingPlan::default()
            },
        ))
        .await
        .unwrap();

    assert!(
        !repos
            .surveys
            .delete(repos.tenant.other_project, owner.id)
            .await
            .unwrap(),
        "another project's survey is not deleted"
    );
    assert!(
        repos
            .surveys
            .delete(repos.tenant.project, owner.id)
            .await
            .unwrap()
    );
    assert!(
        repos
            .surveys
            .delete(repos.tenant.project, adopter.id)
            .await
            .unwrap()
    );
    assert!(
        !repos
            .surveys
            .delete(repos.tenant.project, owner.id)
            .await
            .unwrap()
    );

    assert_eq!(repos.tenant.db.count_rows("surveys").await, 0);
    assert_eq!(
        repos.tenant.db.count_rows("feature_flags").await,
        3,
        "flags are only ever soft-deleted"
    );
    assert_eq!(
        repos
            .flags
            .get(repos.tenant.project, owned.id)
            .await
            .unwrap(),
        None
    );
    let live = repos.flags.list(repos.tenant.project, all()).await.unwrap();
    let mut keys: Vec<_> = live.items.iter().map(|flag| flag.key.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["adopted", "linked"]);
    assert!(
        live.items
            .iter()
            .find(|f| f.key == "adopted")
            .unwrap()
            .active,
        "an adopted flag is left as it was"
    );
}

#[tokio::test]
async fn a_stored_survey_with_an_unknown_type_or_schedule_is_unexpected_not_a_panic() {
    use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};

    let repos = repos().await;
    let broken_type = repos.plain(state("Broken type")).await;
    let broken_schedule = repos.plain(state("Broken schedule")).await;
    let mut conn = AsyncPgConnection::establish(&repos.tenant.db.url)
        .await
        .unwrap();
    diesel::sql_query("UPDATE surveys SET type = 'hologram' WHERE id = $1")
        .bind::<diesel::sql_types::Uuid, _>(broken_type.id)
        .execute(&mut conn)
        .await
        .unwrap();
    diesel::sql_query("UPDATE surveys SET schedule = 'sometimes' WHERE id = $1")
        .bind::<diesel::sql_types::Uuid, _>(broken_schedule.id)
        .execute(&mut conn)
        .await
        .unwrap();

    for id in [broken_type.id, broken_schedule.id] {
        let result: Result<_, Unexpected> = repos.surveys.get(repos.tenant.project, id).await;
        assert!(result.is_err(), "{result:?}");
    }
    let listed = repos
        .surveys
        .list(repos.tenant.project, &SurveyFilter::default(), all())
        .await;
    assert!(listed.is_err());
}
