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

use super::scenarios::{
    CAPTURE_DIFFERENT_SURVEYS, CAPTURE_SAME_SURVEY, FLAGS, LIST_OFFSET_0, LIST_OFFSET_10000,
    REMOTE_CONFIG, RESPONSES_COUNT_1M, RESPONSES_COUNT_10K, SURVEY_FEED,
};
use super::scenarios::{Scenario, Stage, Yardstick};
use super::wrk::Outcome;
use super::{CONCURRENCY, LOAD_THREADS, RUN_SECONDS, WARM_UP_SECONDS};
use crate::root;

/// `ratio_against` for pgbench's figure (no scenario has this slug).
const PGBENCH: &str = "pgbench";

/// One scenario's figures.
#[derive(Serialize)]
pub(super) struct Row {
    scenario: &'static str,
    slug: &'static str,
    /// When it ran (`scenarios::Stage`).
    stage: &'static str,
    requests: u64,
    seconds: f64,
    requests_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
    /// SQL statements (`BEGIN` and `COMMIT` included) the measured run executed, per request the
    /// server answered in it.
    sql_per_request: f64,
    /// pgbench's transactions per second with the SQL the request minimally needs, when that is
    /// the scenario's yardstick.
    pgbench_tps: Option<f64>,
    /// What `ratio` divides by: `pgbench`, or the slug of the scenario whose requests per second
    /// it is (none for a yardstick scenario).
    ratio_against: Option<&'static str>,
    /// Burrow's requests per second ÷ the yardstick's (per second).
    ratio: Option<f64>,
    /// The server's peak resident memory during the scenario's wrk runs.
    peak_rss_kib: u64,
}

impl Row {
    pub(super) fn new(
        scenario: &Scenario,
        wrk: &Outcome,
        sql_per_request: f64,
        pgbench_tps: Option<f64>,
        peak_rss_kib: u64,
    ) -> Self {
        let ratio_against = match scenario.yardstick {
            Yardstick::Sql(_) => Some(PGBENCH),
            Yardstick::Scenario(slug) => Some(slug),
            Yardstick::None => None,
        };
        Self {
            scenario: scenario.name,
            slug: scenario.slug,
            stage: scenario.stage.name(),
            peak_rss_kib,
            requests: wrk.requests,
            seconds: wrk.duration_us as f64 / 1e6,
            requests_per_second: wrk.requests_per_second(),
            p50_ms: wrk.p50_us as f64 / 1e3,
            p99_ms: wrk.p99_us as f64 / 1e3,
            errors: wrk.errors(),
            sql_per_request,
            pgbench_tps,
            ratio_against,
            // Once every row is measured (`Report::new`): the yardstick may be a later row.
            ratio: None,
        }
    }

