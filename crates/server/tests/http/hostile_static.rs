//! `/static/…` asked for names that are not plain files of a posthog-js `dist/`: whatever is
//! asked, the answer is a file or PostHog's 404 body, never a broken 200.

use reqwest::Method;

use crate::helpers::{assert_error, parts, spawn_app_with, temp_tree};

#[tokio::test]
async fn a_directory_inside_a_version_is_404_not_found_on_both_static_paths() {
    // posthog-js's `dist/` has subdirectories (`lazy/`, `extension-bundles/`, …).
    let dir = temp_tree(
        "burrow-static",
        &[
            ("1.449.2/surveys.js", "/* surveys */"),
            ("1.449.2/lazy/recorder.js", "/* recorder */"),
        ],
    );
    let static_dir = dir.clone();
    let app = spawn_app_with(move |args| args.static_dir = Some(static_dir)).await;

    for path in [
        "/static/1.449.2/lazy",
        "/static/lazy",
        "/static/lazy?v=1.449.2",
    ] {
        let (status, body) = parts(app.request(Method::GET, path).send().await.unwrap()).await;
        assert_eq!(status, 404, "{path}");
        assert_error(&body, "invalid_request", "not_found", "Not found.");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
