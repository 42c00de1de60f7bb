//! Command-line interface: `serve`, `migrate` and `admin …`. Scripts depend on these names.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use domain::rate_limit::RateLimit;
use domain::tenancy::{MembershipLevel, PluginsAccessLevel};
use domain::webhook::AllowedPorts;
use url::Url;
use uuid::Uuid;

/// The default of `BURROW_BODY_MEMORY_MB`.
pub const DEFAULT_BODY_MEMORY_MB: u64 = (api::BodyBudget::DEFAULT_BYTES / (1024 * 1024)) as u64;

/// How long a node remembers keys and tenants by default: short enough that admin changes are
/// felt at once by people, long enough that a busy key is read from storage a few times a
/// minute rather than on every request.
pub const DEFAULT_ACCESS_CACHE_MS: u64 = 2000;

#[derive(Debug, Parser)]
#[command(
    name = "burrow",
    version,
    about = "A PostHog-compatible API for organization plugins and project surveys"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How log lines on stderr are written: `text` for people, `json` (one object a line, with
    /// the request id of the request it belongs to) for log collectors.
    #[arg(long, env = "BURROW_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
}

/// See [`Cli::log_format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API.
    Serve(Box<ServeArgs>),
    /// Apply pending database migrations (safe to run again, and from several nodes at once).
    Migrate(MigrateArgs),
    /// Operator commands that change tenants, users and keys.
    Admin(AdminArgs),
}

#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// PostgreSQL connection URL.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Address to listen on.
    #[arg(long, env = "BURROW_BIND", default_value = "127.0.0.1:8000")]
    pub bind: SocketAddr,
    /// Public base URL used in absolute links (pagination); defaults to the request's host.
    #[arg(long, env = "BURROW_SITE_URL")]
    pub site_url: Option<Url>,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "BURROW_MAX_BODY_BYTES", default_value_t = api::ApiSettings::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Largest capture request body (and what it may inflate to), in bytes.
    #[arg(long, env = "BURROW_CAPTURE_MAX_BODY_BYTES", default_value_t = api::ApiSettings::DEFAULT_CAPTURE_MAX_BODY_BYTES)]
    pub capture_max_body_bytes: usize,
    /// Most events in one capture request.
    #[arg(long, env = "BURROW_CAPTURE_MAX_EVENTS", default_value_t = api::ApiSettings::DEFAULT_CAPTURE_MAX_EVENTS)]
    pub capture_max_events: usize,
    /// How many MiB of request bodies (and what they inflate to) this node holds at once;
    /// a request finding them spent waits up to 5 s, then is answered 503 `server_busy`.
    #[arg(long, env = "BURROW_BODY_MEMORY_MB", default_value_t = DEFAULT_BODY_MEMORY_MB, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub body_memory_mb: u64,
    /// Most PostgreSQL connections this node opens (default: four per core of this machine).
    #[arg(long, env = "BURROW_DB_POOL_SIZE")]
    pub db_pool_size: Option<usize>,
    /// How long, in milliseconds, a request may wait for a database connection (or for a new
    /// one to open) before it is answered 503 `database_unavailable`.
    #[arg(long, env = "BURROW_DB_TIMEOUT_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub db_timeout_ms: u64,
    /// A read replica (a streaming standby of the primary) for survey statistics and exports,
    /// read while it is within `BURROW_REPLICA_MAX_LAG_MS` of the primary.
    #[arg(long, env = "BURROW_REPLICA_DATABASE_URL")]
    pub replica_database_url: Option<String>,
    /// How far behind the primary, in milliseconds, the read replica may be and still be read.
    #[arg(long, env = "BURROW_REPLICA_MAX_LAG_MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub replica_max_lag_ms: u64,
    /// HTTP worker threads (default: one per core); the pool is split between them.
    #[arg(long, env = "BURROW_WORKERS", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    pub workers: Option<usize>,
    /// Requests a personal API key may make, as PostHog limits them: comma-separated
    /// `N/second|minute|hour|day` windows, or `off`.
    #[arg(
        long,
        env = "BURROW_RATE_LIMIT",
        default_value = "480/minute,4800/hour"
    )]
    pub rate_limit: RateLimit,
    /// Redis holding the rate-limit counters, so several nodes share one limit per key
    /// (`redis://host:6379/0`); unset, each node counts in memory. Unreachable, requests are
    /// served unlimited (logged, and counted in `/metrics`).
    #[arg(long, env = "BURROW_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// posthog-js's files, served at `/static/…` so PostHog's snippet and its lazily loaded
    /// surveys bundle load from Burrow: an npm-installed `node_modules/posthog-js` (or its
    /// `dist/`), or a directory of `dist/` trees, one per version (`<dir>/1.449.2/surveys.js`);
    /// unset, `/static/…` answers 404.
    #[arg(long, env = "BURROW_STATIC_DIR")]
    pub static_dir: Option<std::path::PathBuf>,
    /// Seconds between a node's looks for recurring surveys whose next iteration has begun or
    /// whose last one has ended, and for sampling surveys not yet looked at today (every node
    /// looks; each survey moves once).
    #[arg(long, env = "BURROW_SURVEY_SCHEDULE_SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub survey_schedule_secs: u64,
    /// On SIGTERM or SIGINT: seconds in-flight requests get to finish after the listener
    /// closes, before the process exits anyway.
    #[arg(long, env = "BURROW_SHUTDOWN_TIMEOUT_SECS", default_value_t = 30)]
    pub shutdown_timeout_secs: u64,
    /// How long, in milliseconds, a node remembers a key's owner and the caller's tenants
    /// before reading them again: admin changes reach running nodes within this (at most 5 s;
    /// 0 reads them on every request).
    #[arg(long, env = "BURROW_ACCESS_CACHE_MS", default_value_t = DEFAULT_ACCESS_CACHE_MS, value_parser = clap::value_parser!(u64).range(0..=5000))]
    pub access_cache_ms: u64,
    #[command(flatten)]
    pub sdk: SdkArgs,
    #[command(flatten)]
    pub plugins: PluginArgs,
    #[command(flatten)]
    pub webhooks: WebhookArgs,
}

