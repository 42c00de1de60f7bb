//! Static cohorts over HTTP: created from a CSV form (or empty, or from person UUIDs), added to
//! by CSV and by UUID, persons removed by UUID and listed, with PostHog's checks and messages;
//! their bounds, scopes, other tenants, and a flag naming one on for its members only.

use domain::admin::KeyRequest;
use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Tenant, TestApp, assert_error, parts, send_to_project, spawn_app};

const BOUNDARY: &str = "burrow-static-cohort-test";

/// A `multipart/form-data` body of text `fields` and, if given, a `csv` file.
fn form(fields: &[(&str, &str)], csv: Option<&[u8]>) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .bytes(),
        );
    }
    if let Some(csv) = csv {
        body.extend(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"csv\"; \
                 filename=\"persons.csv\"\r\nContent-Type: text/csv\r\n\r\n"
            )
            .bytes(),
        );
        body.extend(csv);
        body.extend(b"\r\n");
    }
    body.extend(format!("--{BOUNDARY}--\r\n").bytes());
    body
}

/// Sends a form to `path` under the tenant's project; the status and JSON body.
async fn send_form(
    app: &TestApp,
    tenant: &Tenant,
    method: Method,
    path: &str,
    body: Vec<u8>,
) -> (u16, Value) {
    parts(
        app.request(
            method,
            &format!("/api/projects/{}/{path}", tenant.project_id.0),
        )
        .bearer_auth(&tenant.key)
        .header(
            CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(body)
        .send()
        .await
        .unwrap(),
    )
    .await
}

/// Creates a static cohort from a CSV; its id.
pub async fn static_from_csv(app: &TestApp, tenant: &Tenant, csv: &str) -> i64 {
    let body = form(
        &[("name", "From CSV"), ("is_static", "true")],
        Some(csv.as_bytes()),
    );
    let (status, created) = send_form(app, tenant, Method::POST, "cohorts/", body).await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_i64().unwrap()
}

/// Captures a survey event whose `$set` stores the person `distinct_id` (a dismissal: a
/// `survey shown` would also store when they last saw a survey, and this test compares
/// properties whole).
async fn capture_person(app: &TestApp, token: &str, distinct_id: &str) {
    let response = app
        .request(Method::POST, "/batch/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "survey dismissed", "uuid": Uuid::now_v7(),
            "properties": {"distinct_id": distinct_id, "$survey_id": Uuid::new_v4(),
                           "$set": {"email": format!("{distinct_id}@example.com")}}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// The persons a cohort lists: the body of its `persons` page.
async fn persons(app: &TestApp, tenant: &Tenant, id: i64) -> Value {
    let (status, page) = send_to_project(
        app,
        tenant,
        Method::GET,
        &format!("cohorts/{id}/persons/"),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page
}

/// The UUIDs of the captured persons a cohort lists, by distinct id.
async fn uuids(app: &TestApp, tenant: &Tenant, id: i64) -> Vec<(String, String)> {
    persons(app, tenant, id).await["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|person| {
            (
                person["distinct_ids"][0].as_str().unwrap().to_owned(),
                person["uuid"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_static_cohort_is_created_from_a_csv_and_grows_with_each_upload() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let body = form(
        &[
            ("name", "Beta"),
            ("description", "Testers"),
            ("is_static", "true"),
        ],
        Some(b"alice\r\nbob\r\nalice\r\n"),
    );
    let (status, created) = send_form(&app, &ada, Method::POST, "cohorts/", body).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().unwrap();
    let mut shown = created.clone();
    for field in ["id", "created_at", "created_by"] {
        shown.as_object_mut().unwrap().remove(field);
    }
    assert_eq!(
        shown,
        json!({"name": "Beta", "description": "Testers",
               "filters": {"properties": {"type": "AND", "values": []}},
               "groups": [], "query": null, "deleted": false, "is_static": true,
               "cohort_type": "static", "is_calculating": false, "last_calculation": null,
               "errors_calculating": 0, "count": 2, "experiment_set": []})
    );
    let (_, read) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("cohorts/{id}/"),
        json!({}),
    )
    .await;
    assert_eq!(read["count"], 2);

    // A PATCH form adds the file's persons to those listed; the header names the column.
    let more = form(
        &[("name", "Beta testers")],
        Some(b"email,distinct_id\r\nb@x.io,bob\r\nc@x.io,carol\r\n"),
    );
    let (status, changed) =
        send_form(&app, &ada, Method::PATCH, &format!("cohorts/{id}/"), more).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(
        (changed["name"].clone(), changed["count"].clone()),
        (json!("Beta testers"), json!(3))
    );
    assert_eq!(changed["created_by"], created["created_by"]);
    let (_, list) = send_to_project(&app, &ada, Method::GET, "cohorts/", json!({})).await;
    assert_eq!(list["results"][0]["count"], 3, "{list}");

    // Without a file, a static cohort starts empty (PostHog's default); by JSON too.
    let (status, empty) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "cohorts/",
        json!({"name": "Manual", "is_static": true}),
    )
    .await;
    assert_eq!((status, empty["count"].clone()), (201, json!(0)), "{empty}");
    // A dynamic cohort's file is ignored, as PostHog ignores it; it is not counted.
    let dynamic = form(
        &[
            ("name", "Dynamic"),
            (
                "filters",
                r#"{"properties": {"type": "AND", "values": [{"key": "plan", "type": "person", "operator": "exact", "value": "pro"}]}}"#,
            ),
        ],
        Some(b"alice\n"),
    );
    let (status, dynamic) = send_form(&app, &ada, Method::POST, "cohorts/", dynamic).await;
    assert_eq!(
        (
            status,
            dynamic["is_static"].clone(),
            dynamic["count"].clone()
        ),
        (201, json!(false), Value::Null),
        "{dynamic}"
    );
}

#[tokio::test]
async fn bad_files_and_static_rules_are_refused_with_posthogs_messages() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let create = |csv: &'static [u8]| form(&[("name", "X"), ("is_static", "true")], Some(csv));
    for (body, attr, detail) in [
        (
            create(b""),
            "csv",
            "CSV file is empty. Please upload a CSV file with at least one row of data.",
        ),
        (
            create(b"name,plan\nada,pro\n"),
            "csv",
            "Multi-column CSV must contain at least one column with a supported ID header: \
             'person_id', 'Person .id' (PostHog export format), 'distinct_id', 'distinct-id', or \
             'email'. Found columns: name, plan",
        ),
        (
            create(b"distinct_id,plan\n,pro\n"),
            "csv",
            "CSV file contains no valid person IDs, distinct IDs, or email addresses. Please \
             ensure your file has data rows with person IDs, distinct IDs, or email addresses.",
        ),
        (
            create(b"\xff\xfe\x00"),
            "csv",
            "CSV file encoding is not supported. Please save your file as UTF-8 and try again.",
        ),
        (
            create(b"email\nada@example.com\n"),
            "csv",
            "Burrow finds persons by distinct id or person id (UUID) only: a CSV of email \
             addresses is not supported. Upload a column of distinct ids or person ids.",
        ),
        (
            form(&[("is_static", "maybe")], None),
            "is_static",
            "Must be a valid boolean.",
        ),
        (
            form(&[("filters", "{not json")], None),
            "filters",
            "Value must be valid JSON.",
        ),
    ] {
        let (status, error) = send_form(&app, &ada, Method::POST, "cohorts/", body).await;
        assert_eq!(status, 400, "{error}");
        assert_eq!(
            (error["attr"].as_str(), error["detail"].as_str()),
            (Some(attr), Some(detail)),
            "{error}"
        );
    }
    let (status, error) =
        send_form(&app, &ada, Method::POST, "cohorts/", b"--nope\r\n".to_vec()).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (400, Some("parse_error")),
        "{error}"
    );
    let (_, list) = send_to_project(&app, &ada, Method::GET, "cohorts/", json!({})).await;
    assert_eq!(list["count"], 0, "no refused upload left a cohort");

    let id = static_from_csv(&app, &ada, "alice\n").await;
    for (body, attr, detail) in [
        (
            json!({"is_static": false}),
            Some("is_static"),
            "A cohort stays static or dynamic as it was created: create a new cohort instead.",
        ),
        (
            json!({"filters": {"properties": {"type": "AND", "values": [
                {"key": "plan", "type": "person", "operator": "exact", "value": "pro"}]}}}),
            None,
            "Editing the criteria of a static cohort is not supported yet. Create a new static \
             cohort instead.",
        ),
    ] {
        let (status, error) =
            send_to_project(&app, &ada, Method::PATCH, &format!("cohorts/{id}/"), body).await;
        assert_eq!(status, 400, "{error}");
        assert_eq!(
            (error["attr"].as_str(), error["detail"].as_str()),
            (attr, Some(detail))
        );
    }
    let (status, unchanged) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &format!("cohorts/{id}/"),
        json!({"is_static": true, "name": "Same kind"}),
    )
    .await;
    assert_eq!(
        (status, unchanged["count"].clone()),
        (200, json!(1)),
        "{unchanged}"
    );
}

#[tokio::test]
async fn persons_are_listed_added_and_removed_by_uuid_as_posthog_does() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    capture_person(&app, &token, "alice").await;
    capture_person(&app, &token, "bob").await;

    // Listed by CSV, captured or not: the persons are those captured, with their UUIDs.
    let listed = static_from_csv(&app, &ada, "bob\nalice\nnot-seen-yet\n").await;
    let page = persons(&app, &ada, listed).await;
    assert_eq!(
        (page["count"].clone(), page["next"].clone()),
        (json!(2), Value::Null)
    );
    let alice = &page["results"][0];
    let alice_uuid = alice["uuid"].as_str().unwrap().to_owned();
    assert_eq!(
        alice,
        &json!({"id": alice_uuid, "uuid": alice_uuid, "type": "person",
                "name": "alice@example.com", "distinct_ids": ["alice"],
                "properties": {"email": "alice@example.com"}, "created_at": null,
                "last_seen_at": null, "is_identified": null, "matched_recordings": [],
                "value_at_data_point": null})
    );
    let bob_uuid = uuids(&app, &ada, listed).await[1].1.clone();
    let (_, one_per_page) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("cohorts/{listed}/persons/?limit=1"),
        json!({}),
    )
    .await;
    assert_eq!(one_per_page["results"].as_array().unwrap().len(), 1);
    assert!(
        one_per_page["next"]
            .as_str()
            .is_some_and(|next| next.contains("offset=1")),
        "{one_per_page}"
    );

    // Added by UUID to a cohort made empty, unknown UUIDs skipped.
    let (_, manual) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "cohorts/",
        json!({"name": "Manual", "is_static": true}),
    )
    .await;
    let manual = manual["id"].as_i64().unwrap();
    let add = format!("cohorts/{manual}/add_persons_to_static_cohort/");
    let (status, answer) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &add,
        json!({"person_ids": [bob_uuid, Uuid::new_v4(), "garbage"]}),
    )
    .await;
    assert_eq!((status, answer), (200, json!({"success": true})));
    assert_eq!(
        uuids(&app, &ada, manual).await,
        [("bob".to_owned(), bob_uuid.clone())]
    );
    let too_many: Vec<String> = (0..1001).map(|_| Uuid::new_v4().to_string()).collect();
    for (body, detail) in [
        (json!({}), "person_ids must be a list"),
        (json!({"person_ids": bob_uuid}), "person_ids must be a list"),
        (json!({"person_ids": []}), "person_ids cannot be empty"),
        (json!({"person_ids": too_many}), "List size exceeds limit"),
        (
            json!({"person_ids": [Uuid::new_v4()]}),
            "No valid users to add to cohort",
        ),
    ] {
        let (status, error) = send_to_project(&app, &ada, Method::PATCH, &add, body).await;
        assert_eq!(status, 400, "{error}");
        assert_error(&error, "validation_error", "invalid_input", detail);
    }

    // Removed by UUID: PostHog's checks, its 404, and idempotence.
    let remove = format!("cohorts/{manual}/remove_person_from_static_cohort/");
    for (body, detail) in [
        (json!({}), "person_id is required"),
        (json!({"person_id": ""}), "person_id is required"),
        (json!({"person_id": 7}), "person_id must be a string"),
        (
            json!({"person_id": "nope"}),
            "person_id must be a valid UUID",
        ),
    ] {
        let (status, error) = send_to_project(&app, &ada, Method::PATCH, &remove, body).await;
        assert_eq!(status, 400, "{error}");
        assert_error(&error, "validation_error", "invalid_input", detail);
    }
    let (status, error) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &remove,
        json!({"person_id": Uuid::new_v4()}),
    )
    .await;
    assert_eq!(status, 404);
    assert_error(
        &error,
        "invalid_request",
        "not_found",
        "Person with this UUID does not exist in the cohort's team",
    );
    for _ in 0..2 {
        let (status, answer) = send_to_project(
            &app,
            &ada,
            Method::PATCH,
            &remove,
            json!({"person_id": bob_uuid}),
        )
        .await;
        assert_eq!((status, answer), (200, json!({"success": true})));
    }
    assert_eq!(persons(&app, &ada, manual).await["count"], 0);

    // A CSV of person ids names persons by UUID.
    let by_uuid = static_from_csv(
        &app,
        &ada,
        &format!("person_id\n{alice_uuid}\n{}\n", Uuid::new_v4()),
    )
    .await;
    let (_, read) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("cohorts/{by_uuid}/"),
        json!({}),
    )
    .await;
    assert_eq!(read["count"], 1);

    // A dynamic cohort takes none of this.
    let (_, dynamic) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "cohorts/",
        json!({"name": "Pro", "filters": {"properties": {"type": "AND", "values": [
            {"key": "plan", "type": "person", "operator": "exact", "value": "pro"}]}}}),
    )
    .await;
    let dynamic = dynamic["id"].as_i64().unwrap();
    for (path, detail) in [
        (
            "add_persons_to_static_cohort",
            "Can only add users to static cohorts",
        ),
        (
            "remove_person_from_static_cohort",
            "Can only remove users from static cohorts",
        ),
    ] {
        let (status, error) = send_to_project(
            &app,
            &ada,
            Method::PATCH,
            &format!("cohorts/{dynamic}/{path}/"),
            json!({"person_ids": [alice_uuid], "person_id": alice_uuid}),
        )
        .await;
        assert_eq!(status, 400);
        assert_error(&error, "validation_error", "invalid_input", detail);
    }
    let (status, _) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("cohorts/{dynamic}/persons/"),
        json!({}),
    )
    .await;
    assert_eq!(status, 400);
}

