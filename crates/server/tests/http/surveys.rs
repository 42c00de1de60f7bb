//! `/api/projects/{id}/surveys/` over HTTP: every rule of the survey issue.

use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, assert_error, assert_missing_scope, parts, spawn_app};
use crate::survey_requests::{create, patch, survey_id, survey_path, surveys_path};

fn targeting() -> Value {
    json!({"groups": [{"properties": [{"key": "email", "value": "@example.com", "operator": "icontains", "type": "person"}], "rollout_percentage": 50}]})
}

fn validation(body: &Value) -> (String, String, Value) {
    assert_eq!(body["type"], "validation_error", "{body}");
    (
        body["code"].as_str().unwrap().to_owned(),
        body["detail"].as_str().unwrap().to_owned(),
        body["attr"].clone(),
    )
}

async fn flag(app: &TestApp, tenant: &Tenant, body: Value) -> Value {
    let path = format!("/api/projects/{}/feature_flags/", tenant.project_id);
    let (status, flag) = parts(app.send_json(Method::POST, &path, &tenant.key, &body).await).await;
    assert_eq!(status, 201, "{flag}");
    flag
}

#[tokio::test]
async fn a_survey_round_trips_every_field() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let linked = flag(&app, &ada, json!({"key": "linked"})).await;
    let body = json!({
        "name": "Product feedback",
        "description": "How are we doing?",
        "type": "popover",
        "linked_flag_id": linked["id"],
        "targeting_flag_filters": targeting(),
        "questions": [{"type": "rating", "question": "How likely?", "scale": 10, "display": "number", "id": "q1"}],
        "conditions": {"url": "/pricing", "urlMatchType": "icontains"},
        "appearance": {"backgroundColor": "#eeeded", "thankYouMessageHeader": "Thanks!"},
        "start_date": "2024-05-22T14:40:09",
        "responses_limit": 100,
        "schedule": "recurring",
        "iteration_count": 2,
        "iteration_frequency_days": 30,
        "enable_partial_responses": true
    });
    let (status, created) = create(&app, &ada, body).await;
    assert_eq!(status, 201, "{created}");
    assert!(uuid::Uuid::parse_str(created["id"].as_str().unwrap()).is_ok());
    assert_eq!(created["description"], "How are we doing?");
    assert_eq!(created["type"], "popover");
    assert_eq!(created["linked_flag"]["key"], "linked");
    assert_eq!(created["linked_flag"]["team_id"], json!(ada.project_id.0));
    assert_eq!(created["linked_flag_id"], linked["id"]);
    let targeting_flag = &created["targeting_flag"];
    assert!(
        targeting_flag["key"]
            .as_str()
            .unwrap()
            .starts_with("survey-targeting-")
    );
    assert_eq!(
        targeting_flag["name"],
        "Targeting flag for survey Product feedback"
    );
    assert_eq!(
        targeting_flag["active"], true,
        "launched, not stopped, not archived"
    );
    assert_eq!(created["targeting_flag_id"], targeting_flag["id"]);
    assert_eq!(
        created["targeting_flag_filters"]["groups"][0]["rollout_percentage"],
        50
    );
    for key in [
        "id",
        "team_id",
        "name",
        "key",
        "filters",
        "deleted",
        "active",
        "ensure_experience_continuity",
    ] {
        assert!(
            targeting_flag.get(key).is_some(),
            "flag summary lacks {key}"
        );
    }
    assert_eq!(created["questions"][0]["id"], "q1");
    assert_eq!(created["conditions"]["url"], "/pricing");
    assert_eq!(created["appearance"]["backgroundColor"], "#eeeded");
    assert_eq!(
        created["start_date"], "2024-05-22T14:40:09Z",
        "naive dates are UTC"
    );
    assert_eq!(created["end_date"], Value::Null);
    assert_eq!(created["archived"], false);
    assert_eq!(created["responses_limit"], 100);
    assert_eq!(created["schedule"], "recurring");
    assert_eq!(
        created["iteration_start_dates"],
        json!(["2024-05-22T14:40:09Z", "2024-06-21T14:40:09Z"])
    );
    assert_eq!(created["current_iteration"], 1);
    assert_eq!(
        created["current_iteration_start_date"],
        "2024-05-22T14:40:09Z"
    );
    assert_eq!(created["enable_partial_responses"], true);
    assert_eq!(created["created_by"]["email"], "ada@example.com");
    for key in [
        "id",
        "uuid",
        "distinct_id",
        "first_name",
        "last_name",
        "email",
        "is_email_verified",
    ] {
        assert!(
            created["created_by"].get(key).is_some(),
            "created_by lacks {key}"
        );
    }
    assert!(created["created_at"].as_str().unwrap().ends_with('Z'));

    let (status, fetched) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&created)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(fetched["linked_flag_id"], linked["id"]);
    assert_eq!(fetched["questions"], created["questions"]);
    assert_eq!(fetched["targeting_flag"], created["targeting_flag"]);
}

