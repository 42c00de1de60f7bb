//! The repository listing: `[]` unless configured, cached for its TTL, served stale when its
//! host fails.

use std::time::Duration;

use adapters::UpstreamSettings;
use domain::plugin::{PluginUpstream, UpstreamError};
use serde_json::{Value, json};

use super::fake::{Fake, Reply};
use super::{settings, upstream};

const LISTING: &str = "/plugins.json";

fn listing() -> Value {
    json!([{
        "name": "helloworldplugin",
        "url": "https://github.com/posthog/helloworldplugin",
        "description": "Greet the World and Foo a Bar",
        "icon": "https://raw.githubusercontent.com/posthog/helloworldplugin/main/logo.png",
        "verified": true,
        "maintainer": "community"
    }])
}

#[tokio::test]
async fn the_listing_is_empty_when_no_repository_is_configured() {
    let upstream = upstream(UpstreamSettings::default());

    assert_eq!(upstream.repository().await.unwrap(), json!([]));
}

#[tokio::test]
async fn the_listing_is_fetched_once_and_served_from_memory_within_its_ttl() {
    let fake = Fake::start().await;
    fake.route(LISTING, Reply::json(listing()));
    let upstream = upstream(settings(&fake));

    let first = upstream.repository().await.unwrap();
    let second = upstream.repository().await.unwrap();

    assert_eq!((first, second), (listing(), listing()));
    assert_eq!(fake.hits(LISTING), 1);
}

#[tokio::test]
async fn the_listing_is_fetched_again_once_its_ttl_has_passed() {
    let fake = Fake::start().await;
    fake.route(LISTING, Reply::json(json!([])));
    let upstream = upstream(UpstreamSettings {
        repository_ttl: Duration::ZERO,
        ..settings(&fake)
    });

    assert_eq!(upstream.repository().await.unwrap(), json!([]));
    fake.route(LISTING, Reply::json(listing()));
    assert_eq!(upstream.repository().await.unwrap(), listing());
    assert_eq!(fake.hits(LISTING), 2);
}

#[tokio::test]
async fn a_stale_listing_is_served_when_its_host_starts_failing() {
    let fake = Fake::start().await;
    fake.route(LISTING, Reply::json(listing()));
    let upstream = upstream(UpstreamSettings {
        repository_ttl: Duration::ZERO,
        ..settings(&fake)
    });

    let fresh = upstream.repository().await.unwrap();
    fake.route(LISTING, Reply::status(500, json!({"message": "down"})));
    let stale = upstream.repository().await.unwrap();

    assert_eq!((fresh, stale), (listing(), listing()));
    assert_eq!(fake.hits(LISTING), 2);
}

#[tokio::test]
async fn a_failing_host_with_nothing_cached_is_unavailable() {
    let fake = Fake::start().await;
    fake.route(LISTING, Reply::status(503, json!({})));
    let upstream = upstream(settings(&fake));

    let error = upstream.repository().await.unwrap_err();

    assert_eq!(
        error,
        UpstreamError::Unavailable(
            "Could not fetch the plugin repository. Reason: HTTP 503 Service Unavailable".into()
        )
    );
}

#[tokio::test]
async fn a_listing_that_is_not_an_array_is_unavailable() {
    let fake = Fake::start().await;
    fake.route(LISTING, Reply::json(json!({"plugins": []})));
    let upstream = upstream(settings(&fake));

    let error = upstream.repository().await.unwrap_err();

    assert_eq!(
        error,
        UpstreamError::Unavailable(
            "Could not fetch the plugin repository. Reason: the answer is not a JSON array".into()
        )
    );
}
