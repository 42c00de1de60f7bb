//! What PostHog's server SDKs evaluate locally (from `/flags/definitions`) and through `/flags`
//! in the agreement tests (`posthog_python.rs`, `posthog_node.rs`): one flag of each kind Burrow
//! evaluates, and persons whose properties (and groups) tell them apart. Each driver reads the
//! persons on its standard input and fails on any answer that differs between its two ways, and
//! on any local answer for the flags PostHog's server makes the SDKs ask `/flags` for.

use reqwest::Method;
use serde_json::{Value, json};

use crate::flags::identify_group;
use crate::helpers::{Tenant, TestApp};
use crate::static_cohorts::static_from_csv;

/// How many persons each SDK evaluates every flag for, both ways.
pub const PERSONS: usize = 200;

/// The flags, by key: rollouts, person properties, variants, dates, versions and affixes.
fn flags() -> Vec<(&'static str, Value)> {
    let person = |key: &str, operator: &str, value: Value| json!({"key": key, "operator": operator, "value": value, "type": "person"});
    vec![
        ("rollout", json!({"groups": [{"rollout_percentage": 40}]})),
        (
            "pro-plan",
            json!({"groups": [{"properties": [{"key": "plan", "value": "pro", "type": "person"}]}]}),
        ),
        (
            "staff",
            json!({"groups": [
                {"properties": [person("email", "regex", json!("@example\\.com$")),
                                person("seats", "gt", json!("2"))],
                 "rollout_percentage": 70},
                {"properties": [person("email", "icontains", json!("OTHER"))]}]}),
        ),
        (
            "variants",
            json!({"groups": [{"rollout_percentage": 90}],
                   "multivariate": {"variants": [
                       {"key": "control", "rollout_percentage": 34},
                       {"key": "test", "rollout_percentage": 33},
                       {"key": "other", "rollout_percentage": 33}]}}),
        ),
        (
            "semver",
            json!({"groups": [
                {"properties": [person("app_version", "semver_gte", json!("1.2.0"))]},
                {"properties": [person("app_version", "semver_tilde", json!("0.9.0"))],
                 "rollout_percentage": 50}]}),
        ),
        (
            "semver-ranges",
            json!({"groups": [
                {"properties": [person("app_version", "semver_caret", json!("1.1.0")),
                                person("app_version", "semver_neq", json!("1.2.0"))]},
                {"properties": [person("app_version", "semver_wildcard", json!("2.*"))]}]}),
        ),
        (
            "semver-and-date",
            json!({"groups": [{"properties": [
                person("app_version", "semver_lt", json!("2.0.0")),
                person("signed_up", "is_date_before", json!("-30d"))]}]}),
        ),
        (
            "affixes",
            json!({"groups": [
                {"properties": [person("url", "starts_with", json!("https://")),
                                person("url", "not_ends_with", json!(".ORG"))]},
                {"properties": [person("email", "ends_with", json!("@OTHER.org"))]}]}),
        ),
    ]
}

/// A dependency filter on the flag of that key (created before), with the wanted value.
type On<'a> = dyn Fn(&str, Value) -> Value + 'a;

/// A dependent flag's filters, made of dependency filters.
type DependentFilters = fn(&On) -> Value;

/// The flags that depend on others, by key, each made once the flags it depends on exist: on a
/// rollout, on a variant, on a flag being off, and a chain two deep.
fn dependent_flags() -> Vec<(&'static str, DependentFilters)> {
    vec![
        (
            "after-rollout",
            |on| json!({"groups": [{"properties": [on("rollout", json!(true))], "rollout_percentage": 80}]}),
        ),
        (
            "after-test-variant",
            |on| json!({"groups": [{"properties": [on("variants", json!("test"))]}]}),
        ),
        ("when-semver-off", |on| {
            json!({"groups": [{"properties": [
                on("semver", json!(false)),
                {"key": "plan", "value": "pro", "type": "person"}]}]})
        }),
        ("chain", |on| {
            json!({"groups": [
                {"properties": [on("after-rollout", json!(true))]},
                {"properties": [on("after-test-variant", json!(true))], "rollout_percentage": 50}]})
        }),
    ]
}

/// The flags' keys: those the SDKs evaluate locally, and those they must ask `/flags` for.
pub struct FlagKeys {
    pub local: Vec<&'static str>,
    pub remote_only: Vec<&'static str>,
}

impl FlagKeys {
    /// The drivers' `FLAG_KEYS` and `REMOTE_ONLY_KEYS`.
    pub fn joined(&self) -> (String, String) {
        (self.local.join(","), self.remote_only.join(","))
    }

