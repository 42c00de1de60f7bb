//! The surveys list's filters and search, and `question_labels`, over HTTP: PostHog's
//! parameters and messages, `search_match_type`, filters before paging, and the labels' shape,
//! scope and tenancy.

use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, parts, spawn_app, spawn_app_with};
use crate::survey_requests::{create, created, survey_path, surveys_path};

async fn list(app: &TestApp, tenant: &Tenant, query: &str) -> (u16, Value) {
    parts(
        app.get(
            &format!("{}?{query}", surveys_path(tenant.project_id)),
            &tenant.key,
        )
        .await,
    )
    .await
}

/// The names of a list answer's surveys, and each one's `search_match_type`.
fn named(page: &Value) -> Vec<(String, Value)> {
    page["results"]
        .as_array()
        .expect("a list answer")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["search_match_type"].clone(),
            )
        })
        .collect()
}

fn names(page: &Value) -> Vec<String> {
    named(page).into_iter().map(|(name, _)| name).collect()
}

#[tokio::test]
async fn list_filters_narrow_the_list_before_paging() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    // Carol, a member of Ada's organization, creates a survey in Ada's project.
    let carol = app.tenant("carol@example.com", &["*"]).await;
    app.admin
        .add_member(
            &carol.email,
            ada.organization_id,
            domain::tenancy::MembershipLevel::Member,
        )
        .await
        .unwrap();
    let (_, me) = parts(app.get("/api/users/@me/", &carol.key).await).await;
    let carol_id = me["id"].as_i64().expect("a user id");

    let draft = created(&app, &ada, json!({"name": "draft", "type": "popover"})).await;
    let running = created(
        &app,
        &ada,
        json!({"name": "running", "type": "widget", "start_date": "2026-01-01T00:00:00Z"}),
    )
    .await;
    created(
        &app,
        &ada,
        json!({"name": "scheduled", "type": "popover", "archived": true,
               "start_date": "2999-01-01T00:00:00Z"}),
    )
    .await;
    // Carol's key reaches Ada's project through her membership.
    let carol_in_ada = Tenant {
        project_id: ada.project_id,
        ..carol
    };
    created(
        &app,
        &carol_in_ada,
        json!({"name": "carol's", "type": "api", "start_date": "2026-01-01T00:00:00Z",
               "end_date": "2026-02-01T00:00:00Z"}),
    )
    .await;

    let by_carol = format!("created_by={carol_id}");
    let some_ids = format!(
        "ids={},%20{},0192f5a4-0000-7000-8000-0000000000aa",
        draft["id"].as_str().unwrap(),
        running["id"].as_str().unwrap()
    );
    let cases = [
        ("", vec!["carol's", "scheduled", "running", "draft"]),
        ("status=draft", vec!["draft"]),
        ("status=running", vec!["scheduled", "running"]),
        ("status=complete", vec!["carol's"]),
        ("type=widget", vec!["running"]),
        ("archived=true", vec!["scheduled"]),
        ("archived=false&status=running", vec!["running"]),
        (by_carol.as_str(), vec!["carol's"]),
        (some_ids.as_str(), vec!["running", "draft"]),
        // Blank values and parameters the list does not read narrow nothing.
        (
            "type=&status=&ids=&created_by=&archived=&order=name&unknown=1",
            vec!["carol's", "scheduled", "running", "draft"],
        ),
    ];
    for (query, expected) in cases {
        let (status, page) = list(&app, &ada, query).await;
        assert_eq!(status, 200, "{query}: {page}");
        assert_eq!(names(&page), expected, "{query}");
        assert_eq!(page["count"], expected.len(), "{query}");
    }

    let (_, first) = list(&app, &ada, "status=running&limit=1").await;
    assert_eq!(
        (first["count"].clone(), names(&first)),
        (json!(2), vec!["scheduled".to_owned()])
    );
    assert_eq!(
        first["next"],
        format!(
            "{}/api/projects/{}/surveys/?limit=1&offset=1&status=running",
            app.address, ada.project_id
        )
    );
    let (_, last) = list(&app, &ada, "status=running&limit=1&offset=1").await;
    assert_eq!(names(&last), ["running"]);
    assert_eq!(last["next"], Value::Null);
}

