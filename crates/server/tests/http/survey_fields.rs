//! Survey fields PostHog returns on every survey today, over HTTP: `feature_flag_keys`,
//! `enable_iframe_embedding` (and the hosted page's framing headers that follow it), and
//! `linked_insight_id`, which Burrow, having no insights, refuses unless null.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, parts, spawn_app};
use crate::survey_requests::{create, patch, survey_path};

/// The hosted page's `X-Frame-Options` and the `frame-ancestors` of its policy.
async fn framing(app: &TestApp, id: &str) -> (Option<String>, String) {
    let page = app
        .request(Method::GET, &format!("/external_surveys/{id}/"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let header = |name: &str| {
        page.headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let policy = header("content-security-policy").unwrap();
    let ancestors = policy
        .split(';')
        .map(str::trim)
        .find(|directive| directive.starts_with("frame-ancestors"))
        .unwrap()
        .to_owned();
    (header("x-frame-options"), ancestors)
}

#[tokio::test]
async fn every_survey_lists_its_flag_keys_as_posthog_does() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, survey) = create(
        &app,
        &ada,
        json!({"name": "Keys", "type": "popover", "targeting_flag_filters": {"groups": [
            {"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}],
             "rollout_percentage": 50}]}}),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let id = survey["id"].as_str().unwrap();
    let internal = format!("survey-targeting-{}-custom", id.replace('-', ""));
    let expected = json!([
        {"key": "linked_flag_key", "value": null},
        {"key": "targeting_flag_key", "value": survey["targeting_flag"]["key"]},
        {"key": "internal_targeting_flag_key", "value": internal},
        {"key": "internal_response_sampling_flag_key", "value": null},
    ]);
    assert_eq!(survey["feature_flag_keys"], expected);
    let (_, read) = parts(app.get(&survey_path(ada.project_id, id), &ada.key).await).await;
    assert_eq!(read["feature_flag_keys"], expected);
    assert_eq!(read["enable_iframe_embedding"], false);
}

#[tokio::test]
async fn a_hosted_page_may_be_framed_only_when_its_survey_allows_it() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, survey) = create(
        &app,
        &ada,
        json!({"name": "Hosted", "type": "external_survey", "start_date": "2026-01-01T00:00:00Z",
               "questions": [{"type": "open", "question": "Why?"}]}),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let id = survey["id"].as_str().unwrap();
    assert_eq!(
        framing(&app, id).await,
        (Some("DENY".to_owned()), "frame-ancestors 'none'".to_owned())
    );
    let (status, allowed) = patch(
        &app,
        &ada,
        &survey,
        json!({"enable_iframe_embedding": true}),
    )
    .await;
    assert_eq!(
        (status, &allowed["enable_iframe_embedding"]),
        (200, &json!(true))
    );
    assert_eq!(
        framing(&app, id).await,
        (None, "frame-ancestors *".to_owned())
    );
    let (status, refused) = patch(
        &app,
        &ada,
        &survey,
        json!({"enable_iframe_embedding": "sure"}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        refused,
        json!({"type": "validation_error", "code": "invalid_input",
               "detail": "Must be a valid boolean.", "attr": "enable_iframe_embedding"})
    );
}

#[tokio::test]
async fn a_linked_insight_is_refused_as_posthog_refuses_an_unknown_one() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, refused) = create(
        &app,
        &ada,
        json!({"name": "Insightful", "type": "popover", "linked_insight_id": 7}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        refused,
        json!({"type": "validation_error", "code": "invalid_input",
               "detail": "Insight with this ID does not exist", "attr": null})
    );
    let (status, refused) = create(
        &app,
        &ada,
        json!({"name": "Insightful", "type": "popover", "linked_insight_id": "seven"}),
    )
    .await;
    assert_eq!(
        (status, &refused["attr"]),
        (400, &json!("linked_insight_id"))
    );
    let (status, created) = create(
        &app,
        &ada,
        json!({"name": "Insightful", "type": "popover", "linked_insight_id": null}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
}
