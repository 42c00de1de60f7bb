//! The bench's own database, made in the bench's own cluster (`cluster`, new on every run) so
//! figures never depend on what an earlier run left, and the tenants in it, made with `burrow
//! admin` (the API has no way to create a user, an organization or a project).

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use serde::Deserialize;

use super::cluster::Cluster;
use crate::admin;
use crate::run;

pub(super) const DATABASE: &str = "burrow_bench";
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
    /// A third project, as a customer's site uses it through PostHog's SDKs (flags, config,
    /// survey feed, capture), and its public token.
    pub(super) sdk_project_id: i64,
    pub(super) sdk_project_token: String,
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
    project_api_token: String,
}

/// Creates and migrates the bench database in `cluster`, and makes the bench's tenants (the
/// organization gets the `root` plugin access level, bootstrap's default).
pub(super) fn fresh(cluster: &Cluster, burrow: &Path) -> anyhow::Result<Tenants> {
    let database_url = cluster.database_url(DATABASE);
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
    let project = |name| -> anyhow::Result<CreatedProject> {
        admin(
            burrow,
            &database_url,
            &[
                "create-project",
                "--organization",
                &made.organization_id,
                "--name",
                name,
            ],
        )
    };
    let deep = project("Bench Deep Offsets")?;
    let sdk = project("Bench SDK Site")?;
    Ok(Tenants {
        database_url,
        key: made.personal_api_key,
        user_id: made.user.id,
        organization_id: made.organization_id,
        project_id: made.project_id,
        project_token: made.project_api_token,
        deep_project_id: deep.project_id,
        sdk_project_id: sdk.project_id,
        sdk_project_token: sdk.project_api_token,
    })
}

/// Vacuums and refreshes the planner's statistics, as autovacuum would a minute after a bulk load
/// or a burst of writes, so neither Burrow nor pgbench is measured against dead row versions or
/// plans made for tables that have since grown.
pub(super) fn vacuum(database_url: &str) -> anyhow::Result<()> {
    psql(database_url, "VACUUM (ANALYZE)")?;
    Ok(())
}

/// Checks that capture stored `expected` persons in `project` (there is no API to read them).
pub(super) fn check_persons(
    database_url: &str,
    project: i64,
    expected: usize,
) -> anyhow::Result<()> {
    let stored = psql(
        database_url,
        &format!("SELECT count(*) FROM person_properties WHERE project_id = {project}"),
    )?;
    if stored != expected.to_string() {
        bail!("{stored} persons stored after seeding {expected}");
    }
    Ok(())
}

/// Runs `sql` with psql; returns what it printed, trimmed (unaligned, tuples only).
pub(crate) fn psql(url: &str, sql: &str) -> anyhow::Result<String> {
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
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
