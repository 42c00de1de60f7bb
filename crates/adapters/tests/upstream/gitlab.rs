//! GitLab: the newest commit and the archive through the v4 API, the project path encoded as one
//! id.

use adapters::UpstreamSettings;
use domain::plugin::PluginUpstream;
use serde_json::json;

use super::archives::github_zip;
use super::fake::{Fake, Reply};
use super::{names, settings, upstream, url};

#[tokio::test]
async fn the_latest_gitlab_tag_is_the_newest_commit_id_of_the_encoded_project() {
    let fake = Fake::start().await;
    fake.route(
        "/api/v4/projects/group%2Fsub%2Fproject/repository/commits",
        Reply::json(json!([{"id": "c0ffee"}, {"id": "older"}])),
    );
    let upstream = upstream(UpstreamSettings {
        gitlab_token: Some("gl-secret".into()),
        ..settings(&fake)
    });

    let tag = upstream
        .latest_tag(&url("https://gitlab.com/group/sub/project"))
        .await
        .unwrap();

    assert_eq!(tag, "c0ffee");
    assert_eq!(
        fake.requests()[0].authorization.as_deref(),
        Some("Bearer gl-secret")
    );
}

#[tokio::test]
async fn a_gitlab_download_asks_for_the_archive_at_the_tag_and_reads_it() {
    let fake = Fake::start().await;
    let zip = github_zip(
        "project-master-c0ffee",
        &[
            ("plugin.json", br#"{"name": "GitLab plugin"}"#),
            ("src/index.ts", b"export function onEvent() {}"),
        ],
    );
    fake.route(
        "/api/v4/projects/group%2Fproject/repository/archive.zip?sha=master",
        Reply::bytes(zip.clone()),
    );
    let upstream = upstream(UpstreamSettings {
        gitlab_token: Some("gl-secret".into()),
        ..settings(&fake)
    });

    let archive = upstream
        .download(
            &url("https://gitlab.com/group/project/-/tree/master"),
            "master",
        )
        .await
        .unwrap();

    assert_eq!(archive.bytes, zip);
    assert_eq!(names(&archive.files), ["plugin.json", "src/index.ts"]);
    assert_eq!(
        fake.requests()[0].authorization.as_deref(),
        Some("Bearer gl-secret")
    );
}

#[tokio::test]
async fn a_gitlab_private_token_is_sent_instead_of_the_configured_token() {
    let fake = Fake::start().await;
    fake.route(
        "/api/v4/projects/g%2Fp/repository/commits",
        Reply::json(json!([{"id": "abc"}])),
    );
    let upstream = upstream(UpstreamSettings {
        gitlab_token: Some("gl-secret".into()),
        ..settings(&fake)
    });

    upstream
        .latest_tag(&url("https://gitlab.com/g/p?private_token=own-secret"))
        .await
        .unwrap();

    assert_eq!(
        fake.requests()[0].authorization.as_deref(),
        Some("Bearer own-secret")
    );
}
