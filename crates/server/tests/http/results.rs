//! A survey's results per question (`…/results/`) adding up what capture stored, with the
//! window and archived handling of stats, and the responses list's `question` and `search`
//! filters that page one open question's answers. The seeded survey is also what the console's
//! browser test reads (`console.rs`).

use chrono::Utc;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app};
use crate::survey_requests::created;

/// The NPS question's answers, one per person: 5 promoters, 2 passives, 3 detractors (NPS 20).
const RATINGS: [u8; 10] = [10, 9, 9, 8, 7, 6, 3, 0, 10, 9];
const SINGLE: [&str; 10] = [
    "Red", "Green", "Red", "Blue", "Red", "Green", "Red", "Blue", "Red", "Green",
];
const OPEN: [&str; 10] = [
    "Too slow on Mondays",
    "Great",
    "slow checkout",
    "Love the colours",
    "100%_sure it is fine",
    "Meh",
    "SLOW search",
    "Fine",
    "Good",
    "Nothing to add",
];

/// A running survey with a 0–10 rating, a single choice, a multiple choice and an open question,
/// answered by ten persons through `/batch/` (fourteen were shown it, three dismissed it).
pub(crate) struct Seeded {
    survey: Value,
}

impl Seeded {
    pub(crate) fn id(&self) -> &str {
        self.survey["id"].as_str().unwrap()
    }