    pub fn all(&self) -> Vec<&'static str> {
        self.local
            .iter()
            .chain(&self.remote_only)
            .copied()
            .collect()
    }
}

/// Flags aggregated by the `company` group type (index 0, named by a `$groupidentify` capture
/// first, as the definitions' `group_type_mapping` must show it): group properties, a rollout
/// by group, variants by group, and mixed targeting (a person condition set, then one of the
/// person's company).
fn group_flags() -> Vec<(&'static str, Value)> {
    let group = |key: &str, operator: &str, value: Value| json!({"key": key, "operator": operator, "value": value, "type": "group", "group_type_index": 0});
    vec![
        (
            "company-tier",
            json!({"aggregation_group_type_index": 0, "groups": [
                {"properties": [group("tier", "exact", json!(["enterprise", "startup"]))],
                 "rollout_percentage": 70},
                {"properties": [group("employees", "gt", json!("60"))]}]}),
        ),
        (
            "mixed-targeting",
            json!({"groups": [
                {"properties": [{"key": "plan", "operator": "exact", "value": ["pro"], "type": "person"}],
                 "rollout_percentage": 30},
                {"aggregation_group_type_index": 0,
                 "properties": [group("tier", "exact", json!(["enterprise"]))],
                 "rollout_percentage": 60}],
                "multivariate": {"variants": [
                    {"key": "one", "rollout_percentage": 50},
                    {"key": "two", "rollout_percentage": 50}]}}),
        ),
        (
            "company-variants",
            json!({"aggregation_group_type_index": 0, "groups": [{"rollout_percentage": 80}],
                   "multivariate": {"variants": [
                       {"key": "small", "rollout_percentage": 50},
                       {"key": "large", "rollout_percentage": 50}]}}),
        ),
    ]
}

