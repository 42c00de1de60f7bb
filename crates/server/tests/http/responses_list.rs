//! PostHog's JSON responses list (`GET …/surveys/{id}/responses/`) and survey stats as
//! PostHog's clients read them: one row per submission, answers merged from its sends and
//! partially completed closures, `extra`, every query parameter with DRF's messages, the two
//! scopes it needs, paging by offset; stats counting partial closures as sent, with
//! `per_question_stats` when asked.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app};
use crate::survey_requests::{created, survey_id};

/// A launched survey with a rating (`nps`), an open question (`why`) and a multiple choice
/// (`pick`, with a Chinese translation of its choices); its id.
async fn survey(app: &TestApp, tenant: &Tenant) -> String {
    let survey = created(
        app,
        tenant,
        json!({
            "name": "Checkout",
            "type": "popover",
            "questions": [
                {"id": "nps", "type": "rating", "question": "How likely are you to recommend us?",
                 "scale": 10, "display": "number"},
                {"id": "why", "type": "open", "question": "Why?"},
                {"id": "pick", "type": "multiple_choice", "question": "Which?",
                 "choices": ["Fast", "Cheap"],
                 "translations": {"zh": {"choices": ["快", "便宜"]}}},
            ],
            "start_date": "2026-01-01T00:00:00Z",
        }),
    )
    .await;
    survey_id(&survey).to_owned()
}

fn event(name: &str, uuid: &str, person: &str, at: &str, properties: Value) -> Value {
    json!({"event": name, "uuid": uuid, "distinct_id": person, "timestamp": at,
           "properties": properties})
}

fn list_path(tenant: &Tenant, survey: &str, query: &str) -> String {
    format!(
        "/api/projects/{}/surveys/{survey}/responses/{query}",
        tenant.project_id
    )
}

