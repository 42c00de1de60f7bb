//! posthog-js 1.449.2 (the npm package) in Chromium against `burrow serve`: a shop's page on
//! another origin loads the SDK, with its `api_host` at Burrow, and a survey created through
//! Burrow's API pops up, is answered and is counted. The bundle is either the full one, served
//! by the shop, or PostHog's HTML snippet loading `/static/array.js` and then `surveys.js` from
//! Burrow. `cargo xtask test` installs posthog-js and playwright-core into `target/browser`
//! (`BURROW_BROWSER_DIR`); Chromium is Debian's (`BURROW_CHROMIUM` names another binary).
//! The driver is `tests/browser/survey.mjs`; screenshots land in `target/browser/`. Each answer
//! also reaches a webhook, whose receiver verifies it with `standardwebhooks` from PyPI.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use adapters::testing::TestDatabase;
use serde_json::{Value, json};

use crate::helpers::chromium;
use crate::process::{ServerProcess, bootstrap, serve};
use crate::webhook_receiver::{Receiver, assert_all_verified};

const POSTHOG_JS_VERSION: &str = "1.449.2";

/// Where `cargo xtask test` installed posthog-js and playwright-core; panics, saying how to
/// install them, when they are missing.
pub(crate) fn browser_dir() -> PathBuf {
    let dir = std::env::var_os("BURROW_BROWSER_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/browser"),
        PathBuf::from,
    );
    for needed in [
        "node_modules/posthog-js/package.json".to_owned(),
        "node_modules/playwright-core/package.json".to_owned(),
        format!("static/{POSTHOG_JS_VERSION}/array.js"),
        format!("static/{POSTHOG_JS_VERSION}/surveys.js"),
    ] {
        assert!(
            dir.join(&needed).is_file(),
            "{} is missing from the browser directory {} (BURROW_BROWSER_DIR): run `cargo xtask \
             test`, which installs posthog-js@{POSTHOG_JS_VERSION} and playwright-core from the \
             npm registry and copies posthog-js's dist/ to static/{POSTHOG_JS_VERSION}/",
            needed,
            dir.display()
        );
    }
    dir
}

/// Screenshots and server logs: `target/browser/`.
pub(crate) fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/browser");
    std::fs::create_dir_all(&dir).expect("creating target/browser");
    dir.canonicalize().expect("target/browser exists")
}

/// Runs the browser driver `tests/browser/<script>` (node, playwright-core, Chromium) with
/// `vars` besides `BROWSER_DIR` and `CHROMIUM`, within `bound`. Its JSON report is kept as
/// `target/browser/report-<name>.json` and returned; unless the driver succeeded, this panics
/// with the report, what node printed on stderr and `context()` (what else tells why).
pub(crate) async fn drive(
    script: &str,
    name: &str,
    vars: &[(&str, String)],
    bound: Duration,
    context: impl FnOnce() -> String,
) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/browser")
        .join(script);
    let mut command = tokio::process::Command::new("node");
    command
        .arg(&script)
        .env("BROWSER_DIR", browser_dir())
        .env("CHROMIUM", chromium())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (variable, value) in vars {
        command.env(variable, value);
    }
    let output = tokio::time::timeout(bound, command.output())
        .await
        .unwrap_or_else(|_| panic!("{} finishes within {bound:?}", script.display()))
        .expect("running node");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "the driver printed no JSON ({}): {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    std::fs::write(
        artifacts().join(format!("report-{name}.json")),
        serde_json::to_vec_pretty(&report).unwrap(),
    )
    .expect("keeping the report");
    assert!(
        output.status.success(),
        "the browser part failed: {}\nreport: {}\nstderr: {}\n{}",
        report["error"],
        serde_json::to_string_pretty(&report).unwrap(),
        String::from_utf8_lossy(&output.stderr),
        context()
    );
    report
}

/// A real `burrow serve` on its own database, serving posthog-js's bundles, with a tenant.
struct Burrow {
    server: ServerProcess,
    client: reqwest::Client,
    key: String,
    token: String,
    project_id: i64,
    log: PathBuf,
    name: String,
    _database: TestDatabase,
}

