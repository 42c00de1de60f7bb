//! `HttpPluginUpstream` against a fake GitHub, GitLab, npm registry and repository host on a
//! loopback socket, and against a local plugins directory: requests, tokens, limits, failures.

mod archives;
mod failures;
mod fake;
mod github;
mod gitlab;
mod hostile_archives;
mod hostile_redirects;
mod limits;
mod local;
mod npm;
mod repository;

use std::time::Duration;

use adapters::{HttpPluginUpstream, UpstreamSettings};
use domain::plugin::PluginUrl;

use self::fake::Fake;

/// Every upstream pointed at `fake`: GitHub and GitLab at its bare origin, npm under `/npm/`.
fn settings(fake: &Fake) -> UpstreamSettings {
    UpstreamSettings {
        github_api_url: fake.url(),
        github_url: fake.url(),
        gitlab_url: fake.url(),
        npm_registry_url: Some(fake.url_at("/npm/")),
        repository_url: Some(fake.url_at("/plugins.json")),
        timeout: Duration::from_secs(5),
        ..UpstreamSettings::default()
    }
}

fn upstream(settings: UpstreamSettings) -> HttpPluginUpstream {
    HttpPluginUpstream::new(settings).expect("the upstream builds")
}

fn url(raw: &str) -> PluginUrl {
    PluginUrl::parse(raw).expect("a valid plugin URL")
}

/// The keys of a file map, for comparing which files were kept.
fn names(files: &domain::plugin::PluginFiles) -> Vec<&str> {
    files.keys().map(String::as_str).collect()
}
