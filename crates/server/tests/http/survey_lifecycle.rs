//! `POST /api/projects/{id}/surveys/{id}/launch/` and `…/stop/` over HTTP: PostHog's checks and
//! messages, the no-ops, the activity entries, the answer (the survey as GET answers it), and,
//! unlike PostHog, the targeting flags and the SDK feed following the survey.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_missing_scope, eventually, parts, spawn_app};
use crate::survey_requests::{created, survey_id, survey_path};

/// Creates a survey in the tenant's project: its id.
async fn create(app: &TestApp, tenant: &Tenant, body: Value) -> String {
    survey_id(&created(app, tenant, body).await).to_owned()
}

/// POSTs `launch` or `stop` without a body (`path` ends with or without a slash).
async fn switch(app: &TestApp, key: &str, path: &str) -> (u16, Value) {
    parts(
        app.request(Method::POST, path)
            .bearer_auth(key)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn get(app: &TestApp, tenant: &Tenant, id: &str) -> Value {
    let (status, survey) = parts(
        app.get(&survey_path(tenant.project_id, id), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{survey}");
    survey
}

fn refused(detail: &str) -> Value {
    json!({"type": "validation_error", "code": "invalid_input", "detail": detail, "attr": null})
}

#[tokio::test]
async fn launch_and_stop_set_their_date_switch_the_flags_and_feed_and_answer_as_get_does() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let targeting = json!({"groups": [{"properties": [{"key": "email", "value": "@example.com", "operator": "icontains", "type": "person"}], "rollout_percentage": 100}]});
    let id = create(
        &app,
        &ada,
        json!({"name": "NPS", "type": "popover", "targeting_flag_filters": targeting,
               "questions": [{"type": "open", "question": "Why?"}]}),
    )
    .await;
    let path = survey_path(ada.project_id, &id);

    let (status, launched) = switch(&app, &ada.key, &format!("{path}launch/")).await;
    assert_eq!(status, 200, "{launched}");
    assert_eq!(
        launched,
        get(&app, &ada, &id).await,
        "answered as GET answers"
    );
    assert_eq!(launched["search_match_type"], Value::Null);
    assert_eq!(launched["end_date"], Value::Null);
    assert_eq!(launched["targeting_flag"]["active"], true);
    let start = launched["start_date"]
        .as_str()
        .expect("launched")
        .to_owned();

    // The SDKs see it: the feed shows the start, and the internal targeting flag is on (as it
    // is until the survey stops).
    let feed_survey = async || {
        let feed = app.survey_feed(&token).await;
        feed["surveys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|survey| survey["id"] == id.as_str())
            .cloned()
            .unwrap_or(Value::Null)
    };
    eventually("the launch in the feed", async || {
        feed_survey().await["start_date"].as_str().is_some()
    })
    .await;
    let internal_key = feed_survey().await["internal_targeting_flag_key"]
        .as_str()
        .expect("the feed names the internal flag")
        .to_owned();
    let internal_flag_on = async || {
        let (_, answer) = app
            .flags(&json!({"token": token, "distinct_id": "person-1"}))
            .await;
        answer["flags"][&internal_key]["enabled"].as_bool()
    };
    assert_eq!(internal_flag_on().await, Some(true));

    let (status, again) = switch(&app, &ada.key, &format!("{path}launch")).await;
    assert_eq!(
        (status, &again["start_date"]),
        (200, &json!(start)),
        "a no-op"
    );

    let (status, stopped) = switch(&app, &ada.key, &format!("{path}stop")).await;
    assert_eq!(status, 200, "{stopped}");
    assert_eq!(stopped, get(&app, &ada, &id).await);
    assert_eq!(stopped["start_date"], json!(start));
    assert_eq!(stopped["targeting_flag"]["active"], false);
    let end = stopped["end_date"].as_str().expect("stopped").to_owned();
    eventually("the stop in the feed", async || {
        feed_survey().await["end_date"] == json!(end)
    })
    .await;
    assert_ne!(
        internal_flag_on().await,
        Some(true),
        "a stopped survey's internal targeting flag is off"
    );
    let (status, again) = switch(&app, &ada.key, &format!("{path}stop/")).await;
    assert_eq!((status, &again["end_date"]), (200, &json!(end)), "a no-op");

    let (status, log) = parts(app.get(&format!("{path}activity/"), &ada.key).await).await;
    assert_eq!(status, 200, "{log}");
    let entries: Vec<(Value, Value)> = log["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["activity"].clone(),
                entry["detail"]["changes"].clone(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            (
                json!("stopped"),
                json!([{"type": "Survey", "action": "changed", "field": "end_date", "before": null, "after": end}])
            ),
            (
                json!("launched"),
                json!([{"type": "Survey", "action": "changed", "field": "start_date", "before": null, "after": start}])
            ),
            (json!("created"), Value::Null),
        ],
        "one entry each, none for the no-ops"
    );
}

#[tokio::test]
async fn launch_and_stop_refuse_with_posthogs_messages_in_its_order() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let archived = create(
        &app,
        &ada,
        json!({"name": "Archived", "type": "popover", "archived": true,
               "end_date": "2024-01-01T00:00:00Z"}),
    )
    .await;
    let path = survey_path(ada.project_id, &archived);
    let (status, body) = switch(&app, &ada.key, &format!("{path}launch/")).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        refused("Cannot launch an archived survey. Unarchive it first.")
    );
    // Archived first, even for a survey stopped already.
    let (status, body) = switch(&app, &ada.key, &format!("{path}stop/")).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        refused("Cannot stop an archived survey. Unarchive it first if needed.")
    );

    let ended = create(
        &app,
        &ada,
        json!({"name": "Ended", "type": "popover", "start_date": "2024-01-01T00:00:00Z",
               "end_date": "2024-02-01T00:00:00Z"}),
    )
    .await;
    let path = survey_path(ada.project_id, &ended);
    let (status, body) = switch(&app, &ada.key, &format!("{path}launch/")).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        refused("Cannot launch a survey with end_date in the past. Extend the end_date first.")
    );
    let (status, body) = switch(&app, &ada.key, &format!("{path}stop/")).await;
    assert_eq!(
        (status, &body["end_date"]),
        (200, &json!("2024-02-01T00:00:00Z"))
    );

    // A start still to come: a launch brings it to now; a stop would end it before it starts.
    let scheduled = create(
        &app,
        &ada,
        json!({"name": "Scheduled", "type": "popover", "start_date": "2999-01-01T00:00:00Z"}),
    )
    .await;
    let path = survey_path(ada.project_id, &scheduled);
    let (status, body) = switch(&app, &ada.key, &format!("{path}stop/")).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"type": "validation_error", "code": "invalid_input",
               "detail": "End date must not be before the start date.", "attr": "end_date"})
    );
    let (status, body) = switch(&app, &ada.key, &format!("{path}launch/")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["start_date"].as_str().unwrap() < "2999", "{body}");

    // A body is not read.
    let never_launched = create(&app, &ada, json!({"name": "Draft", "type": "api"})).await;
    let (status, body) = parts(
        app.send_json(
            Method::POST,
            &format!("{}stop/", survey_path(ada.project_id, &never_launched)),
            &ada.key,
            &json!({"end_date": "2030-01-01T00:00:00Z"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["end_date"].as_str().unwrap() < "2030", "{body}");
    assert_eq!(body["start_date"], Value::Null);
}

#[tokio::test]
async fn launch_and_stop_need_survey_write_and_only_reach_the_projects_surveys() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let id = create(&app, &ada, json!({"name": "NPS", "type": "popover"})).await;
    let reader = app.scoped_key(&ada, "reader", &["survey:read"]).await;
    for action in ["launch", "stop"] {
        let (status, body) = switch(
            &app,
            &reader,
            &format!("{}{action}/", survey_path(ada.project_id, &id)),
        )
        .await;
        assert_eq!(status, 403);
        assert_missing_scope(&body, "survey:write");
    }

    let bob = app.tenant("bob@example.com", &["*"]).await;
    for action in ["launch", "stop"] {
        let (status, body) = switch(
            &app,
            &bob.key,
            &format!("{}{action}/", survey_path(bob.project_id, &id)),
        )
        .await;
        assert_eq!(status, 404, "{body}");
        assert_eq!(body["detail"], "Not found.");
        let unknown = "0192f5a4-0000-7000-8000-0000000000aa";
        let (status, _) = switch(
            &app,
            &ada.key,
            &format!("{}{action}/", survey_path(ada.project_id, unknown)),
        )
        .await;
        assert_eq!(status, 404);
    }
    let survey = get(&app, &ada, &id).await;
    assert_eq!(
        (&survey["start_date"], &survey["end_date"]),
        (&Value::Null, &Value::Null),
        "nothing changed"
    );
}
