//! Upstreams that redirect: a redirect is followed only to the origin (scheme, host and port) of
//! a configured upstream, so neither a plugin URL nor an upstream's answer can send Burrow, or a
//! token, to a host the operator did not choose.

use adapters::UpstreamSettings;
use domain::plugin::{PluginUpstream, UpstreamError};

use super::archives::github_zip;
use super::fake::{Fake, Reply};
use super::{names, settings, upstream, url};

const ARCHIVE: &str = "/a/b/archive/v1.zip";

fn plugin_zip() -> Vec<u8> {
    github_zip("b-v1", &[("plugin.json", br#"{"name": "B"}"#)])
}

#[tokio::test]
async fn a_redirect_to_a_loopback_port_that_is_not_configured_is_refused_with_a_reason() {
    let fake = Fake::start().await;
    let elsewhere = Fake::start().await;
    elsewhere.route("/b.zip", Reply::bytes(plugin_zip()));
    fake.route(ARCHIVE, Reply::redirect(&elsewhere.url_at("/b.zip")));
    let upstream = upstream(UpstreamSettings {
        github_token: Some("gh-secret".into()),
        ..settings(&fake)
    });

    let error = upstream
        .download(&url("https://github.com/a/b"), "v1")
        .await
        .unwrap_err();

    let UpstreamError::Unavailable(reason) = error else {
        panic!("expected Unavailable, got {error:?}");
    };
    assert_eq!(
        reason,
        "Could not download the archive of https://github.com/a/b from GitHub. \
         Reason: the upstream redirected to a host that is not allowed"
    );
    assert!(elsewhere.requests().is_empty());
}

#[tokio::test]
async fn a_redirect_within_a_configured_origin_is_followed() {
    let fake = Fake::start().await;
    // What GitHub does: the web host sends the download to codeload's.
    let codeload = Fake::start().await;
    codeload.route("/a/b/zip/v1", Reply::bytes(plugin_zip()));
    fake.route(ARCHIVE, Reply::redirect(&fake.url_at("/moved.zip")));
    fake.route(
        "/moved.zip",
        Reply::redirect(&codeload.url_at("/a/b/zip/v1")),
    );
    let upstream = upstream(UpstreamSettings {
        github_codeload_url: codeload.url(),
        ..settings(&fake)
    });

    let archive = upstream
        .download(&url("https://github.com/a/b"), "v1")
        .await
        .unwrap();

    assert_eq!(names(&archive.files), ["plugin.json"]);
    assert_eq!(codeload.hits("/a/b/zip/v1"), 1);
}

#[tokio::test]
async fn a_redirect_loop_within_the_configured_origin_stops_as_too_many_redirects() {
    let fake = Fake::start().await;
    fake.route(ARCHIVE, Reply::redirect(&fake.url_at(ARCHIVE)));
    let upstream = upstream(settings(&fake));

    let error = upstream
        .download(&url("https://github.com/a/b"), "v1")
        .await
        .unwrap_err();

    assert!(
        matches!(&error, UpstreamError::Unavailable(reason) if reason.ends_with("Reason: too many redirects")),
        "{error:?}"
    );
    assert_eq!(fake.hits(ARCHIVE), 11);
}
