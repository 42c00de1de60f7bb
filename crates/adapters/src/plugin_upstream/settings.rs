//! `UpstreamSettings`: which hosts plugin code is fetched from, with which tokens, and how much
//! of it is accepted.

use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use super::archive::Limits;

/// Where plugin code comes from and how much of it is accepted. The server maps its
/// `BURROW_PLUGINS_*`, `GITHUB_TOKEN`, `GITLAB_TOKEN` and `NPM_TOKEN` variables onto it; every
/// base URL may be a bare origin (`http://127.0.0.1:9000`) or end in a path prefix. An upstream's
/// redirect is followed only to one of these base URLs' origins (scheme, host and port). Not
/// `Debug`, so no token can reach a log.
#[derive(Clone)]
pub struct UpstreamSettings {
    /// GitHub's REST API, asked for a branch's newest commit.
    pub github_api_url: Url,
    /// GitHub's web host, serving `/{user}/{repo}/archive/{ref}.zip`.
    pub github_url: Url,
    /// Where GitHub's web host sends archive downloads, by a redirect. Only ever reached that
    /// way: redirects are followed to the origins of these base URLs alone.
    pub github_codeload_url: Url,
    /// GitLab's host; its API lives under `/api/v4`.
    pub gitlab_url: Url,
    /// An npm registry. Unset: npm URLs are refused, as no public registry is assumed.
    pub npm_registry_url: Option<Url>,
    /// A JSON array served as `GET /plugins/repository`. Unset: the listing is `[]`.
    pub repository_url: Option<Url>,
    /// Sent to GitHub unless the plugin URL carries its own `private_token`; lifts the anonymous
    /// limit of 60 requests an hour and opens private repositories.
    pub github_token: Option<String>,
    /// Sent to GitLab unless the plugin URL carries its own `private_token`.
    pub gitlab_token: Option<String>,
    /// Sent to the npm registry unless the plugin URL carries its own `private_token`.
    pub npm_token: Option<String>,
    /// The directory `file:` URLs are resolved in. Unset: `file:` URLs are refused, so a client
    /// cannot make the server read its own disk.
    pub local_dir: Option<PathBuf>,
    /// Connecting and the whole exchange, per request: an upstream that hangs fails the request
    /// instead of holding it.
    pub timeout: Duration,
    /// The largest archive downloaded; bigger bodies are refused as they stream in.
    pub max_archive_bytes: u64,
    /// The most entries (files and folders) an archive or local plugin may have.
    pub max_files: usize,
    /// The most bytes an archive may unpack to, counted while decompressing (a zip bomb stops
    /// here).
    pub max_unpacked_bytes: u64,
    /// The largest single file kept as text in a plugin's files; larger ones are left out, as
    /// they are not source anyone edits.
    pub max_file_bytes: u64,
    /// How long a fetched repository listing is served before it is fetched again.
    pub repository_ttl: Duration,
}

impl Default for UpstreamSettings {
    fn default() -> Self {
        let url = |raw: &str| Url::parse(raw).expect("a static URL parses");
        Self {
            github_api_url: url("https://api.github.com"),
            github_url: url("https://github.com"),
            github_codeload_url: url("https://codeload.github.com"),
            gitlab_url: url("https://gitlab.com"),
            npm_registry_url: None,
            repository_url: None,
            github_token: None,
            gitlab_token: None,
            npm_token: None,
            local_dir: None,
            timeout: Duration::from_secs(10),
            max_archive_bytes: 20 * 1024 * 1024,
            max_files: 1000,
            max_unpacked_bytes: 50 * 1024 * 1024,
            max_file_bytes: 1024 * 1024,
            repository_ttl: Duration::from_secs(10 * 60),
        }
    }
}

impl UpstreamSettings {
    pub(super) fn limits(&self) -> Limits {
        Limits {
            max_files: self.max_files,
            max_unpacked_bytes: self.max_unpacked_bytes,
            max_file_bytes: self.max_file_bytes,
        }
    }
}