impl Burrow {
    async fn start(name: &str) -> Self {
        let static_dir = browser_dir().join("static");
        let database = TestDatabase::create().await;
        let tenant = bootstrap(&database.url);
        let log = artifacts().join(format!("burrow-{name}.log"));
        let server = serve(&database.url, Some(&log), |command| {
            command
                .env("BURROW_STATIC_DIR", &static_dir)
                // The webhook receiver listens on loopback.
                .env("BURROW_WEBHOOKS_ALLOW_PRIVATE", "1")
                .env("BURROW_WEBHOOK_POLL_MS", "100")
                // Recurring surveys move on within a second of their next iteration.
                .env("BURROW_SURVEY_SCHEDULE_SECS", "1")
                .env("RUST_LOG", "info");
        })
        .await;
        Self {
            server,
            client: reqwest::Client::new(),
            key: tenant["personal_api_key"].as_str().unwrap().to_owned(),
            token: tenant["project_api_token"].as_str().unwrap().to_owned(),
            project_id: tenant["project_id"].as_i64().unwrap(),
            log,
            name: name.to_owned(),
            _database: database,
        }
    }

    async fn get(&self, path: &str) -> Value {
        let response = self
            .client
            .get(self.server.url(path))
            .bearer_auth(&self.key)
            .send()
            .await
            .expect("GET to burrow");
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// A running popover survey created through the API, with `extra` fields merged in.
    async fn survey(&self, name: &str, question: Value, extra: Value) -> Value {
        let mut body = json!({
            "name": name,
            "type": "popover",
            "questions": [question],
            "start_date": chrono::Utc::now().to_rfc3339(),
        });
        for (field, value) in extra.as_object().unwrap() {
            body[field] = value.clone();
        }
        let response = self
            .client
            .post(
                self.server
                    .url(&format!("/api/projects/{}/surveys/", self.project_id)),
            )
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .expect("POST a survey");
        let status = response.status();
        let survey: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, 201, "{survey}");
        survey
    }

    /// A webhook on completed responses to `receiver`, which is given its secret.
    async fn subscribe(&self, receiver: &Receiver) {
        let response = self
            .client
            .post(
                self.server
                    .url(&format!("/api/projects/{}/webhooks/", self.project_id)),
            )
            .bearer_auth(&self.key)
            .json(&json!({"url": receiver.url(), "events": ["survey_response.completed"]}))
            .send()
            .await
            .expect("POST a webhook");
        let status = response.status();
        let webhook: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, 201, "{webhook}");
        receiver
            .control(&[webhook["secret"].as_str().unwrap()], &[])
            .await;
    }

    /// Runs the driver script; its JSON report (also kept as `target/browser/report-<name>.json`),
    /// or a panic with the report and the log's tail.
    async fn drive(&self, vars: &[(&str, String)]) -> Value {
        let mut vars = vars.to_vec();
        vars.push(("BURROW_URL", self.server.address.clone()));
        vars.push(("TOKEN", self.token.clone()));
        drive(
            "survey.mjs",
            &self.name,
            &vars,
            Duration::from_secs(150),
            || {
                format!(
                    "burrow's log ({}):\n{}",
                    self.log.display(),
                    log_tail(&self.log)
                )
            },
        )
        .await
    }

    /// Polls `responses_count` until `survey` has one response; panics after 30 s.
    async fn wait_for_one_response(&self, survey: &str, report: &Value) {
        let path = format!("/api/projects/{}/surveys/responses_count/", self.project_id);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let counts = self.get(&path).await;
            if counts[survey] == 1 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "responses_count never showed 1 for {survey}: {counts}\nthe browser sent: {}\n\
                 burrow's log:\n{}",
                serde_json::to_string_pretty(&report["requests"]).unwrap(),
                log_tail(&self.log)
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The survey's responses as `GET .../responses/browse/` lists them.
    async fn responses(&self, survey: &str) -> Vec<Value> {
        let path = format!(
            "/api/projects/{}/surveys/{survey}/responses/browse/",
            self.project_id
        );
        self.get(&path).await["results"]
            .as_array()
            .expect("a results list")
            .clone()
    }
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// The first `survey sent` event the driver saw the page send to Burrow.
fn survey_sent(report: &Value) -> Value {
    report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|request| request["events"].as_array().cloned().unwrap_or_default())
        .find(|event| event["event"] == "survey sent")
        .expect("a survey sent event")
}

