//! Survey response exports: CSV that Python's `csv` module reads back to exactly what the
//! responses API lists (multiple choice joined, formulas defused, quoting per RFC 4180), JSON
//! Lines, the same filters as stats, and 100,000 responses streamed by the real binary within a
//! memory bound.

use std::process::Stdio;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

use crate::helpers::{Tenant, TestApp, parts, spawn_app};
use crate::process::{bootstrap, serve};
use crate::survey_requests::created;

/// A launched API survey with an open, a multiple choice and a rating question.
async fn survey(app: &TestApp, tenant: &Tenant) -> Value {
    created(
        app,
        tenant,
        json!({
            "name": "Export me",
            "type": "api",
            "start_date": "2026-01-01T00:00:00Z",
            "questions": [
                {"type": "open", "question": "Anything, \"really\" anything?"},
                {"type": "multiple_choice", "question": "Which ones?", "choices": ["Red", "Green, light", "Blue"]},
                {"type": "rating", "question": "How many?", "scale": 10, "display": "number"},
            ],
        }),
    )
    .await
}

/// Reads CSV with Python's `csv` module: a list of rows, each a list of cells.
async fn python_csv(text: &str) -> Vec<Vec<String>> {
    let mut child = tokio::process::Command::new("python3")
        .args([
            "-c",
            "import csv, io, json, sys; \
             print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline='')))))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success());
    serde_json::from_slice(&output.stdout).expect("python's rows as JSON")
}

async fn export(
    app: &TestApp,
    tenant: &Tenant,
    survey: &str,
    query: &str,
) -> (u16, String, String) {
    let response = app
        .get(
            &format!(
                "/api/projects/{}/surveys/{survey}/responses/export/?{query}",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await;
    let status = response.status().as_u16();
    let media = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, media, response.text().await.unwrap())
}

#[tokio::test]
async fn csv_and_jsonl_exports_read_back_as_the_responses_api_lists_them() {
    let app = spawn_app().await;
    let tenant = app.tenant("export@example.com", &["*"]).await;
    let survey = survey(&app, &tenant).await;
    let id = survey["id"].as_str().unwrap();
    let question = |n: usize| survey["questions"][n]["id"].as_str().unwrap().to_owned();
    let answers = [
        (
            "=HYPERLINK(\"http://evil\")",
            json!(["Red", "Green, light"]),
            9,
        ),
        ("line one\nline two, with \"quotes\"", json!(["Blue"]), 0),
        ("-10 and +1 @home", json!([]), 5),
        ("plain ünïcödé", json!(["Red"]), 10),
    ];
    let batch: Vec<Value> = answers
        .iter()
        .enumerate()
        .map(|(n, (open, choices, rating))| {
            json!({
                "event": "survey sent",
                "distinct_id": format!("person-{n}"),
                "timestamp": format!("2026-11-2{n}T10:00:00Z"),
                "properties": {
                    "$survey_id": id,
                    "$survey_submission_id": format!("sub-{n}"),
                    "$survey_completed": n != 2,
                    "$survey_iteration": 2,
                    "$survey_language": "fr",
                    format!("$survey_response_{}", question(0)): open,
                    format!("$survey_response_{}", question(1)): choices,
                    format!("$survey_response_{}", question(2)): rating,
                },
            })
        })
        .collect();
    app.capture_batch(&tenant, batch).await;
    let (_, listed) = parts(
        app.get(
            &format!(
                "/api/projects/{}/surveys/{id}/responses/browse/",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await,
    )
    .await;
    let listed = listed["results"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 4);
    // Archive the oldest.
    let archive = format!(
        "/api/projects/{}/surveys/{id}/responses/{}/archive/",
        tenant.project_id,
        listed[3]["uuid"].as_str().unwrap()
    );
    assert_eq!(
        app.send_json(Method::POST, &archive, &tenant.key, &json!({}))
            .await
            .status(),
        200
    );

    let (status, media, text) = export(&app, &tenant, id, "format=csv").await;
    assert_eq!(
        (status, media.as_str()),
        (200, "text/csv; charset=utf-8"),
        "{text}"
    );
    assert!(text.contains("\r\n"), "RFC 4180 ends records with CRLF");
    let rows = python_csv(&text).await;
    assert_eq!(
        rows[0],
        [
            "uuid",
            "submission_id",
            "distinct_id",
            "timestamp",
            "completed",
            "archived",
            "partially_completed",
            "iteration",
            "language",
            "Anything, \"really\" anything?",
            "Which ones?",
            "How many?"
        ]
    );
    assert_eq!(rows.len(), 5);
    let defuse = |text: &str| {
        if text.starts_with(['=', '+', '-', '@']) {
            format!("'{text}")
        } else {
            text.to_owned()
        }
    };
    for (row, api) in rows[1..].iter().zip(&listed) {
        let answer = |n: usize| &api["answers"][question(n)];
        // `[]` is no answer: it is not kept, and its cell is empty.
        let choices = answer(1)
            .as_array()
            .map(|choices| {
                choices
                    .iter()
                    .map(|c| c.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let expected = [
            api["uuid"].as_str().unwrap().to_owned(),
            api["submission_id"].as_str().unwrap().to_owned(),
            api["distinct_id"].as_str().unwrap().to_owned(),
            row[3].clone(),
            api["completed"].to_string(),
            (api["uuid"] == listed[3]["uuid"]).to_string(),
            "false".to_owned(),
            "2".to_owned(),
            "fr".to_owned(),
            defuse(answer(0).as_str().unwrap()),
            defuse(&choices),
            answer(2).to_string(),
        ];
        assert_eq!(row, &expected);
        let exported = chrono::DateTime::parse_from_rfc3339(&row[3]).unwrap();
        let listed_at =
            chrono::DateTime::parse_from_rfc3339(api["timestamp"].as_str().unwrap()).unwrap();
        assert_eq!(exported, listed_at);
    }

    let (status, media, text) =
        export(&app, &tenant, id, "format=jsonl&exclude_archived=true").await;
    assert_eq!(
        (status, media.as_str()),
        (200, "application/jsonl; charset=utf-8")
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "the archived response is left out");
    for (line, api) in lines.iter().zip(&listed) {
        assert_eq!(
            (&line["uuid"], &line["answers"]),
            (&api["uuid"], &api["answers"])
        );
        assert_eq!(
            (
                &line["iteration"],
                &line["language"],
                &line["partially_completed"]
            ),
            (&json!("2"), &json!("fr"), &json!(false))
        );
    }

    // The window, as in stats; a bad format; another project's survey.
    let (_, _, text) = export(
        &app,
        &tenant,
        id,
        "format=jsonl&date_from=2026-11-22T00:00:00Z",
    )
    .await;
    assert_eq!(text.lines().count(), 2);
    let (status, _, text) = export(&app, &tenant, id, "format=xlsx").await;
    assert_eq!(status, 400, "{text}");
    let other = app.tenant("other-export@example.com", &["*"]).await;
    let (status, _, _) = export(&app, &other, id, "format=csv").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_hundred_thousand_responses_stream_within_a_memory_bound() {
    let database = adapters::testing::TestDatabase::create().await;
    let tenant = bootstrap(&database.url);
    let key = tenant["personal_api_key"].as_str().unwrap().to_owned();
    let project = tenant["project_id"].as_i64().unwrap();
    let server = serve(&database.url, None, |_| {}).await;
    let client = reqwest::Client::new();
    let survey: Value = client
        .post(server.url(&format!("/api/projects/{project}/surveys/")))
        .bearer_auth(&key)
        .json(&json!({"name": "Big", "type": "api",
                      "questions": [{"type": "open", "question": "Why?"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = survey["id"].as_str().unwrap();
    let question = survey["questions"][0]["id"].as_str().unwrap();
    // 100,000 stored responses with answers of 200 characters, written straight to the table.
    database
        .execute(&format!(
            "INSERT INTO survey_responses
                 (project_id, survey_id, submission_key, submission_id, event_uuid, distinct_id,
                  timestamp, answers, completed)
             SELECT {project}, '{id}', 'sub-' || n, 'sub-' || n, gen_random_uuid(),
                    'person-' || n, now() - n * interval '1 second',
                    jsonb_build_object('{question}', repeat('x', 200)), true
             FROM generate_series(1, 100000) AS n"
        ))
        .await;
    let before = server.peak_memory_kib();
    let mut response = client
        .get(server.url(&format!(
            "/api/projects/{project}/surveys/{id}/responses/export/?format=csv"
        )))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let (mut bytes, mut lines) = (0_usize, 0_usize);
    while let Some(chunk) = response.chunk().await.unwrap() {
        bytes += chunk.len();
        lines += chunk.iter().filter(|b| **b == b'\n').count();
    }
    assert_eq!(lines, 100_001, "a header and 100,000 rows");
    assert!(bytes > 25_000_000, "{bytes} bytes");
    let grown = server.peak_memory_kib().saturating_sub(before);
    // The file is over 25 MB; a node holding it (or its rows) would grow by more than that.
    assert!(
        grown < 16 * 1024,
        "the export grew the node's peak memory by {grown} KiB"
    );
}
