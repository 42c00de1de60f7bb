//! `cargo xtask bench`: measures a release `burrow` under load, beside what PostgreSQL itself
//! does with the same queries.
//!
//! 1. Builds the release binary, starts a PostgreSQL of the bench's own with `pg_stat_statements`
//!    (`cluster`), creates the `burrow_bench` database in it, and makes the tenants with
//!    `burrow admin`.
//! 2. Starts `burrow serve` and times it until `/_health` answers.
//! 3. Seeds realistic data through the API (`seed`): 10 flags, 1,000 rich surveys, 100 source
//!    plugins, 20,000 simple surveys in a second project, 100 launched surveys and 10,000 of
//!    their answers through the capture endpoint; and an SDK project as a customer's site has
//!    it: 20 flags, 20 launched surveys with targeting, 2,000 persons stored through capture.
//! 4. Runs each scenario (`scenarios`) on a freshly vacuumed database: wrk for a warm-up and a
//!    measured run, counting the SQL statements of the measured run, then pgbench with the SQL
//!    the scenario minimally needs. Reads first, then the SDK's requests, then answers up to
//!    1,000,000 and counting them again, writes last. The two capture scenarios, which one
//!    target compares with each other, run once more in turn (`Measuring::alternate`).
//! 5. Prints the table and writes it as JSON (`report`), then stops the server with SIGTERM and
//!    the cluster.
//!
//! Any error answer, socket error or timeout during a run fails the bench: a figure measured over
//! errors would mislead. Scripts and logs stay in `target/bench/` to be rerun or read.

mod cluster;
pub(crate) mod database;
mod pgbench;
mod report;
mod scenarios;
mod scheduler;
mod seed;
mod wrk;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use chrono::Utc;

use self::cluster::Cluster;
use self::report::{Alternation, Phases, Report, Row};
use self::scenarios::{Scenario, Seeded, Stage, Yardstick};
use self::scheduler::Autogroups;
use crate::api::Api;
use crate::prerequisites::ensure_program;
use crate::server::Server;
use crate::{build_burrow, target_dir};

/// wrk's threads and pgbench's jobs.
const LOAD_THREADS: u32 = 2;
/// Connections (wrk) and clients (pgbench) in every scenario.
const CONCURRENCY: u32 = 32;
const WARM_UP_SECONDS: u32 = 2;
const RUN_SECONDS: u32 = 10;
/// The two capture scenarios compared with each other: runs of each, taken in turn.
const ALTERNATE_RUNS: usize = 6;
const ALTERNATE_SECONDS: u32 = 4;