/// A survey as the shop's visitor sees it: the popover shows, the answer is captured and counted
/// once with its value, and it is not shown again: neither after a reload nor to the same
/// person (same distinct id) in a fresh browser, where only Burrow remembers the answer. Another
/// person then sees it, unless the answer reached the survey's `responses_limit`, which stops it.
async fn shown_answered_counted_and_not_shown_again(
    name: &str,
    bundle: &str,
    question: Value,
    answer: &str,
    responses_limit: Option<u32>,
) {
    let burrow = Burrow::start(name).await;
    let survey = burrow
        .survey(
            &format!("Shop survey ({name})"),
            question,
            json!({"responses_limit": responses_limit}),
        )
        .await;
    let id = survey["id"].as_str().unwrap().to_owned();
    let question_id = survey["questions"][0]["id"]
        .as_str()
        .expect("Burrow gives each question an id")
        .to_owned();
    let screenshot = artifacts().join(format!("survey-{name}.png"));
    let _ = std::fs::remove_file(&screenshot);
    let receiver = Receiver::start().await;
    burrow.subscribe(&receiver).await;

    let report = burrow
        .drive(&[
            ("MODE", "answer".into()),
            ("BUNDLE", bundle.into()),
            ("SURVEY", id.clone()),
            ("ANSWER", answer.into()),
            ("SCREENSHOT", screenshot.display().to_string()),
            ("OTHER_PERSON", "another-shopper".into()),
        ])
        .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report["webdriver"], false, "{pretty}");
    assert_eq!(report["shown"], true, "{pretty}");
    assert!(
        screenshot.is_file(),
        "no screenshot at {}",
        screenshot.display()
    );
    if bundle == "lazy" {
        for script in [
            format!("/static/{POSTHOG_JS_VERSION}/surveys.js"),
            "/static/array.js".to_owned(),
        ] {
            let served = report["requests"]
                .as_array()
                .unwrap()
                .iter()
                .any(|request| {
                    request["url"].as_str().unwrap().ends_with(&script) && request["status"] == 200
                });
            assert!(served, "Burrow did not serve {script}: {pretty}");
        }
    }

    burrow.wait_for_one_response(&id, &report).await;
    let responses = burrow.responses(&id).await;
    assert_eq!(responses.len(), 1, "{responses:?}");
    let expected = match answer.split_once(':') {
        Some(("rating", value)) => json!(value.parse::<i64>().unwrap()),
        Some((_, text)) => json!(text),
        None => unreachable!("answers are kind:value"),
    };
    assert_eq!(
        responses[0]["answers"][&question_id], expected,
        "{responses:?}"
    );
    assert_eq!(responses[0]["completed"], true, "{responses:?}");

    // The answer reached the webhook, signed, and `standardwebhooks` verified it.
    let received = receiver.wait_for_accepted(1, Duration::from_secs(30)).await;
    assert_all_verified(&received);
    let data = &received[0]["payload"]["data"];
    assert_eq!(received[0]["payload"]["type"], "survey_response.completed");
    assert_eq!(data["survey"]["id"], id.as_str(), "{data}");
    assert_eq!(
        data["answers"][0]["question_id"],
        question_id.as_str(),
        "{data}"
    );
    assert_eq!(data["answers"][0]["value"], expected, "{data}");

    assert_eq!(
        report["shownAfterReload"], false,
        "the survey showed again after the person answered it: {pretty}"
    );
    assert_eq!(
        report["shownInFreshBrowser"], false,
        "the survey showed to the person who answered it, in a browser without its \
         localStorage: {pretty}"
    );
    assert_eq!(
        report["shownToAnotherPerson"],
        responses_limit.is_none(),
        "another person, with a limit of {responses_limit:?}: {pretty}"
    );
    if responses_limit.is_some() {
        let stopped = burrow
            .get(&format!(
                "/api/projects/{}/surveys/{id}/",
                burrow.project_id
            ))
            .await;
        assert!(stopped["end_date"].is_string(), "{stopped}");
        assert_eq!(stopped["responses_limit"], Value::Null, "{stopped}");
    }
}

