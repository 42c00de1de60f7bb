//! The console (`/app/`): its files served whole under a strict policy, and — in Chromium,
//! driven by `tests/browser/console.mjs` through playwright-core — a person signing in and
//! reading a survey's results, every number on the page equal to the stats and results APIs',
//! then launching and stopping a draft survey, with no console error or failed request.

use std::time::Duration;

use domain::admin::KeyRequest;
use reqwest::Method;
use serde_json::{Value, json};

use crate::browser::{self, artifacts};
use crate::helpers::{assert_error, parts, spawn_app};
use crate::results::{counts, read, seed};
use crate::survey_requests::created;

#[tokio::test]
async fn the_console_and_every_file_it_loads_are_served_under_a_strict_policy() {
    let app = spawn_app().await;
    let page = app.request(Method::GET, "/app/").send().await.unwrap();
    assert_eq!(page.status(), 200);
    let header = |response: &reqwest::Response, name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let policy = header(&page, "content-security-policy");
    assert!(policy.contains("script-src 'self';"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    assert_eq!(header(&page, "content-type"), "text/html; charset=utf-8");
    assert_eq!(header(&page, "x-content-type-options"), "nosniff");
    assert_eq!(header(&page, "referrer-policy"), "no-referrer");
    let html = page.text().await.unwrap();
    assert!(!html.contains("<script>"), "no inline script: {html}");
    assert!(!html.contains("style="), "no inline style: {html}");

    // Every file the page names, and every module those import, is served with its type.
    let mut wanted: Vec<String> = ["src=\"", "href=\""]
        .iter()
        .flat_map(|attribute| html.split(attribute).skip(1))
        .filter_map(|rest| rest.split('"').next())
        .filter(|url| url.starts_with("/app/"))
        .map(str::to_owned)
        .collect();
    let mut seen = Vec::new();
    while let Some(url) = wanted.pop() {
        if seen.contains(&url) {
            continue;
        }
        let response = app.request(Method::GET, &url).send().await.unwrap();
        assert_eq!(response.status(), 200, "{url}");
        let expected = if url.ends_with(".css") {
            "text/css; charset=utf-8"
        } else if url.ends_with(".svg") {
            "image/svg+xml"
        } else {
            "text/javascript; charset=utf-8"
        };
        assert_eq!(header(&response, "content-type"), expected, "{url}");
        assert!(!header(&response, "content-security-policy").is_empty());
        let text = response.text().await.unwrap();
        for import in text.split("from \"./").skip(1) {
            wanted.push(format!("/app/{}", import.split('"').next().unwrap()));
        }
        seen.push(url);
    }
    assert!(seen.len() >= 12, "{seen:?}");
    assert!(seen.contains(&"/app/favicon.svg".to_owned()), "{seen:?}");

    let (status, body) = parts(
        app.request(Method::GET, "/app/nope.js")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert_error(&body, "invalid_request", "not_found", "Not found.");
}

/// Runs `tests/browser/console.mjs`, its screenshots going to `target/browser/`.
async fn drive(vars: &[(&str, String)]) -> Value {
    let mut vars = vars.to_vec();
    vars.push(("SHOTS", artifacts().display().to_string()));
    browser::drive(
        "console.mjs",
        "console",
        &vars,
        Duration::from_secs(90),
        String::new,
    )
    .await
}

#[tokio::test]
async fn a_person_signs_in_and_reads_a_surveys_results_as_the_apis_count_them() {
    let app = spawn_app().await;
    let tenant = app.tenant("console@example.com", &["*"]).await;
    let seeded = seed(&app, &tenant).await;
    // Person 9's response (the newest) was given in French: one more event of its submission,
    // still the newest, so the order of the answers stays as seeded.
    app.capture_batch(
        &tenant,
        vec![json!({
            "event": "survey sent",
            "distinct_id": "person-9",
            "timestamp": (chrono::Utc::now() - chrono::Duration::minutes(30)).to_rfc3339(),
            "properties": {
                "$survey_id": seeded.id(),
                "$survey_submission_id": "submission-9",
                "$survey_completed": true,
                "$survey_language": "fr",
            },
        })],
    )
    .await;
    let draft = created(
        &app,
        &tenant,
        json!({"name": "Exit interview", "type": "popover",
               "questions": [{"type": "open", "question": "Why are you leaving?"}]}),
    )
    .await;
    let narrow = app
        .key(KeyRequest {
            email: tenant.email.clone(),
            label: "flags only".into(),
            scopes: vec!["feature_flag:read".into()],
            scoped_teams: None,
            scoped_organizations: None,
        })
        .await;
    let day = chrono::Utc::now().format("%Y-%m-%d").to_string();
    for shot in [
        "console-surveys.png",
        "console-results.png",
        "console-confirm.png",
        "console-stopped.png",
    ] {
        let _ = std::fs::remove_file(artifacts().join(shot));
    }
    let report = drive(&[
        ("BURROW_URL", app.address.clone()),
        ("KEY", tenant.key.clone()),
        ("NARROW_KEY", narrow.clone()),
        ("SURVEY", seeded.id().to_owned()),
        ("DRAFT", draft["id"].as_str().unwrap().to_owned()),
        ("SEARCH", "slow".into()),
        ("DAY", day.clone()),
    ])
    .await;
    let pretty = serde_json::to_string_pretty(&report).unwrap();
    for shot in [
        "console-surveys.png",
        "console-results.png",
        "console-results-phone.png",
        "console-confirm.png",
        "console-stopped.png",
    ] {
        assert!(artifacts().join(shot).is_file(), "no {shot}");
    }

    // The list shows the survey, running, with its responses, and the draft.
    let surveys = report["surveys"].as_array().unwrap();
    let row = surveys
        .iter()
        .find(|row| row["name"] == "Checkout feedback")
        .expect(&pretty);
    assert_eq!(row["status"], "running", "{pretty}");
    assert_eq!(row["responses"], "10", "{pretty}");
    assert!(
        surveys
            .iter()
            .any(|row| row["name"] == "Exit interview" && row["status"] == "draft"),
        "{pretty}"
    );

    // The funnel is the stats API's.
    let base = format!(
        "/api/projects/{}/surveys/{}",
        tenant.project_id,
        seeded.id()
    );
    let stats = read(&app, &tenant, &format!("{base}/stats/")).await;
    for (event, shown) in [("shown", 14), ("dismissed", 3), ("sent", 10)] {
        let api = &stats["stats"][format!("survey {event}")]["total_count"];
        assert_eq!(api, shown, "{stats}");
        assert_eq!(
            report["funnel"][event],
            api.to_string(),
            "{event}: {pretty}"
        );
    }
    assert_eq!(
        report["funnel"]["response_rate"],
        format!("{}%", stats["rates"]["response_rate"]),
        "{pretty}"
    );

    // Each question's numbers are the results API's.
    let results = read(
        &app,
        &tenant,
        &format!("{base}/results/?exclude_archived=true"),
    )
    .await;
    assert_eq!(report["responses"], results["responses"].to_string());
    let shown = report["questions"].as_array().unwrap();
    assert_eq!(shown.len(), 4, "{pretty}");
    for (page, api) in shown.iter().zip(results["questions"].as_array().unwrap()) {
        assert_eq!(page["id"], api["id"], "{pretty}");
        assert_eq!(page["answered"], api["answered"].to_string(), "{pretty}");
        let on_page: Vec<(String, u64)> = page["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row["value"].as_str().unwrap().to_owned(),
                    row["count"].as_str().unwrap().parse().unwrap(),
                )
            })
            .collect();
        assert_eq!(on_page, counts(api), "{}: {pretty}", api["question"]);
    }
    // Red: 5 of 10.
    assert_eq!(shown[1]["rows"][0]["percent"], "50%", "{pretty}");
    // 5 promoters, 2 passives, 3 detractors of 10.
    assert_eq!(
        report["nps"],
        json!({"score": "20.0", "promoters": "5", "passives": "2", "detractors": "3"}),
        "{pretty}"
    );
    assert_eq!(report["charts"], 3, "{pretty}");

    // Beside each question, the stats API's per-question numbers, as it counts them.
    let per_question = read(
        &app,
        &tenant,
        &format!("{base}/stats/?exclude_archived=true&include_per_question_stats=true"),
    )
    .await;
    let api_questions = per_question["per_question_stats"].as_array().unwrap();
    let shown_stats = report["questionStats"].as_array().unwrap();
    assert_eq!(shown_stats.len(), api_questions.len(), "{pretty}");
    for (page, api) in shown_stats.iter().zip(api_questions) {
        assert_eq!(
            page["responses"],
            api["response_count"].to_string(),
            "{pretty}"
        );
        let distribution: serde_json::Map<String, Value> = api["distribution"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(answer, n)| (answer.clone(), Value::String(n.to_string())))
            .collect();
        assert_eq!(page["rows"], Value::Object(distribution), "{pretty}");
        let average = api["average"]
            .as_f64()
            .map_or(Value::Null, |average| json!(format!("{average:.2}")));
        assert_eq!(page["average"], average, "{pretty}");
    }
    assert_eq!(shown_stats[0]["responses"], "10", "{pretty}");
    assert_eq!(shown_stats[1]["rows"]["Red"], "5", "{pretty}");

    // The responses table says in which language each response was given.
    let rows = report["responseRows"].as_array().unwrap();
    assert_eq!(rows.len(), 10, "{pretty}");
    assert_eq!(
        rows[0],
        json!({"person": "person-9", "language": "fr"}),
        "{pretty}"
    );
    assert!(
        rows[1..].iter().all(|row| row["language"] == "—"),
        "{pretty}"
    );

    // Launch and stop each ask first (Cancel changes nothing), then change the survey's state.
    assert_eq!(
        report["lifecycle"],
        json!({
            "before": "draft",
            "dialog": {"modal": true, "title": "Launch this survey?", "focused": "confirm-cancel"},
            "afterCancel": "draft",
            "sentOnCancel": false,
            "launched": "running",
            "launchedOutcome": "The survey was launched.",
            "focusAfterLaunch": "stop-survey",
            "stopTitle": "Stop this survey?",
            "stopped": "stopped",
            "buttonsWhenStopped": 0,
        }),
        "{pretty}"
    );
    let draft = read(
        &app,
        &tenant,
        &format!(
            "/api/projects/{}/surveys/{}/",
            tenant.project_id,
            draft["id"].as_str().unwrap()
        ),
    )
    .await;
    assert!(
        draft["start_date"].is_string() && draft["end_date"].is_string(),
        "{draft}"
    );

    // One day's results (whole UTC days) are the APIs' for that window.
    let window = format!("date_from={day}T00:00:00Z&date_to={day}T23:59:59Z");
    let stats = read(&app, &tenant, &format!("{base}/stats/?{window}")).await;
    let results = read(
        &app,
        &tenant,
        &format!("{base}/results/?{window}&exclude_archived=true"),
    )
    .await;
    assert_eq!(
        report["day"],
        json!({
            "sent": stats["stats"]["survey sent"]["total_count"].to_string(),
            "shown": stats["stats"]["survey shown"]["total_count"].to_string(),
            "responses": results["responses"].to_string(),
        }),
        "{pretty}"
    );

    // The open answers, filtered: the three that say "slow", as the list API finds them.
    assert_eq!(report["open"]["count"], "10", "{pretty}");
    assert_eq!(report["open"]["filteredCount"], "3", "{pretty}");
    assert_eq!(
        report["open"]["filtered"],
        json!(["SLOW search", "slow checkout", "Too slow on Mondays"]),
        "{pretty}"
    );

    assert!(
        report["plugins"]
            .as_str()
            .unwrap()
            .contains("The organization has no plugin installed."),
        "{pretty}"
    );

    // The key stayed in sessionStorage only, and signing out forgot it.
    assert_eq!(
        report["storage"]["session"],
        tenant.key.as_str(),
        "{pretty}"
    );
    assert_eq!(report["storage"]["cookies"], 0, "{pretty}");
    assert_eq!(report["storage"]["keyInAnyUrl"], false, "{pretty}");
    assert_eq!(report["storage"]["afterSignOut"], Value::Null, "{pretty}");
    assert_eq!(report["csvDownloaded"], true, "{pretty}");

    // A key without survey:read is told so, plainly.
    assert!(
        report["narrow"]
            .as_str()
            .unwrap()
            .contains("lacks the survey:read scope"),
        "{pretty}"
    );
    assert_eq!(report["phoneOverflow"], false, "{pretty}");
    assert_eq!(report["signOutByKeyboard"], true, "{pretty}");
    assert_eq!(report["cspViolations"], json!([]), "{pretty}");
    assert_eq!(report["pageErrors"], json!([]), "{pretty}");
    assert_eq!(report["favicon"], true, "{pretty}");
    assert_eq!(report["failedRequests"], json!([]), "{pretty}");
    let errors: Vec<&Value> = report["console"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message.as_str().unwrap().starts_with("error:"))
        .collect();
    assert!(errors.is_empty(), "{pretty}");
}
