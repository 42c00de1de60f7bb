//! `PluginUrl`: where a plugin's code comes from, in PostHog's URL grammar (GitHub, GitLab, npm,
//! `file:`), with the `?private_token=` kept apart so it is never shown or compared.

use std::fmt;
use std::sync::OnceLock;

use regex::Regex;

use crate::error::ValidationError;

/// PostHog's message for a URL of no known form (PostHog answers it with a 500; Burrow a 400).
pub const UNKNOWN_URL: &str = "Must be a GitHub/GitLab repository or npm package URL!";

/// Longest URL Burrow stores (PostHog's `url` column); PostHog answers a longer one with a 500.
pub const MAX_URL_CHARS: usize = 800;
/// Longest tag Burrow stores (PostHog's `tag` column), which bounds the ref a URL may pin.
pub const MAX_TAG_CHARS: usize = 200;

/// A parsed plugin URL: checked once on the way in, so adapters never re-parse the text.
///
/// `Debug` leaves the private token out, so a logged URL cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct PluginUrl {
    /// The URL as the client sent it, private token included: what is stored and re-fetched.
    raw: String,
    /// The URL without its query string: what responses show and uniqueness compares.
    display: String,
    /// Which upstream the URL names, and what it pins there.
    pub source: UrlSource,
    /// `private_token` from the query string, sent upstream instead of the configured token.
    private_token: Option<String>,
}

/// The upstream a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlSource {
    /// `https://github.com/{user}/{repo}[/(commit|tree|releases/tag)/{ref}[/{path}]]` or
    /// `…/archive/{ref}.zip|.tar.gz`. As in PostHog, a ref cannot hold a `/`: in
    /// `tree/feature/x` the branch is `feature` and `x` is the path.
    GitHub {
        user: String,
        repo: String,
        /// What the URL pins; `None` for a repository root (the default branch's newest commit).
        reference: Option<GitHubRef>,
        /// A subdirectory holding the plugin: the archive is read from there, and the newest
        /// commit is the newest one touching it.
        path: Option<String>,
    },
    /// `https://gitlab.com/{project}[/-/{kind}/{ref}/…]`, where `project` is the full path
    /// (`group/subgroup/name`) and `kind` is anything (`tree`, `commit`, `archive`, `blob`…).
    GitLab {
        /// Not encoded: the adapter encodes it as GitLab's API wants.
        project: String,
        /// The ref the URL names, used as is (a branch is not resolved to a commit, as in
        /// PostHog); `None` for a project root (its newest commit).
        reference: Option<String>,
    },
    /// `https://www.npmjs.com/package/{package}[/v/{version}]`, `package` maybe scoped
    /// (`@scope/name`).
    Npm {
        package: String,
        /// `None`: the registry's `latest` version.
        version: Option<String>,
    },
    /// `file:{path}`, relative to the configured local plugins directory.
    Local { path: String },
}

/// What a GitHub URL pins, by the word before the ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitHubRef {
    /// `commit/{sha}`: pinned to that commit.
    Commit(String),
    /// `tree/{ref}`: pinned when the ref is a commit sha (40 lowercase hex characters),
    /// otherwise a branch whose newest commit is looked up.
    Tree(String),
    /// `releases/tag/{tag}`: pinned to `refs/tags/{tag}`, which GitHub's archive URL accepts.
    ReleaseTag(String),
    /// `archive/{ref}.zip` or `.tar.gz`: pinned to that ref.
    Archive(String),
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex compiles"))
}

