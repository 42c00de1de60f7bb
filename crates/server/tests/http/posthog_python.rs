//! PostHog's Python SDK (`posthog` 7.91.1, the real PyPI package) against `burrow serve`: a
//! backend answering `api` surveys captures `survey sent` events through the SDK, which posts them
//! to `/batch/` or to capture v1 (plainly, and gzipped from a second client), and the project's
//! `responses_count` counts each submission once. `cargo xtask test` installs the SDK into `target/posthog-python`.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, run_with_input, spawn_app, spawn_app_with};
use crate::local_evaluation;

/// Runs `tests/posthog_python/<script>` with the python of the venv `cargo xtask test`
/// installed the SDK into, the app's URL and the project's token in `BURROW_URL` and
/// `BURROW_TOKEN`, and `env`, `input` on its standard input; its standard output, after
/// asserting it succeeded.
async fn drive(
    app: &TestApp,
    token: &str,
    script: &str,
    env: &[(&str, &str)],
    input: &[u8],
) -> Vec<u8> {
    let python = std::env::var_os("BURROW_POSTHOG_PYTHON").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/posthog-python/bin/python"),
        PathBuf::from,
    );
    assert!(
        python.is_file(),
        "posthog-python is not installed in {}: run `cargo xtask test`, which installs it",
        python.display()
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/posthog_python")
        .join(script);
    let mut command = tokio::process::Command::new(&python);
    command
        .arg(script)
        .env("BURROW_URL", &app.address)
        .env("BURROW_TOKEN", token)
        .envs(env.iter().copied())
        // The SDK's default wire protocol (`/batch/`), whatever the environment says.
        .env_remove("POSTHOG_CAPTURE_MODE")
        .env_remove("POSTHOG_CAPTURE_COMPRESSION");
    let output = run_with_input(command, input).await;
    assert!(
        output.status.success(),
        "the SDK failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// A launched `api` survey with an open and a rating question.
pub struct Survey {
    pub id: String,
    pub open_id: String,
    pub rating_id: String,
}

/// Creates and launches an `api` survey an SDK answers (posthog-node's tests answer it too).
pub async fn launched_survey(app: &TestApp, tenant: &Tenant, name: &str) -> Survey {
    let surveys = format!("/api/projects/{}/surveys/", tenant.project_id);
    let body = json!({
        "name": name,
        "type": "api",
        "questions": [
            {"type": "open", "question": "What could we do better?"},
            {"type": "rating", "question": "How likely are you to recommend us?", "scale": 10, "display": "number"},
        ],
    });
    let (status, created) = parts(
        app.send_json(Method::POST, &surveys, &tenant.key, &body)
            .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("survey id").to_owned();
    let question_id = |index: usize| {
        created["questions"][index]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("question {index} has no id: {created}"))
            .to_owned()
    };
    let (open_id, rating_id) = (question_id(0), question_id(1));
    // Launching is setting the start date, as PostHog's UI does.
    let start = (chrono::Utc::now() - chrono::TimeDelta::minutes(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (status, launched) = parts(
        app.send_json(
            Method::PATCH,
            &format!("{surveys}{id}/"),
            &tenant.key,
            &json!({"start_date": start}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{launched}");
    Survey {
        id,
        open_id,
        rating_id,
    }
}

/// Runs the driver script: the SDK with its defaults answers `survey`, a `gzip=True` client
/// `gzip_survey`, both with the project's token, over `capture_mode` (`v0`, or `v1`).
async fn send_responses(
    app: &TestApp,
    token: &str,
    capture_mode: &str,
    survey: &Survey,
    gzip_survey: &Survey,
) {
    drive(
        app,
        token,
        "send_responses.py",
        &[
            ("CAPTURE_MODE", capture_mode),
            ("SURVEY_ID", &survey.id),
            ("OPEN_QUESTION_ID", &survey.open_id),
            ("RATING_QUESTION_ID", &survey.rating_id),
            ("GZIP_SURVEY_ID", &gzip_survey.id),
            ("GZIP_OPEN_QUESTION_ID", &gzip_survey.open_id),
            ("GZIP_RATING_QUESTION_ID", &gzip_survey.rating_id),
        ],
        &[],
    )
    .await;
}

#[tokio::test]
async fn survey_responses_sent_through_posthog_python_are_counted_once_per_submission() {
    counted_once_per_submission("v0").await;
}

#[tokio::test]
async fn survey_responses_sent_through_capture_v1_are_counted_once_per_submission() {
    counted_once_per_submission("v1").await;
}

/// Two surveys answered through the SDK over `capture_mode` are counted once per submission.
async fn counted_once_per_submission(capture_mode: &str) {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = &app.project_token(&ada).await;
    let checkout = launched_survey(&app, &ada, "Checkout feedback").await;
    let onboarding = launched_survey(&app, &ada, "Onboarding feedback").await;

    send_responses(&app, token, capture_mode, &checkout, &onboarding).await;

    // Each survey got a complete submission, a submission sent in two parts and a send without
    // a submission id: three responses; `survey shown` and `$pageview` are none.
    let expected = json!({checkout.id.as_str(): 3, onboarding.id.as_str(): 3});
    let path = format!("/api/projects/{}/surveys/responses_count/", ada.project_id);
    let mut counted = (0, Value::Null);
    // The SDK returns once Burrow answered; give ingestion a moment should it not be synchronous.
    for _ in 0..50 {
        counted = parts(app.get(&path, &ada.key).await).await;
        if counted == (200, expected.clone()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, counts) = counted;
    assert_eq!(status, 200, "{counts}");
    assert_eq!(
        counts[&checkout.id], 3,
        "the default client's survey: {counts}"
    );
    assert_eq!(
        counts[&onboarding.id], 3,
        "the gzip client's survey: {counts}"
    );
    assert_eq!(counts, expected);
}

/// PostHog's published consistency vectors (posthog-python's test suite), as the domain's tests
/// keep them: what PostHog answers for `distinct_id_0`.. under "simple-flag" (45 %) and
/// "multivariate-flag" (55 %, five variants).
const SIMPLE_FLAG: &str = include_str!("../../../domain/tests/data/simple_flag_consistency.json");
const MULTIVARIATE_FLAG: &str =
    include_str!("../../../domain/tests/data/multivariate_flag_consistency.json");

#[tokio::test]
async fn posthog_pythons_flag_answers_from_burrow_agree_with_posthog() {
    const COUNT: usize = 150;
    let app = spawn_app_with(|args| args.rate_limit = "off".parse().unwrap()).await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    for (key, filters) in [
        (
            "simple-flag",
            json!({"groups": [{"properties": [], "rollout_percentage": 45}]}),
        ),
        (
            "multivariate-flag",
            json!({"groups": [{"properties": [], "rollout_percentage": 55}],
                   "multivariate": {"variants": [
                       {"key": "first-variant", "name": "First Variant", "rollout_percentage": 50},
                       {"key": "second-variant", "name": "Second Variant", "rollout_percentage": 20},
                       {"key": "third-variant", "name": "Third Variant", "rollout_percentage": 20},
                       {"key": "fourth-variant", "name": "Fourth Variant", "rollout_percentage": 5},
                       {"key": "fifth-variant", "name": "Fifth Variant", "rollout_percentage": 5}]}}),
        ),
    ] {
        let response = app
            .send_json(
                Method::POST,
                &format!("/api/projects/{}/feature_flags/", ada.project_id.0),
                &ada.key,
                &json!({"key": key, "name": key, "filters": filters}),
            )
            .await;
        assert_eq!(response.status(), 201);
    }

    let count = COUNT.to_string();
    let output = drive(
        &app,
        &token,
        "feature_flags.py",
        &[
            ("FLAG_KEYS", "simple-flag,multivariate-flag"),
            ("COUNT", &count),
        ],
        &[],
    )
    .await;
    let answers: Value = serde_json::from_slice(&output).expect("the driver prints JSON");
    for (key, expected) in [
        ("simple-flag", SIMPLE_FLAG),
        ("multivariate-flag", MULTIVARIATE_FLAG),
    ] {
        let expected: Vec<Value> = serde_json::from_str(expected).unwrap();
        assert_eq!(
            answers[key].as_array().unwrap(),
            &expected[..COUNT],
            "{key}: posthog-python through Burrow disagrees with PostHog"
        );
    }
}

#[tokio::test]
async fn posthog_pythons_local_evaluation_agrees_with_flags_for_the_same_persons() {
    let app = spawn_app_with(|args| args.rate_limit = "off".parse().unwrap()).await;
    let ada = app
        .tenant(
            "ada@example.com",
            &["feature_flag:write", "cohort:write", "project:read"],
        )
        .await;
    let token = app.project_token(&ada).await;
    let keys = local_evaluation::create_flags(&app, &ada).await;
    let (flag_keys, remote_only) = keys.joined();
    let output = drive(
        &app,
        &token,
        "local_evaluation.py",
        &[
            ("BURROW_KEY", &ada.key),
            ("FLAG_KEYS", &flag_keys),
            ("REMOTE_ONLY_KEYS", &remote_only),
        ],
        &local_evaluation::persons(),
    )
    .await;
    local_evaluation::assert_answered(&output, &keys.all());
}
