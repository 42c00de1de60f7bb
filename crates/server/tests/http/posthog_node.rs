//! PostHog's Node SDK (`posthog-node` 5.70.0, the real npm package) against `burrow serve`: its
//! local evaluation, from the flag definitions it loads with a personal key, agrees with
//! `/flags` for every flag kind and person of `local_evaluation.rs`, and it reads a remote
//! configuration flag's payload, and sends a survey response over capture v1. `cargo xtask test` installs the package into
//! `target/posthog-node`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{parts, run_with_input, spawn_app, spawn_app_with};
use crate::local_evaluation;
use crate::posthog_python::launched_survey;
use std::path::PathBuf;

/// Where `cargo xtask test` installed posthog-node.
fn sdk_dir() -> PathBuf {
    std::env::var_os("BURROW_POSTHOG_NODE_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/posthog-node"),
        PathBuf::from,
    )
}

/// Runs `tests/posthog_node/<script>` with the SDK's directory, `env` and `input`; its output.
async fn drive(script: &str, env: &[(&str, &str)], input: &[u8]) -> Vec<u8> {
    let dir = sdk_dir();
    assert!(
        dir.join("node_modules/posthog-node").is_dir(),
        "posthog-node is not installed in {}: run `cargo xtask test`, which installs it",
        dir.display()
    );
    let mut command = tokio::process::Command::new("node");
    command
        .arg(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/posthog_node")
                .join(script),
        )
        .env("POSTHOG_NODE_DIR", &dir)
        .envs(env.iter().copied());
    let output = run_with_input(command, input).await;
    assert!(
        output.status.success(),
        "posthog-node disagrees or failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

#[tokio::test]
async fn posthog_node_reads_a_remote_configuration_flags_payload() {
    let app = spawn_app().await;
    let ada = app
        .tenant("ada@example.com", &["feature_flag:write", "project:read"])
        .await;
    let token = app.project_token(&ada).await;
    let response = app
        .send_json(
            Method::POST,
            &format!("/api/projects/{}/feature_flags/", ada.project_id.0),
            &ada.key,
            &json!({"key": "checkout-config", "is_remote_configuration": true,
                    "filters": {"groups": [], "payloads": {"true": "{\"color\": \"blue\"}"}}}),
        )
        .await;
    assert_eq!(response.status(), 201);
    let output = drive(
        "remote_config.mjs",
        &[
            ("BURROW_URL", &app.address),
            ("BURROW_TOKEN", &token),
            ("BURROW_KEY", &ada.key),
            ("FLAG_KEY", "checkout-config"),
        ],
        &[],
    )
    .await;
    let payload: Value = serde_json::from_slice(&output).expect("the driver prints JSON");
    assert_eq!(payload, json!({"color": "blue"}));
}

#[tokio::test]
async fn posthog_nodes_local_evaluation_agrees_with_flags_for_the_same_persons() {
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
        "local_evaluation.mjs",
        &[
            ("BURROW_URL", &app.address),
            ("BURROW_TOKEN", &token),
            ("BURROW_KEY", &ada.key),
            ("FLAG_KEYS", &flag_keys),
            ("REMOTE_ONLY_KEYS", &remote_only),
        ],
        &local_evaluation::persons(),
    )
    .await;
    local_evaluation::assert_answered(&output, &keys.all());
}

#[tokio::test]
async fn posthog_node_sends_a_survey_response_over_capture_v1() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let survey = launched_survey(&app, &ada, "Checkout feedback").await;
    drive(
        "capture_v1.mjs",
        &[
            ("POSTHOG_CAPTURE_MODE", "v1"),
            ("BURROW_URL", &app.address),
            ("BURROW_TOKEN", &token),
            ("SURVEY_ID", &survey.id),
            ("OPEN_QUESTION_ID", &survey.open_id),
            ("RATING_QUESTION_ID", &survey.rating_id),
        ],
        &[],
    )
    .await;
    // The SDK's shutdown resolved once Burrow answered the upload: the response is stored.
    let (status, counts) = parts(
        app.get(
            &format!("/api/projects/{}/surveys/responses_count/", ada.project_id),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{counts}");
    assert_eq!(counts, json!({survey.id.as_str(): 1}));
}
