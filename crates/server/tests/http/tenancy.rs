//! Users, organizations and projects as a key sees them; trailing slashes; pagination links.

use serde_json::json;

use crate::helpers::{parts, spawn_app, spawn_app_with};

fn is_utc_iso8601(value: &serde_json::Value) -> bool {
    value
        .as_str()
        .is_some_and(|s| s.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(s).is_ok())
}

#[tokio::test]
async fn a_fresh_tenant_sees_its_project_with_posthogs_fields() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, body) = parts(app.get("/api/projects/", &ada.key).await).await;
    assert_eq!(status, 200);
    assert_eq!(body["count"], 1);
    assert_eq!(
        (body["next"].clone(), body["previous"].clone()),
        (json!(null), json!(null))
    );
    let project = &body["results"][0];
    assert_eq!(project["id"], json!(ada.project_id.0));
    assert_eq!(
        project["organization"],
        json!(ada.organization_id.0.to_string())
    );
    assert_eq!(project["name"], "Default project");
    assert!(project["api_token"].as_str().unwrap().starts_with("phc_"));
    assert!(is_utc_iso8601(&project["created_at"]));
}

#[tokio::test]
async fn every_route_answers_with_and_without_a_trailing_slash() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for path in [
        "/api/projects".to_owned(),
        format!("/api/projects/{}", ada.project_id),
        "/api/organizations".to_owned(),
        format!("/api/organizations/{}", ada.organization_id),
        "/api/users/@me".to_owned(),
    ] {
        assert_eq!(app.get(&path, &ada.key).await.status(), 200, "{path}");
        assert_eq!(
            app.get(&format!("{path}/"), &ada.key).await.status(),
            200,
            "{path}/"
        );
    }
}

#[tokio::test]
async fn me_lists_the_users_organizations() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, me) = parts(app.get("/api/users/@me/", &ada.key).await).await;
    assert_eq!(status, 200);
    assert_eq!(me["email"], "ada@example.com");
    assert_eq!(me["first_name"], "Test");
    assert!(me["uuid"].as_str().is_some() && me["distinct_id"].as_str().is_some());
    assert_eq!(me["is_email_verified"], false);
    assert_eq!(
        me["organizations"],
        json!([{"id": ada.organization_id.0.to_string(), "name": "Org of ada@example.com", "membership_level": 15}])
    );
}

#[tokio::test]
async fn an_organization_shows_its_plugin_level_and_the_callers_membership() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, org) = parts(
        app.get(
            &format!("/api/organizations/{}/", ada.organization_id),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(org["name"], "Org of ada@example.com");
    assert_eq!(org["plugins_access_level"], 9);
    assert_eq!(org["membership_level"], 15);
    assert!(is_utc_iso8601(&org["created_at"]));
}

#[tokio::test]
async fn project_lists_paginate_with_absolute_links_that_keep_other_parameters() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for name in ["Two", "Three", "Four", "Five"] {
        app.admin
            .create_project(ada.organization_id, name)
            .await
            .unwrap();
    }
    let (_, first) = parts(app.get("/api/projects/?limit=2&zeta=1", &ada.key).await).await;
    assert_eq!(first["count"], 5);
    assert_eq!(first["results"].as_array().unwrap().len(), 2);
    assert_eq!(first["previous"], json!(null));
    let next = first["next"].as_str().unwrap();
    assert_eq!(
        next,
        format!("{}/api/projects/?limit=2&offset=2&zeta=1", app.address)
    );

    let (_, second) = parts(
        app.client
            .get(next)
            .bearer_auth(&ada.key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        second["previous"].as_str().unwrap(),
        format!("{}/api/projects/?limit=2&zeta=1", app.address)
    );
    let ids: Vec<_> = [&first, &second]
        .iter()
        .flat_map(|page| {
            page["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["id"].as_i64().unwrap())
        })
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "projects are listed by id");

    let (_, garbage) = parts(
        app.get("/api/projects/?limit=abc&offset=-3", &ada.key)
            .await,
    )
    .await;
    assert_eq!(garbage["results"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn pagination_links_use_the_configured_site_url() {
    let app =
        spawn_app_with(|args| args.site_url = Some("https://burrow.example.com".parse().unwrap()))
            .await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    app.admin
        .create_project(ada.organization_id, "Two")
        .await
        .unwrap();
    let (_, page) = parts(app.get("/api/projects?limit=1", &ada.key).await).await;
    assert_eq!(
        page["next"],
        "https://burrow.example.com/api/projects/?limit=1&offset=1"
    );
}
