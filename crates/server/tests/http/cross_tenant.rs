//! The tenancy matrix: for every route the app serves, callers who must not reach organization
//! A's objects — another organization's key, a member of A whose key is scoped elsewhere, a
//! deactivated member of A — get 401/403/404 and never a byte of A's data, and A's objects are
//! unchanged afterwards.

use domain::admin::KeyRequest;
use domain::tenancy::MembershipLevel;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Tenant, TestApp, spawn_app_with};

/// Strings only A's data contains: any of them in an answer to an outsider is a leak.
const MARKERS: [&str; 6] = [
    "secret-survey-of-a",
    "secret-flag-of-a",
    "Secret plugin of A",
    "secret answer of A",
    "alice-a@example.com",
    "secret-group-of-a",
];

/// A's objects, one of each kind a path can name.
struct ObjectsOfA {
    tenant: Tenant,
    survey: String,
    flag: i64,
    cohort: i64,
    feature: String,
    plugin: i64,
    config: i64,
    response: String,
    key_id: String,
    token: String,
    webhook: String,
    delivery: String,
}

async fn json_of(response: reqwest::Response) -> Value {
    let status = response.status();
    let body = response.text().await.unwrap();
    assert!(status.is_success(), "{status}: {body}");
    serde_json::from_str(&body).unwrap()
}

