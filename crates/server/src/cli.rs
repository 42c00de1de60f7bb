//! Command-line interface: `serve`, `migrate` and `admin …`. Scripts depend on these names.

use std::net::SocketAddr;

use clap::{Args, Parser, Subcommand};
use domain::tenancy::{MembershipLevel, PluginsAccessLevel};
use url::Url;
use uuid::Uuid;

#[derive(Debug, Parser)]
#[command(
    name = "burrow",
    version,
    about = "A PostHog-compatible API for project surveys and feature flags (organization plugins coming)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API.
    Serve(ServeArgs),
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
    /// Most PostgreSQL connections this node opens.
    #[arg(long, env = "BURROW_DB_POOL_SIZE", default_value_t = 16)]
    pub db_pool_size: usize,
    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "BURROW_WORKERS")]
    pub workers: Option<usize>,
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
        #[arg(long, default_value = "root", value_parser = parse_plugins_level)]
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
        #[arg(long, default_value = "member", value_parser = parse_membership_level)]
        level: MembershipLevel,
    },
    /// Set how far an organization's members may go with plugins.
    SetPluginsAccessLevel {
        #[arg(long)]
        organization: Uuid,
        #[arg(long, value_parser = parse_plugins_level)]
        level: PluginsAccessLevel,
    },
    /// Deactivate a user; their keys stop working on the next request.
    DeactivateUser {
        #[arg(long)]
        email: String,
    },
}

fn parse_plugins_level(value: &str) -> Result<PluginsAccessLevel, String> {
    value.parse()
}

fn parse_membership_level(value: &str) -> Result<MembershipLevel, String> {
    value.parse()
}
