//! What PostHog's agent toolkit asks before offering tools: the calling key's own record, the
//! user's current project and organization, and an organization's projects.

use domain::admin::KeyRequest;
use domain::tenancy::MembershipLevel;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{assert_error, parts, spawn_app};

#[tokio::test]
async fn a_key_reads_itself_whatever_its_scopes_and_nothing_else() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["survey:read"]).await;
    let (status, key) = parts(app.get("/api/personal_api_keys/@current/", &ada.key).await).await;
    assert_eq!(status, 200, "{key}");
    assert_eq!(key["scopes"], json!(["survey:read"]));
    assert_eq!(
        (&key["value"], &key["last_rolled_at"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(
        (
            key["scoped_teams"].clone(),
            key["scoped_organizations"].clone()
        ),
        (json!([]), json!([]))
    );
    assert!(key["mask_value"].as_str().unwrap().starts_with("phx_..."));
    assert!(
        !key.to_string().contains(&ada.key),
        "the key itself is never shown"
    );

    let by_id = format!("/api/personal_api_keys/{}/", key["id"].as_str().unwrap());
    assert_eq!(
        parts(app.get(&by_id, &ada.key).await).await,
        (200, key.clone())
    );

    let refused = "This action does not support Personal API Key access";
    let other = app.tenant("bob@example.com", &["*"]).await;
    let (_, bob_key) = parts(app.get("/api/personal_api_keys/@current", &other.key).await).await;
    for (method, path) in [
        (Method::GET, "/api/personal_api_keys/".to_owned()),
        (Method::POST, "/api/personal_api_keys/".to_owned()),
        (
            Method::GET,
            format!(
                "/api/personal_api_keys/{}/",
                bob_key["id"].as_str().unwrap()
            ),
        ),
        (Method::PATCH, by_id.clone()),
        (Method::DELETE, by_id.clone()),
    ] {
        let (status, body) = parts(
            app.send_json(method.clone(), &path, &ada.key, &json!({}))
                .await,
        )
        .await;
        assert_eq!(status, 403, "{method} {path}");
        assert_error(&body, "authentication_error", "permission_denied", refused);
    }
}

#[tokio::test]
async fn scoped_keys_show_exactly_what_they_are_scoped_to() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let scoped = app
        .key(KeyRequest {
            email: "ada@example.com".into(),
            label: "scoped".into(),
            scopes: vec!["*".into()],
            scoped_teams: Some(vec![ada.project_id]),
            scoped_organizations: Some(vec![ada.organization_id]),
        })
        .await;
    let (_, key) = parts(app.get("/api/personal_api_keys/@current", &scoped).await).await;
    assert_eq!(key["scoped_teams"], json!([ada.project_id.0]));
    assert_eq!(
        key["scoped_organizations"],
        json!([ada.organization_id.0.to_string()])
    );
    assert_eq!(key["label"], "scoped");
}

#[tokio::test]
async fn me_shows_the_current_project_and_organization_and_switches_them() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, me) = parts(app.get("/api/users/@me/", &ada.key).await).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["team"]["id"], ada.project_id.0);
    assert_eq!(me["team"]["project_id"], ada.project_id.0);
    assert_eq!(
        me["team"]["organization"],
        ada.organization_id.0.to_string()
    );
    assert_eq!(me["team"]["name"], "Default project");
    assert!(
        me["team"]["api_token"]
            .as_str()
            .unwrap()
            .starts_with("phc_")
    );
    assert_eq!(me["organization"]["id"], ada.organization_id.0.to_string());
    assert_eq!(me["organization"]["name"], "Org of ada@example.com");

    let second = app
        .admin
        .create_project(ada.organization_id, "Second")
        .await
        .unwrap();
    let (status, switched) =
        app_patch(&app, &ada.key, json!({"set_current_team": second.id.0})).await;
    assert_eq!(status, 200, "{switched}");
    assert_eq!(switched["team"]["id"], second.id.0);
    assert_eq!(
        parts(app.get("/api/users/@me", &ada.key).await).await.1["team"]["id"],
        second.id.0,
        "stored"
    );
    let (_, current) = parts(app.get("/api/projects/@current/", &ada.key).await).await;
    assert_eq!(current["id"], second.id.0);

    let bob = app.tenant("bob@example.com", &["*"]).await;
    let (status, body) = app_patch(
        &app,
        &ada.key,
        json!({"set_current_team": bob.project_id.0}),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let (status, _) = app_patch(
        &app,
        &ada.key,
        json!({"set_current_organization": bob.organization_id.0}),
    )
    .await;
    assert_eq!(status, 403);
    let (status, body) =
        app_patch(&app, &ada.key, json!({"set_current_organization": "nope"})).await;
    assert_eq!(
        (status, body["attr"].as_str()),
        (400, Some("set_current_organization"))
    );

    app.admin
        .add_member(
            "ada@example.com",
            bob.organization_id,
            MembershipLevel::Member,
        )
        .await
        .unwrap();
    let (status, moved) = app_patch(
        &app,
        &ada.key,
        json!({"set_current_organization": bob.organization_id.0}),
    )
    .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(
        moved["organization"]["id"],
        bob.organization_id.0.to_string()
    );
    assert_eq!(
        moved["team"]["id"], bob.project_id.0,
        "its first project becomes current"
    );

    let read_only = app.tenant("carol@example.com", &["user:read"]).await;
    let (status, _) = app_patch(
        &app,
        &read_only.key,
        json!({"set_current_team": read_only.project_id.0}),
    )
    .await;
    assert_eq!(status, 403, "switching needs user:write");
}

