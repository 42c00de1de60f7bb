//! Project automation, run as `cargo xtask <command>`:
//!
//! - `migrate`: ensure a PostgreSQL and apply migrations to `DATABASE_URL` (default: local `burrow`).
//! - `dev [--no-demo]`: install what is missing, ensure a PostgreSQL, migrate, ensure a demo
//!   tenant, print a key, serve, with a demo survey shown on a demo site (see `dev.rs`).
//! - `test`: install what is missing (`prerequisites.rs`), ensure a PostgreSQL, a Redis, PostHog's
//!   agent toolkit (npm), posthog-js, posthog-node and playwright-core (npm), posthog-python and
//!   standardwebhooks (PyPI), then fmt check, clippy `-D warnings`, every test, and a short
//!   `fuzz --quick`, and the failover scenario (`failover`) held to its targets.
//! - `fuzz`: schemathesis (PyPI) against `burrow serve` on a fresh database, every operation of the
//!   OpenAPI document, at least 2,000 cases; `--quick` for a short run (see `fuzz.rs`).
//! - `bench`: a release build on a fresh database seeded through the API, loaded per scenario with
//!   wrk beside pgbench running the same scenario's SQL; prints a table and writes it as JSON to
//!   `target/bench/` (see `bench/mod.rs`).
//! - `failover`: a pg_auto_failover formation under capture load through two nodes, its primary
//!   killed and then switched over; ends with one line of what was lost (see `failover/mod.rs`).

mod api;
mod bench;
mod browser;
mod demo;
mod dev;
mod failover;
mod fuzz;
mod npm;
mod postgres;
mod prerequisites;
mod pypi;
mod redis;
mod server;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context as _, bail};
use serde::de::DeserializeOwned;

use crate::prerequisites::Task;

const USAGE: &str =
    "usage: cargo xtask <migrate|dev [--no-demo]|test|bench|fuzz [--quick]|failover>";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("migrate") => migrate().map(|_| ()),
        Some("dev") => dev::run(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("fuzz") => fuzz::run_fuzz(&args[1..]),
        Some("failover") => failover::run_failover(&args[1..]),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of `xtask/`).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

pub(crate) fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

pub(crate) fn cargo() -> Command {
    let mut command = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root());
    command
}

/// Runs a command to completion, failing on a non-zero exit.
pub(crate) fn run(command: &mut Command) -> anyhow::Result<()> {
    eprintln!("$ {}", describe(command));
    let status = command
        .status()
        .with_context(|| format!("starting {}", describe(command)))?;
    if !status.success() {
        bail!("{} failed ({status})", describe(command));
    }
    Ok(())
}

