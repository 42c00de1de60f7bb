//! The survey repository's activity log and copies: a write logs the entry its plan carries in
//! the same all-or-nothing step, the log reads newest first per project or per survey and
//! outlives the survey, and copies into several projects are inserted all together or not at
//! all, each planned against the names its project already has.

use std::collections::BTreeSet;

use crate::survey_writes as writes;
use domain::DomainError;
use domain::ValidationError;
use domain::activity::{ActivityPage, NewActivity};
use domain::ports::PageRequest;
use domain::survey::writes::{self as steps, FlagsRead};
use domain::survey::{
    FlagReferences, ReferencedFlags, Survey, SurveyId, SurveyState, SurveyTransaction, SurveyType,
    SurveyWrite, TargetingFlag, TargetingPlan,
};
use domain::tenancy::ProjectId;
use serde_json::{Value, json};

use crate::stores::{Stores, all};

contract! {
    every_write_logs_the_entry_its_plan_carries_with_the_user,
    an_update_planned_without_an_entry_logs_nothing,
    a_write_that_fails_logs_nothing,
    a_surveys_log_is_its_own_and_a_projects_log_is_its_surveys,
    the_log_is_paged_newest_first_with_its_total,
    copies_are_inserted_in_order_each_planned_against_the_names_its_project_has,
    a_failing_copy_writes_no_copy_no_flag_and_no_entry,
    a_copy_with_a_taken_name_is_a_conflict_and_writes_nothing,
}

fn state(name: &str) -> SurveyState {
    SurveyState::draft(name.into(), SurveyType::Popover)
}

impl Stores {
    fn note(&self, activity: &'static str, detail: Value) -> NewActivity {
        NewActivity {
            user: self.user.id,
            activity,
            detail,
        }
    }

    /// Creates a survey of `project` logging `created`.
    async fn logged_create(&self, project: ProjectId, name: &str) -> Survey {
        let activity = self.note("created", json!({"name": name, "changes": null}));
        let planner = |_: &ReferencedFlags| {
            Ok(SurveyWrite {
                state: state(name),
                targeting: TargetingPlan::default(),
                activity: Some(activity.clone()),
            })
        };
        writes::create(
            &*self.surveys,
            project,
            SurveyId::generate(),
            &self.user,
            FlagReferences::default(),
            &planner,
        )
        .await
        .expect("creating a survey")
    }

    /// Renames a survey of the main project, logging `activity` (or nothing).
    async fn rename(
        &self,
        id: SurveyId,
        name: &str,
        activity: Option<NewActivity>,
    ) -> Result<Survey, DomainError> {
        let planner = |current: &Survey, _: &ReferencedFlags| {
            Ok(SurveyWrite {
                state: SurveyState {
                    name: name.into(),
                    ..current.state.clone()
                },
                targeting: TargetingPlan::default(),
                activity: activity.clone(),
            })
        };
        writes::update(
            &*self.surveys,
            self.project,
            id,
            FlagReferences::default(),
            &planner,
        )
        .await
    }

    async fn log(&self, project: ProjectId, survey: Option<SurveyId>) -> ActivityPage {
        self.surveys
            .activity(project, survey, all())
            .await
            .expect("reading the activity log")
    }

    /// `(activity, item_id)` of the project's log, newest first.
    async fn logged(&self, project: ProjectId) -> Vec<(String, String)> {
        self.log(project, None)
            .await
            .entries
            .into_iter()
            .map(|entry| (entry.activity, entry.item_id))
            .collect()
    }
}

fn logged(activity: &str, survey: &Survey) -> (String, String) {
    (activity.to_owned(), survey.id.0.to_string())
}