/// Whether `reference` is a full commit sha, as PostHog tests it (`^[a-f0-9]{40}$`).
fn is_commit_sha(reference: &str) -> bool {
    reference.len() == 40
        && reference
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl PluginUrl {
    /// Reads a URL the way PostHog does: the query string is split off (only `private_token`
    /// is kept from it), `/` trimmed from both ends, then GitHub, npm and GitLab forms are
    /// tried in that order; `file:` names a local plugin. Surrounding whitespace is dropped, as
    /// DRF's `CharField` drops it.
    ///
    /// # Errors
    /// With `attr: url`: `Must be a GitHub/GitLab repository or npm package URL!` for any other
    /// URL (PostHog answers a 500 there); DRF's `max_length` message for a URL over
    /// `MAX_URL_CHARS`; a message saying so for a pinned ref over `MAX_TAG_CHARS`.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let raw = raw.trim();
        if raw.chars().count() > MAX_URL_CHARS {
            return Err(ValidationError::too_long("url", MAX_URL_CHARS));
        }
        let (base, query) = raw
            .split_once('?')
            .map_or((raw, None), |(base, query)| (base, Some(query)));
        let source = parse_source(base.trim_matches('/'))
            .ok_or_else(|| ValidationError::invalid("url", UNKNOWN_URL))?;
        let url = Self {
            raw: raw.to_owned(),
            display: base.to_owned(),
            source,
            private_token: query.and_then(|query| query_value(query, "private_token")),
        };
        if url
            .pinned_tag()
            .is_some_and(|tag| tag.chars().count() > MAX_TAG_CHARS)
        {
            return Err(ValidationError::invalid(
                "url",
                format!("The version a URL pins must be at most {MAX_TAG_CHARS} characters."),
            ));
        }
        Ok(url)
    }

    /// The URL as sent, token included: what is stored, so upgrades can use the token again.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The URL without its query string (PostHog's `url.split("?")[0]`): what responses show,
    /// what uniqueness compares and what error messages may name.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The URL's own token, which upstream requests send instead of the configured one.
    pub fn private_token(&self) -> Option<&str> {
        self.private_token.as_deref()
    }

    /// The tag a URL pins, so no upstream needs asking (PostHog's `check_for_updates` table):
    /// a GitHub commit, archive ref or commit-sha tree; `refs/tags/X` for a GitHub release; an
    /// npm version; a GitLab ref. `None` for a GitHub or GitLab root, a GitHub branch or an
    /// unversioned npm package, which `PluginUpstream::latest_tag` resolves, and for `file:`.
    pub fn pinned_tag(&self) -> Option<String> {
        match &self.source {
            UrlSource::GitHub { reference, .. } => match reference.as_ref()? {
                GitHubRef::Commit(sha) | GitHubRef::Archive(sha) => Some(sha.clone()),
                GitHubRef::Tree(tree) => is_commit_sha(tree).then(|| tree.clone()),
                GitHubRef::ReleaseTag(tag) => Some(format!("refs/tags/{tag}")),
            },
            UrlSource::GitLab { reference, .. } => reference.clone(),
            UrlSource::Npm { version, .. } => version.clone(),
            UrlSource::Local { .. } => None,
        }
    }
}

