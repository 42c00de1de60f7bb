//! `HttpPluginUpstream`: GitHub, GitLab, the npm registry and the repository listing over HTTP,
//! and the local plugins directory — with timeouts, size limits and no token ever shown.

mod archive;
mod http;
mod listing;
mod local;
mod settings;

use async_trait::async_trait;
use domain::plugin::{
    GitHubRef, PluginArchive, PluginFiles, PluginUpstream, PluginUrl, UpstreamError, UrlSource,
};
use serde_json::Value;
use url::Url;

use self::archive::read_archive;
use self::http::{Auth, Failure, Http};
use self::listing::ListingCache;
pub use self::settings::UpstreamSettings;

/// A plugin file's bytes as source text: UTF-8 without U+0000. Anything else is binary (an
/// image, a compiled bundle) and is left out, as git leaves out NUL-bearing files from diffs;
/// PostgreSQL's text could not hold the NUL anyway.
fn source_text(bytes: Vec<u8>) -> Option<String> {
    String::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

/// The `PluginUpstream` the server runs with: PostHog's requests to GitHub, GitLab and npm
/// (bases configurable, so a mirror or a test fake can stand in), archives read in memory
/// within the configured limits, `file:` plugins from one configured directory.
pub struct HttpPluginUpstream {
    settings: UpstreamSettings,
    http: Http,
    listing: ListingCache,
}

impl HttpPluginUpstream {
    /// Redirects are followed only to the origins of these configured bases.
    ///
    /// # Errors
    /// A base URL that is not `http(s)`, or an HTTP client that cannot be built (TLS setup).
    pub fn new(settings: UpstreamSettings) -> anyhow::Result<Self> {
        let bases = [
            ("github_api_url", Some(&settings.github_api_url)),
            ("github_url", Some(&settings.github_url)),
            ("github_codeload_url", Some(&settings.github_codeload_url)),
            ("gitlab_url", Some(&settings.gitlab_url)),
            ("npm_registry_url", settings.npm_registry_url.as_ref()),
            ("repository_url", settings.repository_url.as_ref()),
        ];
        let mut origins = Vec::with_capacity(bases.len());
        for (name, base) in bases {
            let Some(base) = base else { continue };
            if !matches!(base.scheme(), "http" | "https") {
                anyhow::bail!("{name} must be an http(s) URL, not {}", base.scheme());
            }
            origins.push(base.origin());
        }
        Ok(Self {
            http: Http::new(settings.timeout, origins)?,
            listing: ListingCache::new(settings.repository_ttl),
            settings,
        })
    }

    fn npm_registry(&self) -> Result<&Url, UpstreamError> {
        self.settings.npm_registry_url.as_ref().ok_or_else(|| {
            UpstreamError::NotConfigured(
                "npm packages cannot be installed: BURROW_PLUGINS_NPM_REGISTRY_URL is not set"
                    .into(),
            )
        })
    }

    /// GETs a JSON answer, failures worded as `{what}. Reason: {reason}`. The archive limit
    /// caps it too: no commit list, version or listing comes near it.
    async fn json(
        &self,
        url: Url,
        auth: Option<Auth<'_>>,
        what: &str,
    ) -> Result<Value, UpstreamError> {
        self.http
            .json(url, auth, self.settings.max_archive_bytes)
            .await
            .map_err(|failure| unavailable(what, failure))
    }

    /// Downloads an archive and reads its files off the async threads.
    async fn archive(
        &self,
        url: Url,
        auth: Option<Auth<'_>>,
        subdirectory: Option<String>,
        what: &str,
    ) -> Result<PluginArchive, UpstreamError> {
        let limit = self.settings.max_archive_bytes;
        let bytes = self
            .http
            .bytes(url, auth, limit)
            .await
            .map_err(|failure| match failure {
                Failure::TooLarge(limit) => UpstreamError::InvalidArchive(format!(
                    "The plugin archive is larger than {limit} bytes"
                )),
                failure => unavailable(what, failure),
            })?;
        let limits = self.settings.limits();
        tokio::task::spawn_blocking(move || {
            let files = read_archive(&bytes, subdirectory.as_deref(), limits)?;
            Ok(PluginArchive { bytes, files })
        })
        .await
        .map_err(|_| UpstreamError::InvalidArchive("The plugin archive could not be read".into()))?
    }
}

/// `{what}. Reason: {reason}`, PostHog's wording for an upstream failure.
fn unavailable(what: &str, failure: Failure) -> UpstreamError {
    let reason = match failure {
        Failure::Unavailable(reason) => reason,
        Failure::TooLarge(limit) => format!("the answer is larger than {limit} bytes"),
    };
    UpstreamError::Unavailable(format!("{what}. Reason: {reason}"))
}

/// `base` with `segments` appended, each percent-encoded as one segment (`.` and `..` are
/// dropped, so no name climbs out of the base's path).
fn endpoint<'a>(base: &Url, segments: impl IntoIterator<Item = &'a str>) -> Url {
    let mut url = base.clone();
    url.path_segments_mut()
        .expect("bases are checked to be http(s) in HttpPluginUpstream::new")
        .pop_if_empty()
        .extend(segments);
    url
}

/// The URL's own `private_token` before the configured token: PostHog's per-plugin override.
fn auth<'a>(
    scheme: &'static str,
    url: &'a PluginUrl,
    configured: Option<&'a String>,
) -> Option<Auth<'a>> {
    url.private_token()
        .or(configured.map(String::as_str))
        .filter(|token| !token.is_empty())
        .map(|token| Auth { scheme, token })
}

