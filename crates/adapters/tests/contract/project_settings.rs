//! The tenancy repository's contract for a project's settings: `survey_config` is written in a
//! transaction with the project locked, read back by every read of the project, cleared by
//! `None`, and its change logged in the project's survey activity about no survey (an
//! `item_id` of `""`), all or nothing.

use domain::activity::NewActivity;
use domain::survey::SurveyId;
use domain::tenancy::{ProjectId, SurveyConfig, VisibleProjects};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::stores::{Stores, all};

contract!(
    a_survey_config_is_stored_and_read_back_by_every_read_of_its_project,
    a_settings_change_is_logged_about_no_survey,
    a_rolled_back_settings_write_leaves_nothing,
    locking_an_unknown_project_finds_nothing,
);

fn config(value: Value) -> SurveyConfig {
    SurveyConfig::parse(value).unwrap()
}

fn entry(stores: &Stores, name: &str) -> NewActivity {
    NewActivity {
        user: stores.user.id,
        activity: "updated",
        detail: json!({"name": name, "changes": []}),
    }
}

/// Writes `survey_config` (and `activity`) in a committed transaction; the project as stored.
async fn write(
    stores: &Stores,
    project: ProjectId,
    survey_config: Option<&SurveyConfig>,
    activity: Option<&NewActivity>,
) -> Option<Value> {
    let mut tx = stores.tenancy.begin().await.unwrap();
    let locked = tx
        .lock_project(project)
        .await
        .unwrap()
        .expect("the project");
    assert_eq!(locked.id, project);
    let written = tx
        .set_survey_config(project, survey_config, activity)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    written
        .survey_config
        .map(|config| Value::Object(config.into_map()))
}

/// The project's `survey_config` as each read of a project shows it, all agreeing.
async fn stored(stores: &Stores, project: ProjectId) -> Option<Value> {
    let by_id = stores.tenancy.project(project).await.unwrap().unwrap();
    let by_token = stores
        .tenancy
        .project_by_token(&by_id.api_token)
        .await
        .unwrap()
        .unwrap();
    let as_seen = stores
        .tenancy
        .project_for(stores.user.id, project)
        .await
        .unwrap()
        .unwrap()
        .tenant;
    let visible = stores
        .tenancy
        .visible_projects(
            &VisibleProjects {
                user_id: stores.user.id,
                project_ids: Some(vec![project]),
                organization_ids: None,
            },
            all(),
        )
        .await
        .unwrap()
        .items;
    assert_eq!(by_token, by_id);
    assert_eq!(as_seen, by_id);
    assert_eq!(visible, std::slice::from_ref(&by_id));
    by_id
        .survey_config
        .map(|config| Value::Object(config.into_map()))
}

async fn a_survey_config_is_stored_and_read_back_by_every_read_of_its_project(stores: Stores) {
    assert_eq!(stored(&stores, stores.project).await, None);
    let sent = json!({"appearance": {"backgroundColor": "#fff", "ünï": "\u{1F600}", "n": [1, 2.5]},
                      "seenSurveyWaitPeriodInDays": 14, "other": null});
    assert_eq!(
        write(&stores, stores.project, Some(&config(sent.clone())), None).await,
        Some(sent.clone())
    );
    assert_eq!(stored(&stores, stores.project).await, Some(sent.clone()));
    assert_eq!(
        stored(&stores, stores.other_project).await,
        None,
        "another project's config is its own"
    );
    let replaced = json!({"seenSurveyWaitPeriodInDays": 0});
    write(
        &stores,
        stores.project,
        Some(&config(replaced.clone())),
        None,
    )
    .await;
    assert_eq!(stored(&stores, stores.project).await, Some(replaced));
    assert_eq!(write(&stores, stores.project, None, None).await, None);
    assert_eq!(stored(&stores, stores.project).await, None);
}

async fn a_settings_change_is_logged_about_no_survey(stores: Stores) {
    let survey = SurveyId(Uuid::now_v7());
    let mut tx = stores.surveys.begin().await.unwrap();
    tx.log_activity(stores.project, survey, &entry(&stores, "A survey"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let settings = entry(&stores, "global survey appearance");
    write(
        &stores,
        stores.project,
        Some(&config(json!({"seenSurveyWaitPeriodInDays": 7}))),
        Some(&settings),
    )
    .await;

    let log = stores
        .surveys
        .activity(stores.project, None, all())
        .await
        .unwrap();
    assert_eq!(log.total, 2);
    let newest = &log.entries[0];
    assert_eq!(
        (
            newest.item_id.as_str(),
            newest.scope.as_str(),
            newest.activity.as_str(),
            &newest.detail
        ),
        ("", "Survey", "updated", &settings.detail)
    );
    assert_eq!(
        newest.user,
        Some((stores.user.first_name.clone(), stores.user.email.clone()))
    );
    assert_eq!(log.entries[1].item_id, survey.0.to_string());
    let of_the_survey = stores
        .surveys
        .activity(stores.project, Some(survey), all())
        .await
        .unwrap();
    assert_eq!(
        of_the_survey.total, 1,
        "an entry about no survey is no survey's"
    );
    let elsewhere = stores
        .surveys
        .activity(stores.other_project, None, all())
        .await
        .unwrap();
    assert_eq!(elsewhere.total, 0);
}

async fn a_rolled_back_settings_write_leaves_nothing(stores: Stores) {
    let mut tx = stores.tenancy.begin().await.unwrap();
    tx.lock_project(stores.project).await.unwrap().unwrap();
    tx.set_survey_config(
        stores.project,
        Some(&config(json!({"seenSurveyWaitPeriodInDays": 7}))),
        Some(&entry(&stores, "global survey appearance")),
    )
    .await
    .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(stored(&stores, stores.project).await, None);
    let log = stores
        .surveys
        .activity(stores.project, None, all())
        .await
        .unwrap();
    assert_eq!(log.total, 0);
}

async fn locking_an_unknown_project_finds_nothing(stores: Stores) {
    let mut tx = stores.tenancy.begin().await.unwrap();
    assert_eq!(tx.lock_project(ProjectId(i32::MAX)).await.unwrap(), None);
    tx.rollback().await.unwrap();
}
