//! `cargo xtask failover`: Burrow in front of a highly available PostgreSQL while it fails over.
//!
//! A pg_auto_failover formation (`formation.rs`: a monitor, a primary and a synchronous
//! standby), two `burrow serve` nodes on its multi-host URL, and 16 clients capturing survey
//! answers (`load.rs`); mid-load the primary's postmaster is killed with `kill -9`, and once the
//! formation has settled again a switchover follows, still under load. Afterwards every
//! acknowledged answer is looked up in the database (`tally.rs`) and one line says how it went.
//! `cargo xtask test` runs the same scenario and fails when a target is missed.

mod formation;
mod load;
mod tally;

use std::collections::HashMap;
use std::env;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use uuid::Uuid;

use self::formation::Formation;
use self::load::{Load, Target};
use self::tally::{Faults, Stored, Summary};
use crate::api::Api;
use crate::postgres::pg_binary;
use crate::server::{Server, free_address};
use crate::{admin, build_burrow, run, target_dir};

/// Clients capturing at once.
const CLIENTS: usize = 16;
/// Load before the kill, and after each fault has settled.
const STEADY: Duration = Duration::from_secs(5);

/// `cargo xtask failover`: runs the scenario and prints its line; fails only if it could not run.
pub(crate) fn run_failover(args: &[String]) -> anyhow::Result<()> {
    if !args.is_empty() {
        bail!("usage: cargo xtask failover");
    }
    let summary = scenario(&build_burrow(false)?)?;
    report(&summary);
    Ok(())
}

/// The scenario as `cargo xtask test` runs it: failing unless every target is met.
pub(crate) fn check(burrow: &Path) -> anyhow::Result<()> {
    let summary = scenario(burrow)?;
    report(&summary);
    let misses = summary.misses();
    if !misses.is_empty() {
        bail!(
            "the failover missed its targets:\n  - {}",
            misses.join("\n  - ")
        );
    }
    Ok(())
}

/// Says when each lost answer was acknowledged, and by which node, then prints the line.
fn report(summary: &Summary) {
    for lost in &summary.lost {
        eprintln!(
            "xtask: lost {} (node {}: sent at {:.3} s, acknowledged at {:.3} s; see the logs in \
             {})",
            lost.event,
            lost.node + 1,
            lost.sent.as_secs_f64(),
            lost.answered.as_secs_f64(),
            formation_dir().display()
        );
    }
    println!("{summary}");
}

/// Where the formation and its logs live: under the system's temporary directory, which the
/// `postgres` user can reach (PostgreSQL must reach its data directory through every parent, and
/// a checkout need not be readable by others), one per checkout so that a run clears what the
/// last one of the same checkout left.
fn formation_dir() -> PathBuf {
    let mut checkout = DefaultHasher::new();
    target_dir().hash(&mut checkout);
    env::temp_dir().join(format!("burrow-failover-{:016x}", checkout.finish()))
}

fn scenario(burrow: &Path) -> anyhow::Result<Summary> {
    let dir = formation_dir();
    eprintln!("xtask: the formation and its logs are in {}", dir.display());
    let formation = Formation::create(&dir)?;
    let database_url = formation.database_url();
    run(Command::new(burrow)
        .arg("migrate")
        .env("DATABASE_URL", &database_url)
        .env("RUST_LOG", "warn"))?;
    let boot: Value = admin(
        burrow,
        &database_url,
        &[
            "bootstrap",
            "--email",
            "failover@example.com",
            "--organization",
            "Failover",
            "--project",
            "Failover",
        ],
    )?;
    let key = boot["personal_api_key"]
        .as_str()
        .context("bootstrap printed no personal_api_key")?;
    let project = boot["project_id"]
        .as_i64()
        .context("bootstrap printed no project_id")?;
    let nodes = [
        start_node(burrow, &database_url, &dir.join("burrow-1.log"))?,
        start_node(burrow, &database_url, &dir.join("burrow-2.log"))?,
    ];
    let api = Api::new(nodes[0].base_url(), key.to_owned());
    let survey = api.post(
        &format!("/api/projects/{project}/surveys/"),
        &json!({
            "name": "Failover",
            "type": "popover",
            "questions": [{"type": "rating", "question": "How likely are you to recommend us?"}],
            "start_date": "2026-01-01T00:00:00Z",
        }),
    )?;
    let survey = survey["id"].as_str().context("a survey without an id")?;
    let token = api.get(&format!("/api/projects/{project}/"))?["api_token"]
        .as_str()
        .context("a project without an api_token")?
        .to_owned();

    eprintln!("xtask: {CLIENTS} clients capturing through two nodes");
    let load = Load::start(
        &Target {
            nodes: nodes.iter().map(Server::base_url).collect(),
            token,
            survey: survey.to_owned(),
        },
        CLIENTS,
    );
    thread::sleep(STEADY);
    let kill = load.elapsed();
    formation.kill_primary()?;
    thread::sleep(STEADY);
    let switchover = load.elapsed();
    formation.switchover()?;
    thread::sleep(STEADY);
    let attempts = load.finish();

    let stored = Stored {
        events: stored_events(&database_url, project, survey)?,
        responses_count: api.get(&format!("/api/projects/{project}/surveys/responses_count/"))?
            [survey]
            .as_u64()
            .unwrap_or_default(),
    };
    eprintln!(
        "xtask: the kill at {:.3} s, the switchover at {:.3} s of the load",
        kill.as_secs_f64(),
        switchover.as_secs_f64()
    );
    let summary = Summary::of(&attempts, &stored, &Faults { kill, switchover });
    drop(nodes);
    drop(formation);
    Ok(summary)
}

/// A node as an operator runs one: default settings but for the log level and rate limits (16
/// clients share one token).
fn start_node(burrow: &Path, database_url: &str, log: &Path) -> anyhow::Result<Server> {
    Server::start_with(
        burrow,
        database_url,
        &free_address()?,
        Some(log),
        |command| {
            command
                .env("RUST_LOG", "warn")
                .env("BURROW_RATE_LIMIT", "off");
        },
    )
}

/// The survey's stored events, each uuid with its number of rows, read from the primary.
fn stored_events(
    database_url: &str,
    project: i64,
    survey: &str,
) -> anyhow::Result<HashMap<Uuid, u64>> {
    let psql = pg_binary("psql").context("psql not found")?;
    let query = format!(
        "SELECT uuid, count(*) FROM survey_events \
         WHERE project_id = {project} AND survey_id = '{survey}' GROUP BY uuid"
    );
    let output = Command::new(psql)
        .args([database_url, "-XAtF", " ", "-c", &query])
        .output()
        .context("running psql")?;
    if !output.status.success() {
        bail!(
            "reading the stored answers failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let (uuid, rows) = line
                .split_once(' ')
                .context("a psql line without a count")?;
            Ok((uuid.parse()?, rows.parse()?))
        })
        .collect()
}