const FLAGS: usize = 10;
const SURVEYS: usize = 1_000;
const PLUGINS: usize = 100;
const DEEP_SURVEYS: usize = 20_000;
/// Surveys (of the first `SURVEYS`) that are launched and get answers.
const LAUNCHED: usize = 100;
const FIRST_EVENTS: usize = 10_000;
const ALL_EVENTS: usize = 1_000_000;
/// The SDK project, as the issue measured a customer's site: 20 flags, 20 launched surveys with
/// targeting, 2,000 persons; capture batches of 100 events.
const SDK_FLAGS: usize = 20;
const SDK_SURVEYS: usize = 20;
const SDK_PERSONS: usize = 2_000;
const BATCH_EVENTS: usize = 100;

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    // `--sdk`: only the SDK project and its scenarios, for a quick look at the SDK edge (its
    // peak memory then misses what the API stage leaves behind; the full run is the measure).
    let sdk_only = match args {
        [] => false,
        [flag] if flag == "--sdk" => true,
        [argument, ..] => bail!("cargo xtask bench takes only --sdk (got {argument:?})"),
    };
    let dir = target_dir().join("bench");
    for sub in ["sql", "wrk"] {
        fs::create_dir_all(dir.join(sub))?;
    }
    ensure_program("wrk", "wrk", "wrk loads Burrow")?;
    ensure_program(
        "pgbench",
        "postgresql-client",
        "pgbench runs the yardstick's SQL",
    )?;
    ensure_program("psql", "postgresql-client", "psql reads pg_stat_statements")?;

    let mut phases = Phases::default();
    let burrow = phases.time("release build", || build_burrow(true))?;
    // Before PostgreSQL starts, and until after it stops (dropped last).
    let autogroups = Autogroups::off();
    let cluster = phases.time("PostgreSQL with pg_stat_statements", || {
        Cluster::start(&dir.join("postgres"))
    })?;
    let tenants = phases.time("fresh database and tenants", || {
        database::fresh(&cluster, &burrow)
    })?;
    let server = Server::start(&burrow, &tenants.database_url, &dir.join("server.log"))?;
    eprintln!(
        "xtask: bench: burrow serve answered /_health {:.0} ms after spawning",
        server.startup().as_secs_f64() * 1e3
    );
    let api = Api::new(server.base_url(), tenants.key.clone());
    let project = tenants.project_id;

    let (flags, surveys, plugins) = if sdk_only {
        Default::default()
    } else {
        seed_api(&api, &tenants, &mut phases)?
    };
    let sdk_project = tenants.sdk_project_id;
    let sdk_flags = phases.time_items("seed: SDK project's flags", SDK_FLAGS, || {
        seed::site_flags(&api, sdk_project, SDK_FLAGS)
    })?;
    let sdk_surveys =
        phases.time_items("seed: SDK project's launched surveys", SDK_SURVEYS, || {
            let surveys = seed::surveys(&api, sdk_project, &sdk_flags, SDK_SURVEYS)?;
            seed::launch(&api, sdk_project, &surveys)?;
            Ok(surveys)
        })?;
    let persons = seed::person_ids(SDK_PERSONS);
    phases.time_items("seed: SDK project's persons", SDK_PERSONS, || {
        seed::persons(&api, &tenants.sdk_project_token, &sdk_surveys, &persons)?;
        database::check_persons(&tenants.database_url, sdk_project, SDK_PERSONS)
    })?;
    let answers = seed::Answers {
        api: &api,
        token: &tenants.project_token,
        surveys: surveys.get(..LAUNCHED).unwrap_or_default(),
        total: ALL_EVENTS,
        now: Utc::now(),
    };
    if !sdk_only {
        phases.time_items("seed: survey events (first 10k)", FIRST_EVENTS, || {
            answers.send(0..FIRST_EVENTS)?;
            answers.check_count(project, FIRST_EVENTS)?;
            database::vacuum(&tenants.database_url)
        })?;
    }

    let seeded = Seeded {
        tenants: &tenants,
        flags: &flags,
        surveys: &surveys,
        plugins: &plugins,
        sdk_surveys: &sdk_surveys,
        persons: &persons,
    };
    let scenarios = if sdk_only {
        scenarios::sdk(&seeded)
    } else {
        scenarios::all(&seeded)
    };
    let measuring = Measuring {
        api: &api,
        server: &server,
        cluster: &cluster,
        dir: &dir,
        key: &tenants.key,
        database_url: &tenants.database_url,
    };
    let mut rows: Vec<Option<Row>> = scenarios.iter().map(|_| None).collect();
    let mut capture_peak_kib = 0;
    let mut one_survey_to_twenty = None;
    for stage in [Stage::Reads, Stage::Sdk, Stage::AllEvents, Stage::Writes] {
        if stage == Stage::AllEvents && !sdk_only {
            server.reset_peak_memory()?;
            phases.time_items(
                "seed: survey events (up to 1M)",
                ALL_EVENTS - FIRST_EVENTS,
                || {
                    answers.send(FIRST_EVENTS..ALL_EVENTS)?;
                    answers.check_count(project, ALL_EVENTS)?;
                    database::vacuum(&tenants.database_url)
                },
            )?;
            capture_peak_kib = server.peak_memory_kib()?;
        }
        for (index, scenario) in scenarios.iter().enumerate() {
            if scenario.stage == stage {
                rows[index] = Some(phases.time(&format!("measure: {}", scenario.name), || {
                    measuring.measure(scenario)
                })?);
            }
        }
        let slug = |slug| scenarios.iter().find(|scenario| scenario.slug == slug);
        if let (Some(one), Some(twenty)) = (
            slug(scenarios::CAPTURE_SAME_SURVEY),
            slug(scenarios::CAPTURE_DIFFERENT_SURVEYS),
        ) && one.stage == stage
        {
            one_survey_to_twenty = Some(
                phases.time("measure: capture, one survey and 20 in turn", || {
                    measuring.alternate(one, twenty)
                })?,
            );
        }
    }
    let startup = server.startup();
    drop(server);

    let rows = rows.into_iter().flatten().collect();
    let report = Report::new(
        rows,
        startup,
        capture_peak_kib,
        one_survey_to_twenty,
        phases,
        autogroups.describe(),
    );
    print!("{}", report.text());
    let written = report.write(&dir)?;
    println!("report: {} (and latest.json)", written.display());
    Ok(())
}

