//! GitHub: the newest commit from the REST API, archives from the web host, tokens and
//! subdirectories.

use adapters::UpstreamSettings;
use domain::plugin::PluginUpstream;
use serde_json::json;

use super::archives::{BINARY, github_zip};
use super::fake::{Fake, Reply};
use super::{names, settings, upstream, url};

const SHA: &str = "6f9c2b4d6a1e4c7b9e0d2f3a4b5c6d7e8f9a0b1c";
const OLDER: &str = "0000000000000000000000000000000000000001";

fn hello_zip() -> Vec<u8> {
    github_zip(
        &format!("helloworldplugin-{SHA}"),
        &[
            ("plugin.json", br#"{"name": "Hello World"}"#),
            ("index.js", b"export function processEvent(e) { return e }"),
            ("logo.png", BINARY),
            ("plugins/geo/plugin.json", br#"{"name": "Geo"}"#),
            ("plugins/geo/index.ts", b"export const geo = 1"),
        ],
    )
}

#[tokio::test]
async fn the_latest_github_tag_is_the_newest_commit_asked_with_the_configured_bearer_token() {
    let fake = Fake::start().await;
    fake.route(
        "/repos/PostHog/helloworldplugin/commits?sha=&path=",
        Reply::json(json!([{"sha": SHA}, {"sha": OLDER}])),
    );
    let upstream = upstream(UpstreamSettings {
        github_token: Some("gh-secret".into()),
        ..settings(&fake)
    });

    let tag = upstream
        .latest_tag(&url("https://github.com/PostHog/helloworldplugin"))
        .await
        .unwrap();

    assert_eq!(tag, SHA);
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].authorization.as_deref(),
        Some("Bearer gh-secret")
    );
}

#[tokio::test]
async fn the_latest_tag_of_a_github_branch_folder_asks_for_that_branch_and_path_without_a_token() {
    let fake = Fake::start().await;
    fake.route(
        "/repos/a/b/commits?sha=main&path=plugins%2Fgeo",
        Reply::json(json!([{"sha": SHA}])),
    );
    let upstream = upstream(settings(&fake));

    let tag = upstream
        .latest_tag(&url("https://github.com/a/b/tree/main/plugins/geo"))
        .await
        .unwrap();

    assert_eq!(tag, SHA);
    assert_eq!(fake.requests()[0].authorization, None);
}

#[tokio::test]
async fn a_pinned_github_url_reports_its_own_tag_without_asking_github() {
    let fake = Fake::start().await;
    let upstream = upstream(settings(&fake));

    let release = upstream
        .latest_tag(&url("https://github.com/a/b/releases/tag/v1.2.0"))
        .await
        .unwrap();
    let commit = upstream
        .latest_tag(&url(&format!("https://github.com/a/b/commit/{SHA}")))
        .await
        .unwrap();

    assert_eq!(
        (release.as_str(), commit.as_str()),
        ("refs/tags/v1.2.0", SHA)
    );
    assert_eq!(fake.requests(), vec![]);
}

#[tokio::test]
async fn a_github_download_reads_the_text_files_under_the_root_folder_sending_the_token() {
    let fake = Fake::start().await;
    let zip = hello_zip();
    fake.route(
        &format!("/PostHog/helloworldplugin/archive/{SHA}.zip"),
        Reply::bytes(zip.clone()),
    );
    let upstream = upstream(UpstreamSettings {
        github_token: Some("gh-secret".into()),
        ..settings(&fake)
    });

    let archive = upstream
        .download(&url("https://github.com/PostHog/helloworldplugin"), SHA)
        .await
        .unwrap();

    assert_eq!(archive.bytes, zip);
    assert_eq!(
        names(&archive.files),
        [
            "index.js",
            "plugin.json",
            "plugins/geo/index.ts",
            "plugins/geo/plugin.json"
        ]
    );
    assert_eq!(archive.files["plugin.json"], r#"{"name": "Hello World"}"#);
    assert_eq!(
        fake.requests()[0].authorization.as_deref(),
        Some("token gh-secret")
    );
}

#[tokio::test]
async fn a_github_download_without_any_token_sends_no_authorization_header() {
    let fake = Fake::start().await;
    fake.route(
        &format!("/PostHog/helloworldplugin/archive/{SHA}.zip"),
        Reply::bytes(hello_zip()),
    );
    let upstream = upstream(settings(&fake));

    let archive = upstream
        .download(&url("https://github.com/PostHog/helloworldplugin"), SHA)
        .await
        .unwrap();

    assert!(archive.files.contains_key("plugin.json"));
    assert_eq!(fake.requests()[0].authorization, None);
}

#[tokio::test]
async fn a_github_url_with_a_folder_makes_that_folder_the_plugin_root() {
    let fake = Fake::start().await;
    fake.route(
        &format!("/PostHog/helloworldplugin/archive/{SHA}.zip"),
        Reply::bytes(hello_zip()),
    );
    let upstream = upstream(settings(&fake));

    let archive = upstream
        .download(
            &url(&format!(
                "https://github.com/PostHog/helloworldplugin/tree/{SHA}/plugins/geo"
            )),
            SHA,
        )
        .await
        .unwrap();

    assert_eq!(names(&archive.files), ["index.ts", "plugin.json"]);
    assert_eq!(archive.files["plugin.json"], r#"{"name": "Geo"}"#);
}

#[tokio::test]
async fn a_release_is_downloaded_from_its_refs_tags_archive() {
    let fake = Fake::start().await;
    fake.route(
        "/a/b/archive/refs/tags/v1.2.0.zip",
        Reply::bytes(github_zip("b-1.2.0", &[("plugin.json", b"{}")])),
    );
    let upstream = upstream(settings(&fake));

    let archive = upstream
        .download(
            &url("https://github.com/a/b/releases/tag/v1.2.0"),
            "refs/tags/v1.2.0",
        )
        .await
        .unwrap();

    assert_eq!(names(&archive.files), ["plugin.json"]);
}

#[tokio::test]
async fn a_private_token_in_the_url_is_sent_instead_of_the_configured_token() {
    let fake = Fake::start().await;
    fake.route(
        "/repos/PostHog/helloworldplugin/commits?sha=&path=",
        Reply::json(json!([{"sha": SHA}])),
    );
    fake.route(
        &format!("/PostHog/helloworldplugin/archive/{SHA}.zip"),
        Reply::bytes(hello_zip()),
    );
    let upstream = upstream(UpstreamSettings {
        github_token: Some("gh-secret".into()),
        ..settings(&fake)
    });
    let private = url("https://github.com/PostHog/helloworldplugin?private_token=own-secret");

    let tag = upstream.latest_tag(&private).await.unwrap();
    upstream.download(&private, &tag).await.unwrap();

    let sent: Vec<_> = fake
        .requests()
        .into_iter()
        .map(|request| (request.target, request.authorization))
        .collect();
    assert_eq!(
        sent,
        [
            (
                "/repos/PostHog/helloworldplugin/commits?sha=&path=".to_owned(),
                Some("Bearer own-secret".to_owned())
            ),
            (
                format!("/PostHog/helloworldplugin/archive/{SHA}.zip"),
                Some("token own-secret".to_owned())
            ),
        ]
    );
}