async fn app_patch(app: &crate::helpers::TestApp, key: &str, body: Value) -> (u16, Value) {
    parts(
        app.send_json(Method::PATCH, "/api/users/@me/", key, &body)
            .await,
    )
    .await
}

#[tokio::test]
async fn an_organizations_projects_are_listed_as_the_key_sees_them() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let second = app
        .admin
        .create_project(ada.organization_id, "Second")
        .await
        .unwrap();
    let path = format!("/api/organizations/{}/projects/", ada.organization_id);
    let (status, list) = parts(app.get(&path, &ada.key).await).await;
    assert_eq!(status, 200, "{list}");
    let ids: Vec<_> = list["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].clone())
        .collect();
    assert_eq!(ids, [json!(ada.project_id.0), json!(second.id.0)]);
    assert_eq!(list["count"], 2);
    assert_eq!(
        parts(
            app.get("/api/organizations/@current/projects", &ada.key)
                .await
        )
        .await
        .1["count"],
        2
    );

    let scoped = app
        .key(KeyRequest {
            email: "ada@example.com".into(),
            label: "one project".into(),
            scopes: vec!["*".into()],
            scoped_teams: Some(vec![second.id]),
            scoped_organizations: None,
        })
        .await;
    let (_, narrowed) = parts(app.get(&path, &scoped).await).await;
    assert_eq!(narrowed["count"], 1);
    assert_eq!(narrowed["results"][0]["id"], second.id.0);

    let (status, one) = parts(app.get(&format!("{path}{}/", second.id.0), &ada.key).await).await;
    assert_eq!((status, one["name"].as_str()), (200, Some("Second")));
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let (status, _) = parts(
        app.get(
            &format!(
                "/api/organizations/{}/projects/{}/",
                bob.organization_id, ada.project_id.0
            ),
            &bob.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 403, "not a member of Ada's organization");
    let (status, _) = parts(
        app.get(
            &format!(
                "/api/organizations/{}/projects/{}/",
                bob.organization_id, bob.project_id.0
            ),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = parts(
        app.get(
            &format!("/api/organizations/{}/projects/", bob.organization_id),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 403);
}