async fn every_write_logs_the_entry_its_plan_carries_with_the_user(stores: Stores) {
    let survey = stores.logged_create(stores.project, "First").await;
    let changes = json!({"name": "Second", "changes": [{"field": "name"}]});
    stores
        .rename(
            survey.id,
            "Second",
            Some(stores.note("updated", changes.clone())),
        )
        .await
        .unwrap();
    stores
        .delete_survey(stores.project, survey.id)
        .await
        .unwrap();

    let log = stores.log(stores.project, None).await;
    assert_eq!(log.total, 3);
    let shown: Vec<(&str, &str, &Value)> = log
        .entries
        .iter()
        .map(|e| (e.activity.as_str(), e.scope.as_str(), &e.detail))
        .collect();
    assert_eq!(
        shown,
        [
            (
                "deleted",
                "Survey",
                &json!({"name": "Second", "changes": null})
            ),
            ("updated", "Survey", &changes),
            (
                "created",
                "Survey",
                &json!({"name": "First", "changes": null})
            ),
        ],
        "the deletion is logged with the name the survey had, and the log outlives it"
    );
    for entry in &log.entries {
        assert_eq!(entry.item_id, survey.id.0.to_string());
        assert_eq!(
            entry.user,
            Some((stores.user.first_name.clone(), stores.user.email.clone()))
        );
    }
    assert!(log.entries[0].created_at >= log.entries[2].created_at);
}

async fn an_update_planned_without_an_entry_logs_nothing(stores: Stores) {
    let survey = stores.logged_create(stores.project, "Quiet").await;
    stores.rename(survey.id, "Still quiet", None).await.unwrap();
    assert_eq!(
        stores.logged(stores.project).await,
        [logged("created", &survey)]
    );
}

async fn a_write_that_fails_logs_nothing(stores: Stores) {
    let taken = stores.logged_create(stores.project, "Taken").await;
    let other = stores.logged_create(stores.project, "Other").await;
    let entry = stores.note("updated", json!({}));
    let conflict = stores.rename(other.id, "Taken", Some(entry.clone())).await;
    assert!(
        matches!(conflict, Err(DomainError::Conflict)),
        "{conflict:?}"
    );

    let refused = |_: &Survey, _: &ReferencedFlags| -> Result<SurveyWrite, DomainError> {
        Err(ValidationError::invalid("name", "no").into())
    };
    let planned_error = writes::update(
        &*stores.surveys,
        stores.project,
        other.id,
        FlagReferences::default(),
        &refused,
    )
    .await;
    assert!(matches!(planned_error, Err(DomainError::Invalid(_))));

    let missing = stores
        .delete_survey(stores.project, SurveyId::generate())
        .await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
    let foreign = stores.delete_survey(stores.other_project, taken.id).await;
    assert!(matches!(foreign, Err(DomainError::NotFound)), "{foreign:?}");

    assert_eq!(
        stores.logged(stores.project).await,
        [logged("created", &other), logged("created", &taken)]
    );
    assert!(stores.logged(stores.other_project).await.is_empty());
}

async fn a_surveys_log_is_its_own_and_a_projects_log_is_its_surveys(stores: Stores) {
    let first = stores.logged_create(stores.project, "First").await;
    let second = stores.logged_create(stores.project, "Second").await;
    let elsewhere = stores
        .logged_create(stores.other_project, "Elsewhere")
        .await;
    stores
        .rename(first.id, "First!", Some(stores.note("updated", json!({}))))
        .await
        .unwrap();

    let own = stores.log(stores.project, Some(first.id)).await;
    assert_eq!(own.total, 2);
    assert!(
        own.entries
            .iter()
            .all(|e| e.item_id == first.id.0.to_string())
    );
    assert_eq!(
        stores.logged(stores.project).await,
        [
            logged("updated", &first),
            logged("created", &second),
            logged("created", &first)
        ]
    );
    assert_eq!(
        stores.logged(stores.other_project).await,
        [logged("created", &elsewhere)]
    );
    let foreign = stores.log(stores.project, Some(elsewhere.id)).await;
    assert_eq!((foreign.total, foreign.entries.len()), (0, 0));
}