fn describe(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Builds the `burrow` binary (debug or release) and returns its path.
pub(crate) fn build_burrow(release: bool) -> anyhow::Result<PathBuf> {
    let mut build = cargo();
    build.args(["build", "--package", "burrow-server", "--bin", "burrow"]);
    if release {
        build.arg("--release");
    }
    run(&mut build)?;
    Ok(target_dir()
        .join(if release { "release" } else { "debug" })
        .join("burrow"))
}

/// Ensures PostgreSQL and migrates `DATABASE_URL` (or the local `burrow` database); returns the
/// URL and the `burrow` binary it built for that.
fn migrate() -> anyhow::Result<(String, PathBuf)> {
    let server = postgres::ensure()?;
    let database_url = env::var("DATABASE_URL").unwrap_or_else(|_| server.database_url("burrow"));
    let burrow = build_burrow(false)?;
    run(Command::new(&burrow)
        .args(["migrate", "--create-database"])
        .env("DATABASE_URL", &database_url))?;
    Ok((database_url, burrow))
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

/// A string field of a JSON object.
fn json_string(json: &[u8], field: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(json).ok()?;
    Some(value.get(field)?.as_str()?.to_owned())
}

fn test(extra: &[String]) -> anyhow::Result<()> {
    prerequisites::ensure(Task::Test)?;
    toolchain_components()?;
    let server = postgres::ensure()?;
    server.drop_test_databases();
    let redis = redis::ensure()?;
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    let toolkit = agent_toolkit()?;
    let posthog_python = posthog_python()?;
    let posthog_node = posthog_node()?;
    let standard_webhooks = standard_webhooks()?;
    let browser = browser::ensure()?;
    let burrow = build_burrow(false)?;
    let mut tests = cargo();
    if nextest_available() {
        tests.args(["nextest", "run", "--workspace", "--no-fail-fast"]);
    } else {
        tests.args(["test", "--workspace", "--no-fail-fast"]);
    }
    tests
        .args(extra)
        .env("BURROW_TEST_DATABASE_URL", server.database_url("postgres"))
        .env("BURROW_TEST_REDIS_URL", &redis)
        .env("BURROW_AGENT_TOOLKIT_DIR", &toolkit)
        .env("BURROW_POSTHOG_PYTHON", &posthog_python)
        .env("BURROW_POSTHOG_NODE_DIR", &posthog_node)
        .env("BURROW_STANDARD_WEBHOOKS_PYTHON", &standard_webhooks)
        .env("BURROW_BROWSER_DIR", &browser)
        .env("BURROW_BIN", &burrow);
    let tested = run(&mut tests);
    // Leave the server as it was found: the tests dropped their databases, this the template.
    server.drop_test_databases();
    tested?;
    failover::check(&burrow)?;
    fuzz::run_fuzz(&["--quick".to_owned()])
}

/// PostHog's agent toolkit, as published on the npm registry, which the HTTP tests drive.
const AGENT_TOOLKIT: &str = "@posthog/agent-toolkit@0.2.4";

/// Installs the agent toolkit into `target/agent-toolkit` unless that version is there already;
/// returns the directory.
fn agent_toolkit() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("agent-toolkit");
    npm::ensure_installed(&dir, &[AGENT_TOOLKIT], "PostHog's agent toolkit")?;
    Ok(dir)
}

/// PostHog's Node SDK, as published on the npm registry: the HTTP tests evaluate flags with it
/// locally and through `/flags`.
const POSTHOG_NODE: &str = "posthog-node@5.70.0";

/// Installs posthog-node into `target/posthog-node` unless that version is there already;
/// returns the directory.
fn posthog_node() -> anyhow::Result<PathBuf> {
    let dir = target_dir().join("posthog-node");
    npm::ensure_installed(&dir, &[POSTHOG_NODE], "PostHog's Node SDK")?;
    Ok(dir)
}

/// PostHog's Python SDK, as published on PyPI, which the HTTP tests drive against `/batch/`.
const POSTHOG_PYTHON: &str = "posthog==7.91.1";

/// Installs the Python SDK into its own venv (leaving the system's python alone) in
/// `target/posthog-python` unless that version is there already; returns the venv's python.
fn posthog_python() -> anyhow::Result<PathBuf> {
    pypi::ensure_venv(&target_dir().join("posthog-python"), POSTHOG_PYTHON)
}

/// The Standard Webhooks library for Python, as published on PyPI: the webhook tests' receiver
/// verifies Burrow's signatures with it.
const STANDARD_WEBHOOKS: &str = "standardwebhooks==1.1.0";

/// Installs it into its own venv in `target/standardwebhooks`; returns the venv's python.
fn standard_webhooks() -> anyhow::Result<PathBuf> {
    pypi::ensure_venv(&target_dir().join("standardwebhooks"), STANDARD_WEBHOOKS)
}

/// rustfmt and clippy, which the test command runs, added to the toolchain when missing.
fn toolchain_components() -> anyhow::Result<()> {
    for (component, probe) in [("rustfmt", "fmt"), ("clippy", "clippy")] {
        let present = cargo()
            .args([probe, "--version"])
            .output()
            .is_ok_and(|output| output.status.success());
        if !present {
            eprintln!("xtask: adding {component} to the toolchain (the test command runs it)");
            run(Command::new("rustup").args(["component", "add", component]))
                .with_context(|| format!("adding {component} (needs rustup)"))?;
        }
    }
    Ok(())
}

fn nextest_available() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|output| output.status.success())
}