async fn objects_of_a(app: &TestApp) -> ObjectsOfA {
    let alice = app.tenant("alice-a@example.com", &["*"]).await;
    let project = format!("/api/projects/{}", alice.project_id.0);
    let organization = format!("/api/organizations/{}", alice.organization_id.0);
    let flag = json_of(
        app.send_json(
            Method::POST,
            &format!("{project}/feature_flags/"),
            &alice.key,
            &json!({"key": "secret-flag-of-a", "name": "secret-flag-of-a",
                    "filters": {"groups": [{"properties": [], "rollout_percentage": 100}]}}),
        )
        .await,
    )
    .await;
    let cohort = json_of(
        app.send_json(
            Method::POST,
            &format!("{project}/cohorts/"),
            &alice.key,
            &json!({"name": "secret-cohort-of-a", "filters": {"properties": {"type": "AND",
                    "values": [{"key": "plan", "type": "person", "operator": "exact", "value": "pro"}]}}}),
        )
        .await,
    )
    .await;
    let feature = json_of(
        app.send_json(
            Method::POST,
            &format!("{project}/early_access_feature/"),
            &alice.key,
            &json!({"name": "secret-feature-of-a", "stage": "beta"}),
        )
        .await,
    )
    .await;
    let survey = json_of(
        app.send_json(
            Method::POST,
            &format!("{project}/surveys/"),
            &alice.key,
            &json!({"name": "secret-survey-of-a", "type": "popover",
                    "start_date": "2026-11-01T00:00:00Z",
                    "questions": [{"type": "open", "question": "secret-survey-of-a?"}],
                    "linked_flag_id": flag["id"],
                    "targeting_flag_filters": {"groups": [{"properties": [], "rollout_percentage": 50}]}}),
        )
        .await,
    )
    .await;
    let plugin = json_of(
        app.send_json(
            Method::POST,
            &format!("{organization}/plugins/"),
            &alice.key,
            &json!({"plugin_type": "source", "name": "Secret plugin of A"}),
        )
        .await,
    )
    .await;
    let config = json_of(
        app.send_json(
            Method::POST,
            &format!("{project}/plugin_configs/"),
            &alice.key,
            &json!({"plugin": plugin["id"], "enabled": false, "order": 1}),
        )
        .await,
    )
    .await;
    let token = json_of(app.get(&format!("{project}/"), &alice.key).await).await["api_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let survey_id = survey["id"].as_str().unwrap().to_owned();
    let response = "0192f5a4-0000-7000-8000-00000000aaaa".to_owned();
    let captured = app
        .request(Method::POST, "/batch/")
        .json(&json!({"api_key": token, "batch": [{
            "event": "survey sent", "distinct_id": "person-of-a", "uuid": response,
            "properties": {"$survey_id": survey_id, "$survey_response": "secret answer of A"}}, {
            "event": "$groupidentify", "distinct_id": "person-of-a",
            "properties": {"$group_type": "secret-group-of-a", "$group_key": "secret-group-of-a",
                           "$group_set": {"name": "secret-group-of-a"}}}]}))
        .send()
        .await
        .unwrap();
    assert!(captured.status().is_success());
    let me = json_of(
        app.get("/api/personal_api_keys/@current/", &alice.key)
            .await,
    )
    .await;
    let webhook = json_of(
        app.send_json(
            Method::POST,
            &format!("{project}/webhooks/"),
            &alice.key,
            &json!({"url": "http://127.0.0.1:9/secret-survey-of-a",
                    "events": ["survey_response.completed"]}),
        )
        .await,
    )
    .await;
    let webhook = webhook["id"].as_str().unwrap().to_owned();
    let delivery = json_of(
        app.send_json(
            Method::POST,
            &format!("{project}/webhooks/{webhook}/test/"),
            &alice.key,
            &json!({}),
        )
        .await,
    )
    .await;
    ObjectsOfA {
        webhook,
        delivery: delivery["id"].as_str().unwrap().to_owned(),
        survey: survey_id,
        flag: flag["id"].as_i64().unwrap(),
        plugin: plugin["id"].as_i64().unwrap(),
        config: config["id"].as_i64().unwrap(),
        cohort: cohort["id"].as_i64().unwrap(),
        feature: feature["id"].as_str().unwrap().to_owned(),
        response,
        key_id: me["id"].as_str().unwrap().to_owned(),
        token,
        tenant: alice,
    }
}

/// A route pattern with every parameter naming A's object of that kind.
fn path_into_a(pattern: &str, a: &ObjectsOfA) -> String {
    pattern
        .split('/')
        .map(
            |segment| match segment.trim_start_matches('{').split([':', '}']).next() {
                _ if !segment.starts_with('{') => segment.to_owned(),
                Some("project_id") => a.tenant.project_id.0.to_string(),
                Some("organization_id") => a.tenant.organization_id.0.to_string(),
                Some("survey_id") => a.survey.clone(),
                Some("flag_id" | "flag") => a.flag.to_string(),
                Some("cohort_id") => a.cohort.to_string(),
                Some("feature_id") => a.feature.clone(),
                Some("plugin_id") => a.plugin.to_string(),
                Some("config_id") => a.config.to_string(),
                Some("response_uuid") => a.response.clone(),
                Some("key_id") => a.key_id.clone(),
                Some("webhook_id") => a.webhook.clone(),
                Some("delivery_id") => a.delivery.clone(),
                // A's one group type, captured above.
                Some("group_type_index") => "0".to_owned(),
                // The SDK routes name a project by its public token, which anyone may hold.
                Some("token") => a.token.clone(),
                Some("version") => "1.449.2".to_owned(),
                Some("file") => "surveys.js".to_owned(),
                other => panic!("the matrix does not know the parameter {other:?} of {pattern}"),
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

/// What a write would carry to change A's object, so a missing check would show as a change.
fn hostile_body(a: &ObjectsOfA) -> Value {
    json!({"name": "taken over", "key": "taken-over", "archived": true, "deleted": true,
           "enabled": true, "target_environment_ids": [a.tenant.project_id.0],
           "api_key": a.token, "plugin": a.plugin,
           "survey_config": {"seenSurveyWaitPeriodInDays": 365}})
}

#[tokio::test]
async fn outsiders_never_reach_another_tenants_objects_on_any_route() {
    let app = spawn_app_with(|args| {
        args.rate_limit = "off".parse().unwrap();
        // A's webhook points at loopback's discard port.
        args.webhooks.allow_private = true;
        args.webhooks.allowed_ports = Some("9".parse().unwrap());
    })
    .await;
    let a = objects_of_a(&app).await;
    let bob = app.tenant("bob-b@example.com", &["*"]).await;
    // Carol belongs to A too, but her key is scoped to her own organization's project; Dave
    // belongs to A and is deactivated.
    let carol = app.tenant("carol@example.com", &["*"]).await;
    app.admin
        .add_member(
            &carol.email,
            a.tenant.organization_id,
            MembershipLevel::Admin,
        )
        .await
        .unwrap();
    let carol_scoped = app
        .key(KeyRequest {
            email: carol.email.clone(),
            label: "scoped".into(),
            scopes: vec!["*".into()],
            scoped_teams: Some(vec![carol.project_id]),
            scoped_organizations: Some(vec![carol.organization_id]),
        })
        .await;
    let dave = app.tenant("dave@example.com", &["*"]).await;
    app.admin
        .add_member(
            &dave.email,
            a.tenant.organization_id,
            MembershipLevel::Owner,
        )
        .await
        .unwrap();
    app.admin.deactivate_user(&dave.email).await.unwrap();
    let outsiders = [
        ("another organization's key", bob.key.as_str()),
        ("a member's key scoped elsewhere", carol_scoped.as_str()),
        ("a deactivated member's key", dave.key.as_str()),
    ];

    let mut checked = 0;
    for route in api::route_table() {
        let names_a_tenant =
            route.path.contains("{project_id}") || route.path.contains("{organization_id}");
        let path = path_into_a(&route.path, &a);
        let method = Method::from_bytes(route.method.as_str().as_bytes()).unwrap();
        for (who, key) in outsiders {
            let response = app
                .request(method.clone(), &path)
                .bearer_auth(key)
                .json(&hostile_body(&a))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let body = response.text().await.unwrap();
            if names_a_tenant || route.path.contains("{key_id}") {
                assert!(
                    matches!(status, 401 | 403 | 404),
                    "{who}: {route} answered {status}: {body}"
                );
            }
            for marker in MARKERS {
                assert!(
                    !body.contains(marker),
                    "{who}: {route} answered {status} with A's {marker:?}: {body}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 200, "only {checked} requests were checked");

    // Nothing of A changed.
    let project = format!("/api/projects/{}", a.tenant.project_id.0);
    let settings = json_of(app.get(&format!("{project}/"), &a.tenant.key).await).await;
    assert_eq!(
        (settings["name"].clone(), settings["survey_config"].clone()),
        (json!("Default project"), Value::Null)
    );
    let survey = json_of(
        app.get(&format!("{project}/surveys/{}/", a.survey), &a.tenant.key)
            .await,
    )
    .await;
    assert_eq!(survey["name"], "secret-survey-of-a");
    assert_eq!(survey["archived"], false);
    assert_eq!(
        survey["end_date"],
        Value::Null,
        "not stopped by an outsider"
    );
    let flag = json_of(
        app.get(
            &format!("{project}/feature_flags/{}/", a.flag),
            &a.tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(flag["key"], "secret-flag-of-a");
    assert_eq!(flag["deleted"], false);
    let cohort = json_of(
        app.get(&format!("{project}/cohorts/{}/", a.cohort), &a.tenant.key)
            .await,
    )
    .await;
    assert_eq!(
        (cohort["name"].clone(), cohort["deleted"].clone()),
        (json!("secret-cohort-of-a"), json!(false))
    );
    let plugin = json_of(
        app.get(
            &format!(
                "/api/organizations/{}/plugins/{}/",
                a.tenant.organization_id.0, a.plugin
            ),
            &a.tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(plugin["name"], "Secret plugin of A");
    let config = json_of(
        app.get(
            &format!("{project}/plugin_configs/{}/", a.config),
            &a.tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(config["enabled"], false);
    let responses = json_of(
        app.get(
            &format!("{project}/surveys/{}/responses/browse/", a.survey),
            &a.tenant.key,
        )
        .await,
    )
    .await;
    assert_eq!(responses["count"], 1, "{responses}");
    let group_types = json_of(
        app.get(&format!("{project}/groups_types/"), &a.tenant.key)
            .await,
    )
    .await;
    assert_eq!(
        (
            group_types[0]["group_type"].clone(),
            group_types[0]["name_singular"].clone()
        ),
        (json!("secret-group-of-a"), Value::Null),
        "{group_types}"
    );
    assert_eq!(
        app.rows("surveys").await,
        1,
        "no copy was made into A or out of it"
    );
}
