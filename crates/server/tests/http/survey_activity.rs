//! The survey activity log (`/surveys/activity/`, `/surveys/{id}/activity/`) and
//! `/surveys/{id}/duplicate_to_projects/` over HTTP.

use chrono::{TimeDelta, Utc};
use domain::admin::KeyRequest;
use domain::tenancy::ProjectId;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_error, assert_missing_scope, parts, spawn_app};
use crate::survey_requests::{created_in, survey_id, survey_path, surveys_path};

fn targeting() -> Value {
    json!({"groups": [{"properties": [{"key": "email", "value": "@example.com", "operator": "icontains", "type": "person"}], "rollout_percentage": 50}]})
}

async fn send(app: &TestApp, key: &str, method: Method, path: &str, body: Value) -> (u16, Value) {
    parts(app.send_json(method, path, key, &body).await).await
}

async fn delete(app: &TestApp, key: &str, path: &str) {
    let response = app.send_json(Method::DELETE, path, key, &json!({})).await;
    assert_eq!(response.status().as_u16(), 204, "DELETE {path}");
}

async fn get(app: &TestApp, key: &str, path: &str) -> (u16, Value) {
    parts(app.get(path, key).await).await
}

/// Creates a survey in `project`; its id.
async fn create(app: &TestApp, key: &str, project: ProjectId, body: Value) -> String {
    survey_id(&created_in(app, key, project, body).await).to_owned()
}