#[tokio::test]
async fn defaults_fill_in_what_a_minimal_survey_leaves_out() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, survey) = create(&app, &ada, json!({"name": "Minimal", "type": "api"})).await;
    assert_eq!(status, 201);
    assert_eq!(survey["description"], "");
    assert_eq!(survey["schedule"], "once");
    assert_eq!(survey["linked_flag"], Value::Null);
    assert_eq!(survey["targeting_flag"], Value::Null);
    assert_eq!(survey["questions"], Value::Null);
    assert_eq!(survey["iteration_start_dates"], json!([]));
    assert_eq!(survey["archived"], false);
}

#[tokio::test]
async fn a_known_key_of_the_wrong_shape_is_a_400_and_unknown_keys_round_trip() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let wrong = [
        (
            json!({"questions": [{"type": "open", "question": "Q", "optional": "yes"}]}),
            "Question optional must be a boolean",
            "questions",
        ),
        (
            json!({"appearance": {"whiteLabel": "yes"}}),
            "whiteLabel must be a boolean",
            "appearance",
        ),
        (
            json!({"conditions": {"url": 5}}),
            "url must be a string",
            "conditions",
        ),
    ];
    for (fields, detail, attr) in wrong {
        let mut body = json!({"name": "Shapes", "type": "popover"});
        body.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        let (status, error) = create(&app, &ada, body).await;
        assert_eq!(
            (status, error),
            (
                400,
                json!({"type": "validation_error", "code": "invalid_input",
                       "detail": detail, "attr": attr})
            )
        );
    }
    let sent = json!({
        "questions": [{"type": "open", "id": "q", "question": "Q", "description": null,
                       "skipSubmitButton": false, "meta": {"nested": [1, 2.5]}}],
        "appearance": {"backgroundColor": "#fff", "whiteLabel": null, "extra": [1]},
        "conditions": {"url": "/x", "selector": null, "wait": {"days": 3}}
    });
    let mut body = json!({"name": "Kept", "type": "popover"});
    body.as_object_mut()
        .unwrap()
        .extend(sent.as_object().unwrap().clone());
    let (status, created) = create(&app, &ada, body).await;
    assert_eq!(status, 201, "{created}");
    let (_, fetched) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&created)), &ada.key)
            .await,
    )
    .await;
    for key in ["questions", "appearance", "conditions"] {
        assert_eq!((key, &created[key]), (key, &sent[key]));
        assert_eq!((key, &fetched[key]), (key, &sent[key]));
    }
}

