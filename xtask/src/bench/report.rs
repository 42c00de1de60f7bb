//! The bench's results: one table on stdout, and the same as JSON in `target/bench/<UTC time>.json`
//! and `target/bench/latest.json`, with the machine and commit they were measured on and how long
//! each phase took.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use chrono::{SecondsFormat, Utc};
use serde::Serialize;

use super::scenarios::Scenario;
use super::scenarios::{LIST_OFFSET_0, LIST_OFFSET_10000, RESPONSES_COUNT_1M, RESPONSES_COUNT_10K};
use super::wrk::Outcome;
use super::{CONCURRENCY, LOAD_THREADS, RUN_SECONDS, WARM_UP_SECONDS};
use crate::root;

/// One scenario's figures.
#[derive(Serialize)]
pub(super) struct Row {
    scenario: &'static str,
    slug: &'static str,
    requests: u64,
    seconds: f64,
    requests_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
    pgbench_tps: f64,
    /// Burrow's requests per second ÷ pgbench's transactions per second.
    ratio: f64,
    /// The server's peak resident memory during the scenario's wrk runs.
    peak_rss_kib: u64,
}

impl Row {
    pub(super) fn new(scenario: &Scenario, wrk: &Outcome, tps: f64, peak_rss_kib: u64) -> Self {
        Self {
            scenario: scenario.name,
            slug: scenario.slug,
            peak_rss_kib,
            requests: wrk.requests,
            seconds: wrk.duration_us as f64 / 1e6,
            requests_per_second: wrk.requests_per_second(),
            p50_ms: wrk.p50_us as f64 / 1e3,
            p99_ms: wrk.p99_us as f64 / 1e3,
            errors: wrk.errors(),
            pgbench_tps: tps,
            ratio: wrk.requests_per_second() / tps,
        }
    }
}

/// One step of the bench and how long it took.
#[derive(Serialize)]
pub(super) struct Phase {
    name: String,
    seconds: f64,
    /// Items (surveys, events, …) made per second, for seeding steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    per_second: Option<f64>,
}

/// The phases so far, in order.
#[derive(Default)]
pub(super) struct Phases(Vec<Phase>);

impl Phases {
    pub(super) fn time<T>(
        &mut self,
        name: &str,
        work: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        self.record(name, None, work)
    }

    /// Times a step that makes `items` things, recording the rate too.
    pub(super) fn time_items<T>(
        &mut self,
        name: &str,
        items: usize,
        work: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        self.record(name, Some(items), work)
    }

    fn record<T>(
        &mut self,
        name: &str,
        items: Option<usize>,
        work: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        eprintln!("xtask: bench: {name}…");
        let started = Instant::now();
        let result = work().with_context(|| format!("bench phase \"{name}\""))?;
        let seconds = started.elapsed().as_secs_f64();
        let per_second = items.map(|items| items as f64 / seconds);
        eprintln!(
            "xtask: bench: {name}: {seconds:.1} s{}",
            per_second.map_or_else(String::new, |rate| format!(" ({rate:.0}/s)"))
        );
        self.0.push(Phase {
            name: name.to_owned(),
            seconds,
            per_second,
        });
        Ok(result)
    }
}

/// A figure the server aims for, from two scenarios' results.
#[derive(Serialize)]
struct Target {
    what: &'static str,
    value: f64,
    at_most: f64,
    met: bool,
}

impl Target {
    fn new(what: &'static str, value: f64, at_most: f64) -> Self {
        Self {
            what,
            value,
            at_most,
            met: value <= at_most,
        }
    }
}

#[derive(Serialize)]
struct Machine {
    nproc: usize,
    kernel: String,
    cpu: String,
    /// `/proc/loadavg` when the runs ended: other work on the machine (a compiler, say) shows
    /// here and makes the figures noisier.
    load_average: String,
}

#[derive(Serialize)]
pub(super) struct Report {
    date: String,
    commit: String,
    uncommitted_changes: bool,
    machine: Machine,
    load: String,
    startup_ms: f64,
    /// The highest of the scenarios' peaks: the server's memory under load.
    peak_rss_kib: u64,
    /// The peak while a million answers arrive through capture (four senders, 5,000 a batch).
    capture_seed_peak_rss_kib: u64,
    scenarios: Vec<Row>,
    targets: Vec<Target>,
    phases: Vec<Phase>,
}

