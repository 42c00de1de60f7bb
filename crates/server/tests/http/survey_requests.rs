//! Requests to a project's surveys API that the survey HTTP tests share: the collection and
//! survey paths, and creating and patching a survey.

use domain::tenancy::ProjectId;
use reqwest::Method;
use serde_json::Value;

use crate::helpers::{Tenant, TestApp, parts};

/// `/api/projects/{project}/surveys/`.
pub fn surveys_path(project: ProjectId) -> String {
    format!("/api/projects/{}/surveys/", project.0)
}

/// `/api/projects/{project}/surveys/{id}/`.
pub fn survey_path(project: ProjectId, id: &str) -> String {
    format!("{}{id}/", surveys_path(project))
}

/// The id of a survey as the API answers it.
pub fn survey_id(survey: &Value) -> &str {
    survey["id"].as_str().expect("survey id")
}

/// POSTs `body` to `project`'s surveys with `key`: the status and the answer.
pub async fn create_in(app: &TestApp, key: &str, project: ProjectId, body: Value) -> (u16, Value) {
    parts(
        app.send_json(Method::POST, &surveys_path(project), key, &body)
            .await,
    )
    .await
}

/// POSTs `body` to the tenant's surveys: the status and the answer.
pub async fn create(app: &TestApp, tenant: &Tenant, body: Value) -> (u16, Value) {
    create_in(app, &tenant.key, tenant.project_id, body).await
}

/// Creates a survey in `project` with `key`, asserting a 201: the survey.
pub async fn created_in(app: &TestApp, key: &str, project: ProjectId, body: Value) -> Value {
    let (status, survey) = create_in(app, key, project, body).await;
    assert_eq!(status, 201, "{survey}");
    survey
}

/// Creates a survey in the tenant's project, asserting a 201: the survey.
pub async fn created(app: &TestApp, tenant: &Tenant, body: Value) -> Value {
    created_in(app, &tenant.key, tenant.project_id, body).await
}

/// PATCHes the tenant's `survey` (as the API answered it) with `body`: the status and the
/// answer.
pub async fn patch(app: &TestApp, tenant: &Tenant, survey: &Value, body: Value) -> (u16, Value) {
    let path = survey_path(tenant.project_id, survey_id(survey));
    parts(
        app.send_json(Method::PATCH, &path, &tenant.key, &body)
            .await,
    )
    .await
}