/// A static cohort's filters are empty, which would match everyone: a flag naming it is on for
/// the persons it lists only.
#[tokio::test]
async fn a_flag_naming_a_static_cohort_is_on_for_its_members_only() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let token = app.project_token(&ada).await;
    let id = static_from_csv(&app, &ada, "listed\n").await;
    let (status, flag) = send_to_project(
        &app,
        &ada,
        Method::POST,
        "feature_flags/",
        json!({"key": "beta", "filters": {"groups": [{"properties": [
            {"key": "id", "type": "cohort", "value": id, "operator": "in"}]}]}}),
    )
    .await;
    assert_eq!(status, 201, "{flag}");
    for (distinct_id, enabled) in [("listed", true), ("anyone-else", false)] {
        let (status, answer) = app
            .flags(&json!({"token": token, "distinct_id": distinct_id}))
            .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["flags"]["beta"]["enabled"], enabled, "{distinct_id}");
    }
}

#[tokio::test]
async fn static_cohort_routes_need_their_scopes_and_stay_in_their_project() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let id = static_from_csv(&app, &ada, "alice\n").await;
    let scoped = |scopes: &[&str]| KeyRequest {
        email: ada.email.clone(),
        label: scopes.join(" "),
        scopes: scopes.iter().map(ToString::to_string).collect(),
        scoped_teams: None,
        scoped_organizations: None,
    };
    let as_key = |key: String| Tenant { key, ..ada.clone() };
    let cohort_reader = as_key(app.key(scoped(&["cohort:read"])).await);
    let person_reader = as_key(app.key(scoped(&["person:read"])).await);
    let add = format!("cohorts/{id}/add_persons_to_static_cohort/");
    let listed = format!("cohorts/{id}/persons/");
    for (who, method, path, expected) in [
        (&cohort_reader, Method::PATCH, add.as_str(), 403),
        (&cohort_reader, Method::GET, listed.as_str(), 403),
        (&person_reader, Method::GET, listed.as_str(), 200),
    ] {
        let (status, body) = send_to_project(&app, who, method, path, json!({})).await;
        assert_eq!(status, expected, "{path}: {body}");
    }

    // Another tenant's key sees none of it, even in its own project with Ada's cohort id.
    let bob = app.tenant("bob@example.com", &["*"]).await;
    for (method, path) in [
        (Method::GET, listed.clone()),
        (Method::PATCH, add.clone()),
        (
            Method::PATCH,
            format!("cohorts/{id}/remove_person_from_static_cohort/"),
        ),
    ] {
        let (status, body) =
            send_to_project(&app, &bob, method, &path, json!({"person_ids": []})).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let upload = form(&[], Some(b"mallory\n"));
    let (status, _) = send_form(&app, &bob, Method::PATCH, &format!("cohorts/{id}/"), upload).await;
    assert_eq!(status, 404);
    assert_eq!(persons(&app, &ada, id).await["count"], 0);
    let (_, read) = send_to_project(
        &app,
        &ada,
        Method::GET,
        &format!("cohorts/{id}/"),
        json!({}),
    )
    .await;
    assert_eq!(
        read["count"], 1,
        "Bob's upload listed no one in Ada's cohort"
    );
}