/// Where webhooks may send, and how this node sends them.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct WebhookArgs {
    /// Let webhooks call loopback, private, link-local and other non-public addresses, and plain
    /// `http`: for receivers inside your own network, and for tests. Off, such URLs are refused
    /// when saved and again after every DNS lookup when sending.
    #[arg(id = "webhooks-allow-private", long = "webhooks-allow-private", env = "BURROW_WEBHOOKS_ALLOW_PRIVATE", default_value = "false", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set)]
    pub allow_private: bool,
    /// The ports webhooks may call, comma-separated ports and ranges (`443,8000-8999`), private
    /// targets allowed or not. Unset: 443, 80 and 1024–65535 except well-known services' ports
    /// (Redis, PostgreSQL, memcached, …; see docs/operations.md). Checked when a webhook is
    /// saved and again before every attempt.
    #[arg(
        id = "webhooks-allowed-ports",
        long = "webhooks-allowed-ports",
        env = "BURROW_WEBHOOKS_ALLOWED_PORTS"
    )]
    pub allowed_ports: Option<AllowedPorts>,
    /// Send due deliveries from this node (every node can; they share the queue). `false` leaves
    /// sending to the other nodes.
    #[arg(id = "webhook-dispatch", long = "webhook-dispatch", env = "BURROW_WEBHOOK_DISPATCH", default_value = "true", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set)]
    pub dispatch: bool,
    /// Seconds one attempt may take, connection to answer.
    #[arg(id = "webhook-timeout-secs", long = "webhook-timeout-secs", env = "BURROW_WEBHOOK_TIMEOUT_SECS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=60))]
    pub timeout_secs: u64,
    /// The waits between a delivery's attempts, comma-separated (`5s,30s,2m,…`); a delivery
    /// fails after the last. Default: about a day, see docs/operations.md.
    #[arg(id = "webhook-retry-delays", long = "webhook-retry-delays", env = "BURROW_WEBHOOK_RETRY_DELAYS", value_parser = parse_delays)]
    pub retry_delays: Option<RetryDelays>,
    /// Milliseconds between looks at the queue when nothing was due.
    #[arg(id = "webhook-poll-ms", long = "webhook-poll-ms", env = "BURROW_WEBHOOK_POLL_MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub poll_ms: u64,
    /// Days delivered and failed deliveries stay listed (with their attempts) before they are
    /// deleted; pending ones are kept however old.
    #[arg(id = "webhook-retention-days", long = "webhook-retention-days", env = "BURROW_WEBHOOK_RETENTION_DAYS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub retention_days: u32,
}