async fn log(app: &TestApp, key: &str, project: ProjectId, query: &str) -> Value {
    let (status, page) = get(
        app,
        key,
        &format!("{}activity/{query}", surveys_path(project)),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page
}

fn activities(page: &Value) -> Vec<(String, String)> {
    page["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["activity"].as_str().unwrap().to_owned(),
                entry["item_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn entry(activity: &str, id: &str) -> (String, String) {
    (activity.to_owned(), id.to_owned())
}

/// A second project in the tenant's organization.
async fn project(app: &TestApp, tenant: &Tenant, name: &str) -> ProjectId {
    app.admin
        .create_project(tenant.organization_id, name)
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn survey_writes_are_logged_newest_first_with_the_user_and_the_changed_fields() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let home = ada.project_id;
    let id = create(
        &app,
        &ada.key,
        home,
        json!({"name": "Onboarding", "type": "popover", "targeting_flag_filters": targeting()}),
    )
    .await;
    let narrowed = json!({"groups": [{"properties": [], "rollout_percentage": 10}]});
    let (status, _) = send(
        &app,
        &ada.key,
        Method::PATCH,
        &survey_path(home, &id),
        json!({"name": "Renamed", "description": "Why", "targeting_flag_filters": narrowed}),
    )
    .await;
    assert_eq!(status, 200);
    // Sends the values the survey already has: nothing changes, nothing is logged.
    let (status, _) = send(
        &app,
        &ada.key,
        Method::PATCH,
        &survey_path(home, &id),
        json!({"name": "Renamed", "archived": false}),
    )
    .await;
    assert_eq!(status, 200);

    let page = log(&app, &ada.key, home, "").await;
    assert_eq!(page["total_count"], 2, "{page}");
    assert_eq!(
        activities(&page),
        [entry("updated", &id), entry("created", &id)]
    );
    let [updated, created] = page["results"].as_array().unwrap().as_slice() else {
        panic!("two entries: {page}");
    };
    assert!(uuid::Uuid::parse_str(created["id"].as_str().unwrap()).is_ok());
    assert!(created["created_at"].as_str().is_some());
    for shown in [updated, created] {
        assert_eq!(
            shown["user"],
            json!({"first_name": "Test", "email": "ada@example.com"})
        );
        assert_eq!(shown["scope"], "Survey");
    }
    assert_eq!(
        created["detail"],
        json!({"name": "Onboarding", "changes": null, "trigger": null, "short_id": null, "type": null})
    );
    assert_eq!(updated["detail"]["name"], "Renamed");
    let mut merged = targeting();
    merged["groups"] = narrowed["groups"].clone();
    let changes = &updated["detail"]["changes"];
    let by_field = |field: &str| {
        changes
            .as_array()
            .unwrap()
            .iter()
            .find(|change| change["field"] == field)
            .cloned()
            .unwrap_or_else(|| panic!("no change of {field}: {changes}"))
    };
    assert_eq!(changes.as_array().unwrap().len(), 3, "{changes}");
    assert_eq!(
        by_field("name"),
        json!({"type": "Survey", "action": "changed", "field": "name", "before": "Onboarding", "after": "Renamed"})
    );
    assert_eq!(
        (
            by_field("description")["before"].clone(),
            by_field("description")["after"].clone()
        ),
        (json!(""), json!("Why"))
    );
    let filters = by_field("targeting_flag_filters");
    assert_eq!(filters["action"], "changed");
    assert_eq!(
        filters["before"]["groups"][0]["properties"],
        targeting()["groups"][0]["properties"]
    );
    assert_eq!(filters["after"]["groups"], merged["groups"]);

    delete(&app, &ada.key, &survey_path(home, &id)).await;
    let page = log(&app, &ada.key, home, "").await;
    assert_eq!(
        activities(&page),
        [
            entry("deleted", &id),
            entry("updated", &id),
            entry("created", &id)
        ],
        "a deleted survey's entries stay in the project's log"
    );
    assert_eq!(page["results"][0]["detail"]["name"], "Renamed");
    assert_eq!(page["results"][0]["detail"]["changes"], Value::Null);
}

#[tokio::test]
async fn one_surveys_log_holds_only_its_entries_and_a_deleted_or_foreign_one_is_404() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let home = ada.project_id;
    let second = project(&app, &ada, "Second").await;
    let first = create(
        &app,
        &ada.key,
        home,
        json!({"name": "First", "type": "api"}),
    )
    .await;
    let other = create(
        &app,
        &ada.key,
        home,
        json!({"name": "Other", "type": "api"}),
    )
    .await;
    let elsewhere = create(
        &app,
        &ada.key,
        second,
        json!({"name": "Else", "type": "api"}),
    )
    .await;

    let (status, own) = get(
        &app,
        &ada.key,
        &format!("{}activity", survey_path(home, &first)),
    )
    .await;
    assert_eq!(status, 200, "{own}");
    assert_eq!(activities(&own), [entry("created", &first)]);
    assert_eq!(own["total_count"], 1);
    assert_eq!(
        activities(&log(&app, &ada.key, second, "").await),
        [entry("created", &elsewhere)],
        "a project's log holds only its own surveys"
    );

    delete(&app, &ada.key, &survey_path(home, &other)).await;
    for path in [
        format!("{}activity/", survey_path(home, &other)),
        format!("{}activity/", survey_path(home, &elsewhere)),
        format!(
            "{}activity/",
            survey_path(home, &uuid::Uuid::new_v4().to_string())
        ),
        format!("{}not-a-uuid/activity/", surveys_path(home)),
    ] {
        let (status, body) = get(&app, &ada.key, &path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_error(&body, "invalid_request", "not_found", "Not found.");
    }
}

#[tokio::test]
async fn the_log_is_paged_with_page_and_limit() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let body = json!({"name": format!("Survey {n}"), "type": "api"});
        ids.push(create(&app, &ada.key, ada.project_id, body).await);
    }
    let second = log(&app, &ada.key, ada.project_id, "?limit=2&page=2").await;
    assert_eq!(second["total_count"], 5);
    assert_eq!(
        activities(&second),
        [entry("created", &ids[2]), entry("created", &ids[1])]
    );
    let path = format!("/api/projects/{}/surveys/activity/", ada.project_id.0);
    assert!(
        second["next"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{path}?limit=2&page=3")),
        "{second}"
    );
    assert!(
        second["previous"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{path}?limit=2&page=1")),
        "{second}"
    );
    let last = log(&app, &ada.key, ada.project_id, "?limit=2&page=3").await;
    assert_eq!(activities(&last), [entry("created", &ids[0])]);
    assert_eq!(last["next"], Value::Null);
    let default = log(&app, &ada.key, ada.project_id, "").await;
    assert_eq!(default["results"].as_array().unwrap().len(), 5);
    assert_eq!(
        (default["next"].clone(), default["previous"].clone()),
        (Value::Null, Value::Null)
    );
}

#[tokio::test]
async fn reading_the_log_needs_activity_log_read_not_survey_read() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let id = create(
        &app,
        &ada.key,
        ada.project_id,
        json!({"name": "S", "type": "api"}),
    )
    .await;
    let reader = app.scoped_key(&ada, "surveys", &["survey:read"]).await;
    let auditor = app.scoped_key(&ada, "audit", &["activity_log:read"]).await;
    let project_log = format!("{}activity/", surveys_path(ada.project_id));
    let survey_log = format!("{}activity/", survey_path(ada.project_id, &id));
    for path in [&project_log, &survey_log] {
        let (status, body) = get(&app, &reader, path).await;
        assert_eq!(status, 403, "{path}");
        assert_missing_scope(&body, "activity_log:read");
        assert_eq!(get(&app, &auditor, path).await.0, 200, "{path}");
    }
    assert_eq!(
        get(&app, &auditor, &survey_path(ada.project_id, &id))
            .await
            .0,
        403,
        "the log's scope does not read surveys"
    );
}

#[tokio::test]
async fn a_survey_is_duplicated_into_two_projects_in_one_call_as_drafts() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let home = ada.project_id;
    let (second, third) = (
        project(&app, &ada, "Second").await,
        project(&app, &ada, "Third").await,
    );
    let (status, linked) = send(
        &app,
        &ada.key,
        Method::POST,
        &format!("/api/projects/{}/feature_flags/", home.0),
        json!({"key": "linked", "filters": {"groups": [{"rollout_percentage": 100}]}}),
    )
    .await;
    assert_eq!(status, 201, "{linked}");
    let source = create(
        &app,
        &ada.key,
        home,
        json!({
            "name": "Onboarding",
            "type": "popover",
            "description": "Why we ask",
            "questions": [{"type": "open", "question": "Why?"}],
            "appearance": {"position": "left"},
            "conditions": {"url": "/welcome"},
            "linked_flag_id": linked["id"],
            "targeting_flag_filters": targeting(),
            "start_date": "2026-01-02T03:04:05Z",
            "iteration_count": 2,
            "iteration_frequency_days": 7,
        }),
    )
    .await;
    let (status, body) = send(
        &app,
        &ada.key,
        Method::POST,
        &format!("{}duplicate_to_projects/", survey_path(home, &source)),
        json!({"target_team_ids": [second.0, third.0]}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["count"], 2);
    let created = body["created_surveys"].as_array().unwrap();
    let teams: Vec<&Value> = created.iter().map(|c| &c["team_id"]).collect();
    assert_eq!(teams, [&json!(second.0), &json!(third.0)]);

    for (copy, target) in created.iter().zip([second, third]) {
        let name = copy["name"].as_str().unwrap();
        assert!(name.starts_with("Onboarding (duplicated at "), "{name}");
        let id = copy["survey_id"].as_str().unwrap();
        let (status, survey) = get(&app, &ada.key, &survey_path(target, id)).await;
        assert_eq!(status, 200, "{survey}");
        assert_eq!(survey["name"], name);
        assert_eq!(survey["description"], "Why we ask");
        assert_eq!(survey["questions"][0]["question"], "Why?");
        assert_eq!(survey["appearance"], json!({"position": "left"}));
        assert_eq!(survey["conditions"], json!({"url": "/welcome"}));
        assert_eq!(
            (
                survey["iteration_count"].clone(),
                survey["iteration_frequency_days"].clone()
            ),
            (json!(2), json!(7))
        );
        assert_eq!(
            (
                survey["start_date"].clone(),
                survey["end_date"].clone(),
                survey["archived"].clone()
            ),
            (Value::Null, Value::Null, json!(false)),
            "a copy is a draft"
        );
        assert_eq!(
            survey["linked_flag_id"],
            Value::Null,
            "the linked flag stays home"
        );
        assert_eq!(survey["created_by"]["email"], "ada@example.com");
        let flag = &survey["targeting_flag"];
        assert_eq!(flag["team_id"], target.0, "{survey}");
        assert_eq!(flag["active"], false);
        assert_eq!(
            flag["filters"]["groups"][0]["properties"],
            targeting()["groups"][0]["properties"]
        );

        let page = log(&app, &ada.key, target, "").await;
        assert_eq!(activities(&page), [entry("created", id)]);
        assert_eq!(
            page["results"][0]["detail"]["changes"],
            json!([{"type": "Survey", "action": "created", "field": "source_survey_id", "before": null, "after": source}])
        );
        assert_eq!(page["results"][0]["user"]["email"], "ada@example.com");
    }
    let (_, original) = get(&app, &ada.key, &survey_path(home, &source)).await;
    assert_eq!(
        original["linked_flag_id"], linked["id"],
        "the source is untouched"
    );
    assert_eq!(app.rows("surveys").await, 3);
}

#[tokio::test]
async fn an_unreachable_target_is_refused_and_nothing_is_created() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let second = project(&app, &ada, "Second").await;
    let source = create(
        &app,
        &ada.key,
        ada.project_id,
        json!({"name": "Onboarding", "type": "popover", "targeting_flag_filters": targeting()}),
    )
    .await;
    let path = format!(
        "{}duplicate_to_projects/",
        survey_path(ada.project_id, &source)
    );
    let home_only = app
        .key(KeyRequest {
            email: ada.email.clone(),
            label: "home".into(),
            scopes: vec!["survey:write".into()],
            scoped_teams: Some(vec![ada.project_id]),
            ..KeyRequest::default()
        })
        .await;
    let (surveys, flags) = (app.rows("surveys").await, app.rows("feature_flags").await);
    for (key, targets) in [
        (&ada.key, json!([second.0, bob.project_id.0])),
        (&ada.key, json!([second.0, 999_999])),
        (&home_only, json!([second.0])),
    ] {
        let (status, body) = send(
            &app,
            key,
            Method::POST,
            &path,
            json!({"target_team_ids": targets}),
        )
        .await;
        assert_eq!(status, 403, "{targets}: {body}");
        assert_error(
            &body,
            "authentication_error",
            "permission_denied",
            "One or more target teams not found or you don't have access to them",
        );
    }
    assert_eq!(app.rows("surveys").await, surveys, "no copy was made");
    assert_eq!(app.rows("feature_flags").await, flags, "nor any flag");
    assert_eq!(
        app.rows("survey_activity").await,
        1,
        "only the source's creation"
    );
}

#[tokio::test]
async fn a_copy_whose_name_is_taken_in_the_target_gets_a_counter() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let second = project(&app, &ada, "Second").await;
    let source = create(
        &app,
        &ada.key,
        ada.project_id,
        json!({"name": "NPS", "type": "api"}),
    )
    .await;
    // The name PostHog would give a copy made within the next seconds, taken in the target.
    let now = Utc::now();
    for seconds in 0..3 {
        let at = now + TimeDelta::seconds(seconds);
        let name = format!("NPS (duplicated at {})", at.format("%Y-%m-%d %H:%M:%S"));
        create(&app, &ada.key, second, json!({"name": name, "type": "api"})).await;
    }
    let path = format!(
        "{}duplicate_to_projects/",
        survey_path(ada.project_id, &source)
    );
    let body = json!({"target_team_ids": [second.0, ada.project_id.0]});
    let (status, copies) = send(&app, &ada.key, Method::POST, &path, body).await;
    assert_eq!(status, 201, "{copies}");
    let names: Vec<&str> = copies["created_surveys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names[0].starts_with("NPS (duplicated at ") && names[0].ends_with(") (2)"),
        "{names:?}"
    );
    assert!(
        !names[1].ends_with(") (2)"),
        "the name is free in the home project: {names:?}"
    );
}

