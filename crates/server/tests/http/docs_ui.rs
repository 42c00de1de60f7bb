//! The API documentation pages rendered by a real browser: Debian's headless Chromium loads
//! `/api/schema/swagger-ui/` and `/api/schema/redoc/` from `burrow serve`'s own assets and the
//! document, and the rendered DOM lists the survey and plugin operations. (`.ci/run` installs
//! Chromium; `BURROW_CHROMIUM` names another binary.)

use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::process::Command;

use crate::helpers::{chromium, spawn_app};

/// The DOM of `url` once its scripts have run, as Chromium renders it. On a machine loaded
/// with builds, headless Chromium now and then exits successfully having printed nothing (seen
/// once in 1,124 tests, after 46 s); that says nothing of the page, so it is asked again, up
/// to three times. A failed run, or a DOM without the operations, still fails the test.
async fn rendered(url: &str) -> String {
    for _ in 0..2 {
        let dom = rendered_once(url).await;
        if !dom.is_empty() {
            return dom;
        }
    }
    rendered_once(url).await
}

async fn rendered_once(url: &str) -> String {
    // A profile of its own per call: the tests run in parallel, and two Chromiums sharing one
    // profile refuse to start ("SingletonLock: File exists").
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let profile = std::env::temp_dir().join(format!(
        "burrow-chromium-{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    let run = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            // Tall enough for every operation: with a usual window Swagger UI stops rendering
            // operations below it once the document passes about 150 of them.
            "--window-size=1280,40000",
            "--virtual-time-budget=15000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("chromium finishes within 90 s")
        .unwrap_or_else(|error| {
            panic!("running {} (apt-get install chromium): {error}", chromium())
        });
    let dom = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "chromium failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    dom
}

#[tokio::test]
async fn swagger_ui_renders_the_survey_and_plugin_operations() {
    let app = spawn_app().await;
    let dom = rendered(&format!("{}/api/schema/swagger-ui/", app.address)).await;
    for expected in [
        // Swagger UI's deep-link ids: `operations-{tag}-{operationId}`.
        "operations-surveys-surveys_create",
        "operations-surveys-surveys_duplicate_to_projects",
        "operations-surveys-environments_surveys_list",
        "operations-plugins-plugins_create",
        "operations-plugins-plugins_update_source",
        "operations-plugin_configs-plugin_configs_list",
        "data-path=\"/api/projects/{project_id}/surveys/{survey_id}\"",
        "data-path=\"/api/organizations/{organization_id}/plugins/{plugin_id}/upgrade\"",
    ] {
        assert!(
            dom.contains(expected),
            "Swagger UI lacks {expected}:\n{dom:.3000}"
        );
    }
}

#[tokio::test]
async fn redoc_renders_the_survey_and_plugin_operations() {
    let app = spawn_app().await;
    let dom = rendered(&format!("{}/api/schema/redoc/", app.address)).await;
    for expected in [
        // Redoc's menu and sections name each operation by its summary.
        "Create a survey",
        "Copy the survey, as a draft, into other projects",
        "Install a plugin",
        "Write source files",
        "Configure a plugin",
        "/api/projects/{project_id}/surveys/{survey_id}",
    ] {
        assert!(
            dom.contains(expected),
            "Redoc lacks {expected}:\n{dom:.3000}"
        );
    }
}