async fn list(app: &TestApp, tenant: &Tenant, survey: &str, query: &str) -> Value {
    let (status, body) = parts(
        app.get(&list_path(tenant, survey, query), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{query}: {body}");
    body
}

const UUID_1: &str = "0192f5a4-0000-7000-8000-000000000e01";
const UUID_2: &str = "0192f5a4-0000-7000-8000-000000000e02";
const UUID_3: &str = "0192f5a4-0000-7000-8000-000000000e03";
const UUID_4: &str = "0192f5a4-0000-7000-8000-000000000e04";

/// Two submissions: `s1` answered over a send and a partially completed dismissal (where and
/// in which iteration it was answered on its first event), `s2` one send of a multiple choice;
/// and a survey shown.
async fn answered(app: &TestApp, tenant: &Tenant, survey: &str) {
    app.capture_batch(
        tenant,
        vec![
            event(
                "survey shown",
                UUID_4,
                "user-1",
                "2026-06-10T09:00:00Z",
                json!({"$survey_id": survey}),
            ),
            event(
                "survey sent",
                UUID_1,
                "user-1",
                "2026-06-10T09:01:00Z",
                json!({"$survey_id": survey, "$survey_submission_id": "s1",
                         "$survey_response_nps": 9, "$survey_iteration": 2,
                         "$session_id": "sess-1", "$device_type": "Mobile",
                         "$current_url": "https://shop.example/checkout", "$lib": "web",
                         "$set": {"email": "user-1@example.com"}}),
            ),
            event(
                "survey dismissed",
                UUID_2,
                "user-1",
                "2026-06-10T09:05:00Z",
                json!({"$survey_id": survey, "$survey_submission_id": "s1",
                         "$survey_partially_completed": true,
                         "$survey_response_why": "Loved the UX",
                         "$geoip_country_code": "US"}),
            ),
            event(
                "survey sent",
                UUID_3,
                "user-2",
                "2026-06-09T10:00:00Z",
                json!({"$survey_id": survey, "$survey_submission_id": "s2",
                         "$survey_response_pick": ["Fast", "Cheap"],
                         "$survey_response_nps": "6"}),
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn the_json_list_answers_one_merged_row_per_submission_in_posthogs_shape() {
    let app = spawn_app().await;
    let tenant = app.tenant("list@example.com", &["*"]).await;
    let survey = survey(&app, &tenant).await;
    answered(&app, &tenant, &survey).await;

    let body = list(&app, &tenant, &survey, "").await;
    assert_eq!(
        body,
        json!({
            "results": [
                {"uuid": UUID_2, "distinct_id": "user-1", "session_id": "sess-1",
                 "submitted_at": "2026-06-10T09:05:00Z",
                 "answers": [
                     {"question_id": "nps", "question_index": 0,
                      "question_text": "How likely are you to recommend us?",
                      "question_type": "rating", "answer": "9"},
                     {"question_id": "why", "question_index": 1, "question_text": "Why?",
                      "question_type": "open", "answer": "Loved the UX"},
                 ],
                 "extra": {"device_type": "Mobile", "browser": null, "os": null,
                           "geoip_country_code": "US", "geoip_country_name": null,
                           "geoip_city_name": null,
                           "current_url": "https://shop.example/checkout", "iteration": "2"}},
                {"uuid": UUID_3, "distinct_id": "user-2", "session_id": null,
                 "submitted_at": "2026-06-09T10:00:00Z",
                 "answers": [
                     {"question_id": "nps", "question_index": 0,
                      "question_text": "How likely are you to recommend us?",
                      "question_type": "rating", "answer": "6"},
                     {"question_id": "pick", "question_index": 2, "question_text": "Which?",
                      "question_type": "multiple_choice", "answer": ["Fast", "Cheap"]},
                 ],
                 "extra": {"device_type": null, "browser": null, "os": null,
                           "geoip_country_code": null, "geoip_country_name": null,
                           "geoip_city_name": null, "current_url": null, "iteration": null}},
            ],
            "has_more": false,
            "limit": 100,
            "offset": 0,
        })
    );

    // One question: its answerers only, and its answer only.
    let why = list(&app, &tenant, &survey, "?question_id=why").await;
    assert_eq!(why["results"].as_array().unwrap().len(), 1, "{why}");
    assert_eq!(why["results"][0]["answers"].as_array().unwrap().len(), 1);
    assert_eq!(why["results"][0]["answers"][0]["question_id"], "why");
    // Scores read the merged answer as a number.
    let promoters = list(&app, &tenant, &survey, "?question_id=nps&score_gte=9").await;
    let detractors = list(&app, &tenant, &survey, "?question_id=nps&score_lte=6").await;
    assert_eq!(
        (
            promoters["results"][0]["uuid"].clone(),
            detractors["results"][0]["uuid"].clone(),
            promoters["results"].as_array().unwrap().len(),
        ),
        (json!(UUID_2), json!(UUID_3), 1)
    );
    // A question the survey does not have lists nothing, as PostHog answers it.
    let unknown = list(&app, &tenant, &survey, "?question_id=nope").await;
    assert_eq!(
        unknown,
        json!({"results": [], "has_more": false, "limit": 100, "offset": 0})
    );

    // The window: since/until, else the survey's run; archived rows left out when asked.
    let since = list(&app, &tenant, &survey, "?since=2026-06-10T00:00:00Z").await;
    assert_eq!(since["results"].as_array().unwrap().len(), 1);
    let until = list(&app, &tenant, &survey, "?until=2026-06-09T23:59:59%2B00:00").await;
    assert_eq!(until["results"][0]["uuid"], UUID_3);
    let archive = format!(
        "/api/projects/{}/surveys/{survey}/responses/{UUID_2}/archive/",
        tenant.project_id
    );
    let (status, _) = parts(
        app.send_json(Method::POST, &archive, &tenant.key, &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "the partial dismissal names its response");
    let kept = list(&app, &tenant, &survey, "?exclude_archived=true").await;
    assert_eq!(kept["results"].as_array().unwrap().len(), 1);
    assert_eq!(kept["results"][0]["uuid"], UUID_3);
}

#[tokio::test]
async fn the_json_list_pages_by_offset_and_says_whether_more_follow() {
    let app = spawn_app().await;
    let tenant = app.tenant("pages@example.com", &["*"]).await;
    let survey = survey(&app, &tenant).await;
    let events = (0..5)
        .map(|n| {
            event(
                "survey sent",
                &format!("0192f5a4-0000-7000-8000-00000000f00{n}"),
                &format!("p{n}"),
                &format!("2026-06-1{n}T10:00:00Z"),
                json!({"$survey_id": survey, "$survey_response_why": format!("answer {n}")}),
            )
        })
        .collect();
    app.capture_batch(&tenant, events).await;
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let page = list(&app, &tenant, &survey, &format!("?limit=2&offset={offset}")).await;
        assert_eq!(
            (page["limit"].clone(), page["offset"].clone()),
            (json!(2), json!(offset))
        );
        for row in page["results"].as_array().unwrap() {
            seen.push(row["distinct_id"].as_str().unwrap().to_owned());
        }
        if page["has_more"] == false {
            break;
        }
        offset += 2;
    }
    assert_eq!(seen, ["p4", "p3", "p2", "p1", "p0"]);
    let past = list(&app, &tenant, &survey, "?offset=5").await;
    assert_eq!(
        (past["results"].clone(), past["has_more"].clone()),
        (json!([]), json!(false))
    );
}

#[tokio::test]
async fn every_parameter_of_the_json_list_is_checked_with_drfs_messages() {
    let app = spawn_app().await;
    let tenant = app.tenant("params@example.com", &["*"]).await;
    let survey = survey(&app, &tenant).await;
    let datetime = "Datetime has wrong format. Use one of these formats instead: \
                    YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].";
    for (query, code, detail, attr) in [
        (
            "?limit=0",
            "min_value",
            "Ensure this value is greater than or equal to 1.",
            json!("limit"),
        ),
        (
            "?limit=501",
            "max_value",
            "Ensure this value is less than or equal to 500.",
            json!("limit"),
        ),
        (
            "?limit=x",
            "invalid_input",
            "A valid integer is required.",
            json!("limit"),
        ),
        (
            "?offset=-1",
            "min_value",
            "Ensure this value is greater than or equal to 0.",
            json!("offset"),
        ),
        (
            "?offset=x",
            "invalid_input",
            "A valid integer is required.",
            json!("offset"),
        ),
        ("?since=bad", "invalid_input", datetime, json!("since")),
        (
            "?until=2026-02-30",
            "invalid_input",
            datetime,
            json!("until"),
        ),
        (
            "?question_id=nps&score_lte=x",
            "invalid_input",
            "A valid number is required.",
            json!("score_lte"),
        ),
        ("?question_id=nps&score_gte=", "ok", "", Value::Null),
        (
            "?question_id=nps&score_gte=high",
            "invalid_input",
            "A valid number is required.",
            json!("score_gte"),
        ),
        (
            "?exclude_archived=maybe",
            "invalid_input",
            "Must be a valid boolean.",
            json!("exclude_archived"),
        ),
        (
            "?score_lte=5",
            "invalid_input",
            "score_lte and score_gte require question_id to be specified",
            Value::Null,
        ),
        (
            "?score_gte=5&exclude_archived=true",
            "invalid_input",
            "score_lte and score_gte require question_id to be specified",
            Value::Null,
        ),
    ] {
        let (status, body) = parts(
            app.get(&list_path(&tenant, &survey, query), &tenant.key)
                .await,
        )
        .await;
        if code == "ok" {
            assert_eq!(status, 200, "{query}: {body}");
            continue;
        }
        assert_eq!(
            (status, body),
            (
                400,
                json!({"type": "validation_error", "code": code, "detail": detail, "attr": attr})
            ),
            "{query}"
        );
    }
    for query in [
        "?limit=1",
        "?limit=500",
        "?offset=0",
        "?exclude_archived=false",
        "?since=2026-01-01",
        "?question_id=nps&score_gte=1.5&score_lte=10",
    ] {
        let (status, body) = parts(
            app.get(&list_path(&tenant, &survey, query), &tenant.key)
                .await,
        )
        .await;
        assert_eq!(status, 200, "{query}: {body}");
    }
    // The survey is looked up first: an unknown one is 404 whatever the query.
    let missing = "00000000-0000-4000-8000-000000000000";
    let (status, body) = parts(
        app.get(&list_path(&tenant, missing, "?limit=0"), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(
        (status, body),
        (
            404,
            json!({"type": "invalid_request", "code": "not_found", "detail": "Not found.",
                     "attr": null})
        )
    );
}

#[tokio::test]
async fn the_json_list_needs_survey_read_and_query_read_and_browsing_survey_read() {
    let app = spawn_app().await;
    let tenant = app.tenant("scopes@example.com", &["*"]).await;
    let survey = survey(&app, &tenant).await;
    let key = async |scopes: &[&str]| app.scoped_key(&tenant, &scopes.join(","), scopes).await;
    let surveys_only = key(&["survey:read"]).await;
    let queries_only = key(&["query:read"]).await;
    let both = key(&["survey:read", "query:read"]).await;
    let writer = key(&["survey:write", "query:write"]).await;
    let path = list_path(&tenant, &survey, "");
    for (who, scope) in [
        (&surveys_only, "query:read"),
        (&queries_only, "survey:read"),
    ] {
        let (status, body) = parts(app.get(&path, who).await).await;
        assert_eq!(
            (status, body),
            (
                403,
                json!({"type": "authentication_error", "code": "permission_denied",
                       "detail": format!("API key missing required scope '{scope}'"),
                       "attr": null})
            )
        );
    }
    for who in [&both, &writer] {
        assert_eq!(app.get(&path, who).await.status(), 200);
    }
    // Burrow's own list needs survey:read alone.
    let browse = list_path(&tenant, &survey, "browse/");
    let (status, page) = parts(app.get(&browse, &surveys_only).await).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["count"], 0);
    assert_eq!(app.get(&browse, &queries_only).await.status(), 403);
}

async fn stats(app: &TestApp, tenant: &Tenant, survey: &str, query: &str) -> (u16, String) {
    let response = app
        .get(
            &format!(
                "/api/projects/{}/surveys/{survey}/stats/{query}",
                tenant.project_id
            ),
            &tenant.key,
        )
        .await;
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn stats_count_partial_closures_as_sent_and_add_per_question_stats_when_asked() {
    let app = spawn_app().await;
    let tenant = app.tenant("stats@example.com", &["*"]).await;
    let survey = survey(&app, &tenant).await;

    // No event yet: the three kinds, zero-filled.
    let (status, text) = stats(&app, &tenant, &survey, "").await;
    assert_eq!(status, 200, "{text}");
    let empty: Value = serde_json::from_str(&text).unwrap();
    let nothing = json!({"total_count": 0, "unique_persons": 0, "first_seen": null,
                         "last_seen": null, "unique_persons_only_seen": 0,
                         "total_count_only_seen": 0});
    assert_eq!(
        empty["stats"],
        json!({"survey shown": nothing, "survey dismissed": nothing, "survey sent": nothing})
    );
    // PostHog's key order: stats, rates, survey_id, start_date, end_date.
    let order = [
        "\"stats\"",
        "\"rates\"",
        "\"survey_id\"",
        "\"start_date\"",
        "\"end_date\"",
    ]
    .map(|key| text.find(key).unwrap_or_else(|| panic!("{key} in {text}")));
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
    assert!(!text.contains("per_question_stats"));

    let at = "2026-06-10T09:00:00Z";
    let mut events = vec![
        event(
            "survey shown",
            "0192f5a4-0000-7000-8000-00000000a001",
            "a",
            at,
            json!({"$survey_id": survey}),
        ),
        event(
            "survey shown",
            "0192f5a4-0000-7000-8000-00000000a002",
            "b",
            at,
            json!({"$survey_id": survey}),
        ),
        event(
            "survey shown",
            "0192f5a4-0000-7000-8000-00000000a003",
            "c",
            at,
            json!({"$survey_id": survey}),
        ),
        // A dismissal and an abandon of a survey answered in part are sent.
        event(
            "survey dismissed",
            "0192f5a4-0000-7000-8000-00000000a004",
            "a",
            at,
            json!({"$survey_id": survey, "$survey_partially_completed": true,
                     "$survey_response_nps": "9", "$survey_response_pick": ["快"]}),
        ),
        event(
            "survey abandoned",
            "0192f5a4-0000-7000-8000-00000000a005",
            "b",
            at,
            json!({"$survey_id": survey, "$survey_partially_completed": true,
                     "$survey_response_nps": 7, "$survey_response_pick": ["Cheap", "Other"]}),
        ),
        // Closures of a survey not answered: a dismissal counts, an abandon does not.
        event(
            "survey dismissed",
            "0192f5a4-0000-7000-8000-00000000a006",
            "c",
            at,
            json!({"$survey_id": survey, "$survey_partially_completed": false}),
        ),
        event(
            "survey abandoned",
            "0192f5a4-0000-7000-8000-00000000a007",
            "c",
            at,
            json!({"$survey_id": survey, "$survey_partially_completed": false}),
        ),
    ];
    events.push(event(
        "survey sent",
        "0192f5a4-0000-7000-8000-00000000a008",
        "d",
        at,
        json!({"$survey_id": survey, "$survey_response_nps": "5",
                             "$survey_response_why": "ok"}),
    ));
    app.capture_batch(&tenant, events).await;

    let (_, text) = stats(&app, &tenant, &survey, "").await;
    let body: Value = serde_json::from_str(&text).unwrap();
    let count = |event: &str, field: &str| body["stats"][event][field].clone();
    assert_eq!(
        [
            count("survey shown", "total_count"),
            count("survey dismissed", "total_count"),
            count("survey sent", "total_count"),
            count("survey shown", "total_count_only_seen"),
        ],
        [json!(3), json!(1), json!(3), json!(0)],
        "{body}"
    );
    assert_eq!(body["rates"]["response_rate"], 100.0);
    assert_eq!(body["rates"]["dismissal_rate"], 33.33);

    let (status, text) = stats(&app, &tenant, &survey, "?include_per_question_stats=true").await;
    assert_eq!(status, 200, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert!(text.find("\"end_date\"").unwrap() < text.find("\"per_question_stats\"").unwrap());
    assert_eq!(
        body["per_question_stats"],
        json!([
            {"question_id": "nps", "question_index": 0,
             "question_text": "How likely are you to recommend us?", "question_type": "rating",
             "response_count": 3, "distribution": {"5": 1, "7": 1, "9": 1}, "average": 7.0},
            {"question_id": "why", "question_index": 1, "question_text": "Why?",
             "question_type": "open", "response_count": 1, "distribution": {}, "average": null},
            {"question_id": "pick", "question_index": 2, "question_text": "Which?",
             "question_type": "multiple_choice", "response_count": 2,
             "distribution": {"Cheap": 1, "Fast": 1, "<other>": 1}, "average": null},
        ]),
        "{body}"
    );

    // Archived responses are counted unless left out; the id is echoed as the path gave it.
    let listed = list(&app, &tenant, &survey, "?question_id=why").await;
    let archive = format!(
        "/api/projects/{}/surveys/{survey}/responses/{}/archive/",
        tenant.project_id,
        listed["results"][0]["uuid"].as_str().unwrap()
    );
    app.send_json(Method::POST, &archive, &tenant.key, &json!({}))
        .await;
    let upper = survey.to_uppercase();
    let (_, text) = stats(&app, &tenant, &upper, "?exclude_archived=true").await;
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["stats"]["survey sent"]["total_count"], 2, "{body}");
    assert_eq!(body["survey_id"], upper);
    let (_, text) = stats(&app, &tenant, &survey, "").await;
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["stats"]["survey sent"]["total_count"], 3, "{body}");

    // PostHog's date errors.
    for (query, detail) in [
        (
            "?date_from=yesterday",
            "Invalid date format. Please use ISO 8601 format with timezone info (e.g. 2024-01-01T00:00:00Z or 2024-01-01T00:00:00+00:00)",
        ),
        (
            "?date_from=2026-02-01T00:00:00Z&date_to=2026-01-01T00:00:00Z",
            "date_from must be before date_to",
        ),
    ] {
        let (status, text) = stats(&app, &tenant, &survey, query).await;
        assert_eq!(
            (status, serde_json::from_str::<Value>(&text).unwrap()),
            (
                400,
                json!({"type": "validation_error", "code": "invalid_input", "detail": detail,
                         "attr": null})
            )
        );
    }
}