#[tokio::test]
async fn field_validation_reports_posthogs_code_detail_and_attr() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let cases = [
        (
            json!({"type": "popover"}),
            ("required", "This field is required.", json!("name")),
        ),
        (
            json!({"name": "", "type": "popover"}),
            ("blank", "This field may not be blank.", json!("name")),
        ),
        (
            json!({"name": "x".repeat(401), "type": "popover"}),
            (
                "max_length",
                "Ensure this field has no more than 400 characters.",
                json!("name"),
            ),
        ),
        (
            json!({"name": "T"}),
            ("required", "This field is required.", json!("type")),
        ),
        (
            json!({"name": "T", "type": "bogus"}),
            (
                "invalid_choice",
                "\"bogus\" is not a valid choice.",
                json!("type"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "questions": "text"}),
            (
                "invalid_input",
                "Questions must be a list of objects",
                json!("questions"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "questions": [{"type": "open"}]}),
            (
                "invalid_input",
                "Question text is required",
                json!("questions"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "questions": [{"type": "link", "question": "Q", "link": "ftp://x"}]}),
            (
                "invalid_input",
                "Link must be a URL with one of these schemes: [https, mailto]",
                json!("questions"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "appearance": []}),
            (
                "invalid_input",
                "Appearance must be an object",
                json!("appearance"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "appearance": {"surveyPopupDelaySeconds": -5}}),
            (
                "invalid_input",
                "Survey popup delay seconds must be a positive integer",
                json!("appearance"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "conditions": "x"}),
            (
                "invalid_input",
                "Conditions must be an object",
                json!("conditions"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "schedule": "daily"}),
            (
                "invalid_input",
                "Schedule must be one of: once, recurring, always",
                json!("schedule"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "iteration_count": 501}),
            (
                "max_value",
                "Ensure this value is less than or equal to 500.",
                json!("iteration_count"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "iteration_count": -1}),
            (
                "min_value",
                "Ensure this value is greater than or equal to 0.",
                json!("iteration_count"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "responses_limit": -1}),
            (
                "min_value",
                "Ensure this value is greater than or equal to 0.",
                json!("responses_limit"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "name_extra": 1, "archived": "perhaps"}),
            (
                "invalid_input",
                "Must be a valid boolean.",
                json!("archived"),
            ),
        ),
        (
            json!({"name": 7, "type": "popover"}),
            ("invalid_input", "Not a valid string.", json!("name")),
        ),
        (
            json!({"name": "T", "type": "popover", "linked_flag_id": 999999}),
            (
                "invalid_input",
                "Feature Flag with this ID does not exist",
                json!("linked_flag_id"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "targeting_flag_id": 999999}),
            (
                "invalid_input",
                "Targeting Feature Flag with this ID does not exist",
                json!("targeting_flag_id"),
            ),
        ),
        (
            json!({"name": "T", "type": "popover", "start_date": "2024-03-01T00:00:00Z", "end_date": "2024-02-01T00:00:00Z"}),
            (
                "invalid_input",
                "End date must not be before the start date.",
                json!("end_date"),
            ),
        ),
    ];
    for (body, (code, detail, attr)) in cases {
        let (status, error) = create(&app, &ada, body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            validation(&error),
            (code.to_owned(), detail.to_owned(), attr),
            "{body}"
        );
    }
    let (_, date) = create(
        &app,
        &ada,
        json!({"name": "T", "type": "popover", "start_date": "garbage"}),
    )
    .await;
    assert_eq!(date["attr"], "start_date");
    assert!(
        date["detail"]
            .as_str()
            .unwrap()
            .starts_with("Datetime has wrong format.")
    );
    assert_eq!(app.rows("surveys").await, 0);
}

#[tokio::test]
async fn questions_are_sanitized_and_given_ids() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (status, survey) = create(
        &app,
        &ada,
        json!({"name": "S", "type": "popover",
               "questions": [
                   {"type": "single_choice", "question": "<script>alert(0)</script>check?", "choices": ["<b>Yes</b>", "No"]},
                   {"type": "open", "question": "Keep my id", "id": "custom-id-1"}
               ],
               "appearance": {"thankYouMessageHeader": "<script>x()</script><em>Thanks</em>"}}),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    assert_eq!(survey["questions"][0]["question"], "check?");
    assert_eq!(
        survey["questions"][0]["choices"],
        json!(["<b>Yes</b>", "No"])
    );
    assert!(uuid::Uuid::parse_str(survey["questions"][0]["id"].as_str().unwrap()).is_ok());
    assert_eq!(survey["questions"][1]["id"], "custom-id-1");
    assert_eq!(
        survey["appearance"]["thankYouMessageHeader"],
        "<em>Thanks</em>"
    );
}

#[tokio::test]
async fn texts_that_sanitize_to_nothing_are_refused_as_empty_when_created_or_changed() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let probe = json!([{"type": "multiple_choice", "question": "Pick",
                        "choices": ["</script><script>alert(6)</script>", "<!--<script>"]}]);
    let empty_choices = json!({"type": "validation_error", "code": "invalid_input",
                               "detail": "Question choices cannot be empty", "attr": "questions"});
    let (status, error) = create(
        &app,
        &ada,
        json!({"name": "S", "type": "popover", "questions": probe}),
    )
    .await;
    assert_eq!((status, error), (400, empty_choices.clone()));
    assert_eq!(app.rows("surveys").await, 0);

    let (status, survey) = create(&app, &ada, json!({"name": "S", "type": "popover"})).await;
    assert_eq!(status, 201, "{survey}");
    let (status, error) = patch(&app, &ada, &survey, json!({"questions": probe})).await;
    assert_eq!((status, error), (400, empty_choices));
    let (status, error) = patch(
        &app,
        &ada,
        &survey,
        json!({"questions": [{"type": "open", "question": "<script>alert(6)</script>"}]}),
    )
    .await;
    assert_eq!(
        (status, error),
        (
            400,
            json!({"type": "validation_error", "code": "invalid_input",
                   "detail": "Question text is required", "attr": "questions"})
        )
    );
}