    /// The yardstick's rate: pgbench's, or the other scenario's.
    fn yardstick_per_second(&self, rows: &[Self]) -> Option<f64> {
        match self.ratio_against? {
            PGBENCH => self.pgbench_tps,
            slug => rows
                .iter()
                .find(|row| row.slug == slug)
                .map(|row| row.requests_per_second),
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

/// A figure the server aims for, from the scenarios' results.
#[derive(Serialize)]
struct Target {
    what: &'static str,
    value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    at_least: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at_most: Option<f64>,
    met: bool,
}

impl Target {
    fn at_most(what: &'static str, value: f64, at_most: f64) -> Self {
        Self::within(what, value, None, Some(at_most))
    }

    fn at_least(what: &'static str, value: f64, at_least: f64) -> Self {
        Self::within(what, value, Some(at_least), None)
    }

    fn within(what: &'static str, value: f64, at_least: Option<f64>, at_most: Option<f64>) -> Self {
        Self {
            what,
            value,
            at_least,
            at_most,
            met: at_least.is_none_or(|low| value >= low)
                && at_most.is_none_or(|high| value <= high),
        }
    }

    /// `at least 0.25`, `at most 10`, `between 0.85 and 1.15`.
    fn bound(&self) -> String {
        match (self.at_least, self.at_most) {
            (Some(low), Some(high)) => format!("between {low} and {high}"),
            (Some(low), None) => format!("at least {low}"),
            (None, Some(high)) => format!("at most {high}"),
            (None, None) => String::new(),
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
    /// Whether the kernel's autogrouping was off (`scheduler.rs`): with it on, latency tails
    /// may be the kernel's.
    scheduling: String,
}

/// Two scenarios measured in turn ([`super::Measuring::alternate`]).
#[derive(Serialize)]
pub(super) struct Alternation {
    /// The first scenario's requests per second ÷ the second's, over all their runs.
    pub(super) ratio: f64,
    /// Runs of each.
    pub(super) runs: usize,
    pub(super) seconds: u32,
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
    /// The highest of the SDK scenarios' peaks: a site's visitors alone.
    sdk_peak_rss_kib: u64,
    /// The peak while a million answers arrive through capture (four senders, 5,000 a batch).
    capture_seed_peak_rss_kib: u64,
    /// Capture of one answer, 32 clients on one survey against 32 on 20 surveys, in turn.
    capture_one_survey_to_twenty: Option<Alternation>,
    scenarios: Vec<Row>,
    targets: Vec<Target>,
    phases: Vec<Phase>,
}

impl Report {
    pub(super) fn new(
        mut scenarios: Vec<Row>,
        startup: Duration,
        capture_seed_peak_rss_kib: u64,
        capture_one_survey_to_twenty: Option<Alternation>,
        phases: Phases,
        scheduling: String,
    ) -> Self {
        let ratios: Vec<Option<f64>> = scenarios
            .iter()
            .map(|row| {
                row.yardstick_per_second(&scenarios)
                    .map(|per_second| row.requests_per_second / per_second)
            })
            .collect();
        for (row, ratio) in scenarios.iter_mut().zip(ratios) {
            row.ratio = ratio;
        }
        let peak = |sdk_only: bool| {
            scenarios
                .iter()
                .filter(|row| !sdk_only || row.stage == Stage::Sdk.name())
                .map(|row| row.peak_rss_kib)
                .max()
                .unwrap_or(0)
        };
        let peak_rss_kib = peak(false);
        let sdk_peak_rss_kib = peak(true);
        let targets = targets(
            &scenarios,
            sdk_peak_rss_kib,
            capture_one_survey_to_twenty.as_ref(),
        );
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
                scheduling,
            },
            load: format!(
                "each scenario: wrk -t{LOAD_THREADS} -c{CONCURRENCY} --latency, {WARM_UP_SECONDS} s warm-up then \
                 {RUN_SECONDS} s measured; pgbench -n -M prepared -c {CONCURRENCY} -j {LOAD_THREADS} \
                 -T {RUN_SECONDS}; same machine and database"
            ),
            startup_ms: startup.as_secs_f64() * 1e3,
            peak_rss_kib,
            sdk_peak_rss_kib,
            capture_seed_peak_rss_kib,
            capture_one_survey_to_twenty,
            scenarios,
            targets,
            phases: phases.0,
        }
    }

    /// The table and the lines below it.
    pub(super) fn text(&self) -> String {
        let mut text = format!(
            "{:<30} {:>12} {:>8} {:>8} {:>6} {:>7} {:>12} {:>7} {:<8} {:>7}\n",
            "scenario",
            "Burrow req/s",
            "p50 ms",
            "p99 ms",
            "errors",
            "SQL/req",
            "yardstick/s",
            "ratio",
            "against",
            "RSS MiB"
        );
        let or_dash = |value: Option<f64>, decimals: usize| {
            value.map_or_else(|| "—".to_owned(), |value| format!("{value:.decimals$}"))
        };
        for row in &self.scenarios {
            let _ = writeln!(
                text,
                "{:<30} {:>12.1} {:>8.2} {:>8.2} {:>6} {:>7.2} {:>12} {:>7} {:<8} {:>7.1}",
                row.scenario,
                row.requests_per_second,
                row.p50_ms,
                row.p99_ms,
                row.errors,
                row.sql_per_request,
                or_dash(row.yardstick_per_second(&self.scenarios), 1),
                or_dash(row.ratio, 3),
                row.ratio_against.unwrap_or("—"),
                row.peak_rss_kib as f64 / 1024.0
            );
        }
        text.push('\n');
        let _ = writeln!(text, "start-up to /_health: {:.0} ms", self.startup_ms);
        let _ = writeln!(
            text,
            "peak resident memory (VmHWM) under the scenarios' load: {:.1} MiB; under the SDK \
             scenarios: {:.1} MiB; while a million answers arrive through capture: {:.1} MiB",
            self.peak_rss_kib as f64 / 1024.0,
            self.sdk_peak_rss_kib as f64 / 1024.0,
            self.capture_seed_peak_rss_kib as f64 / 1024.0
        );
        for target in &self.targets {
            let _ = writeln!(
                text,
                "{}: {:.2} (target {}: {})",
                target.what,
                target.value,
                target.bound(),
                if target.met { "met" } else { "MISSED" }
            );
        }
        let _ = writeln!(
            text,
            "{}; commit {}{}; {} cores, {}, Linux {} ({}), load average {}",
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
            self.machine.scheduling,
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

/// The aims the issues set: counting responses costs the same at 1M events as at 10k, a page at
/// offset 10,000 at most twice a first page; and for a site's visitors, `/flags`, config, feed
/// and capture against their yardsticks, few statements, and little memory.
fn targets(
    rows: &[Row],
    sdk_peak_rss_kib: u64,
    one_survey_to_twenty: Option<&Alternation>,
) -> Vec<Target> {
    let row = |slug: &str| rows.iter().find(|row| row.slug == slug);
    let mut targets = Vec::new();
    if let (Some(small), Some(large)) = (row(RESPONSES_COUNT_10K), row(RESPONSES_COUNT_1M)) {
        // "The same latency", allowing for the noise of a shared two-core machine.
        targets.push(Target::at_most(
            "responses_count p50, 1M events ÷ 10k events",
            large.p50_ms / small.p50_ms,
            1.5,
        ));
    }
    if let (Some(first), Some(deep)) = (row(LIST_OFFSET_0), row(LIST_OFFSET_10000)) {
        targets.push(Target::at_most(
            "list cost per request, offset 10000 ÷ offset 0",
            first.requests_per_second / deep.requests_per_second,
            2.0,
        ));
    }
    if let Some(flags) = row(FLAGS) {
        if let Some(ratio) = flags.ratio {
            targets.push(Target::at_least(
                "/flags ÷ pgbench's person read",
                ratio,
                0.25,
            ));
        }
        // The person's read; the snapshot's rebuild when its 30 s lifetime ends adds ~0.0001.
        targets.push(Target::at_most(
            "/flags SQL statements per request",
            flags.sql_per_request,
            1.01,
        ));
        targets.push(Target::at_most("/flags p99 ms", flags.p99_ms, 10.0));
    }
    for (slug, what, at_least, statements) in [
        (
            REMOTE_CONFIG,
            "remote config ÷ /_health",
            0.5,
            "remote config SQL statements per request",
        ),
        (
            SURVEY_FEED,
            "survey feed ÷ /_health",
            0.25,
            "survey feed SQL statements per request",
        ),
    ] {
        if let Some(read) = row(slug) {
            if let Some(ratio) = read.ratio {
                targets.push(Target::at_least(what, ratio, at_least));
            }
            // None in a steady state; a cache refreshed every few seconds costs ~0.0001.
            targets.push(Target::at_most(statements, read.sql_per_request, 0.01));
        }
    }
    for (slug, what, statements) in [
        (
            CAPTURE_SAME_SURVEY,
            "capture of 1 answer, one survey ÷ pgbench's event insert",
            "capture of 1 answer, one survey: SQL statements per request",
        ),
        (
            CAPTURE_DIFFERENT_SURVEYS,
            "capture of 1 answer, 20 surveys ÷ pgbench's event insert",
            "capture of 1 answer, 20 surveys: SQL statements per request",
        ),
    ] {
        if let Some(capture) = row(slug) {
            if let Some(ratio) = capture.ratio {
                targets.push(Target::at_least(what, ratio, 0.5));
            }
            targets.push(Target::at_most(statements, capture.sql_per_request, 3.0));
        }
    }
    if let Some(alternation) = one_survey_to_twenty {
        targets.push(Target::within(
            "capture req/s, 32 clients on one survey ÷ on 20 surveys, measured in turn",
            alternation.ratio,
            Some(0.85),
            Some(1.15),
        ));
    }
    if rows.iter().any(|row| row.stage == Stage::Sdk.name()) {
        targets.push(Target::at_most(
            "peak RSS MiB during the SDK scenarios",
            sdk_peak_rss_kib as f64 / 1024.0,
            48.0,
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
