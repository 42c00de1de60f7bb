//! Upstreams that fail: error statuses, rate limits, silence, closed ports and odd answers all
//! become `Unavailable` with a reason, and no message repeats a token.

use std::time::{Duration, Instant};

use adapters::UpstreamSettings;
use domain::plugin::{PluginUpstream, UpstreamError};
use serde_json::json;

use super::fake::{Fake, Reply};
use super::{settings, upstream, url};

const COMMITS: &str = "/repos/a/b/commits?sha=&path=";

fn unavailable(error: UpstreamError) -> String {
    match error {
        UpstreamError::Unavailable(message) => message,
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn an_upstream_404_is_unavailable_naming_the_url_and_the_status() {
    let fake = Fake::start().await;
    let upstream = upstream(settings(&fake));

    let error = upstream
        .latest_tag(&url("https://github.com/a/b"))
        .await
        .unwrap_err();

    assert_eq!(
        unavailable(error),
        "Could not get latest commit for https://github.com/a/b. Reason: HTTP 404 Not Found: Not Found"
    );
}

#[tokio::test]
async fn a_github_rate_limit_is_unavailable_with_githubs_own_message() {
    let fake = Fake::start().await;
    fake.route(
        COMMITS,
        Reply::status(
            403,
            json!({"message": "API rate limit exceeded for 127.0.0.1.", "documentation_url": "x"}),
        ),
    );
    let upstream = upstream(settings(&fake));

    let error = upstream
        .latest_tag(&url("https://github.com/a/b"))
        .await
        .unwrap_err();

    assert_eq!(
        unavailable(error),
        "Could not get latest commit for https://github.com/a/b. \
         Reason: HTTP 403 Forbidden: API rate limit exceeded for 127.0.0.1."
    );
}

#[tokio::test]
async fn a_429_without_a_message_is_reported_as_a_rate_limit() {
    let fake = Fake::start().await;
    fake.route(
        "/api/v4/projects/g%2Fp/repository/commits",
        Reply::status(429, json!({})),
    );
    let upstream = upstream(settings(&fake));

    let error = upstream
        .latest_tag(&url("https://gitlab.com/g/p"))
        .await
        .unwrap_err();

    assert_eq!(
        unavailable(error),
        "Could not get latest commit for https://gitlab.com/g/p. \
         Reason: HTTP 429 Too Many Requests (rate limited)"
    );
}

#[tokio::test]
async fn an_upstream_500_on_download_is_unavailable() {
    let fake = Fake::start().await;
    fake.route("/a/b/archive/abc.zip", Reply::status(500, json!("boom")));
    let upstream = upstream(settings(&fake));

    let error = upstream
        .download(&url("https://github.com/a/b"), "abc")
        .await
        .unwrap_err();

    assert_eq!(
        unavailable(error),
        "Could not download the archive of https://github.com/a/b from GitHub. \
         Reason: HTTP 500 Internal Server Error"
    );
}

#[tokio::test]
async fn a_token_the_upstream_echoes_back_is_blanked_out_of_the_message() {
    let fake = Fake::start().await;
    fake.route(
        COMMITS,
        Reply::status(401, json!({"message": "Bad credentials: own-secret"})),
    );
    let upstream = upstream(UpstreamSettings {
        github_token: Some("gh-secret".into()),
        ..settings(&fake)
    });

    let error = upstream
        .latest_tag(&url("https://github.com/a/b?private_token=own-secret"))
        .await
        .unwrap_err();

    let message = unavailable(error);
    assert_eq!(
        message,
        "Could not get latest commit for https://github.com/a/b. \
         Reason: HTTP 401 Unauthorized: Bad credentials: ***"
    );
}

#[tokio::test]
async fn a_silent_upstream_fails_within_the_configured_timeout() {
    let fake = Fake::start().await;
    fake.route(
        COMMITS,
        Reply::json(json!([{"sha": "late"}])).delayed(Duration::from_secs(5)),
    );
    let upstream = upstream(UpstreamSettings {
        timeout: Duration::from_millis(300),
        ..settings(&fake)
    });

    let started = Instant::now();
    let error = upstream
        .latest_tag(&url("https://github.com/a/b"))
        .await
        .unwrap_err();

    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        unavailable(error),
        "Could not get latest commit for https://github.com/a/b. Reason: no answer within 300ms"
    );
}

#[tokio::test]
async fn an_unreachable_upstream_is_unavailable() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let base = url::Url::parse(&format!("http://{closed}")).unwrap();
    let upstream = upstream(UpstreamSettings {
        gitlab_url: base,
        ..UpstreamSettings::default()
    });

    let error = upstream
        .latest_tag(&url("https://gitlab.com/g/p"))
        .await
        .unwrap_err();

    assert_eq!(
        unavailable(error),
        "Could not get latest commit for https://gitlab.com/g/p. \
         Reason: the upstream could not be reached"
    );
}

#[tokio::test]
async fn an_empty_commit_list_or_an_answer_that_is_not_json_is_unavailable() {
    let fake = Fake::start().await;
    fake.route(COMMITS, Reply::json(json!([])));
    fake.route(
        "/npm/left-pad/latest",
        Reply::bytes(b"<html>maintenance</html>".to_vec()),
    );
    let upstream = upstream(settings(&fake));

    let commits = upstream
        .latest_tag(&url("https://github.com/a/b"))
        .await
        .unwrap_err();
    let npm = upstream
        .latest_tag(&url("https://www.npmjs.com/package/left-pad"))
        .await
        .unwrap_err();

    assert_eq!(
        unavailable(commits),
        "Could not get latest commit for https://github.com/a/b. \
         Reason: Could not find a commit with a hash in the answer"
    );
    assert_eq!(
        unavailable(npm),
        "Could not get latest version for https://www.npmjs.com/package/left-pad. \
         Reason: the answer is not JSON"
    );
}

#[tokio::test]
async fn a_local_url_has_no_upstream_tag_or_archive() {
    let fake = Fake::start().await;
    let upstream = upstream(settings(&fake));
    let local = url("file:plugins/geo");

    let latest = upstream.latest_tag(&local).await.unwrap_err();
    let download = upstream.download(&local, "x").await.unwrap_err();

    assert!(
        matches!(latest, UpstreamError::NotConfigured(_)),
        "{latest:?}"
    );
    assert!(
        matches!(download, UpstreamError::NotConfigured(_)),
        "{download:?}"
    );
    assert_eq!(fake.requests(), vec![]);
}