impl fmt::Debug for PluginUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginUrl")
            .field("display", &self.display)
            .field("source", &self.source)
            .field(
                "private_token",
                &self.private_token.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

/// The first non-empty value of `key` in a query string, decoded as Python's `parse_qs` does.
fn query_value(query: &str, key: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .filter(|(name, _)| decode_query_component(name) == key)
        .map(|(_, value)| decode_query_component(value))
        .find(|value| !value.is_empty())
}

/// `+` as a space and `%XX` as a byte; a `%` not followed by two hex digits stays as it is.
fn decode_query_component(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let escaped = match (byte, bytes.get(index + 1), bytes.get(index + 2)) {
            (b'%', Some(&high), Some(&low)) => char::from(high)
                .to_digit(16)
                .zip(char::from(low).to_digit(16))
                .and_then(|(high, low)| u8::try_from(high * 16 + low).ok()),
            _ => None,
        };
        match (escaped, byte) {
            (Some(escaped), _) => {
                decoded.push(escaped);
                index += 3;
            }
            (None, b'+') => {
                decoded.push(b' ');
                index += 1;
            }
            (None, other) => {
                decoded.push(other);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

fn parse_source(url: &str) -> Option<UrlSource> {
    if let Some(path) = url.strip_prefix("file:") {
        return (!path.is_empty()).then(|| UrlSource::Local {
            path: path.to_owned(),
        });
    }
    parse_github(url)
        .or_else(|| parse_npm(url))
        .or_else(|| parse_gitlab(url))
}

/// PostHog's two GitHub regexes. The archive one is anchored here (PostHog's is not), so
/// `…/archive/v1.zipper` is refused rather than read as `v1`.
fn parse_github(url: &str) -> Option<UrlSource> {
    static GITHUB: OnceLock<Regex> = OnceLock::new();
    static GITHUB_ARCHIVE: OnceLock<Regex> = OnceLock::new();
    let github = regex(
        &GITHUB,
        r"^https?://(?:www\.)?github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/(commit|tree|releases/tag)/([A-Za-z0-9_.\-]+)/?([A-Za-z0-9_.\-/]+)?)?$",
    );
    if let Some(captures) = github.captures(url) {
        let reference = captures.get(4).map(|r| r.as_str().to_owned());
        let reference = match (captures.get(3).map(|kind| kind.as_str()), reference) {
            (Some("commit"), Some(r)) => Some(GitHubRef::Commit(r)),
            (Some("tree"), Some(r)) => Some(GitHubRef::Tree(r)),
            (Some(_), Some(r)) => Some(GitHubRef::ReleaseTag(r)),
            _ => None,
        };
        return Some(UrlSource::GitHub {
            user: captures[1].to_owned(),
            repo: captures[2].to_owned(),
            reference,
            path: captures
                .get(5)
                .map(|p| p.as_str().trim_matches('/').to_owned())
                .filter(|p| !p.is_empty()),
        });
    }
    let archive = regex(
        &GITHUB_ARCHIVE,
        r"^https?://(?:www\.)?github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/archive/([A-Za-z0-9_.\-/]+?)(?:\.zip|\.tar\.gz)$",
    );
    let captures = archive.captures(url)?;
    Some(UrlSource::GitHub {
        user: captures[1].to_owned(),
        repo: captures[2].to_owned(),
        reference: Some(GitHubRef::Archive(captures[3].to_owned())),
        path: None,
    })
}

/// PostHog's npm regex, except that a second path segment must be a scoped package's name
/// (`@scope/name`; an unscoped `a/b` is no npm package) and names may hold dots, as npm allows.
fn parse_npm(url: &str) -> Option<UrlSource> {
    static NPM: OnceLock<Regex> = OnceLock::new();
    let npm = regex(
        &NPM,
        r"^https?://(?:www\.)?npmjs\.com/package/((?:@[a-z0-9_.-]+/)?[a-z0-9_.-]+)(?:/v/([A-Za-z0-9_.+-]+))?$",
    );
    let captures = npm.captures(url)?;
    Some(UrlSource::Npm {
        package: captures[1].to_owned(),
        version: captures.get(2).map(|v| v.as_str().to_owned()),
    })
}

/// PostHog's GitLab regex and split on `/-/`; the ref is the segment after the kind. Refused,
/// where PostHog fails later: a project without a group, an empty path segment, and a `/-/`
/// with no ref after it.
fn parse_gitlab(url: &str) -> Option<UrlSource> {
    static GITLAB: OnceLock<Regex> = OnceLock::new();
    let gitlab = regex(
        &GITLAB,
        r"^https?://(?:www\.)?gitlab\.com/([A-Za-z0-9_.\-/]+)$",
    );
    let path = gitlab.captures(url)?.get(1)?.as_str();
    let (project, reference) = match path.split_once("/-/") {
        Some((project, rest)) => {
            let reference = rest.split('/').nth(1).filter(|r| !r.is_empty())?;
            (project, Some(reference.to_owned()))
        }
        None => (path, None),
    };
    let segments: Vec<&str> = project.split('/').collect();
    let well_formed = segments.len() >= 2
        && segments
            .iter()
            .all(|segment| !segment.is_empty() && *segment != "-");
    well_formed.then(|| UrlSource::GitLab {
        project: project.to_owned(),
        reference,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "6f9c2b4d6a1e4c7b9e0d2f3a4b5c6d7e8f9a0b1c";

    fn parsed(url: &str) -> PluginUrl {
        PluginUrl::parse(url).unwrap_or_else(|error| panic!("{url} refused: {error:?}"))
    }

    fn source(url: &str) -> UrlSource {
        parsed(url).source
    }

    fn github(
        user: &str,
        repo: &str,
        reference: Option<GitHubRef>,
        path: Option<&str>,
    ) -> UrlSource {
        UrlSource::GitHub {
            user: user.into(),
            repo: repo.into(),
            reference,
            path: path.map(Into::into),
        }
    }

    fn gitlab(project: &str, reference: Option<&str>) -> UrlSource {
        UrlSource::GitLab {
            project: project.into(),
            reference: reference.map(Into::into),
        }
    }

    fn npm(package: &str, version: Option<&str>) -> UrlSource {
        UrlSource::Npm {
            package: package.into(),
            version: version.map(Into::into),
        }
    }

    #[test]
    fn a_github_repository_root_parses_with_or_without_www_and_a_trailing_slash() {
        let root = github("PostHog", "helloworldplugin", None, None);
        for url in [
            "https://github.com/PostHog/helloworldplugin",
            "https://www.github.com/PostHog/helloworldplugin",
            "https://github.com/PostHog/helloworldplugin/",
            "http://github.com/PostHog/helloworldplugin",
        ] {
            assert_eq!(source(url), root, "{url}");
        }
        let url = parsed("https://github.com/PostHog/helloworldplugin/");
        assert_eq!(url.pinned_tag(), None);
        assert_eq!(
            url.display(),
            "https://github.com/PostHog/helloworldplugin/"
        );
    }

    #[test]
    fn a_github_commit_url_pins_its_commit() {
        let url = parsed(&format!(
            "https://github.com/PostHog/helloworldplugin/commit/{SHA}"
        ));
        assert_eq!(
            url.source,
            github(
                "PostHog",
                "helloworldplugin",
                Some(GitHubRef::Commit(SHA.into())),
                None
            )
        );
        assert_eq!(url.pinned_tag().as_deref(), Some(SHA));
    }

    #[test]
    fn a_github_branch_tree_is_resolved_upstream_by_its_branch_name() {
        let url = parsed("https://github.com/PostHog/helloworldplugin/tree/main");
        assert_eq!(
            url.source,
            github(
                "PostHog",
                "helloworldplugin",
                Some(GitHubRef::Tree("main".into())),
                None
            )
        );
        assert_eq!(url.pinned_tag(), None);
    }

    #[test]
    fn a_github_tree_at_a_commit_sha_pins_that_sha_but_an_uppercase_one_does_not() {
        let url = parsed(&format!("https://github.com/a/b/tree/{SHA}"));
        assert_eq!(
            url.source,
            github("a", "b", Some(GitHubRef::Tree(SHA.into())), None)
        );
        assert_eq!(url.pinned_tag().as_deref(), Some(SHA));
        let upper = SHA.to_uppercase();
        let url = parsed(&format!("https://github.com/a/b/tree/{upper}"));
        assert_eq!(url.pinned_tag(), None);
    }

    #[test]
    fn a_github_release_tag_pins_refs_tags() {
        let url = parsed("https://github.com/a/b/releases/tag/v1.2.0");
        assert_eq!(
            url.source,
            github("a", "b", Some(GitHubRef::ReleaseTag("v1.2.0".into())), None)
        );
        assert_eq!(url.pinned_tag().as_deref(), Some("refs/tags/v1.2.0"));
    }

    #[test]
    fn github_archives_in_zip_and_tar_gz_pin_their_ref() {
        let zip = parsed(&format!("https://github.com/a/b/archive/{SHA}.zip"));
        assert_eq!(
            zip.source,
            github("a", "b", Some(GitHubRef::Archive(SHA.into())), None)
        );
        assert_eq!(zip.pinned_tag().as_deref(), Some(SHA));
        let tarball = parsed("https://www.github.com/a/b/archive/v1.0.2.tar.gz");
        assert_eq!(
            tarball.source,
            github("a", "b", Some(GitHubRef::Archive("v1.0.2".into())), None)
        );
        assert_eq!(tarball.pinned_tag().as_deref(), Some("v1.0.2"));
        let release = parsed("https://github.com/a/b/archive/refs/tags/v2.zip");
        assert_eq!(release.pinned_tag().as_deref(), Some("refs/tags/v2"));
    }

    #[test]
    fn a_github_subdirectory_is_kept_as_the_path_of_a_tree_or_commit() {
        let url = parsed("https://github.com/PostHog/plugins/tree/main/plugins/geo/");
        assert_eq!(
            url.source,
            github(
                "PostHog",
                "plugins",
                Some(GitHubRef::Tree("main".into())),
                Some("plugins/geo")
            )
        );
        let url = parsed(&format!("https://github.com/a/b/commit/{SHA}/sub"));
        assert_eq!(
            url.source,
            github("a", "b", Some(GitHubRef::Commit(SHA.into())), Some("sub"))
        );
        assert_eq!(
            source("https://github.com/a/b/tree/feature/x"),
            github("a", "b", Some(GitHubRef::Tree("feature".into())), Some("x")),
            "a ref cannot hold a slash, as in PostHog"
        );
    }

    #[test]
    fn a_private_token_is_kept_for_upstream_but_never_displayed() {
        let raw = "https://github.com/a/b/tree/main?private_token=ghp_s3cret";
        let url = parsed(raw);
        assert_eq!(url.private_token(), Some("ghp_s3cret"));
        assert_eq!(url.raw(), raw);
        assert_eq!(url.display(), "https://github.com/a/b/tree/main");
        assert_eq!(
            url.source,
            github("a", "b", Some(GitHubRef::Tree("main".into())), None)
        );
        assert!(!format!("{url:?}").contains("s3cret"));
        let gitlab_url = parsed("https://gitlab.com/g/p?private_token=glpat-s3cret");
        assert_eq!(gitlab_url.private_token(), Some("glpat-s3cret"));
        assert_eq!(gitlab_url.display(), "https://gitlab.com/g/p");
    }

    #[test]
    fn the_private_token_is_decoded_and_other_query_parameters_are_ignored() {
        let url = parsed("https://github.com/a/b?ref=x&private_token=a%2Fb+c&private_token=no");
        assert_eq!(url.private_token(), Some("a/b c"));
        assert_eq!(url.display(), "https://github.com/a/b");
        assert_eq!(
            parsed("https://github.com/a/b?private_token=").private_token(),
            None
        );
        assert_eq!(parsed("https://github.com/a/b?x=1").private_token(), None);
        assert_eq!(parsed("https://github.com/a/b").private_token(), None);
        assert_eq!(
            parsed("https://github.com/a/b?private_token=100%").private_token(),
            Some("100%")
        );
    }

    #[test]
    fn surrounding_whitespace_is_dropped_before_parsing() {
        let url = parsed("  https://github.com/a/b \n");
        assert_eq!(url.raw(), "https://github.com/a/b");
        assert_eq!(url.source, github("a", "b", None, None));
    }

    #[test]
    fn an_npm_package_parses_plain_or_scoped() {
        let url = parsed("https://www.npmjs.com/package/posthog-plugin-geoip");
        assert_eq!(url.source, npm("posthog-plugin-geoip", None));
        assert_eq!(url.pinned_tag(), None);
        let scoped = parsed("https://npmjs.com/package/@posthog/plugin-x/");
        assert_eq!(scoped.source, npm("@posthog/plugin-x", None));
    }

    #[test]
    fn an_npm_version_pins_the_package() {
        let url = parsed("https://www.npmjs.com/package/posthog-plugin-geoip/v/1.2.3");
        assert_eq!(url.source, npm("posthog-plugin-geoip", Some("1.2.3")));
        assert_eq!(url.pinned_tag().as_deref(), Some("1.2.3"));
        let scoped = parsed("https://www.npmjs.com/package/@posthog/plugin-x/v/0.0.7/");
        assert_eq!(scoped.source, npm("@posthog/plugin-x", Some("0.0.7")));
        assert_eq!(scoped.pinned_tag().as_deref(), Some("0.0.7"));
    }

    #[test]
    fn a_gitlab_project_root_parses_with_nested_groups_and_is_resolved_upstream() {
        let url = parsed("https://gitlab.com/mariusandra/helloworldplugin");
        assert_eq!(url.source, gitlab("mariusandra/helloworldplugin", None));
        assert_eq!(url.pinned_tag(), None);
        let nested = parsed("https://www.gitlab.com/group/sub.group/my-project/");
        assert_eq!(nested.source, gitlab("group/sub.group/my-project", None));
    }

    #[test]
    fn a_gitlab_tree_commit_or_archive_url_pins_its_ref() {
        for (url, project, reference) in [
            ("https://gitlab.com/g/p/-/tree/master", "g/p", "master"),
            (
                &format!("https://gitlab.com/g/sub/p/-/commit/{SHA}"),
                "g/sub/p",
                SHA,
            ),
            ("https://gitlab.com/g/p/-/archive/v1/p-v1.zip", "g/p", "v1"),
            (
                "https://gitlab.com/g/p/-/tree/master/sub/dir",
                "g/p",
                "master",
            ),
        ] {
            let parsed = parsed(url);
            assert_eq!(parsed.source, gitlab(project, Some(reference)), "{url}");
            assert_eq!(parsed.pinned_tag().as_deref(), Some(reference), "{url}");
        }
    }

    #[test]
    fn a_file_url_names_a_local_plugin() {
        let url = parsed("file:plugins/geo/");
        assert_eq!(
            url.source,
            UrlSource::Local {
                path: "plugins/geo".into()
            }
        );
        assert_eq!(url.pinned_tag(), None);
    }

    #[test]
    fn unknown_urls_are_refused_with_posthogs_message_on_the_url_field() {
        for bad in [
            "",
            "   ",
            "/",
            "file:",
            "ftp://github.com/a/b",
            "https://example.com/x",
            "https://github.com/only-user",
            "https://github.com/a/b/pulls",
            "https://github.com/a/b/archive/v1.zipper",
            "github.com/a/b",
            "https://www.npmjs.com/package/",
            "https://www.npmjs.com/package/Upper",
            "https://www.npmjs.com/package/a/b",
            "https://www.npmjs.com/package/@scope",
            "https://gitlab.com/lonely",
            "https://gitlab.com/g//p",
            "https://gitlab.com/g/p/-/tree",
            "https://gitlab.com/g/p/-",
        ] {
            let error = PluginUrl::parse(bad).expect_err(bad);
            assert_eq!(
                (
                    error.attr.as_deref(),
                    error.detail.as_str(),
                    error.code.as_str()
                ),
                (Some("url"), UNKNOWN_URL, "invalid_input"),
                "{bad}"
            );
        }
    }

    #[test]
    fn urls_and_pinned_refs_too_long_to_store_are_refused() {
        let long = format!("https://github.com/a/{}", "b".repeat(MAX_URL_CHARS));
        let error = PluginUrl::parse(&long).unwrap_err();
        assert_eq!(
            (
                error.attr.as_deref(),
                error.detail.as_str(),
                error.code.as_str()
            ),
            (
                Some("url"),
                "Ensure this field has no more than 800 characters.",
                "max_length"
            )
        );
        let at_limit = format!(
            "https://github.com/a/b/commit/{}",
            "c".repeat(MAX_TAG_CHARS)
        );
        assert!(PluginUrl::parse(&at_limit).is_ok());
        let error = PluginUrl::parse(&format!("{at_limit}c")).unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (
                Some("url"),
                "The version a URL pins must be at most 200 characters."
            )
        );
        let release = format!(
            "https://github.com/a/b/releases/tag/{}",
            "v".repeat(MAX_TAG_CHARS - 9)
        );
        assert!(PluginUrl::parse(&release).is_err(), "refs/tags/ counts");
    }
}
