//! `dev`'s server part as a new user meets it: the printed demo page, opened in Chromium, shows
//! the demo survey; answering it moves `responses_count`. Needs what `cargo xtask test` provides:
//! `BURROW_TEST_DATABASE_URL`, the built `burrow` (`BURROW_BIN`, else `target/debug/burrow`), and
//! posthog-js with playwright-core (`BURROW_BROWSER_DIR`, else `target/browser`).

use std::env;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::*;
use crate::bench::database::psql;
use crate::server::free_address;
use crate::{root, run as run_command, target_dir};

/// The screenshot the README shows, regenerated with `BURROW_BLESS=1`.
const README_SCREENSHOT: &str = "docs/demo-page.png";

fn required(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing ({what}); run `cargo xtask test`, which provides it",
        path.display()
    );
    path
}

fn burrow_binary() -> PathBuf {
    let path = env::var_os("BURROW_BIN")
        .map_or_else(|| target_dir().join("debug").join("burrow"), PathBuf::from);
    required(path, "the burrow binary")
}

fn browser_dir() -> PathBuf {
    let dir = env::var_os("BURROW_BROWSER_DIR")
        .map_or_else(|| target_dir().join("browser"), PathBuf::from);
    required(
        dir.join("node_modules/playwright-core/package.json"),
        "playwright-core",
    );
    dir
}

/// A database of its own on the tests' server; dropped (best effort) when the test ends.
struct Database {
    admin_url: String,
    name: String,
}

impl Database {
    fn create(burrow: &Path) -> Self {
        let admin_url = env::var("BURROW_TEST_DATABASE_URL").expect(
            "BURROW_TEST_DATABASE_URL names the tests' PostgreSQL (cargo xtask test sets it)",
        );
        let name = format!("burrow_test_dev_{}", uuid::Uuid::new_v4().simple());
        let database = Self { admin_url, name };
        run_command(
            Command::new(burrow)
                .args(["migrate", "--create-database"])
                .env("DATABASE_URL", database.url()),
        )
        .expect("burrow migrate");
        database
    }