#[tokio::test]
async fn names_are_unique_per_project_including_archived_surveys() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    create(
        &app,
        &ada,
        json!({"name": "Taken", "type": "popover", "archived": true}),
    )
    .await;
    let (status, body) = create(&app, &ada, json!({"name": "Taken", "type": "popover"})).await;
    assert_eq!(status, 400);
    assert_eq!(
        validation(&body),
        (
            "unique".into(),
            "There is already a survey with this name.".into(),
            json!("name")
        )
    );

    let (_, other) = create(&app, &ada, json!({"name": "Other", "type": "popover"})).await;
    let (status, body) = patch(&app, &ada, &other, json!({"name": "Taken"})).await;
    assert_eq!(status, 400);
    assert_eq!(
        validation(&body),
        (
            "unique".into(),
            "There is already another survey with this name.".into(),
            json!("name")
        )
    );
    let (status, _) = patch(&app, &ada, &other, json!({"name": "Other"})).await;
    assert_eq!(status, 200, "keeping its own name is fine");
}

#[tokio::test]
async fn concurrent_creates_with_one_name_give_exactly_one_201() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let body = json!({"name": "Race", "type": "popover", "targeting_flag_filters": targeting()});
    let attempts: Vec<_> = (0..4)
        .map(|_| {
            tokio::spawn(
                app.request(Method::POST, &surveys_path(ada.project_id))
                    .bearer_auth(&ada.key)
                    .json(&body)
                    .send(),
            )
        })
        .collect();
    let mut statuses = Vec::new();
    for attempt in attempts {
        let (status, body) = parts(attempt.await.unwrap().unwrap()).await;
        if status == 400 {
            assert_eq!(body["detail"], "There is already a survey with this name.");
            assert_eq!(body["code"], "unique");
        }
        statuses.push(status);
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 400, 400, 400]);
    assert_eq!(app.rows("surveys").await, 1);
    assert_eq!(
        app.rows("feature_flags").await,
        1,
        "losers leave no targeting flag behind"
    );
}

#[tokio::test]
async fn failed_creates_and_updates_leave_no_row_or_flag_behind() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (_, existing) = create(&app, &ada, json!({"name": "Existing", "type": "popover"})).await;
    let (surveys, flags) = (app.rows("surveys").await, app.rows("feature_flags").await);

    let (status, _) = create(
        &app,
        &ada,
        json!({"name": "Existing", "type": "popover", "targeting_flag_filters": targeting()}),
    )
    .await;
    assert_eq!(status, 400);
    let everyone = json!({"groups": [{"properties": [], "rollout_percentage": 100}]});
    let (status, body) = create(
        &app,
        &ada,
        json!({"name": "All", "type": "popover", "targeting_flag_filters": everyone}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["detail"],
        "Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting"
    );
    let (_, second) = create(&app, &ada, json!({"name": "Second", "type": "popover"})).await;
    let (status, _) = patch(
        &app,
        &ada,
        &second,
        json!({"name": "Existing", "targeting_flag_filters": targeting()}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        app.rows("surveys").await,
        surveys + 1,
        "only the successful create added a row"
    );
    assert_eq!(
        app.rows("feature_flags").await,
        flags,
        "no targeting flag survived a failed write"
    );
    let (_, unchanged) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&existing)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(unchanged["targeting_flag"], Value::Null);
}

#[tokio::test]
async fn the_targeting_flag_is_active_only_while_the_survey_runs() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (_, survey) = create(
        &app,
        &ada,
        json!({"name": "Life", "type": "popover", "targeting_flag_filters": targeting()}),
    )
    .await;
    assert_eq!(
        survey["targeting_flag"]["active"], false,
        "a draft's flag is inactive"
    );
    let steps = [
        (json!({"start_date": "2024-01-01T00:00:00Z"}), true),
        (json!({"end_date": "2024-02-01T00:00:00Z"}), false),
        (json!({"name": "Renamed while stopped"}), false),
        (json!({"end_date": null}), true),
        (json!({"archived": true}), false),
        (json!({"archived": false}), true),
    ];
    for (body, active) in steps {
        let (status, updated) = patch(&app, &ada, &survey, body.clone()).await;
        assert_eq!(status, 200, "{updated}");
        assert_eq!(updated["targeting_flag"]["active"], active, "after {body}");
    }
}