#[tokio::test]
async fn the_full_bundle_shows_a_rating_popover_and_burrow_counts_its_answer() {
    shown_answered_counted_and_not_shown_again(
        "full",
        "full",
        json!({"type": "rating", "question": "How likely are you to recommend the shop?",
               "scale": 10, "display": "number",
               "lowerBoundLabel": "Unlikely", "upperBoundLabel": "Very likely"}),
        "rating:8",
        None,
    )
    .await;
}

#[tokio::test]
async fn a_survey_reaching_its_responses_limit_stops_showing_to_the_next_person() {
    shown_answered_counted_and_not_shown_again(
        "limit",
        "full",
        json!({"type": "open", "question": "One answer is all we need. Why?"}),
        "open:Because",
        Some(1),
    )
    .await;
}

#[tokio::test]
async fn the_snippet_lazy_loads_surveys_js_from_burrow_and_burrow_counts_the_answer() {
    shown_answered_counted_and_not_shown_again(
        "lazy",
        "lazy",
        json!({"type": "open", "question": "What should the shop sell next?"}),
        "open:Left-handed scissors",
        None,
    )
    .await;
}

#[tokio::test]
async fn a_survey_targeting_other_persons_stays_hidden_while_one_targeting_this_person_shows() {
    let burrow = Burrow::start("targeting").await;
    let plan = |value: &str| {
        json!({"targeting_flag_filters": {"groups": [{"properties": [
            {"key": "plan", "type": "person", "operator": "exact", "value": [value]}
        ], "rollout_percentage": 100}]}})
    };
    let question = json!({"type": "open", "question": "How is the pro plan?"});
    // Created first, so that it would be first in the feed and take the focus if it matched.
    let hidden = burrow
        .survey("Enterprise customers", question.clone(), plan("enterprise"))
        .await;
    let included = burrow.survey("Pro customers", question, plan("pro")).await;
    let hidden = hidden["id"].as_str().unwrap().to_owned();
    let included = included["id"].as_str().unwrap().to_owned();
    let screenshot = artifacts().join("survey-targeting.png");

    let report = burrow
        .drive(&[
            ("MODE", "targeting".into()),
            ("BUNDLE", "full".into()),
            ("SURVEY", included.clone()),
            ("HIDDEN", hidden.clone()),
            ("PERSON", json!({"plan": "pro"}).to_string()),
            ("SCREENSHOT", screenshot.display().to_string()),
        ])
        .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report["shown"], true, "{pretty}");
    // The SDK sent the person's plan with /flags, and has both surveys, but only one matches.
    let sent_plan = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .any(|request| {
            request["url"].as_str().unwrap().contains("/flags")
                && request["person_properties"]["plan"] == "pro"
        });
    assert!(sent_plan, "no /flags request carried plan=pro: {pretty}");
    let all = report["surveys"]["all"].as_array().unwrap();
    assert!(
        all.contains(&json!(hidden)) && all.contains(&json!(included)),
        "{pretty}"
    );
    assert_eq!(report["surveys"]["matching"], json!([included]), "{pretty}");
    assert_eq!(report["hiddenShown"], false, "{pretty}");
    assert!(
        !report["surveysAfterClose"]["matching"]
            .as_array()
            .unwrap()
            .contains(&json!(hidden)),
        "{pretty}"
    );
}

#[tokio::test]
async fn a_hosted_survey_link_is_answered_full_page_and_the_answer_is_in_the_api() {
    let burrow = Burrow::start("hosted").await;
    let survey = burrow
        .survey(
            "Hosted feedback",
            json!({"type": "open", "question": "What brought you here?"}),
            json!({"type": "external_survey"}),
        )
        .await;
    let id = survey["id"].as_str().unwrap().to_owned();
    let question_id = survey["questions"][0]["id"].as_str().unwrap().to_owned();
    let screenshot = artifacts().join("survey-hosted.png");
    let _ = std::fs::remove_file(&screenshot);
    let report = burrow
        .drive(&[
            ("MODE", "hosted".into()),
            (
                "PAGE",
                format!("/external_surveys/{id}/?distinct_id=visitor-1&utm_source=newsletter"),
            ),
            ("ANSWER", "A friend's link".into()),
            ("SCREENSHOT", screenshot.display().to_string()),
        ])
        .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report["shown"], true, "{pretty}");
    assert_eq!(report["cspViolations"], json!([]), "{pretty}");
    assert!(
        screenshot.is_file(),
        "no screenshot at {}",
        screenshot.display()
    );
    let sent = survey_sent(&report);
    assert_eq!(sent["properties"]["utm_source"], "newsletter", "{sent}");

    burrow.wait_for_one_response(&id, &report).await;
    let responses = burrow.responses(&id).await;
    assert_eq!(responses[0]["distinct_id"], "visitor-1", "{responses:?}");
    assert_eq!(
        responses[0]["answers"][&question_id], "A friend's link",
        "{responses:?}"
    );
}