#[tokio::test]
async fn duplicate_to_projects_checks_the_survey_then_the_body_then_the_scope() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let source = create(
        &app,
        &ada.key,
        ada.project_id,
        json!({"name": "S", "type": "api"}),
    )
    .await;
    let path = format!(
        "{}duplicate_to_projects/",
        survey_path(ada.project_id, &source)
    );
    for body in [
        json!({}),
        json!({"target_team_ids": []}),
        json!({"target_team_ids": ada.project_id.0}),
        json!({"target_team_ids": ["x"]}),
        json!({"target_team_ids": [1.5]}),
    ] {
        let (status, error) = send(&app, &ada.key, Method::POST, &path, body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            error,
            json!({"type": "validation_error", "code": "invalid_input", "detail": "target_team_ids must be a non-empty list of team IDs", "attr": "target_team_ids"})
        );
    }
    let missing = format!(
        "{}duplicate_to_projects/",
        survey_path(ada.project_id, &uuid::Uuid::new_v4().to_string())
    );
    let (status, _) = send(&app, &ada.key, Method::POST, &missing, json!({})).await;
    assert_eq!(
        status, 404,
        "an unknown survey is 404 before the body is read"
    );

    let reader = app.scoped_key(&ada, "reader", &["survey:read"]).await;
    let body = json!({"target_team_ids": [ada.project_id.0]});
    let (status, error) = send(&app, &reader, Method::POST, &path, body).await;
    assert_eq!(status, 403);
    assert_missing_scope(&error, "survey:write");
    assert_eq!(app.rows("surveys").await, 1);
}
