//! The bench's own database, dropped and made anew on every run so figures never depend on what
//! an earlier run left, and the tenants in it, made with `burrow admin` (the API has no way to
//! create a user, an organization or a project).

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::{postgres, run};

const DATABASE: &str = "burrow_bench";
const EMAIL: &str = "bench@burrow.local";

/// Who the bench acts as, and where.
pub(super) struct Tenants {
    pub(super) database_url: String,
    pub(super) key: String,
    pub(super) user_id: i64,
    pub(super) organization_id: String,
    /// The project with the rich surveys, the survey events and the writes.
    pub(super) project_id: i64,
    /// That project's public token, which capture requests carry.
    pub(super) project_token: String,
    /// A second project, of many simple surveys, for listing at a deep offset.
    pub(super) deep_project_id: i64,
}

/// What `burrow admin bootstrap` prints.
#[derive(Deserialize)]
struct Bootstrap {
    user: BootstrapUser,
    organization_id: String,
    project_id: i64,
    project_api_token: String,
    personal_api_key: String,
}

#[derive(Deserialize)]
struct BootstrapUser {
    id: i64,
}

/// What `burrow admin create-project` prints.
#[derive(Deserialize)]
struct CreatedProject {
    project_id: i64,
}

/// Drops and recreates the bench database, migrates it, and makes the bench's tenants (the
/// organization gets the `root` plugin access level, bootstrap's default).
pub(super) fn fresh(server: &postgres::Server, burrow: &Path) -> anyhow::Result<Tenants> {
    psql(
        &server.database_url("postgres"),
        &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
    )?;
    let database_url = server.database_url(DATABASE);
    run(Command::new(burrow)
        .args(["migrate", "--create-database"])
        .env("DATABASE_URL", &database_url))?;
    let made: Bootstrap = admin(
        burrow,
        &database_url,
        &[
            "bootstrap",
            "--email",
            EMAIL,
            "--first-name",
            "Bench",
            "--organization",
            "Bench Organization",
            "--project",
            "Bench Project",
        ],
    )?;
    let deep: CreatedProject = admin(
        burrow,
        &database_url,
        &[
            "create-project",
            "--organization",
            &made.organization_id,
            "--name",
            "Bench Deep Offsets",
        ],
    )?;
    Ok(Tenants {
        database_url,
        key: made.personal_api_key,
        user_id: made.user.id,
        organization_id: made.organization_id,
        project_id: made.project_id,
        project_token: made.project_api_token,
        deep_project_id: deep.project_id,
    })
}

/// Vacuums and refreshes the planner's statistics, as autovacuum would a minute after a bulk load
/// or a burst of writes, so neither Burrow nor pgbench is measured against dead row versions or
/// plans made for tables that have since grown.
pub(super) fn vacuum(database_url: &str) -> anyhow::Result<()> {
    psql(database_url, "VACUUM (ANALYZE)")
}

pub(crate) fn psql(url: &str, sql: &str) -> anyhow::Result<()> {
    let output = Command::new("psql")
        .args([url, "-XAtqc", sql])
        .output()
        .context("starting psql")?;
    if !output.status.success() {
        bail!(
            "psql {sql:?} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// Runs `burrow admin <args>` and reads the JSON it prints.
pub(crate) fn admin<T: DeserializeOwned>(
    burrow: &Path,
    database_url: &str,
    args: &[&str],
) -> anyhow::Result<T> {
    let output = Command::new(burrow)
        .arg("admin")
        .args(args)
        .env("DATABASE_URL", database_url)
        .output()
        .context("starting burrow admin")?;
    if !output.status.success() {
        bail!(
            "burrow admin {} failed: {}",
            args[0],
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    serde_json::from_slice(&output.stdout)
        .with_context(|| format!("reading what burrow admin {} printed", args[0]))
}