#[tokio::test]
async fn a_person_enrolls_in_an_early_access_feature_and_its_flag_turns_on() {
    let burrow = Burrow::start("early-access").await;
    let response = burrow
        .client
        .post(burrow.server.url(&format!(
            "/api/projects/{}/early_access_feature/",
            burrow.project_id
        )))
        .bearer_auth(&burrow.key)
        .json(
            &json!({"name": "Dark Mode", "description": "A darker shop", "stage": "beta",
                      "documentation_url": "https://shop.example/docs/dark-mode"}),
        )
        .send()
        .await
        .expect("POST an early access feature");
    let status = response.status();
    let feature: Value = response.json().await.expect("a JSON body");
    assert_eq!(status, 201, "{feature}");
    let flag_key = feature["feature_flag"]["key"].as_str().unwrap().to_owned();
    assert_eq!(flag_key, "dark-mode");

    let report = drive(
        "early_access.mjs",
        "early-access",
        &[
            ("BURROW_URL", burrow.server.address.clone()),
            ("TOKEN", burrow.token.clone()),
            ("FLAG_KEY", flag_key.clone()),
            ("PERSON", "early-adopter".to_owned()),
        ],
        Duration::from_secs(120),
        || log_tail(&burrow.log),
    )
    .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(
        report["features"],
        json!([{"id": feature["id"], "name": "Dark Mode", "description": "A darker shop",
                "stage": "beta", "documentationUrl": "https://shop.example/docs/dark-mode",
                "flagKey": "dark-mode"}]),
        "{pretty}"
    );
    assert_eq!(report["before"], false, "{pretty}");
    assert_eq!(report["rightAfter"], true, "{pretty}");
    // Burrow kept the enrollment: the flag is on for the person from its own /flags.
    assert_eq!(report["freshBrowser"], true, "{pretty}");
}

/// The project's wait between surveys holds across an identified person's browsers: shown a
/// survey in one, left without an answer, the person opens the shop in a second browser (no
/// localStorage, and posthog-js knows nothing of a project-wide wait), where only the last-seen
/// date Burrow stored on the person from the first browser's `survey shown` keeps it hidden;
/// another person, who saw nothing, is shown it.
#[tokio::test]
async fn a_survey_shown_in_one_browser_waits_in_the_same_persons_other_browser() {
    let burrow = Burrow::start("wait").await;
    let response = burrow
        .client
        .patch(
            burrow
                .server
                .url(&format!("/api/projects/{}/", burrow.project_id)),
        )
        .bearer_auth(&burrow.key)
        .json(&json!({"survey_config": {"seenSurveyWaitPeriodInDays": 14}}))
        .send()
        .await
        .expect("PATCH the project");
    assert_eq!(response.status(), 200);
    let survey = burrow
        .survey(
            "Shop survey (wait)",
            json!({"type": "open", "question": "How was your visit?"}),
            json!({}),
        )
        .await;
    let id = survey["id"].as_str().unwrap().to_owned();
    let screenshot = artifacts().join("survey-wait.png");
    let _ = std::fs::remove_file(&screenshot);

    let report = burrow
        .drive(&[
            ("MODE", "wait".into()),
            ("BUNDLE", "full".into()),
            ("SURVEY", id),
            ("PERSON_ID", "shopper-with-two-browsers".into()),
            ("OTHER_PERSON", "another-shopper".into()),
            ("SCREENSHOT", screenshot.display().to_string()),
        ])
        .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report["webdriver"], false, "{pretty}");
    assert_eq!(report["shown"], true, "{pretty}");
    assert_eq!(
        report["shownOnSecondDevice"], false,
        "the person saw a survey in their other browser within the wait: {pretty}"
    );
    assert_eq!(
        report["shownToAnotherPerson"], true,
        "only the wait hides it: {pretty}"
    );
}

