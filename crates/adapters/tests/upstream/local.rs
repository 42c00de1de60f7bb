//! `file:` plugins: read from the configured directory only, never through a link or out of it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use adapters::UpstreamSettings;
use domain::plugin::{PluginUpstream, UpstreamError};

use super::archives::BINARY;
use super::{names, upstream};

/// A fresh folder under Cargo's temporary directory for integration tests, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "plugin-upstream-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn write(&self, relative: &str, contents: &[u8]) {
        let path = self.0.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `plugins/` as the local directory, beside `outside/` which must stay out of reach.
fn layout() -> Scratch {
    let scratch = Scratch::new();
    scratch.write("plugins/geo/plugin.json", br#"{"name": "Local geo"}"#);
    scratch.write(
        "plugins/geo/index.ts",
        b"export function processEvent(e) { return e }",
    );
    scratch.write("plugins/geo/src/util.ts", b"export const x = 1");
    scratch.write("plugins/geo/logo.png", BINARY);
    scratch.write(
        "plugins/geo/node_modules/dep/index.js",
        b"module.exports = 1",
    );
    scratch.write("outside/secret/plugin.json", br#"{"name": "Secret"}"#);
    scratch
}

fn local_upstream(scratch: &Scratch) -> adapters::HttpPluginUpstream {
    upstream(UpstreamSettings {
        local_dir: Some(scratch.0.join("plugins")),
        ..UpstreamSettings::default()
    })
}

fn invalid(result: Result<domain::plugin::PluginFiles, UpstreamError>) -> String {
    match result {
        Err(UpstreamError::InvalidArchive(message)) => message,
        other => panic!("expected InvalidArchive, got {other:?}"),
    }
}

#[tokio::test]
async fn local_plugins_are_refused_when_no_directory_is_configured() {
    let upstream = upstream(UpstreamSettings::default());

    let error = upstream.local("geo").await.unwrap_err();

    assert_eq!(
        error,
        UpstreamError::NotConfigured(
            "Local plugins are disabled: BURROW_PLUGINS_LOCAL_DIR is not set".into()
        )
    );
}

#[tokio::test]
async fn a_local_plugin_gives_its_text_files_recursively_leaving_out_binaries_links_and_node_modules()
 {
    let scratch = layout();
    std::os::unix::fs::symlink(
        scratch.0.join("outside/secret/plugin.json"),
        scratch.0.join("plugins/geo/linked.json"),
    )
    .unwrap();
    let upstream = local_upstream(&scratch);

    let files = upstream.local("geo").await.unwrap();

    assert_eq!(names(&files), ["index.ts", "plugin.json", "src/util.ts"]);
    assert_eq!(files["plugin.json"], r#"{"name": "Local geo"}"#);
}

#[tokio::test]
async fn a_local_path_climbing_out_of_the_directory_is_refused() {
    let scratch = layout();
    let upstream = local_upstream(&scratch);
    let absolute = scratch.0.join("outside/secret");

    for path in [
        "../outside/secret",
        "geo/../../outside/secret",
        absolute.to_str().unwrap(),
    ] {
        let message = invalid(upstream.local(path).await);

        assert_eq!(
            message,
            format!("The local plugin {path} is outside the local plugins directory")
        );
    }
}

#[tokio::test]
async fn a_local_plugin_that_is_a_link_out_of_the_directory_is_refused() {
    let scratch = layout();
    std::os::unix::fs::symlink(
        scratch.0.join("outside/secret"),
        scratch.0.join("plugins/evil"),
    )
    .unwrap();
    let upstream = local_upstream(&scratch);

    let message = invalid(upstream.local("evil").await);

    assert_eq!(
        message,
        "The local plugin evil is outside the local plugins directory"
    );
}

#[tokio::test]
async fn a_missing_local_plugin_is_refused_by_name() {
    let scratch = layout();
    let upstream = local_upstream(&scratch);

    let message = invalid(upstream.local("nope").await);

    assert_eq!(
        message,
        "The local plugin nope does not exist in the local plugins directory"
    );
}

#[tokio::test]
async fn a_local_plugin_with_more_files_than_the_limit_is_refused() {
    let scratch = layout();
    let upstream = upstream(UpstreamSettings {
        local_dir: Some(scratch.0.join("plugins")),
        max_files: 3,
        ..UpstreamSettings::default()
    });

    let message = invalid(upstream.local("geo").await);

    assert_eq!(message, "The plugin has more than 3 files and folders");
}
