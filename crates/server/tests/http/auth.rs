//! Every authentication and authorization outcome, over HTTP.

use domain::admin::KeyRequest;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{assert_error, concrete_path, eventually, parts, spawn_app};

#[tokio::test]
async fn a_request_without_credentials_is_401_not_authenticated() {
    let app = spawn_app().await;
    let (status, body) = parts(
        app.request(Method::GET, "/api/projects/")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
    assert_error(
        &body,
        "authentication_error",
        "not_authenticated",
        "Authentication credentials were not provided.",
    );
}

#[tokio::test]
async fn an_unknown_key_is_401_naming_where_it_was_found() {
    let app = spawn_app().await;
    let header = app.get("/api/projects/", "phx_unknown").await;
    let (status, body) = parts(header).await;
    assert_eq!(status, 401);
    assert_error(
        &body,
        "authentication_error",
        "authentication_failed",
        "Personal API key found in request Authorization header is invalid.",
    );

    let body_key = app
        .request(Method::GET, "/api/projects/")
        .json(&json!({"personal_api_key": "phx_unknown"}))
        .send()
        .await
        .unwrap();
    let (status, body) = parts(body_key).await;
    assert_eq!(status, 401);
    assert_eq!(
        body["detail"],
        "Personal API key found in request body is invalid."
    );

    let query = app
        .request(Method::GET, "/api/projects/?personal_api_key=phx_unknown")
        .send()
        .await
        .unwrap();
    let (status, body) = parts(query).await;
    assert_eq!(status, 401);
    assert_eq!(
        body["detail"],
        "Personal API key found in request query string is invalid."
    );
}

#[tokio::test]
async fn a_key_works_from_the_header_the_body_and_the_query_string() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let path = format!("/api/projects/{}/", ada.project_id);

    let (status, body) = parts(app.get(&path, &ada.key).await).await;
    assert_eq!((status, body["id"].clone()), (200, json!(ada.project_id.0)));

    let in_body = app
        .request(Method::GET, &path)
        .json(&json!({"personal_api_key": ada.key}))
        .send()
        .await
        .unwrap();
    assert_eq!(parts(in_body).await.1["id"], json!(ada.project_id.0));

    let in_query = app
        .request(Method::GET, &format!("{path}?personal_api_key={}", ada.key))
        .send()
        .await
        .unwrap();
    assert_eq!(parts(in_query).await.1["id"], json!(ada.project_id.0));
}

#[tokio::test]
async fn an_oauth_bearer_token_is_not_taken_for_a_personal_key() {
    let app = spawn_app().await;
    let (status, body) = parts(app.get("/api/projects/", "pha_sometoken").await).await;
    assert_eq!(status, 401);
    assert_eq!(body["code"], "not_authenticated");
}

#[tokio::test]
async fn a_deactivated_users_key_is_401() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    assert_eq!(app.get("/api/projects/", &ada.key).await.status(), 200);
    app.admin.deactivate_user(&ada.email).await.unwrap();
    eventually("deactivating the user", || async {
        app.get("/api/projects/", &ada.key).await.status() == 401
    })
    .await;
    let (_, body) = parts(app.get("/api/projects/", &ada.key).await).await;
    assert_eq!(body["code"], "authentication_failed");
}

#[tokio::test]
async fn a_narrowed_scope_is_enforced_within_seconds() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    assert_eq!(app.get("/api/projects/", &ada.key).await.status(), 200);
    app.database
        .execute("UPDATE personal_api_keys SET scopes = '{survey:read}'")
        .await;
    eventually("narrowing the key's scopes", || async {
        app.get("/api/projects/", &ada.key).await.status() == 403
    })
    .await;
}

#[tokio::test]
async fn a_key_without_the_routes_scope_is_403_naming_the_scope() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["survey:write"]).await;
    let (status, body) = parts(app.get("/api/projects/", &ada.key).await).await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        "API key missing required scope 'project:read'",
    );

    let (status, body) = parts(app.get("/api/users/@me/", &ada.key).await).await;
    assert_eq!(status, 403);
    assert_eq!(body["detail"], "API key missing required scope 'user:read'");
}