/// The API stage's data: flags and rich surveys (the first `LAUNCHED` launched) of the main
/// project, source plugins, and the second project's simple surveys.
fn seed_api(
    api: &Api,
    tenants: &database::Tenants,
    phases: &mut Phases,
) -> anyhow::Result<(Vec<i64>, Vec<seed::Survey>, Vec<i64>)> {
    let project = tenants.project_id;
    let flags = phases.time_items("seed: feature flags", FLAGS, || {
        seed::flags(api, project, FLAGS)
    })?;
    let surveys = phases.time_items("seed: rich surveys", SURVEYS, || {
        seed::surveys(api, project, &flags, SURVEYS)
    })?;
    let plugins = phases.time_items("seed: source plugins with files", PLUGINS, || {
        seed::plugins(api, &tenants.organization_id, PLUGINS)
    })?;
    phases.time_items(
        "seed: simple surveys in a second project",
        DEEP_SURVEYS,
        || seed::simple_surveys(api, tenants.deep_project_id, DEEP_SURVEYS),
    )?;
    phases.time_items("seed: launch surveys", LAUNCHED, || {
        seed::launch(api, project, &surveys[..LAUNCHED])
    })?;
    Ok((flags, surveys, plugins))
}

/// What measuring a scenario needs.
struct Measuring<'a> {
    api: &'a Api,
    server: &'a Server,
    cluster: &'a Cluster,
    dir: &'a Path,
    key: &'a str,
    database_url: &'a str,
}

