//! PostHog's Node SDK (`posthog-node` 5.70.0, the real npm package) against `burrow serve`: its
//! local evaluation, from the flag definitions it loads with a personal key, agrees with
//! `/flags` for every flag kind and person of `local_evaluation.rs`. `cargo xtask test` installs
//! the package into `target/posthog-node`.

use crate::helpers::{run_with_input, spawn_app_with};
use crate::local_evaluation;
use std::path::PathBuf;

/// Where `cargo xtask test` installed posthog-node.
fn sdk_dir() -> PathBuf {
    std::env::var_os("BURROW_POSTHOG_NODE_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/posthog-node"),
        PathBuf::from,
    )
}

#[tokio::test]
async fn posthog_nodes_local_evaluation_agrees_with_flags_for_the_same_persons() {
    let dir = sdk_dir();
    assert!(
        dir.join("node_modules/posthog-node").is_dir(),
        "posthog-node is not installed in {}: run `cargo xtask test`, which installs it",
        dir.display()
    );
    let app = spawn_app_with(|args| args.rate_limit = "off".parse().unwrap()).await;
    let ada = app
        .tenant("ada@example.com", &["feature_flag:write", "project:read"])
        .await;
    let token = app.project_token(&ada).await;
    let keys = local_evaluation::create_flags(&app, &ada).await;

    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/posthog_node/local_evaluation.mjs");
    let mut command = tokio::process::Command::new("node");
    command
        .arg(script)
        .env("POSTHOG_NODE_DIR", &dir)
        .env("BURROW_URL", &app.address)
        .env("BURROW_TOKEN", &token)
        .env("BURROW_KEY", &ada.key)
        .env("FLAG_KEYS", keys.join(","));
    let output = run_with_input(command, &local_evaluation::persons()).await;
    assert!(
        output.status.success(),
        "posthog-node disagrees or failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    local_evaluation::assert_answered(&output.stdout, &keys);
}