impl Report {
    pub(super) fn new(
        scenarios: Vec<Row>,
        startup: Duration,
        capture_seed_peak_rss_kib: u64,
        phases: Phases,
    ) -> Self {
        let targets = targets(&scenarios);
        let peak_rss_kib = scenarios
            .iter()
            .map(|row| row.peak_rss_kib)
            .max()
            .unwrap_or(0);
        Self {
            date: Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
            commit: output_of("git", &["rev-parse", "--short", "HEAD"]),
            uncommitted_changes: !output_of("git", &["status", "--porcelain"]).is_empty(),
            machine: Machine {
                nproc: std::thread::available_parallelism().map_or(0, usize::from),
                kernel: output_of("uname", &["-r"]),
                cpu: cpu_model(),
                load_average: fs::read_to_string("/proc/loadavg")
                    .map(|text| {
                        text.split_whitespace()
                            .take(3)
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default(),
            },
            load: format!(
                "each scenario: wrk -t{LOAD_THREADS} -c{CONCURRENCY} --latency, {WARM_UP_SECONDS} s warm-up then \
                 {RUN_SECONDS} s measured; pgbench -n -M prepared -c {CONCURRENCY} -j {LOAD_THREADS} \
                 -T {RUN_SECONDS}; same machine and database"
            ),
            startup_ms: startup.as_secs_f64() * 1e3,
            peak_rss_kib,
            capture_seed_peak_rss_kib,
            scenarios,
            targets,
            phases: phases.0,
        }
    }

    /// The table and the lines below it.
    pub(super) fn text(&self) -> String {
        let mut text = format!(
            "{:<30} {:>12} {:>8} {:>8} {:>6} {:>12} {:>7} {:>8}\n",
            "scenario",
            "Burrow req/s",
            "p50 ms",
            "p99 ms",
            "errors",
            "pgbench TPS",
            "ratio",
            "RSS MiB"
        );
        for row in &self.scenarios {
            let _ = writeln!(
                text,
                "{:<30} {:>12.1} {:>8.2} {:>8.2} {:>6} {:>12.1} {:>7.3} {:>8.1}",
                row.scenario,
                row.requests_per_second,
                row.p50_ms,
                row.p99_ms,
                row.errors,
                row.pgbench_tps,
                row.ratio,
                row.peak_rss_kib as f64 / 1024.0
            );
        }
        text.push('\n');
        let _ = writeln!(text, "start-up to /_health: {:.0} ms", self.startup_ms);
        let _ = writeln!(
            text,
            "peak resident memory (VmHWM) under the scenarios' load: {:.1} MiB; while a million \
             answers arrive through capture: {:.1} MiB",
            self.peak_rss_kib as f64 / 1024.0,
            self.capture_seed_peak_rss_kib as f64 / 1024.0
        );
        for target in &self.targets {
            let _ = writeln!(
                text,
                "{}: {:.2} (target at most {}: {})",
                target.what,
                target.value,
                target.at_most,
                if target.met { "met" } else { "MISSED" }
            );
        }
        let _ = writeln!(
            text,
            "{}; commit {}{}; {} cores, {}, Linux {}, load average {}",
            self.date,
            self.commit,
            if self.uncommitted_changes {
                " with uncommitted changes"
            } else {
                ""
            },
            self.machine.nproc,
            self.machine.cpu,
            self.machine.kernel,
            self.machine.load_average
        );
        let _ = writeln!(text, "{}", self.load);
        text.push_str("phases:\n");
        for phase in &self.phases {
            let _ = writeln!(
                text,
                "  {:<44} {:>7.1} s{}",
                phase.name,
                phase.seconds,
                phase
                    .per_second
                    .map_or_else(String::new, |rate| format!("  ({rate:.0}/s)"))
            );
        }
        text
    }

    /// Writes the report to `dir/<UTC time>.json` and `dir/latest.json`; returns the first.
    pub(super) fn write(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let json = serde_json::to_string_pretty(self)? + "\n";
        let dated = dir.join(format!("{}.json", Utc::now().format("%Y%m%dT%H%M%SZ")));
        for path in [&dated, &dir.join("latest.json")] {
            fs::write(path, &json).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(dated)
    }
}

/// The aims the issue sets: counting responses costs the same at 1M events as at 10k, and a
/// page at offset 10,000 at most twice a first page.
fn targets(rows: &[Row]) -> Vec<Target> {
    let row = |slug: &str| rows.iter().find(|row| row.slug == slug);
    let mut targets = Vec::new();
    if let (Some(small), Some(large)) = (row(RESPONSES_COUNT_10K), row(RESPONSES_COUNT_1M)) {
        // "The same latency", allowing for the noise of a shared two-core machine.
        targets.push(Target::new(
            "responses_count p50, 1M events ÷ 10k events",
            large.p50_ms / small.p50_ms,
            1.5,
        ));
    }
    if let (Some(first), Some(deep)) = (row(LIST_OFFSET_0), row(LIST_OFFSET_10000)) {
        targets.push(Target::new(
            "list cost per request, offset 10000 ÷ offset 0",
            first.requests_per_second / deep.requests_per_second,
            2.0,
        ));
    }
    targets
}

/// A command's trimmed output, run in the workspace; empty when it fails.
fn output_of(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_default()
}