#[tokio::test]
async fn targeting_filters_are_merged_replaced_and_removed() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (_, plain) = create(&app, &ada, json!({"name": "Plain", "type": "popover"})).await;
    let (_, targeted) = patch(
        &app,
        &ada,
        &plain,
        json!({"targeting_flag_filters": targeting()}),
    )
    .await;
    let flag_id = targeted["targeting_flag"]["id"].clone();
    assert!(flag_id.is_i64(), "PATCH created a flag: {targeted}");

    let new_groups = json!({"groups": [{"properties": [{"key": "plan", "value": "pro", "type": "person"}], "rollout_percentage": 5}]});
    let (_, merged) = patch(
        &app,
        &ada,
        &plain,
        json!({"targeting_flag_filters": new_groups}),
    )
    .await;
    assert_eq!(
        merged["targeting_flag"]["id"], flag_id,
        "the same flag is updated"
    );
    assert_eq!(
        merged["targeting_flag"]["filters"]["groups"],
        new_groups["groups"]
    );

    let (status, removed) = patch(&app, &ada, &plain, json!({"remove_targeting_flag": true})).await;
    assert_eq!(status, 200);
    assert_eq!(removed["targeting_flag"], Value::Null);
    assert_eq!(removed["remove_targeting_flag"], true);
    let flag_path = format!("/api/projects/{}/feature_flags/{flag_id}/", ada.project_id);
    assert_eq!(
        app.get(&flag_path, &ada.key).await.status(),
        404,
        "the removed flag is gone from the API"
    );
}

#[tokio::test]
async fn deleting_a_survey_deletes_its_targeting_flag_and_keeps_its_linked_flag() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let linked = flag(&app, &ada, json!({"key": "keep-me"})).await;
    let (_, survey) = create(&app, &ada, json!({"name": "Doomed", "type": "popover", "linked_flag_id": linked["id"], "targeting_flag_filters": targeting()})).await;
    let response = app
        .request(
            Method::DELETE,
            &survey_path(ada.project_id, survey_id(&survey)),
        )
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert!(response.bytes().await.unwrap().is_empty());
    assert_eq!(
        app.get(&survey_path(ada.project_id, survey_id(&survey)), &ada.key)
            .await
            .status(),
        404
    );
    let again = app
        .request(
            Method::DELETE,
            &survey_path(ada.project_id, survey_id(&survey)),
        )
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    let flags = format!("/api/projects/{}/feature_flags/", ada.project_id);
    assert_eq!(
        app.get(
            &format!("{flags}{}/", survey["targeting_flag"]["id"]),
            &ada.key
        )
        .await
        .status(),
        404
    );
    assert_eq!(
        app.get(&format!("{flags}{}/", linked["id"]), &ada.key)
            .await
            .status(),
        200
    );
}

