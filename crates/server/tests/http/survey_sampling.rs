//! Response sampling over HTTP, with the rounds every second: the settings PostHog takes and
//! refuses (its messages), the daily schedule PostHog returns (a string of JSON), the sampling
//! flag's key in `feature_flag_keys` and in the public feed, and the daily round turning the
//! flag down to the day's share, which `/flags` then answers. Also `form_content` and
//! `user_access_level`, the other fields PostHog returns on every survey today.

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::helpers::{TestApp, parts, spawn_app_with, within};
use crate::survey_requests::{create, created, patch, survey_id, survey_path};

/// Long enough for a round (every second here) and the snapshot change to reach `/flags`.
const A_FEW_ROUNDS: Duration = Duration::from_secs(15);

async fn spawn() -> TestApp {
    spawn_app_with(|args| args.survey_schedule_secs = 1).await
}

/// A launched survey asking for 70 responses over a week from now.
fn sampled(name: &str) -> Value {
    let now = Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true);
    json!({"name": name, "type": "popover", "start_date": now,
           "questions": [{"type": "open", "question": "How is it going?"}],
           "response_sampling_start_date": now, "response_sampling_interval_type": "week",
           "response_sampling_interval": 1, "response_sampling_limit": 70})
}

#[tokio::test]
async fn a_sampled_survey_answers_its_schedule_and_its_flag_as_posthog_does() {
    let app = spawn().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let survey = created(&app, &ada, sampled("Sampled")).await;
    let id = survey_id(&survey).to_owned();
    assert_eq!(survey["response_sampling_interval_type"], "week");
    assert_eq!(survey["response_sampling_limit"], 70);
    let schedule: Value =
        serde_json::from_str(survey["response_sampling_daily_limits"].as_str().unwrap()).unwrap();
    let days = schedule.as_array().unwrap();
    assert_eq!(days.len(), 7);
    assert_eq!(days[0]["daily_response_limit"], 10);
    assert_eq!(days[0]["rollout_percentage"], 14.29);
    assert_eq!(days[6]["rollout_percentage"], 100.0);
    let key = format!("survey-targeting-{}-sampling", id.replace('-', ""));
    assert_eq!(
        survey["feature_flag_keys"][3],
        json!({"key": "internal_response_sampling_flag_key", "value": key})
    );
    let (_, read) = parts(app.get(&survey_path(ada.project_id, &id), &ada.key).await).await;
    assert_eq!(
        read["user_access_level"], "manager",
        "the creator manages it"
    );
    assert_eq!(
        read["response_sampling_daily_limits"],
        survey["response_sampling_daily_limits"]
    );

    let token = app.project_token(&ada).await;
    let feed = app.survey_feed(&token).await;
    assert_eq!(
        feed["surveys"][0]["feature_flag_keys"],
        json!([{"key": "internal_response_sampling_flag_key", "value": key}]),
        "posthog-js checks the sampling flag before showing the survey"
    );

    // The round sets the first day's share (no responses yet, fewer than the day's 10): about
    // one person in seven is shown the survey.
    let shown = async || {
        let mut shown = 0;
        for person in 0..100 {
            let (_, answer) = app
                .flags(&json!({"token": token, "distinct_id": format!("person-{person}")}))
                .await;
            shown += usize::from(answer["flags"][&key]["enabled"] == true);
        }
        shown
    };
    within(A_FEW_ROUNDS, "the first day's share", async || {
        (5..30).contains(&shown().await)
    })
    .await;

    // Sampling off: no schedule, no flag.
    let (status, off) = patch(&app, &ada, &survey, json!({"response_sampling_limit": 0})).await;
    assert_eq!(status, 200, "{off}");
    assert_eq!(off["response_sampling_daily_limits"], Value::Null);
    assert_eq!(off["feature_flag_keys"][3]["value"], Value::Null);
}

#[tokio::test]
async fn sampling_settings_that_make_no_schedule_are_refused_with_posthogs_messages() {
    let app = spawn().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let refused = async |changes: Value| {
        let mut body = sampled("Refused");
        body.as_object_mut()
            .unwrap()
            .extend(changes.as_object().unwrap().clone());
        let (status, error) = create(&app, &ada, body).await;
        assert_eq!(status, 400, "{error}");
        error
    };
    let error = refused(json!({"response_sampling_start_date": "2020-01-01T00:00:00Z"})).await;
    let today = Utc::now().format("%Y-%m-%d");
    assert_eq!(
        error,
        json!({"type": "validation_error", "code": "invalid_input",
               "attr": "response_sampling_start_date",
               "detail": format!("Response sampling start date must be today or a future date \
                                  in UTC. Got 2020-01-01 00:00:00+00:00 when current time is \
                                  {today} 00:00:00+00:00")})
    );
    let error = refused(json!({"response_sampling_interval": 0})).await;
    assert_eq!(
        (&error["attr"], &error["detail"]),
        (
            &json!("response_sampling_interval"),
            &json!("Response sampling interval must be greater than 0.")
        )
    );
    let error = refused(json!({"response_sampling_start_date": null})).await;
    assert_eq!(
        error["detail"],
        "Response sampling start date should be set if response_sampling_start_date is not zero."
    );
    let error = refused(json!({"response_sampling_interval_type": "year"})).await;
    assert_eq!(
        (&error["attr"], &error["detail"]),
        (
            &json!("response_sampling_interval_type"),
            &json!("\"year\" is not a valid choice.")
        )
    );
    let error = refused(json!({"response_sampling_interval_type": "month",
                               "response_sampling_interval": 13}))
    .await;
    assert_eq!(
        error["detail"],
        "Response sampling interval must be at most 365 days."
    );
    let error = refused(json!({"response_sampling_limit": -1})).await;
    assert_eq!(error["attr"], "response_sampling_limit");
}

#[tokio::test]
async fn form_content_round_trips_within_its_bound() {
    let app = spawn().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let document = json!({"type": "doc", "content": [{"type": "paragraph",
                          "content": [{"type": "text", "text": "Tell us more"}]}]});
    let survey = created(
        &app,
        &ada,
        json!({"name": "Form", "type": "popover", "form_content": document}),
    )
    .await;
    assert_eq!(survey["form_content"], document);
    let (_, read) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&survey)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(read["form_content"], document);
    let heavy = json!({"text": "x".repeat(300_000)});
    let (status, error) = patch(&app, &ada, &survey, json!({"form_content": heavy})).await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["attr"], "form_content");
}