#[tokio::test]
async fn every_route_refuses_a_key_without_scopes_naming_the_scope_its_handler_requires() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &[]).await;
    let routes = api::route_table();
    assert!(routes.iter().any(|route| !route.scopes.is_empty()));
    // The API documentation's pages and scripts are not JSON and take no key.
    for route in routes.into_iter().filter(|r| api::is_documented(&r.path)) {
        let method = Method::from_bytes(route.method.as_str().as_bytes()).unwrap();
        let response = app
            .send_json(method, &concrete_path(&route.path), &ada.key, &json!({}))
            .await;
        let status = response.status().as_u16();
        let text = response.text().await.expect("body read");
        // A key without scopes is told of the first scope the route needs.
        match route.scopes.first() {
            Some(scope) => assert_eq!(
                (
                    status,
                    serde_json::from_str::<Value>(&text).expect("a JSON error")
                ),
                (
                    403,
                    json!({
                        "type": "authentication_error",
                        "code": "permission_denied",
                        "detail": format!("API key missing required scope '{scope}'"),
                        "attr": null,
                    })
                ),
                "{route}"
            ),
            // Unscoped routes (health, a key reading itself) never ask for a scope.
            None => assert!(
                !text.contains("missing required scope"),
                "{route}: {status} {text}"
            ),
        }
    }
}

#[tokio::test]
async fn write_scopes_imply_read() {
    let app = spawn_app().await;
    let ada = app
        .tenant("ada@example.com", &["project:write", "organization:read"])
        .await;
    assert_eq!(app.get("/api/projects/", &ada.key).await.status(), 200);
    assert_eq!(app.get("/api/organizations/", &ada.key).await.status(), 200);
}

#[tokio::test]
async fn another_organizations_project_is_403_and_a_missing_one_404() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;

    let (status, body) = parts(
        app.get(&format!("/api/projects/{}/", bob.project_id), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        "You don't have access to the project.",
    );

    for missing in ["/api/projects/999999/", "/api/projects/not-a-number/"] {
        let (status, body) = parts(app.get(missing, &ada.key).await).await;
        assert_eq!(status, 404, "{missing}");
        assert_error(&body, "invalid_request", "not_found", "Project not found.");
    }

    let (status, body) = parts(
        app.get(
            &format!("/api/organizations/{}/", bob.organization_id),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(body["code"], "permission_denied");
    let (status, body) = parts(app.get("/api/organizations/not-a-uuid/", &ada.key).await).await;
    assert_eq!(status, 404);
    assert_eq!(body["detail"], "Organization not found.");
}

#[tokio::test]
async fn a_key_scoped_to_other_projects_is_403_with_the_project_id() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let second = app
        .admin
        .create_project(ada.organization_id, "Second")
        .await
        .unwrap();
    let scoped = app
        .key(KeyRequest {
            email: ada.email.clone(),
            scopes: vec!["*".into()],
            scoped_teams: Some(vec![second.id]),
            ..KeyRequest::default()
        })
        .await;
    let (status, body) = parts(
        app.get(&format!("/api/projects/{}/", ada.project_id), &scoped)
            .await,
    )
    .await;
    assert_eq!(status, 403);
    assert_error(
        &body,
        "authentication_error",
        "permission_denied",
        &format!(
            "API key does not have access to the requested project: ID {}.",
            ada.project_id
        ),
    );
    let (_, list) = parts(app.get("/api/projects/", &scoped).await).await;
    assert_eq!(list["count"], 1);
    assert_eq!(list["results"][0]["id"], json!(second.id.0));
    let (status, current) = parts(app.get("/api/projects/@current/", &scoped).await).await;
    assert_eq!((status, current["id"].clone()), (200, json!(second.id.0)));
}

#[tokio::test]
async fn a_key_scoped_to_other_organizations_is_403_with_the_organization_id() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let other = app.tenant("ada@example.com", &["*"]).await;
    let scoped = app
        .key(KeyRequest {
            email: ada.email.clone(),
            scopes: vec!["*".into()],
            scoped_organizations: Some(vec![other.organization_id]),
            ..KeyRequest::default()
        })
        .await;
    let (status, body) = parts(
        app.get(
            &format!("/api/organizations/{}/", ada.organization_id),
            &scoped,
        )
        .await,
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["detail"],
        format!(
            "API key does not have access to the requested organization: ID {}.",
            ada.organization_id
        )
    );
    let (status, _) = parts(
        app.get(&format!("/api/projects/{}/", ada.project_id), &scoped)
            .await,
    )
    .await;
    assert_eq!(status, 403);
    let (_, list) = parts(app.get("/api/organizations/", &scoped).await).await;
    assert_eq!(list["count"], 1);
    assert_eq!(
        list["results"][0]["id"],
        json!(other.organization_id.0.to_string())
    );
}

#[tokio::test]
async fn current_resolves_to_the_users_current_organization_and_project() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (_, project) = parts(app.get("/api/projects/@current", &ada.key).await).await;
    assert_eq!(project["id"], json!(ada.project_id.0));
    let (_, organization) = parts(app.get("/api/organizations/@current", &ada.key).await).await;
    assert_eq!(organization["id"], json!(ada.organization_id.0.to_string()));
}