/// A CSV names at most 10,000 persons; a cohort lists at most 50,000 and a project's cohorts
/// 100,000 together: past a bound the upload is refused whole.
#[tokio::test]
async fn members_are_bounded_per_upload_per_cohort_and_per_project() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let csv = |from: usize, count: usize| -> Vec<u8> {
        (from..from + count)
            .map(|i| format!("p{i}\n"))
            .collect::<String>()
            .into_bytes()
    };
    let upload = |id: i64, from: usize| {
        let body = form(&[], Some(&csv(from, 10_000)));
        let app = &app;
        let ada = &ada;
        async move { send_form(app, ada, Method::PATCH, &format!("cohorts/{id}/"), body).await }
    };

    let (status, error) = send_form(
        &app,
        &ada,
        Method::POST,
        "cohorts/",
        form(&[("is_static", "true")], Some(&csv(0, 10_001))),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        error["detail"],
        "A CSV may name at most 10000 persons; upload the rest in another file."
    );

    let mut full = Vec::new();
    for cohort in 0..2 {
        let id = static_from_csv(&app, &ada, "seed\n").await;
        for n in 0..5 {
            let (status, body) = upload(id, cohort * 100_000 + n * 10_000).await;
            let expected = if n == 4 { 400 } else { 200 };
            assert_eq!(status, expected, "{body}");
            if n == 4 {
                assert_eq!(
                    body["detail"],
                    "A static cohort may list at most 50000 persons; with these it would list \
                     50001."
                );
            }
        }
        // The refused upload listed no one; what fits still goes in.
        let (status, body) = send_form(
            &app,
            &ada,
            Method::PATCH,
            &format!("cohorts/{id}/"),
            form(&[], Some(&csv(cohort * 100_000 + 40_000, 9_999))),
        )
        .await;
        assert_eq!(
            (status, body["count"].clone()),
            (200, json!(50_000)),
            "{body}"
        );
        full.push(id);
    }
    let (status, error) = send_form(
        &app,
        &ada,
        Method::POST,
        "cohorts/",
        form(&[("is_static", "true")], Some(b"one-more\n")),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        error["detail"],
        "A project's static cohorts may list at most 100000 persons together; with these they \
         would list 100001."
    );
    let (_, list) = send_to_project(&app, &ada, Method::GET, "cohorts/", json!({})).await;
    let counts: Vec<&Value> = list["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["count"])
        .collect();
    assert_eq!(
        counts,
        [&json!(50_000), &json!(50_000)],
        "the refused cohort was not made"
    );

    // Another project has its own budget; deleting a cohort frees the project's.
    let bob = app.tenant("bob@example.com", &["*"]).await;
    static_from_csv(&app, &bob, "one-more\n").await;
    let (status, _) = send_to_project(
        &app,
        &ada,
        Method::PATCH,
        &format!("cohorts/{}/", full[0]),
        json!({"deleted": true}),
    )
    .await;
    assert_eq!(status, 200);
    static_from_csv(&app, &ada, "one-more\n").await;
}