/// The newest commit's field `key` of a commit list (`sha` on GitHub, `id` on GitLab).
fn first_commit(commits: &Value, key: &str, what: &str) -> Result<String, UpstreamError> {
    commits
        .get(0)
        .and_then(|commit| commit.get(key))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            UpstreamError::Unavailable(format!(
                "{what}. Reason: Could not find a commit with a hash in the answer"
            ))
        })
}

fn not_remote() -> UpstreamError {
    UpstreamError::NotConfigured(
        "file: plugins are read from the local plugins directory, not from an upstream".into(),
    )
}

#[async_trait]
impl PluginUpstream for HttpPluginUpstream {
    async fn latest_tag(&self, url: &PluginUrl) -> Result<String, UpstreamError> {
        if let Some(tag) = url.pinned_tag() {
            return Ok(tag);
        }
        let settings = &self.settings;
        let commits = |endpoint, token, key| async move {
            let what = format!("Could not get latest commit for {}", url.display());
            let commits = self
                .json(endpoint, auth("Bearer", url, token), &what)
                .await?;
            first_commit(&commits, key, &what)
        };
        match &url.source {
            UrlSource::GitHub {
                user,
                repo,
                reference,
                path,
            } => {
                let branch = match reference {
                    Some(GitHubRef::Tree(branch)) => branch.as_str(),
                    _ => "",
                };
                let mut endpoint =
                    endpoint(&settings.github_api_url, ["repos", user, repo, "commits"]);
                endpoint
                    .query_pairs_mut()
                    .append_pair("sha", branch)
                    .append_pair("path", path.as_deref().unwrap_or_default());
                commits(endpoint, settings.github_token.as_ref(), "sha").await
            }
            UrlSource::GitLab { project, .. } => {
                let endpoint = endpoint(
                    &settings.gitlab_url,
                    ["api", "v4", "projects", project, "repository", "commits"],
                );
                commits(endpoint, settings.gitlab_token.as_ref(), "id").await
            }
            UrlSource::Npm { package, .. } => {
                let endpoint = endpoint(self.npm_registry()?, package.split('/').chain(["latest"]));
                let what = format!("Could not get latest version for {}", url.display());
                let auth = auth("Bearer", url, settings.npm_token.as_ref());
                let latest = self.json(endpoint, auth, &what).await?;
                latest
                    .get("version")
                    .and_then(Value::as_str)
                    .filter(|version| !version.is_empty())
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        UpstreamError::Unavailable(format!(
                            "{what}. Reason: the answer has no version"
                        ))
                    })
            }
            UrlSource::Local { .. } => Err(not_remote()),
        }
    }

    async fn download(&self, url: &PluginUrl, tag: &str) -> Result<PluginArchive, UpstreamError> {
        let settings = &self.settings;
        let (endpoint, auth, subdirectory, host) = match &url.source {
            UrlSource::GitHub {
                user, repo, path, ..
            } => {
                let file = format!("{tag}.zip");
                let segments = [user.as_str(), repo, "archive"];
                let endpoint = endpoint(
                    &settings.github_url,
                    segments.into_iter().chain(file.split('/')),
                );
                let auth = auth("token", url, settings.github_token.as_ref());
                (endpoint, auth, path.clone(), "GitHub")
            }
            UrlSource::GitLab { project, .. } => {
                let segments = ["api", "v4", "projects", project, "repository"];
                let mut endpoint = endpoint(
                    &settings.gitlab_url,
                    segments.into_iter().chain(["archive.zip"]),
                );
                endpoint.query_pairs_mut().append_pair("sha", tag);
                let auth = auth("Bearer", url, settings.gitlab_token.as_ref());
                (endpoint, auth, None, "GitLab")
            }
            UrlSource::Npm { package, .. } => {
                let name = package.rsplit('/').next().unwrap_or(package);
                let file = format!("{name}-{tag}.tgz");
                let endpoint = endpoint(
                    self.npm_registry()?,
                    package.split('/').chain(["-", file.as_str()]),
                );
                let auth = auth("Bearer", url, settings.npm_token.as_ref());
                (endpoint, auth, None, "npm")
            }
            UrlSource::Local { .. } => return Err(not_remote()),
        };
        let what = format!(
            "Could not download the archive of {} from {host}",
            url.display()
        );
        self.archive(endpoint, auth, subdirectory, &what).await
    }

    async fn local(&self, path: &str) -> Result<PluginFiles, UpstreamError> {
        let root = self.settings.local_dir.clone().ok_or_else(|| {
            UpstreamError::NotConfigured(
                "Local plugins are disabled: BURROW_PLUGINS_LOCAL_DIR is not set".into(),
            )
        })?;
        let path = path.to_owned();
        let limits = self.settings.limits();
        tokio::task::spawn_blocking(move || local::read_plugin_dir(&root, &path, limits))
            .await
            .map_err(|_| UpstreamError::Unavailable("The local plugin could not be read".into()))?
    }

    async fn repository(&self) -> Result<Value, UpstreamError> {
        let Some(url) = &self.settings.repository_url else {
            return Ok(Value::Array(Vec::new()));
        };
        let what = "Could not fetch the plugin repository";
        self.listing
            .get(async {
                let listing = self.json(url.clone(), None, what).await?;
                if listing.is_array() {
                    Ok(listing)
                } else {
                    Err(UpstreamError::Unavailable(format!(
                        "{what}. Reason: the answer is not a JSON array"
                    )))
                }
            })
            .await
    }
}
