//! npm: the registry's `latest` version and the package tarball, read from the real GeoIP
//! plugin's tarball.

use adapters::UpstreamSettings;
use domain::plugin::{PluginUpstream, UpstreamError};
use serde_json::{Value, json};

use super::fake::{Fake, Reply};
use super::{settings, upstream, url};

const GEOIP_TGZ: &[u8] = include_bytes!("../data/posthog-geoip-plugin-0.0.7.tgz");

#[tokio::test]
async fn the_latest_npm_tag_is_the_registrys_latest_version() {
    let fake = Fake::start().await;
    fake.route(
        "/npm/posthog-geoip-plugin/latest",
        Reply::json(json!({"name": "posthog-geoip-plugin", "version": "0.0.7"})),
    );
    let upstream = upstream(UpstreamSettings {
        npm_token: Some("npm-secret".into()),
        ..settings(&fake)
    });

    let tag = upstream
        .latest_tag(&url("https://www.npmjs.com/package/posthog-geoip-plugin"))
        .await
        .unwrap();

    assert_eq!(tag, "0.0.7");
    assert_eq!(
        fake.requests()[0].authorization.as_deref(),
        Some("Bearer npm-secret")
    );
}

#[tokio::test]
async fn an_npm_download_reads_the_real_geoip_tarball_under_package() {
    let fake = Fake::start().await;
    fake.route(
        "/npm/posthog-geoip-plugin/-/posthog-geoip-plugin-0.0.7.tgz",
        Reply::bytes(GEOIP_TGZ.to_vec()),
    );
    let upstream = upstream(UpstreamSettings {
        npm_token: Some("npm-secret".into()),
        ..settings(&fake)
    });

    let archive = upstream
        .download(
            &url("https://www.npmjs.com/package/posthog-geoip-plugin"),
            "0.0.7",
        )
        .await
        .unwrap();

    assert_eq!(archive.bytes, GEOIP_TGZ);
    let manifest: Value = serde_json::from_str(&archive.files["plugin.json"]).unwrap();
    assert_eq!(manifest["name"], "GeoIP");
    assert!(archive.files["index.ts"].contains("processEvent"));
    assert!(archive.files.contains_key(".github/workflows/ci.yml"));
    assert!(
        !archive.files.contains_key("logo.png"),
        "binary files are left out"
    );
    assert!(!archive.files.contains_key("GeoLite2-City-Test.mmdb"));
    assert!(
        archive
            .files
            .keys()
            .all(|name| !name.starts_with("package/"))
    );
    assert_eq!(
        fake.requests()[0].authorization.as_deref(),
        Some("Bearer npm-secret")
    );
}

#[tokio::test]
async fn a_scoped_npm_package_is_fetched_under_its_scope_with_its_bare_name_in_the_tarball() {
    let fake = Fake::start().await;
    fake.route(
        "/npm/@posthog/geoip-plugin/latest",
        Reply::json(json!({"version": "0.0.7"})),
    );
    fake.route(
        "/npm/@posthog/geoip-plugin/-/geoip-plugin-0.0.7.tgz",
        Reply::bytes(GEOIP_TGZ.to_vec()),
    );
    let upstream = upstream(settings(&fake));
    let scoped = url("https://www.npmjs.com/package/@posthog/geoip-plugin");

    let tag = upstream.latest_tag(&scoped).await.unwrap();
    let archive = upstream.download(&scoped, &tag).await.unwrap();

    assert!(archive.files.contains_key("plugin.json"));
    assert_eq!(fake.requests()[1].authorization, None);
}

#[tokio::test]
async fn npm_urls_are_refused_when_no_registry_is_configured() {
    let fake = Fake::start().await;
    let upstream = upstream(UpstreamSettings {
        npm_registry_url: None,
        ..settings(&fake)
    });
    let package = url("https://www.npmjs.com/package/posthog-geoip-plugin");

    let latest = upstream.latest_tag(&package).await.unwrap_err();
    let download = upstream.download(&package, "0.0.7").await.unwrap_err();

    let expected = UpstreamError::NotConfigured(
        "npm packages cannot be installed: BURROW_PLUGINS_NPM_REGISTRY_URL is not set".into(),
    );
    assert_eq!((latest, download), (expected.clone(), expected));
    assert_eq!(fake.requests(), vec![]);
}