    pub(crate) fn question(&self, n: usize) -> String {
        self.survey["questions"][n]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

/// What person `n` chose in the multiple choice question.
fn multiple(n: usize) -> Value {
    match n % 3 {
        0 => json!(["Fast", "Good"]),
        1 => json!(["Cheap"]),
        _ => json!(["Fast", "Cheap", "Good", "Other: sturdy"]),
    }
}

pub(crate) async fn seed(app: &TestApp, tenant: &Tenant) -> Seeded {
    let survey = created(
        app,
        tenant,
        json!({
            "name": "Checkout feedback",
            "type": "popover",
            "start_date": (Utc::now() - chrono::Duration::days(1)).to_rfc3339(),
            "questions": [
                {"type": "rating", "question": "How likely are you to recommend us?",
                 "scale": 10, "display": "number"},
                {"type": "single_choice", "question": "Favourite colour?",
                 "choices": ["Red", "Green", "Blue"]},
                {"type": "multiple_choice", "question": "What do you value?",
                 "choices": ["Fast", "Cheap", "Good"], "hasOpenChoice": true},
                {"type": "open", "question": "Anything else?"},
            ],
        }),
    )
    .await;
    let seeded = Seeded { survey };
    let at = |minutes: i64| (Utc::now() - chrono::Duration::minutes(minutes)).to_rfc3339();
    let mut batch: Vec<Value> = (0..14)
        .map(|n| {
            json!({"event": "survey shown", "distinct_id": format!("person-{n}"),
                   "timestamp": at(60), "properties": {"$survey_id": seeded.id()}})
        })
        .collect();
    batch.extend((11..14).map(|n| {
        json!({"event": "survey dismissed", "distinct_id": format!("person-{n}"),
               "timestamp": at(50), "properties": {"$survey_id": seeded.id()}})
    }));
    batch.extend((0..10).map(|n| {
        json!({
            "event": "survey sent",
            "distinct_id": format!("person-{n}"),
            "timestamp": at(40 - i64::try_from(n).unwrap()),
            "properties": {
                "$survey_id": seeded.id(),
                "$survey_submission_id": format!("submission-{n}"),
                "$survey_completed": true,
                format!("$survey_response_{}", seeded.question(0)): RATINGS[n],
                format!("$survey_response_{}", seeded.question(1)): SINGLE[n],
                format!("$survey_response_{}", seeded.question(2)): multiple(n),
                format!("$survey_response_{}", seeded.question(3)): OPEN[n],
            },
        })
    }));
    app.capture_batch(tenant, batch).await;
    seeded
}

/// A GET that must answer 200: its body.
pub(crate) async fn read(app: &TestApp, tenant: &Tenant, path: &str) -> Value {
    let (status, body) = parts(app.get(path, &tenant.key).await).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// A question's counts as `[(value, count)]`.
pub(crate) fn counts(question: &Value) -> Vec<(String, u64)> {
    question["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["value"].as_str().unwrap().to_owned(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn pairs(expected: &[(&str, u64)]) -> Vec<(String, u64)> {
    expected
        .iter()
        .map(|(value, count)| ((*value).to_owned(), *count))
        .collect()
}

#[tokio::test]
async fn results_add_up_each_questions_answers_and_sent_equals_the_stats() {
    let app = spawn_app().await;
    let tenant = app.tenant("results@example.com", &["*"]).await;
    let seeded = seed(&app, &tenant).await;
    let base = format!(
        "/api/projects/{}/surveys/{}",
        tenant.project_id,
        seeded.id()
    );
    let results = read(
        &app,
        &tenant,
        &format!("{base}/results/?exclude_archived=true"),
    )
    .await;
    let stats = read(&app, &tenant, &format!("{base}/stats/")).await;
    assert_eq!(results["responses"], 10, "{results}");
    assert_eq!(
        results["responses"], stats["stats"]["survey sent"]["total_count"],
        "{stats}"
    );
    let time = |value: &Value| {
        chrono::DateTime::parse_from_rfc3339(value.as_str().unwrap()).expect("a timestamp")
    };
    // PostgreSQL keeps microseconds.
    assert!(
        (time(&results["date_from"]) - time(&seeded.survey["start_date"])).abs()
            < chrono::Duration::microseconds(1),
        "the window starts with the survey's run: {results}"
    );
    let questions = results["questions"].as_array().unwrap();
    assert_eq!(questions.len(), 4);
    assert_eq!(questions[0]["type"], "rating");
    assert_eq!(questions[0]["id"], seeded.question(0).as_str());
    assert_eq!(
        counts(&questions[0]),
        pairs(&[
            ("0", 1),
            ("1", 0),
            ("2", 0),
            ("3", 1),
            ("4", 0),
            ("5", 0),
            ("6", 1),
            ("7", 1),
            ("8", 1),
            ("9", 3),
            ("10", 2)
        ])
    );
    assert_eq!(
        counts(&questions[1]),
        pairs(&[("Red", 5), ("Green", 3), ("Blue", 2)])
    );
    assert_eq!(
        counts(&questions[2]),
        pairs(&[("Fast", 7), ("Cheap", 6), ("Good", 7), ("Other: sturdy", 3)])
    );
    assert_eq!(questions[2]["answered"], 10);
    assert_eq!(questions[3]["type"], "open");
    assert_eq!(questions[3]["answered"], 10);
    assert_eq!(questions[3]["counts"], json!([]));

    // Archived responses leave the results and stats when asked (stats count them otherwise,
    // as PostHog's do).
    let (_, listed) = parts(
        app.get(&format!("{base}/responses/browse/"), &tenant.key)
            .await,
    )
    .await;
    let newest = listed["results"][0]["uuid"].as_str().unwrap().to_owned();
    let archive = format!("{base}/responses/{newest}/archive/");
    let archived = app
        .send_json(Method::POST, &archive, &tenant.key, &json!({}))
        .await;
    assert_eq!(archived.status(), 200);
    let without = read(
        &app,
        &tenant,
        &format!("{base}/results/?exclude_archived=true"),
    )
    .await;
    let with = read(&app, &tenant, &format!("{base}/results/")).await;
    let stats = read(
        &app,
        &tenant,
        &format!("{base}/stats/?exclude_archived=true"),
    )
    .await;
    let all_stats = read(&app, &tenant, &format!("{base}/stats/")).await;
    assert_eq!(
        (
            without["responses"].clone(),
            with["responses"].clone(),
            stats["stats"]["survey sent"]["total_count"].clone(),
            all_stats["stats"]["survey sent"]["total_count"].clone()
        ),
        (json!(9), json!(10), json!(9), json!(10))
    );

    // A window before any answer holds none.
    let early = read(
        &app,
        &tenant,
        &format!(
            "{base}/results/?date_to={}",
            (Utc::now() - chrono::Duration::hours(2))
                .to_rfc3339()
                .replace('+', "%2B")
        ),
    )
    .await;
    assert_eq!(early["responses"], 0, "{early}");
    assert_eq!(early["questions"][1]["counts"][0]["count"], 0, "{early}");
}

#[tokio::test]
async fn one_open_questions_answers_are_paged_and_filtered_by_text() {
    let app = spawn_app().await;
    let tenant = app.tenant("answers@example.com", &["*"]).await;
    let seeded = seed(&app, &tenant).await;
    let list = |query: String| {
        format!(
            "/api/projects/{}/surveys/{}/responses/browse/?{query}",
            tenant.project_id,
            seeded.id()
        )
    };
    let open = seeded.question(3);
    let answers = |page: &Value| -> Vec<String> {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["answers"][&open].as_str().unwrap().to_owned())
            .collect()
    };
    let page = read(
        &app,
        &tenant,
        &list(format!("question={open}&search=SLOW&limit=2")),
    )
    .await;
    assert_eq!(page["count"], 3, "{page}");
    // Newest first: person 6 answered last of the three.
    assert_eq!(answers(&page), ["SLOW search", "slow checkout"]);
    assert!(
        page["next"].as_str().unwrap().contains("search=SLOW"),
        "{page}"
    );
    let literal = read(
        &app,
        &tenant,
        &list(format!("question={open}&search=0%25_s")),
    )
    .await;
    assert_eq!(answers(&literal), ["100%_sure it is fine"]);
    let by_choice = read(&app, &tenant, &list("search=sturdy".into())).await;
    assert_eq!(by_choice["count"], 3, "any question's text, lists included");

    let (status, body) = parts(
        app.get(&list(format!("search={}", "x".repeat(201))), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        (body["code"].as_str(), body["attr"].as_str()),
        (Some("max_length"), Some("search")),
        "{body}"
    );
    let (status, body) = parts(app.get(&list("question=nope".into()), &tenant.key).await).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"type": "validation_error", "code": "invalid_input",
               "detail": "The survey has no question with this id.", "attr": "question"})
    );
}

#[tokio::test]
async fn a_survey_of_100000_responses_is_added_up_and_paged_without_reading_them_all() {
    let app = spawn_app().await;
    let tenant = app.tenant("large@example.com", &["*"]).await;
    let seeded = seed(&app, &tenant).await;
    let (rating, single, open) = (seeded.question(0), seeded.question(1), seeded.question(3));
    // 100,000 more responses, written straight to the table: ratings 0–10 in turn, colours in
    // turn, and an open answer of which one in 1,000 holds "needle".
    app.database
        .execute(&format!(
            "INSERT INTO survey_responses
                 (project_id, survey_id, submission_key, submission_id, event_uuid, distinct_id,
                  timestamp, answers, completed)
             SELECT {project}, '{id}', 'bulk-' || n, 'bulk-' || n, gen_random_uuid(),
                    'bulk-' || n, now() - interval '2 hours' + n * interval '10 ms',
                    jsonb_build_object(
                        '{rating}', n % 11,
                        '{single}', (ARRAY['Red', 'Green', 'Blue'])[n % 3 + 1],
                        '{open}', CASE WHEN n % 1000 = 0 THEN 'a Needle ' || n
                                       ELSE 'hay ' || n END),
                    true
             FROM generate_series(1, 100000) AS n",
            project = tenant.project_id,
            id = seeded.id(),
        ))
        .await;
    let base = format!(
        "/api/projects/{}/surveys/{}",
        tenant.project_id,
        seeded.id()
    );

    let started = std::time::Instant::now();
    let results = read(
        &app,
        &tenant,
        &format!("{base}/results/?exclude_archived=true"),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(results["responses"], 100_010, "{results}");
    let total: u64 = counts(&results["questions"][0])
        .iter()
        .map(|(_, count)| count)
        .sum();
    assert_eq!(total, 100_010);
    // n % 11 == 0 for 9,090 of 1..=100,000, and one seeded person answered 0.
    assert_eq!(counts(&results["questions"][0])[0], ("0".to_owned(), 9_091));
    assert_eq!(results["questions"][3]["answered"], 100_010);
    assert!(
        took < std::time::Duration::from_secs(10),
        "results took {took:?}"
    );

    let started = std::time::Instant::now();
    let page = read(
        &app,
        &tenant,
        &format!("{base}/responses/browse/?question={open}&search=NEEDLE&limit=20"),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(page["count"], 100, "{page}");
    assert_eq!(page["results"].as_array().unwrap().len(), 20);
    assert_eq!(
        page["results"][0]["answers"][&open], "a Needle 100000",
        "newest first"
    );
    assert!(
        took < std::time::Duration::from_secs(10),
        "a page of answers took {took:?}"
    );
}