    fn url(&self) -> String {
        let (server, _) = self
            .admin_url
            .rsplit_once('/')
            .expect("a database URL ends in /<database>");
        format!("{server}/{}", self.name)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = psql(
            &self.admin_url,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

fn settings(burrow: PathBuf, database: &Database, key: String, demo: bool) -> Settings {
    Settings {
        burrow,
        database_url: database.url(),
        bind: free_address().expect("a free port"),
        demo_bind: demo.then(|| free_address().expect("a free port")),
        static_dir: browser_dir().join("static"),
        key,
    }
}

#[test]
fn the_printed_demo_page_shows_the_survey_and_its_answer_is_counted() {
    let burrow = burrow_binary();
    let database = Database::create(&burrow);
    let first_key = demo_key(&burrow, &database.url()).expect("bootstrapping the demo tenant");
    let key = demo_key(&burrow, &database.url()).expect("a second key for the demo user");
    assert_ne!(first_key, key, "each run prints a key of its own");

    let artifacts = target_dir().join("browser");
    std::fs::create_dir_all(&artifacts).expect("creating target/browser");
    let log = artifacts.join("burrow-dev.log");
    let session = Session::start(&settings(burrow, &database, key.clone(), true), Some(&log))
        .expect("dev's server part starts");
    let (demo, site) = session.demo.as_ref().expect("the demo is on by default");
    let api = Api::new(session.origin.clone(), key);

    // The demo page's URL is what the user sees first.
    let banner = session.banner();
    let first_line = banner.lines().next().unwrap_or_default();
    assert!(first_line.contains(site.url()), "{banner}");
    assert!(banner.contains("/api/schema/swagger-ui/"), "{banner}");
    assert!(
        banner.contains(&format!("{}/app/", session.origin)),
        "the console: {banner}"
    );

    // A second run finds the same survey rather than making another.
    let again = demo::seed(&api).expect("seeding again");
    assert_eq!(again.survey_id, demo.survey_id);
    let listed = api
        .get(&format!("/api/projects/{}/surveys/", demo.project_id))
        .expect("listing surveys");
    assert_eq!(listed["count"], 1, "{listed}");

    let screenshot = artifacts.join("demo-page.png");
    let report = drive(&session, demo, site, &screenshot);
    let counted = wait_for_one_response(&api, demo);
    assert!(
        counted,
        "responses_count never counted the answer: {report}"
    );

    let responses = api
        .get(&format!(
            "/api/projects/{}/surveys/{}/responses/browse/",
            demo.project_id, demo.survey_id
        ))
        .expect("the responses");
    let answers: Vec<String> = responses["results"][0]["answers"]
        .as_object()
        .expect("answers by question")
        .values()
        .map(|answer| {
            answer
                .as_str()
                .map_or_else(|| answer.to_string(), str::to_owned)
        })
        .collect();
    assert!(answers.contains(&"9".to_owned()), "{responses}");
    assert!(answers.contains(&"Thicker heels".to_owned()), "{responses}");

    if env::var_os("BURROW_BLESS").is_some() {
        std::fs::copy(&screenshot, root().join(README_SCREENSHOT))
            .expect("updating the README's screenshot");
    }
}

#[test]
fn no_demo_serves_burrow_alone() {
    let burrow = burrow_binary();
    let database = Database::create(&burrow);
    let key = demo_key(&burrow, &database.url()).expect("bootstrapping the demo tenant");
    let session = Session::start(&settings(burrow, &database, key.clone(), false), None)
        .expect("dev's server part starts");
    let api = Api::new(session.origin.clone(), key);
    assert!(session.demo.is_none());
    let banner = session.banner();
    assert!(!banner.contains("pretend customer"), "{banner}");
    assert!(banner.contains("/api/schema/swagger-ui/"), "{banner}");
    let surveys = api.get("/api/projects/").expect("listing projects");
    let project = &surveys["results"][0]["id"];
    let listed = api
        .get(&format!("/api/projects/{project}/surveys/"))
        .expect("listing surveys");
    assert_eq!(listed["count"], 0, "no demo survey: {listed}");
}

#[test]
fn dev_refuses_unknown_arguments() {
    let error = super::run(&["--demo-please".to_owned()]).expect_err("an unknown flag");
    assert!(error.to_string().contains("--no-demo"), "{error}");
}

/// Opens the demo page in Chromium and answers the survey there (the browser tests' driver,
/// `crates/server/tests/browser/survey.mjs`, mode `demo`); returns the driver's report.
fn drive(session: &Session, demo: &Demo, site: &Site, screenshot: &Path) -> Value {
    let script = root().join("crates/server/tests/browser/survey.mjs");
    let output = Command::new("node")
        .arg(script)
        .env("BROWSER_DIR", browser_dir())
        .env(
            "CHROMIUM",
            env::var("BURROW_CHROMIUM").unwrap_or_else(|_| "chromium".into()),
        )
        .env("BURROW_URL", &session.origin)
        .env("TOKEN", &demo.token)
        .env("MODE", "demo")
        .env("PAGE_URL", site.url())
        .env("SURVEY", &demo.survey_id)
        .env("ANSWER", "Thicker heels")
        .env("SCREENSHOT", screenshot)
        .output()
        .expect("running node");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "the driver printed no JSON ({}): {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(
        output.status.success(),
        "the browser part failed: {}\nreport: {report}",
        report["error"]
    );
    report
}

/// Polls `responses_count` until the demo survey has one response; false after 30 s.
fn wait_for_one_response(api: &Api, demo: &Demo) -> bool {
    let path = format!("/api/projects/{}/surveys/responses_count/", demo.project_id);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let counts = api.get(&path).expect("responses_count");
        if counts[demo.survey_id.as_str()] == 1 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    false
}