impl Measuring<'_> {
    /// wrk's warm-up and measured runs, then pgbench, from a vacuumed database: the row versions
    /// an earlier scenario left (pgbench's PATCH alone leaves tens of thousands) would otherwise
    /// slow the next one's scans until autovacuum came by. The statements counted are the
    /// measured run's (the warm-up fills caches a steady state has full), divided by the requests
    /// the server answered for it: those include the ones wrk stopped waiting for when its time
    /// was up, whose statements count too.
    fn measure(&self, scenario: &Scenario) -> anyhow::Result<Row> {
        database::vacuum(self.database_url)?;
        let (lua, url) = self.script(scenario)?;
        self.server.reset_peak_memory()?;
        let warm_up = self.load(scenario, &lua, &url, "warm-up", WARM_UP_SECONDS)?;
        self.server.settle(warm_up.p99())?;
        self.cluster.reset_statements()?;
        let answered_before = self.server.requests_answered()?;
        let outcome = self.load(scenario, &lua, &url, "measured", RUN_SECONDS)?;
        self.server.settle(outcome.p99())?;
        let statements = self.cluster.statements(database::DATABASE)?;
        let answered = self.server.requests_answered()? - answered_before;
        let peak_rss_kib = self.server.peak_memory_kib()?;
        let tps = match &scenario.yardstick {
            Yardstick::Sql(sql) => {
                let script = self.dir.join("sql").join(format!("{}.sql", scenario.slug));
                pgbench::write(&script, scenario.name, sql, self.database_url)?;
                Some(pgbench::run(&script, &sql.variables, self.database_url)?)
            }
            Yardstick::Scenario(_) | Yardstick::None => None,
        };
        let sql_per_request = statements as f64 / answered.max(1) as f64;
        Ok(Row::new(
            scenario,
            &outcome,
            sql_per_request,
            tps,
            peak_rss_kib,
        ))
    }

    /// Burrow's requests per second in scenario `a` ÷ those in `b`, from runs of each taken in
    /// turn (`a b b a a b`), so that the machine's drift falls on both alike: on the bench's
    /// machine, the rate of one 10 s run moved by up to 40 % against the next one's in the same
    /// scenario, more than the ±15 % the two are compared within.
    fn alternate(&self, a: &Scenario, b: &Scenario) -> anyhow::Result<Alternation> {
        database::vacuum(self.database_url)?;
        let scripts = [self.script(a)?, self.script(b)?];
        let mut requests = [0_u64; 2];
        let mut micros = [0_u64; 2];
        for run in 0..ALTERNATE_RUNS {
            // a b, b a, a b: each pair starts with the one the last pair ended with.
            let which = (run + run / 2) % 2;
            let scenario = [a, b][which];
            let (lua, url) = &scripts[which];
            let outcome = self.load(scenario, lua, url, "alternating", ALTERNATE_SECONDS)?;
            requests[which] += outcome.requests;
            micros[which] += outcome.duration_us;
        }
        let per_second =
            |which: usize| requests[which] as f64 / (micros[which].max(1) as f64 / 1e6);
        Ok(Alternation {
            ratio: per_second(0) / per_second(1),
            runs: ALTERNATE_RUNS / 2,
            seconds: ALTERNATE_SECONDS,
        })
    }

    /// Writes the scenario's wrk script; returns its path and the URL it loads.
    fn script(&self, scenario: &Scenario) -> anyhow::Result<(PathBuf, String)> {
        let url = format!("{}{}", self.server.base_url(), scenario.load.paths[0]);
        let lua = self.dir.join("wrk").join(format!("{}.lua", scenario.slug));
        fs::write(
            &lua,
            wrk::script(scenario.name, &scenario.load, self.key, &url),
        )
        .with_context(|| format!("writing {}", lua.display()))?;
        Ok((lua, url))
    }

    /// One wrk run; fails on any error answer, socket error or timeout in it.
    fn load(
        &self,
        scenario: &Scenario,
        lua: &Path,
        url: &str,
        tag: &str,
        seconds: u32,
    ) -> anyhow::Result<wrk::Outcome> {
        let result = self.dir.join("wrk").join(format!("{}.json", scenario.slug));
        let outcome = wrk::run(lua, url, seconds, &result)?;
        if outcome.errors() > 0 {
            bail!(
                "FAIL: \"{}\": {} during the {tag} run, so there is no figure. One more request \
                 the same way answered {}. Server log: {}; wrk script: {}",
                scenario.name,
                outcome.describe_errors(),
                self.probe(scenario),
                self.server
                    .log()
                    .map_or_else(String::new, |log| log.display().to_string()),
                lua.display()
            );
        }
        Ok(outcome)
    }

    /// One request as the scenario sends it, described as `status: body`.
    fn probe(&self, scenario: &Scenario) -> String {
        let load = &scenario.load;
        let body = load.body.as_ref().map(wrk::Body::sample);
        self.api.probe(
            load.method,
            &load.paths[0],
            body.as_deref(),
            load.personal_key,
        )
    }
}