/// A retry schedule as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryDelays(pub Vec<Duration>);

/// `5s,30s,2m`: humantime durations, each at most a week.
fn parse_delays(text: &str) -> Result<RetryDelays, String> {
    let delays = text
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            let delay =
                humantime::parse_duration(part).map_err(|error| format!("{part}: {error}"))?;
            if delay > Duration::from_secs(7 * 24 * 3600) {
                return Err(format!("{part}: longer than a week"));
            }
            Ok(delay)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if delays.len() > 50 {
        return Err("at most 50 delays".to_owned());
    }
    Ok(RetryDelays(delays))
}

/// How the SDK endpoints (remote config, `/flags`, the survey feed, local evaluation, capture's
/// token) keep each project in memory.
#[derive(Debug, Clone, Args)]
pub struct SdkArgs {
    /// Keep each project's SDK snapshot in memory, forgotten as changes are announced by
    /// PostgreSQL (LISTEN/NOTIFY); `false` reads storage on every SDK request (same answers).
    #[arg(long = "sdk-snapshot", env = "BURROW_SDK_SNAPSHOT", default_value_t = true, action = clap::ArgAction::Set)]
    pub snapshot: bool,
    /// MiB all kept SDK snapshots may take together; the least used are forgotten past it.
    #[arg(long = "sdk-snapshot-mb", env = "BURROW_SDK_SNAPSHOT_MB", default_value_t = DEFAULT_SDK_SNAPSHOT_MB, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub snapshot_mb: u64,
    /// Seconds browsers and CDNs may keep the remote config and the survey feed
    /// (`Cache-Control: public, max-age=…`); 0 makes them revalidate each time.
    #[arg(long = "sdk-max-age-secs", env = "BURROW_SDK_MAX_AGE_SECS", default_value_t = api::ApiSettings::DEFAULT_SDK_MAX_AGE_SECS, value_parser = clap::value_parser!(u32).range(0..=86_400))]
    pub max_age_secs: u32,
}

/// Room for the snapshots of a few hundred typical projects (a few KiB to a few hundred KiB
/// each), within a node's small footprint.
pub const DEFAULT_SDK_SNAPSHOT_MB: u64 = 16;

/// Where plugin code is fetched from, and the limits on what is fetched.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct PluginArgs {
    /// GitHub's API, asked for a repository's latest commit.
    #[arg(
        long = "plugins-github-api-url",
        env = "BURROW_PLUGINS_GITHUB_API_URL",
        default_value = "https://api.github.com"
    )]
    pub github_api_url: Url,
    /// GitHub's site, which serves archives.
    #[arg(
        long = "plugins-github-url",
        env = "BURROW_PLUGINS_GITHUB_URL",
        default_value = "https://github.com"
    )]
    pub github_url: Url,
    /// Where GitHub's site sends archive downloads by a redirect. Upstreams' redirects are
    /// followed only to the origins of these plugin upstream URLs.
    #[arg(
        long = "plugins-github-codeload-url",
        env = "BURROW_PLUGINS_GITHUB_CODELOAD_URL",
        default_value = "https://codeload.github.com"
    )]
    pub github_codeload_url: Url,
    /// GitLab's site (API and archives).
    #[arg(
        long = "plugins-gitlab-url",
        env = "BURROW_PLUGINS_GITLAB_URL",
        default_value = "https://gitlab.com"
    )]
    pub gitlab_url: Url,
    /// The npm registry; unset, npm plugin URLs are refused.
    #[arg(
        long = "plugins-npm-registry-url",
        env = "BURROW_PLUGINS_NPM_REGISTRY_URL"
    )]
    pub npm_registry_url: Option<Url>,
    /// The JSON listing served by `plugins/repository/`; unset, the listing is `[]`.
    #[arg(long = "plugins-repository-url", env = "BURROW_PLUGINS_REPOSITORY_URL")]
    pub repository_url: Option<Url>,
    /// Directory `file:` plugin URLs are read from; unset, local plugins are refused.
    #[arg(long = "plugins-local-dir", env = "BURROW_PLUGINS_LOCAL_DIR")]
    pub local_dir: Option<std::path::PathBuf>,
    /// Sent to GitHub unless a URL carries its own `?private_token=`.
    #[arg(long, env = "GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// Sent to GitLab unless a URL carries its own `?private_token=`.
    #[arg(long, env = "GITLAB_TOKEN", hide_env_values = true)]
    pub gitlab_token: Option<String>,
    /// Sent to the npm registry.
    #[arg(long, env = "NPM_TOKEN", hide_env_values = true)]
    pub npm_token: Option<String>,
    /// Seconds an upstream may take to connect and answer.
    #[arg(
        long = "plugins-timeout-secs",
        env = "BURROW_PLUGINS_TIMEOUT_SECS",
        default_value_t = 10
    )]
    pub timeout_secs: u64,
    /// Largest plugin archive downloaded, in bytes.
    #[arg(long = "plugins-max-archive-bytes", env = "BURROW_PLUGINS_MAX_ARCHIVE_BYTES", default_value_t = 20 * 1024 * 1024)]
    pub max_archive_bytes: u64,
    /// The PostHog version plugins' `posthogVersion` requirements are checked against.
    #[arg(
        long = "posthog-version",
        env = "BURROW_POSTHOG_VERSION",
        default_value = "1.43.0"
    )]
    pub posthog_version: semver::Version,
}

