//! PostHog's agent toolkit (`@posthog/agent-toolkit` 0.2.4, the real npm package) against
//! `burrow serve`: the tools it offers for a key, and every organization, project, flag and
//! survey tool called through its own handlers, which validate answers against PostHog's
//! schemas. `cargo xtask test` installs the package into `target/agent-toolkit`.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::Value;

use crate::helpers::{TestApp, spawn_app};

/// Where `cargo xtask test` installed the toolkit.
fn toolkit_dir() -> PathBuf {
    std::env::var_os("BURROW_AGENT_TOOLKIT_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/agent-toolkit"),
        PathBuf::from,
    )
}

/// Runs the driver script with `key`; its JSON output.
async fn drive(app: &TestApp, key: &str, mode: &str) -> Value {
    let dir = toolkit_dir();
    assert!(
        dir.join("node_modules/@posthog/agent-toolkit").is_dir(),
        "@posthog/agent-toolkit is not installed in {}: run `cargo xtask test`, which installs it",
        dir.display()
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agent_toolkit/drive.mjs");
    let output = tokio::process::Command::new("node")
        .arg(script)
        .arg(mode)
        .env("TOOLKIT_DIR", &dir)
        .env("BURROW_URL", &app.address)
        .env("BURROW_KEY", key)
        .stdin(Stdio::null())
        .output()
        .await
        .expect("running node");
    assert!(
        output.status.success(),
        "the toolkit failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the driver prints JSON")
}

#[tokio::test]
async fn every_organization_project_flag_and_survey_tool_works_with_a_full_key() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let result = drive(&app, &ada.key, "all").await;
    let calls = &result["calls"];
    assert_eq!(
        calls["organization"]["id"],
        ada.organization_id.0.to_string(),
        "{result}"
    );
    assert_eq!(calls["flagCreated"]["key"], "agent-flag", "{result}");
    assert_eq!(
        calls["flagUpdated"]["name"], "Renamed by an agent",
        "{result}"
    );
    assert_eq!(calls["surveyCreated"]["name"], "Agent survey", "{result}");
    assert_eq!(calls["surveyUpdated"]["name"], "Renamed survey", "{result}");
    // The toolkit's survey-delete archives (PostHog's soft delete); its flag delete is real.
    let survey = format!(
        "/api/projects/{}/surveys/{}/",
        ada.project_id,
        calls["surveyCreated"]["id"].as_str().unwrap()
    );
    let (_, archived) = crate::helpers::parts(app.get(&survey, &ada.key).await).await;
    assert_eq!(archived["archived"], true, "{archived}");
    let flags = format!("/api/projects/{}/feature_flags/", ada.project_id);
    let (_, left) = crate::helpers::parts(app.get(&flags, &ada.key).await).await;
    assert_eq!(left["count"], 0, "{left}");
}

#[tokio::test]
async fn a_survey_read_key_is_offered_the_survey_read_tools_and_no_write_tool() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["survey:read"]).await;
    let result = drive(&app, &ada.key, "offered").await;
    let offered: Vec<&str> = result["offered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    for read in ["survey-get", "surveys-get-all"] {
        assert!(offered.contains(&read), "{read} missing from {offered:?}");
    }
    for write in [
        "survey-create",
        "survey-update",
        "survey-delete",
        "create-feature-flag",
    ] {
        assert!(
            !offered.contains(&write),
            "{write} offered to a read-only key: {offered:?}"
        );
    }
}