#[tokio::test]
async fn list_filters_refuse_values_they_cannot_use_naming_the_parameter() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let error = |code: &str, detail: &str, attr: &str| json!({"type": "validation_error", "code": code, "detail": detail, "attr": attr});
    let too_many = vec!["0192f5a4-0000-7000-8000-0000000000aa"; 1001].join(",");
    let cases = [
        (
            "ids=0192f5a4-0000-7000-8000-0000000000aa,nope".to_owned(),
            error("invalid_input", "Enter a valid UUID.", "ids"),
        ),
        (
            format!("ids={too_many}"),
            error(
                "max_length",
                "Ensure this field has no more than 1000 elements.",
                "ids",
            ),
        ),
        (
            "type=product_tour".to_owned(),
            error(
                "invalid_choice",
                "Select a valid choice. product_tour is not one of the available choices.",
                "type",
            ),
        ),
        (
            "status=live".to_owned(),
            error(
                "invalid_choice",
                "Select a valid choice. live is not one of the available choices.",
                "status",
            ),
        ),
        (
            "archived=maybe".to_owned(),
            error("invalid_input", "Must be a valid boolean.", "archived"),
        ),
        (
            "created_by=ada".to_owned(),
            error("invalid_input", "Enter a number.", "created_by"),
        ),
        (
            "created_by=99999999999".to_owned(),
            error(
                "max_value",
                "Ensure this value is less than or equal to 2147483647.",
                "created_by",
            ),
        ),
        (
            format!("search={}", "é".repeat(201)),
            error(
                "invalid_input",
                "Search query must be 200 characters or fewer.",
                "search",
            ),
        ),
    ];
    for (query, expected) in cases {
        let (status, body) = list(&app, &ada, &query).await;
        assert_eq!((status, body), (400, expected), "{query:.80}");
    }
    let (status, _) = list(&app, &ada, &format!("search={}", "é".repeat(200))).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_search_answers_exact_matches_else_similar_ones_each_with_its_match_type() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for (name, description) in [
        ("Onboarding feedback", ""),
        ("Landing", "Shown on the landing page"),
        ("Pricing page", ""),
    ] {
        created(
            &app,
            &ada,
            json!({"name": name, "type": "popover", "description": description}),
        )
        .await;
    }
    let exact = json!("exact");
    let similar = json!("similar");
    let (_, page) = list(&app, &ada, "search=PAGE").await;
    assert_eq!(
        named(&page),
        [
            ("Pricing page".to_owned(), exact.clone()),
            ("Landing".to_owned(), exact.clone())
        ],
        "most relevant first: by name before by description"
    );
    let (_, page) = list(&app, &ada, "search=onbording").await;
    assert_eq!(
        named(&page),
        [
            ("Onboarding feedback".to_owned(), similar.clone()),
            ("Landing".to_owned(), similar)
        ]
    );
    let (_, page) = list(&app, &ada, "search=nothing+like+it").await;
    assert_eq!(
        (page["count"].clone(), page["results"].clone()),
        (json!(0), json!([]))
    );

    // Not searched: newest first, and no match type, in lists and reads alike.
    for query in ["", "search=+"] {
        let (_, page) = list(&app, &ada, query).await;
        assert_eq!(
            named(&page),
            [
                ("Pricing page".to_owned(), Value::Null),
                ("Landing".to_owned(), Value::Null),
                ("Onboarding feedback".to_owned(), Value::Null)
            ]
        );
    }
    let (_, page) = list(&app, &ada, "").await;
    let id = page["results"][0]["id"].as_str().unwrap();
    let (_, one) = parts(app.get(&survey_path(ada.project_id, id), &ada.key).await).await;
    assert_eq!(one["search_match_type"], Value::Null);
    assert_eq!(one, page["results"][0]);

    // Searched lists page like the others, and the rendering kept for reads is not touched.
    let (_, first) = list(&app, &ada, "search=page&limit=1").await;
    assert_eq!(first["count"], 2);
    assert_eq!(named(&first), [("Pricing page".to_owned(), exact)]);
    assert_eq!(
        first["next"],
        format!(
            "{}/api/projects/{}/surveys/?limit=1&offset=1&search=page",
            app.address, ada.project_id
        )
    );
    let (_, again) = parts(app.get(&survey_path(ada.project_id, id), &ada.key).await).await;
    assert_eq!(again["search_match_type"], Value::Null);
}