/// Creates the flags in the tenant's project, those that depend on others last; their keys.
pub async fn create_flags(app: &TestApp, tenant: &Tenant) -> FlagKeys {
    // The group type of the group flags, named by one company's `$groupidentify`.
    let token = app.project_token(tenant).await;
    identify_group(
        app,
        &token,
        "company",
        "co_0",
        json!({"name": "Company zero"}),
    )
    .await;
    let mut created: Vec<(&'static str, i64)> = Vec::new();
    for (key, filters) in flags().into_iter().chain(group_flags()) {
        created.push((key, create(app, tenant, key, filters).await));
    }
    for (key, filters) in cohort_flags(app, tenant).await {
        created.push((key, create(app, tenant, key, filters).await));
    }
    for (key, filters) in dependent_flags() {
        let on = |key: &str, value: Value| {
            json!({"key": id_in(&created, key).to_string(), "type": "flag",
                   "operator": "flag_evaluates_to", "value": value})
        };
        let filters = filters(&on);
        created.push((key, create(app, tenant, key, filters).await));
    }
    // A static cohort, which PostHog does not serve, and experience continuity (which keeps a
    // person's variant across identify) make the SDKs ask `/flags`.
    let listed: String = (0..PERSONS)
        .filter(|i| i % 3 == 1)
        .map(|i| format!("distinct_id_{i}\n"))
        .collect();
    let listed = static_from_csv(app, tenant, &listed).await;
    let in_listed = json!({"groups": [{"properties": [
        {"key": "id", "type": "cohort", "value": listed, "operator": "in"}]}]});
    create(app, tenant, "static-cohort", in_listed).await;
    let continuity = json!({"groups": [{"rollout_percentage": 50}]});
    create_with(
        app,
        tenant,
        "continuity",
        continuity,
        json!({"ensure_experience_continuity": true}),
    )
    .await;
    FlagKeys {
        local: created.into_iter().map(|(key, _)| key).collect(),
        remote_only: vec!["static-cohort", "continuity"],
    }
}

/// Flags filtering by cohorts: a cohort of paying persons (an OR of groups), its complement,
/// and a cohort nesting it with a negated filter.
async fn cohort_flags(app: &TestApp, tenant: &Tenant) -> Vec<(&'static str, Value)> {
    let person = |key: &str, operator: &str, value: Value| json!({"key": key, "operator": operator, "value": value, "type": "person"});
    let paying = create_cohort(
        app,
        tenant,
        json!({"type": "OR", "values": [
            {"type": "AND", "values": [person("plan", "exact", json!(["pro"]))]},
            {"type": "AND", "values": [person("seats", "gt", json!("4"))]}]}),
    )
    .await;
    let paying_outsiders = create_cohort(
        app,
        tenant,
        json!({"type": "AND", "values": [
            {"key": "id", "type": "cohort", "value": paying},
            {"key": "email", "type": "person", "operator": "icontains", "value": "example.com",
             "negation": true}]}),
    )
    .await;
    let cohort = |id: i64, operator: &str| json!({"key": "id", "type": "cohort", "value": id, "operator": operator});
    vec![
        (
            "paying-cohort",
            json!({"groups": [{"properties": [cohort(paying, "in")], "rollout_percentage": 60}]}),
        ),
        (
            "not-paying-cohort",
            json!({"groups": [{"properties": [cohort(paying, "not_in")]}]}),
        ),
        (
            "nested-cohort",
            json!({"groups": [{"properties": [cohort(paying_outsiders, "in")]}]}),
        ),
    ]
}

async fn create_cohort(app: &TestApp, tenant: &Tenant, properties: Value) -> i64 {
    let response = app
        .send_json(
            Method::POST,
            &format!("/api/projects/{}/cohorts/", tenant.project_id.0),
            &tenant.key,
            &json!({"name": "Cohort", "filters": {"properties": properties}}),
        )
        .await;
    assert_eq!(response.status(), 201);
    let cohort: Value = response.json().await.unwrap();
    cohort["id"].as_i64().unwrap()
}

fn id_in(created: &[(&str, i64)], key: &str) -> i64 {
    created
        .iter()
        .find(|(created, _)| *created == key)
        .map(|(_, id)| *id)
        .unwrap_or_else(|| panic!("{key} is created before the flags depending on it"))
}

async fn create(app: &TestApp, tenant: &Tenant, key: &str, filters: Value) -> i64 {
    create_with(app, tenant, key, filters, json!({})).await
}

/// Creates a flag with more fields than its key and filters.
async fn create_with(
    app: &TestApp,
    tenant: &Tenant,
    key: &str,
    filters: Value,
    more: Value,
) -> i64 {
    let mut flag = json!({"key": key, "name": key, "filters": filters});
    flag.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    let response = app
        .send_json(
            Method::POST,
            &format!("/api/projects/{}/feature_flags/", tenant.project_id.0),
            &tenant.key,
            &flag,
        )
        .await;
    assert_eq!(response.status(), 201, "{key}");
    let flag: Value = response.json().await.unwrap();
    flag["id"].as_i64().unwrap()
}

/// The persons, as the drivers read them: `[{"distinct_id", "properties", "groups",
/// "group_properties"}]`, as JSON; three in four belong to one of 17 companies.
pub fn persons() -> Vec<u8> {
    let versions = ["1.1.9", "v1.2.0", "1.2.0-beta.2", "1.10", "2.0.1", "0.9.3"];
    let urls = [
        "https://app.example.com/a",
        "http://example.com",
        "HTTPS://Docs.example.org",
    ];
    let tiers = ["enterprise", "startup", "free"];
    let persons: Vec<Value> = (0..PERSONS)
        .map(|i| {
            let company = i % 17;
            let (groups, group_properties) = if i % 4 == 0 {
                (json!({}), json!({}))
            } else {
                (
                    json!({"company": format!("co_{company}")}),
                    json!({"company": {"tier": tiers[company % 3], "employees": company * 7}}),
                )
            };
            json!({
                "groups": groups,
                "group_properties": group_properties,
                "distinct_id": format!("distinct_id_{i}"),
                "properties": {
                    "plan": if i % 2 == 1 { "pro" } else { "free" },
                    "email": if i % 3 == 0 { format!("user{i}@other.org") } else { format!("user{i}@example.com") },
                    "seats": i % 7,
                    "app_version": versions[i % versions.len()],
                    "url": urls[i % urls.len()],
                    "signed_up": format!("2026-{:02}-{:02}T00:00:00+00:00", 1 + i % 12, 1 + i % 28),
                },
            })
        })
        .collect();
    serde_json::to_vec(&persons).unwrap()
}

/// A driver's answers, `{key: [value per person]}`: every flag answered for every person, and
/// not one answer for all (the persons differ, so the flags must too).
pub fn assert_answered(output: &[u8], keys: &[&str]) {
    let answers: Value = serde_json::from_slice(output).expect("the driver prints JSON");
    for key in keys {
        let values = answers[key].as_array().expect("values per person");
        assert_eq!(values.len(), PERSONS, "{key}");
        assert!(
            values.iter().any(|v| v != &values[0]),
            "{key}: the same answer for every person: {values:?}"
        );
    }
}