async fn the_log_is_paged_newest_first_with_its_total(stores: Stores) {
    let mut created = Vec::new();
    for n in 0..5 {
        created.push(
            stores
                .logged_create(stores.project, &format!("Survey {n}"))
                .await,
        );
    }
    let page = stores
        .surveys
        .activity(
            stores.project,
            None,
            PageRequest {
                limit: 2,
                offset: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.total, 5);
    let items: Vec<&str> = page.entries.iter().map(|e| e.item_id.as_str()).collect();
    assert_eq!(
        items,
        [
            created[3].id.0.to_string().as_str(),
            created[2].id.0.to_string().as_str()
        ]
    );
    let past = stores
        .surveys
        .activity(
            stores.project,
            None,
            PageRequest {
                limit: 2,
                offset: 10,
            },
        )
        .await
        .unwrap();
    assert_eq!((past.total, past.entries.len()), (5, 0));
}

/// Inserts, in `transaction`, a copy named `name` into `project`, with a new targeting flag of
/// its own, logging `created`.
async fn insert_copy(
    transaction: &mut dyn SurveyTransaction,
    stores: &Stores,
    project: ProjectId,
    name: &str,
) -> Result<Survey, DomainError> {
    let write = SurveyWrite {
        activity: Some(stores.note("created", json!({"name": name}))),
        state: state(name),
        targeting: TargetingPlan {
            delete: None,
            flag: Some(TargetingFlag::New {
                flag: stores.new_flag(&format!("copy-{}", project.0)),
                created_by: stores.user.id,
            }),
        },
    };
    let (id, none) = (SurveyId::generate(), FlagsRead::default());
    steps::insert(transaction, project, id, &stores.user, write, &none).await
}

/// Copies are written one by one in one transaction, as `duplicate_to_projects` writes them,
/// each named after the names its project has.
async fn copies_are_inserted_in_order_each_planned_against_the_names_its_project_has(
    stores: Stores,
) {
    stores.logged_create(stores.project, "Copy #0").await;
    stores.logged_create(stores.other_project, "Copy #0").await;
    stores
        .logged_create(stores.other_project, "Unrelated")
        .await;
    stores
        .logged_create(stores.other_project, "copy #lowercase")
        .await;
    let targets = [stores.other_project, stores.project];
    let mut transaction = stores.surveys.begin().await.unwrap();
    let mut copies = Vec::new();
    for project in targets {
        let taken = transaction
            .names_starting_with(project, "Copy #")
            .await
            .unwrap();
        assert_eq!(
            taken,
            BTreeSet::from(["Copy #0".to_owned()]),
            "only the target's own names with the prefix, compared case-sensitively"
        );
        let name = format!("Copy #{}", taken.len());
        let copy = insert_copy(&mut *transaction, &stores, project, &name);
        copies.push(copy.await.unwrap());
    }
    transaction.commit().await.unwrap();

    for (copy, project) in copies.iter().zip(targets) {
        assert_eq!(copy.project_id, project);
        assert_eq!(copy.state.name, "Copy #1");
        assert_eq!(copy.created_by.as_ref(), Some(&stores.user));
        let flag = copy.targeting_flag.as_ref().expect("its targeting flag");
        assert_eq!(flag.project_id, project);
        assert!(copy.owns_targeting_flag);
        assert_eq!(
            stores.surveys.get(project, copy.id).await.unwrap().as_ref(),
            Some(copy)
        );
        let log = stores.log(project, Some(copy.id)).await;
        assert_eq!(log.total, 1);
        assert_eq!(log.entries[0].activity, "created");
        assert_eq!(log.entries[0].detail, json!({"name": "Copy #1"}));
    }
}

/// A copy written, then the next one's plan failing: the unit of work rolls back.
async fn a_failing_copy_writes_no_copy_no_flag_and_no_entry(stores: Stores) {
    let before = stores.survey_count().await;
    let mut transaction = stores.surveys.begin().await.unwrap();
    insert_copy(&mut *transaction, &stores, stores.other_project, "Copy")
        .await
        .unwrap();
    transaction.rollback().await.unwrap();

    assert_eq!(stores.survey_count().await, before);
    assert!(stores.all_other_flags().await.is_empty());
    assert!(stores.logged(stores.other_project).await.is_empty());
    assert!(stores.logged(stores.project).await.is_empty());
}

async fn a_copy_with_a_taken_name_is_a_conflict_and_writes_nothing(stores: Stores) {
    stores.logged_create(stores.project, "Taken").await;
    let mut transaction = stores.surveys.begin().await.unwrap();
    insert_copy(&mut *transaction, &stores, stores.other_project, "Taken")
        .await
        .unwrap();
    let taken = insert_copy(&mut *transaction, &stores, stores.project, "Taken").await;
    assert!(matches!(taken, Err(DomainError::Conflict)), "{taken:?}");
    transaction.rollback().await.unwrap();

    assert_eq!(stores.survey_count().await, 1);
    assert!(stores.logged(stores.other_project).await.is_empty());
    assert_eq!(stores.logged(stores.project).await.len(), 1);
}