#[tokio::test]
async fn question_labels_name_each_question_of_the_projects_surveys() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let labels_path = format!("{}question_labels/", surveys_path(ada.project_id));
    let (status, empty) = parts(app.get(&labels_path, &ada.key).await).await;
    assert_eq!((status, empty), (200, json!({"labels": []})));

    let nps = created(
        &app,
        &ada,
        json!({"name": "NPS", "type": "popover", "questions": [
            {"id": "q-score", "type": "rating", "question": "How likely to recommend?"},
            {"id": "", "type": "open", "question": "No id"},
            {"id": "q-why", "type": "open", "question": "Why?"}]}),
    )
    .await;
    let churn = created(
        &app,
        &ada,
        json!({"name": "Churn", "type": "api", "archived": true, "questions": [
            {"id": "q-left", "type": "open", "question": "Why did you leave?"}]}),
    )
    .await;
    created(&app, &ada, json!({"name": "No questions", "type": "api"})).await;

    let reader = app.scoped_key(&ada, "reader", &["survey:read"]).await;
    let (status, labels) = parts(app.get(labels_path.trim_end_matches('/'), &reader).await).await;
    assert_eq!(status, 200, "{labels}");
    assert_eq!(
        labels,
        json!({"labels": [
            {"question_id": "q-left", "question_text": "Why did you leave?", "question_index": 0,
             "survey_id": churn["id"], "survey_name": "Churn"},
            {"question_id": "q-score", "question_text": "How likely to recommend?",
             "question_index": 0, "survey_id": nps["id"], "survey_name": "NPS"},
            {"question_id": "q-why", "question_text": "Why?", "question_index": 2,
             "survey_id": nps["id"], "survey_name": "NPS"},
        ]})
    );

    let flagger = app.scoped_key(&ada, "flags", &["feature_flag:read"]).await;
    let (status, body) = parts(app.get(&labels_path, &flagger).await).await;
    assert_eq!(
        (status, body["detail"].clone()),
        (403, json!("API key missing required scope 'survey:read'"))
    );
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let (status, theirs) = parts(
        app.get(
            &format!("{}question_labels/", surveys_path(bob.project_id)),
            &bob.key,
        )
        .await,
    )
    .await;
    assert_eq!((status, theirs), (200, json!({"labels": []})));
}

/// A project holds at most 100,000 surveys (what it may store of them, what its feed snapshot
/// and a search weigh), even when its creates race; another project's creates and searches go
/// on.
#[tokio::test]
async fn a_project_at_its_survey_bound_refuses_more_and_holds_back_no_one_else() {
    let app = spawn_app_with(|args| args.rate_limit = "off".parse().unwrap()).await;
    let full = app.tenant("full@example.com", &["*"]).await;
    let other = app.tenant("other@example.com", &["*"]).await;
    // All but 8 of the bound, written straight to the table and counted at once (one by one,
    // the count's row would take a new version per row).
    for statement in [
        "ALTER TABLE surveys DISABLE TRIGGER surveys_per_project".to_owned(),
        format!(
            "INSERT INTO surveys (id, project_id, name, type) \
             SELECT gen_random_uuid(), {}, 'Seeded ' || n, 'api' FROM generate_series(1, 99992) n",
            full.project_id
        ),
        "ALTER TABLE surveys ENABLE TRIGGER surveys_per_project".to_owned(),
        format!(
            "INSERT INTO project_survey_counts (project_id, surveys) VALUES ({}, 99992)",
            full.project_id
        ),
    ] {
        app.database.execute(&statement).await;
    }
    let path = surveys_path(full.project_id);
    // Racing creates, more than fit: exactly the bound is stored.
    let statuses: Vec<u16> = futures_util::stream::iter(0..16)
        .map(|n| {
            let body = json!({"name": format!("Survey {n}"), "type": "api"});
            let (app, path, key) = (&app, &path, &full.key);
            async move {
                app.send_json(Method::POST, path, key, &body)
                    .await
                    .status()
                    .as_u16()
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 8);
    assert_eq!(statuses.iter().filter(|s| **s == 400).count(), 8);
    let (status, refused) = create(&app, &full, json!({"name": "More", "type": "api"})).await;
    assert_eq!(status, 400);
    assert_eq!(
        refused["detail"],
        "A project may have at most 100000 surveys."
    );
    created(&app, &other, json!({"name": "Survey 1", "type": "api"})).await;
    let (status, found) = list(&app, &other, "search=Survey").await;
    assert_eq!((status, names(&found)), (200, vec!["Survey 1".to_owned()]));
}