/// Also after the survey was read (and its rendering kept): a change of the flag alone is seen by
/// the next read, one and listed.
#[tokio::test]
async fn a_deleted_linked_flag_still_shows_on_its_survey() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let linked = flag(&app, &ada, json!({"key": "fading"})).await;
    let (_, survey) = create(
        &app,
        &ada,
        json!({"name": "Linked", "type": "popover", "linked_flag_id": linked["id"]}),
    )
    .await;
    let list_path = format!("/api/projects/{}/surveys/", ada.project_id);
    let (_, before) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&survey)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(before["linked_flag"]["deleted"], false);
    let (_, listed) = parts(app.get(&list_path, &ada.key).await).await;
    assert_eq!(listed["results"][0], before);
    let flag_path = format!(
        "/api/projects/{}/feature_flags/{}/",
        ada.project_id, linked["id"]
    );
    app.request(Method::DELETE, &flag_path)
        .bearer_auth(&ada.key)
        .send()
        .await
        .unwrap();
    let (_, fetched) = parts(
        app.get(&survey_path(ada.project_id, survey_id(&survey)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(fetched["linked_flag"]["deleted"], true);
    assert_eq!(fetched["linked_flag"]["key"], "fading");
    let (_, listed) = parts(app.get(&list_path, &ada.key).await).await;
    assert_eq!(listed["results"][0], fetched);
}

#[tokio::test]
async fn flags_of_another_project_cannot_be_linked_or_adopted() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let bobs = flag(&app, &bob, json!({"key": "bobs-flag"})).await;
    let (_, body) = create(
        &app,
        &ada,
        json!({"name": "Hijack", "type": "popover", "linked_flag_id": bobs["id"]}),
    )
    .await;
    assert_eq!(body["detail"], "Feature Flag with this ID does not exist");
    let (_, body) = create(
        &app,
        &ada,
        json!({"name": "Hijack", "type": "popover", "targeting_flag_id": bobs["id"]}),
    )
    .await;
    assert_eq!(
        body["detail"],
        "Targeting Feature Flag with this ID does not exist"
    );
}

#[tokio::test]
async fn linked_flag_variants_and_external_surveys_follow_the_reference() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let multi = flag(&app, &ada, json!({"key": "multi", "filters": {"groups": [], "multivariate": {"variants": [{"key": "a", "rollout_percentage": 50}, {"key": "b", "rollout_percentage": 50}]}}})).await;
    let (_, body) = create(&app, &ada, json!({"name": "V", "type": "popover", "linked_flag_id": multi["id"], "conditions": {"linkedFlagVariant": "c"}})).await;
    assert_eq!(
        body["detail"],
        "Feature flag variant 'c' does not exist. Available variants: a, b"
    );
    let (status, _) = create(&app, &ada, json!({"name": "V", "type": "popover", "linked_flag_id": multi["id"], "conditions": {"linkedFlagVariant": "a"}})).await;
    assert_eq!(status, 201);
    let (_, body) = create(&app, &ada, json!({"name": "E", "type": "external_survey", "conditions": {"url": "x", "selector": ".b"}})).await;
    assert_eq!(
        body["detail"],
        "The following condition fields are not allowed for external surveys: url, selector"
    );
    let (status, _) = create(&app, &ada, json!({"name": "E", "type": "external_survey"})).await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn put_requires_name_and_type_and_validates_like_patch() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let (_, survey) = create(
        &app,
        &ada,
        json!({"name": "Put me", "type": "popover", "description": "kept"}),
    )
    .await;
    let path = survey_path(ada.project_id, survey_id(&survey));
    let (status, body) = parts(
        app.send_json(Method::PUT, &path, &ada.key, &json!({"name": "Only name"}))
            .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        validation(&body),
        (
            "required".into(),
            "This field is required.".into(),
            json!("type")
        )
    );
    let (status, body) = parts(
        app.send_json(
            Method::PUT,
            &path,
            &ada.key,
            &json!({"name": "N", "type": "popover", "questions": [{"type": "open"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, body["detail"].clone()),
        (400, json!("Question text is required"))
    );
    let (status, body) = parts(
        app.send_json(
            Method::PUT,
            &path,
            &ada.key,
            &json!({"name": "Replaced", "type": "widget"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            body["name"].clone(),
            body["type"].clone(),
            body["description"].clone()
        ),
        (json!("Replaced"), json!("widget"), json!("kept"))
    );
}

#[tokio::test]
async fn malformed_foreign_and_missing_ids_are_404_not_found() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let bob = app.tenant("bob@example.com", &["*"]).await;
    let (_, bobs) = create(&app, &bob, json!({"name": "Bob's", "type": "popover"})).await;
    let ada_second = app
        .admin
        .create_project(ada.organization_id, "Second")
        .await
        .unwrap();
    let (_, in_second) = parts(
        app.send_json(
            Method::POST,
            &format!("/api/projects/{}/surveys/", ada_second.id),
            &ada.key,
            &json!({"name": "Elsewhere", "type": "popover"}),
        )
        .await,
    )
    .await;
    for path in [
        format!("{}not-a-uuid/", surveys_path(ada.project_id)),
        format!("{}{}/", surveys_path(ada.project_id), uuid::Uuid::new_v4()),
        format!(
            "{}{}/",
            surveys_path(ada.project_id),
            in_second["id"].as_str().unwrap()
        ),
    ] {
        for method in [Method::GET, Method::PATCH, Method::DELETE] {
            let response = app
                .send_json(method.clone(), &path, &ada.key, &json!({}))
                .await;
            let (status, body) = parts(response).await;
            assert_eq!(status, 404, "{method} {path}");
            assert_error(&body, "invalid_request", "not_found", "Not found.");
        }
    }
    let (status, body) = parts(
        app.get(&survey_path(bob.project_id, survey_id(&bobs)), &ada.key)
            .await,
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(body["detail"], "You don't have access to the project.");
}

#[tokio::test]
async fn survey_routes_need_survey_scopes() {
    let app = spawn_app().await;
    let reader = app.tenant("reader@example.com", &["survey:read"]).await;
    assert_eq!(
        app.get(&surveys_path(reader.project_id), &reader.key)
            .await
            .status(),
        200
    );
    let (status, body) = create(&app, &reader, json!({"name": "No", "type": "popover"})).await;
    assert_eq!(status, 403);
    assert_missing_scope(&body, "survey:write");
    let flagger = app
        .tenant("flags@example.com", &["feature_flag:write"])
        .await;
    let (status, body) = parts(
        app.get(&surveys_path(flagger.project_id), &flagger.key)
            .await,
    )
    .await;
    assert_eq!(
        (status, body["detail"].clone()),
        (403, json!("API key missing required scope 'survey:read'"))
    );
}

#[tokio::test]
async fn lists_are_newest_first_searchable_filterable_and_paginated() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    for (name, description, archived) in [
        ("Product feedback", "", false),
        ("Pricing", "About PRODUCT plans", true),
        ("Churn", "", false),
    ] {
        let (status, _) = create(&app, &ada, json!({"name": name, "type": "popover", "description": description, "archived": archived})).await;
        assert_eq!(status, 201);
    }
    let names = |page: &Value| {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let (_, all) = parts(app.get(&surveys_path(ada.project_id), &ada.key).await).await;
    assert_eq!(names(&all), ["Churn", "Pricing", "Product feedback"]);
    assert!(all["results"][0].get("linked_flag_id").is_some());
    let (_, found) = parts(
        app.get(
            &format!("{}?search=product", surveys_path(ada.project_id)),
            &ada.key,
        )
        .await,
    )
    .await;
    // Most relevant first: by name before by description (filters and search: survey_lists.rs).
    assert_eq!(names(&found), ["Product feedback", "Pricing"]);
    let (_, live) = parts(
        app.get(
            &format!("{}?archived=false", surveys_path(ada.project_id)),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(names(&live), ["Churn", "Product feedback"]);
    let (_, archived) = parts(
        app.get(
            &format!("{}?archived=true", surveys_path(ada.project_id)),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(names(&archived), ["Pricing"]);
    let (_, first) = parts(
        app.get(
            &format!("{}?limit=2&search=r", surveys_path(ada.project_id)),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(first["count"], 3);
    assert_eq!(
        first["next"],
        format!(
            "{}/api/projects/{}/surveys/?limit=2&offset=2&search=r",
            app.address, ada.project_id
        )
    );
    let (_, no_slash) = parts(
        app.get(
            &format!("/api/projects/{}/surveys", ada.project_id),
            &ada.key,
        )
        .await,
    )
    .await;
    assert_eq!(no_slash["count"], 3);
}

#[tokio::test]
async fn bodies_must_be_json_objects_without_nul_characters() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let text = app
        .request(Method::POST, &surveys_path(ada.project_id))
        .bearer_auth(&ada.key)
        .header(CONTENT_TYPE, "text/plain")
        .body("name=x")
        .send()
        .await
        .unwrap();
    let (status, body) = parts(text).await;
    assert_eq!(status, 415);
    assert_error(
        &body,
        "invalid_request",
        "unsupported_media_type",
        "Unsupported media type \"text/plain\" in request.",
    );

    let broken = app
        .request(Method::POST, &surveys_path(ada.project_id))
        .bearer_auth(&ada.key)
        .header(CONTENT_TYPE, "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    let (status, body) = parts(broken).await;
    assert_eq!((status, body["code"].clone()), (400, json!("parse_error")));

    let (status, body) = create(
        &app,
        &ada,
        json!({"name": "nul\u{0000}name", "type": "popover"}),
    )
    .await;
    assert_eq!((status, body["attr"].clone()), (400, json!("name")));
    let (status, _) = create(&app, &ada, json!({"name": "ok", "type": "popover", "questions": [{"type": "open", "question": "a\u{0000}"}]})).await;
    assert_eq!(status, 400);
    assert_eq!(app.rows("surveys").await, 0);
}

#[tokio::test]
async fn project_resources_are_also_served_under_environments() {
    let app = spawn_app().await;
    let ada = app.tenant("ada@example.com", &["*"]).await;
    let environment = format!("/api/environments/{}/surveys", ada.project_id);
    let (status, survey) = parts(
        app.send_json(
            Method::POST,
            &environment,
            &ada.key,
            &json!({"name": "Env", "type": "api"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    let (_, listed) = parts(app.get(&surveys_path(ada.project_id), &ada.key).await).await;
    assert_eq!(listed["results"][0]["id"], survey["id"]);
    let flags = format!("/api/environments/{}/feature_flags/", ada.project_id);
    assert_eq!(app.get(&flags, &ada.key).await.status(), 200);
}

#[tokio::test]
async fn dates_and_schedules_out_of_range_answer_400_not_a_dropped_connection() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let (status, body) = create(
        &app,
        &tenant,
        json!({"name": "x", "type": "api", "start_date": "2024-01-01", "iteration_count": 2, "iteration_frequency_days": 2147483647}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        validation(&body),
        (
            "max_value".into(),
            "Ensure this value is less than or equal to 3650.".into(),
            json!("iteration_frequency_days")
        )
    );

    let (status, body) = create(
        &app,
        &tenant,
        json!({"name": "late", "type": "api", "start_date": "9990-01-01", "iteration_count": 500, "iteration_frequency_days": 3650}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["attr"], "iteration_frequency_days");

    let (status, body) = create(
        &app,
        &tenant,
        json!({"name": "ancient", "type": "api", "start_date": "-5000-01-01T00:00:00"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (code, detail, attr) = validation(&body);
    assert_eq!(
        (code.as_str(), attr),
        ("invalid_input", json!("start_date"))
    );
    assert!(detail.starts_with("Datetime has wrong format."), "{detail}");

    // The same inputs on PATCH, inside the update's locked transaction, answer 400 too and
    // leave the survey as it was.
    let (status, survey) = create(
        &app,
        &tenant,
        json!({"name": "kept", "type": "api", "start_date": "2024-01-01"}),
    )
    .await;
    assert_eq!(status, 201, "{survey}");
    for bad in [
        json!({"iteration_count": 2, "iteration_frequency_days": 2147483647}),
        json!({"start_date": "9999-12-31", "iteration_count": 3, "iteration_frequency_days": 30}),
        json!({"end_date": "10000-01-01T00:00:00Z"}),
    ] {
        let (status, body) = patch(&app, &tenant, &survey, bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    let (_, after) = parts(
        app.get(
            &survey_path(tenant.project_id, survey_id(&survey)),
            &tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(after["iteration_count"], Value::Null);
    assert_eq!(after["start_date"], survey["start_date"]);
}

#[tokio::test]
async fn targeting_flag_id_null_deletes_an_owned_flag_and_only_detaches_an_adopted_one() {
    let app = spawn_app().await;
    let tenant = app.tenant("ada@example.com", &["*"]).await;
    let flags_path = format!("/api/projects/{}/feature_flags/", tenant.project_id);

    let (status, owner) = create(
        &app,
        &tenant,
        json!({"name": "owner", "type": "popover", "targeting_flag_filters": targeting()}),
    )
    .await;
    assert_eq!(status, 201, "{owner}");
    let owned_flag = owner["targeting_flag"]["id"]
        .as_i64()
        .expect("a targeting flag");
    let (status, body) = patch(&app, &tenant, &owner, json!({"targeting_flag_id": null})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["targeting_flag"], Value::Null);
    assert_eq!(body["targeting_flag_id"], Value::Null);
    let (status, _) = parts(
        app.get(&format!("{flags_path}{owned_flag}/"), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(status, 404, "the owned flag is soft-deleted");

    let adopted = flag(
        &app,
        &tenant,
        json!({"key": "adopted", "filters": targeting()}),
    )
    .await;
    let (status, adopter) = create(
        &app,
        &tenant,
        json!({"name": "adopter", "type": "popover", "targeting_flag_id": adopted["id"]}),
    )
    .await;
    assert_eq!(status, 201, "{adopter}");
    assert_eq!(adopter["targeting_flag"]["id"], adopted["id"]);
    let (status, body) = patch(&app, &tenant, &adopter, json!({"targeting_flag_id": null})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["targeting_flag"], Value::Null);
    let (status, still) = parts(
        app.get(&format!("{flags_path}{}/", adopted["id"]), &tenant.key)
            .await,
    )
    .await;
    assert_eq!(status, 200, "the adopted flag stays: {still}");
    assert_eq!(still["deleted"], false);
}
