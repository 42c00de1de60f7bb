//! `/api/projects/{id}/early_access_feature/` and posthog-js's `/api/early_access_features/` over
//! HTTP: PostHog's shapes and messages, and an enrollment captured as posthog-js sends it turning
//! the feature's flag on in `/flags`.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, parts, send_to_project, spawn_app};

async fn flag_on(app: &TestApp, token: &str, person: &str, key: &str) -> bool {
    let (status, answer) = app
        .flags(&json!({"token": token, "distinct_id": person}))
        .await;
    assert_eq!(status, 200, "{answer}");
    answer["flags"][key]["enabled"] == true
}

#[tokio::test]
async fn features_are_listed_for_posthog_js_and_an_enrollment_turns_the_flag_on() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let (status, feature) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "early_access_feature/",
        json!({"name": "Dark Mode", "description": "Darker", "stage": "beta"}),
    )
    .await;
    assert_eq!(status, 201, "{feature}");
    assert_eq!(
        (
            &feature["name"],
            &feature["stage"],
            &feature["documentation_url"]
        ),
        (&json!("Dark Mode"), &json!("beta"), &json!(""))
    );
    assert_eq!(feature["feature_flag"]["key"], "dark-mode");
    assert_eq!(
        feature["feature_flag"]["filters"]["super_groups"][0]["properties"][0]["key"],
        "$feature_enrollment/dark-mode"
    );
    let id = feature["id"].as_str().unwrap().to_owned();

    // posthog-js's list: beta by default, by stage when asked.
    let listed = |query: &'static str| {
        app.request(
            Method::GET,
            &format!("/api/early_access_features/?token={token}{query}"),
        )
        .send()
    };
    let (status, body) = parts(listed("").await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"earlyAccessFeatures": [{"id": id, "name": "Dark Mode", "description": "Darker",
               "stage": "beta", "documentationUrl": "", "flagKey": "dark-mode"}]})
    );
    let (_, alpha_only) = parts(listed("&stage=alpha").await.unwrap()).await;
    assert_eq!(alpha_only, json!({"earlyAccessFeatures": []}));
    let (status, _) = parts(
        app.request(Method::GET, "/api/early_access_features/?token=phc_unknown")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);

    // Enrolled as posthog-js does it, the person gets the flag; others do not.
    assert!(!flag_on(&app, &token, "early-adopter", "dark-mode").await);
    let (status, _) = parts(
        app.request(Method::POST, "/batch/")
            .json(&json!({"api_key": token, "batch": [{
                "event": "$feature_enrollment_update", "distinct_id": "early-adopter",
                "properties": {"$feature_flag": "dark-mode", "$feature_enrollment": true,
                               "$set": {"$feature_enrollment/dark-mode": true}}}]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert!(flag_on(&app, &token, "early-adopter", "dark-mode").await);
    assert!(!flag_on(&app, &token, "someone-else", "dark-mode").await);

    // Out of a release stage, enrollment no longer serves.
    let (status, changed) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &format!("early_access_feature/{id}/"),
        json!({"stage": "draft"}),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert!(!flag_on(&app, &token, "early-adopter", "dark-mode").await);

    // PostHog's refusals.
    let flag_id = feature["feature_flag"]["id"].clone();
    for (body, detail) in [
        (json!({"name": "x"}), "This field is required."),
        (
            json!({"name": "x", "stage": "shipped"}),
            "\"shipped\" is not a valid choice.",
        ),
        (
            json!({"name": "x", "stage": "beta", "feature_flag_id": flag_id}),
            "Linked feature flag dark-mode already has a feature attached to it.",
        ),
        (
            json!({"name": "x", "stage": "beta", "documentation_url": "docs"}),
            "Enter a valid URL.",
        ),
        (
            json!({"name": "x", "stage": "beta",
                   "documentation_url": format!("https://{}", "d".repeat(793))}),
            "Ensure this field has no more than 800 characters.",
        ),
    ] {
        let (status, error) =
            send_to_project(&app, &ada, Method::POST, "early_access_feature/", body).await;
        assert_eq!(
            (status, error["detail"].as_str()),
            (400, Some(detail)),
            "{error}"
        );
    }

    // Deleted for good; the flag stays.
    let deleted = app
        .send_json(
            Method::DELETE,
            &format!(
                "/api/projects/{}/early_access_feature/{id}/",
                ada.project_id.0
            ),
            &ada.key,
            &json!({}),
        )
        .await;
    assert_eq!(deleted.status(), 204);
    let (status, _) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("early_access_feature/{id}/"),
        json!({}),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("feature_flags/{flag_id}/"),
        json!({}),
    )
    .await;
    assert_eq!(status, 200);
}