#[derive(Debug, Clone, Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Create the database first if it does not exist (needs access to the `postgres` database).
    #[arg(long)]
    pub create_database: bool,
}

#[derive(Debug, Args)]
pub struct AdminArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Ensure a user, a new organization they own, a project and a key; prints them as JSON.
    Bootstrap {
        #[arg(long)]
        email: String,
        #[arg(long)]
        organization: String,
        #[arg(long)]
        project: String,
        #[arg(long, default_value = "")]
        first_name: String,
        /// Comma-separated scopes, e.g. `survey:read,plugin:write`; `*` grants everything.
        #[arg(long, default_value = "*", value_delimiter = ',')]
        scopes: Vec<String>,
        #[arg(long, default_value = "root")]
        plugins_access_level: PluginsAccessLevel,
    },
    /// Mint a personal API key for an existing user; prints `{"personal_api_key"}`.
    CreateKey {
        #[arg(long)]
        email: String,
        #[arg(long, default_value = "*", value_delimiter = ',')]
        scopes: Vec<String>,
        /// Restrict the key to these project ids.
        #[arg(long, value_delimiter = ',')]
        scoped_teams: Option<Vec<i32>>,
        /// Restrict the key to these organization UUIDs.
        #[arg(long, value_delimiter = ',')]
        scoped_organizations: Option<Vec<Uuid>>,
        #[arg(long, default_value = "cli")]
        label: String,
    },
    /// Create a project in an organization; prints `{"project_id","project_api_token"}`.
    CreateProject {
        #[arg(long)]
        organization: Uuid,
        #[arg(long)]
        name: String,
    },
    /// Add a user to an organization (or change their level).
    AddMember {
        #[arg(long)]
        email: String,
        #[arg(long)]
        organization: Uuid,
        #[arg(long, default_value = "member")]
        level: MembershipLevel,
    },
    /// Set how far an organization's members may go with plugins.
    SetPluginsAccessLevel {
        #[arg(long)]
        organization: Uuid,
        #[arg(long)]
        level: PluginsAccessLevel,
    },
    /// Deactivate a user; their keys stop working on the next request.
    DeactivateUser {
        #[arg(long)]
        email: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_retry_delays_are_humantime_lists() {
        assert_eq!(
            parse_delays("5s, 2m,1h"),
            Ok(RetryDelays(vec![
                Duration::from_secs(5),
                Duration::from_secs(120),
                Duration::from_secs(3600)
            ]))
        );
        assert!(parse_delays("5 parsecs").is_err());
        assert!(parse_delays("8days").is_err());
    }

    #[test]
    fn webhook_ports_are_an_optional_list() {
        let cli = Cli::try_parse_from([
            "burrow",
            "serve",
            "--database-url",
            "postgres://x",
            "--webhooks-allowed-ports",
            "443,8000-8999",
        ])
        .expect("parses");
        let Command::Serve(serve) = cli.command else {
            panic!("expected serve");
        };
        assert_eq!(
            serve.webhooks.allowed_ports,
            Some("443,8000-8999".parse().unwrap())
        );
        assert!(
            Cli::try_parse_from([
                "burrow",
                "serve",
                "--database-url",
                "postgres://x",
                "--webhooks-allowed-ports",
                "22-21",
            ])
            .is_err()
        );
    }
}