/// A weekly survey answered in its first iteration stays hidden in it; once its second
/// iteration begins (its launch moved a week back through the API; Burrow's schedule round
/// moves it on, and the feed and the internal targeting flag follow), the same browser, which
/// remembers the first answer, is shown it again.
#[tokio::test]
async fn a_recurring_survey_answered_in_one_iteration_shows_again_in_the_next() {
    let burrow = Burrow::start("recurring").await;
    let survey = burrow
        .survey(
            "Shop survey (recurring)",
            json!({"type": "open", "question": "How was this week?"}),
            json!({"iteration_count": 4, "iteration_frequency_days": 7}),
        )
        .await;
    assert_eq!(survey["current_iteration"], 1);
    let id = survey["id"].as_str().unwrap().to_owned();
    let screenshot = artifacts().join("survey-recurring.png");
    let _ = std::fs::remove_file(&screenshot);
    let report = burrow
        .drive(&[
            ("MODE", "recurring".into()),
            ("BUNDLE", "full".into()),
            ("SURVEY", id),
            ("ANSWER", "Busy but fine".into()),
            ("KEY", burrow.key.clone()),
            ("PROJECT", burrow.project_id.to_string()),
            ("SCREENSHOT", screenshot.display().to_string()),
        ])
        .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report["webdriver"], false, "{pretty}");
    assert_eq!(report["answeredIteration"], 1, "{pretty}");
    assert_eq!(report["shownAgainInSameIteration"], false, "{pretty}");
    assert_eq!(report["launchMoved"], 200, "{pretty}");
    assert_eq!(report["shownInNextIteration"], true, "{pretty}");
}

/// A survey in English with a French translation of its name and of its question: a browser
/// whose page is French (posthog-js picks the translation by `navigator.language`) shows the
/// French texts and sends the answer with the French name and `$survey_language`, which Burrow
/// keeps on the response; another person's browser, whose page is English, shows the English.
#[tokio::test]
async fn a_translated_survey_shows_in_the_pages_language() {
    let burrow = Burrow::start("translated").await;
    let survey = burrow
        .survey(
            "Shop survey (translated)",
            json!({"type": "open", "question": "What could we improve?", "buttonText": "Send",
                   "translations": {"fr": {"question": "Que pourrions-nous améliorer ?",
                                           "buttonText": "Envoyer"}}}),
            json!({"base_language": "en",
                   "translations": {"fr": {"name": "Enquête de la boutique"}}}),
        )
        .await;
    let id = survey["id"].as_str().unwrap().to_owned();
    let question_id = survey["questions"][0]["id"].as_str().unwrap().to_owned();
    let screenshot = artifacts().join("survey-translated.png");
    let _ = std::fs::remove_file(&screenshot);

    let report = burrow
        .drive(&[
            ("MODE", "answer".into()),
            ("BUNDLE", "full".into()),
            ("SURVEY", id.clone()),
            ("ANSWER", "open:Plus de tailles".into()),
            ("LOCALE", "fr-FR".into()),
            ("OTHER_PERSON", "an-english-shopper".into()),
            ("OTHER_LOCALE", "en-US".into()),
            ("SCREENSHOT", screenshot.display().to_string()),
        ])
        .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report["shown"], true, "{pretty}");
    assert_eq!(
        report["texts"],
        json!({"question": "Que pourrions-nous améliorer ?", "button": "Envoyer"}),
        "{pretty}"
    );
    assert_eq!(
        report["textsShownToAnotherPerson"],
        json!({"question": "What could we improve?", "button": "Send"}),
        "{pretty}"
    );
    let sent = survey_sent(&report);
    assert_eq!(sent["properties"]["$survey_language"], "fr", "{sent}");
    assert_eq!(
        sent["properties"]["$survey_name"], "Enquête de la boutique",
        "{sent}"
    );
    assert_eq!(
        sent["properties"]["$survey_questions"][0]["question"], "Que pourrions-nous améliorer ?",
        "{sent}"
    );

    burrow.wait_for_one_response(&id, &report).await;
    let responses = burrow.responses(&id).await;
    assert_eq!(responses[0]["language"], "fr", "{responses:?}");
    assert_eq!(
        responses[0]["answers"][&question_id], "Plus de tailles",
        "{responses:?}"
    );
}
