//! The measured scenarios: each is one kind of API request, loaded with wrk, beside the SQL it
//! minimally needs, loaded with pgbench.

use super::database::Tenants;
use super::pgbench::{self, Sql};
use super::wrk::{Load, UNIQUE};
use super::{CONCURRENCY, seed};

/// When a scenario runs: reads first; counting responses again once all events are seeded; writes
/// last, because the rows they add and the row versions they leave (pgbench's tens of thousands
/// among them) would change what the reads measure.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// After everything is seeded but the bulk of the survey events.
    Reads,
    /// After all survey events are seeded.
    AllEvents,
    /// After everything else.
    Writes,
}

/// The slugs of the scenarios the report compares with each other.
pub(super) const RESPONSES_COUNT_10K: &str = "responses_count_10k";
pub(super) const RESPONSES_COUNT_1M: &str = "responses_count_1m";
pub(super) const LIST_OFFSET_0: &str = "list_offset_0";
pub(super) const LIST_OFFSET_10000: &str = "list_offset_10000";

pub(super) struct Scenario {
    pub(super) name: &'static str,
    /// File names under `target/bench/`.
    pub(super) slug: &'static str,
    pub(super) stage: Stage,
    pub(super) load: Load,
    pub(super) sql: Sql,
}

/// What the scenarios address: the tenants and the ids of what was seeded.
pub(super) struct Seeded<'a> {
    pub(super) tenants: &'a Tenants,
    pub(super) flags: &'a [i64],
    pub(super) surveys: &'a [seed::Survey],
    pub(super) plugins: &'a [i64],
}

/// Every scenario, in the order the report lists them.
pub(super) fn all(seeded: &Seeded<'_>) -> Vec<Scenario> {
    let tenants = seeded.tenants;
    let project = tenants.project_id;
    let deep = tenants.deep_project_id;
    let organization = &tenants.organization_id;
    let surveys = format!("/api/projects/{project}/surveys/");
    let survey = &seeded.surveys[0].id;
    let plugin = seeded.plugins[0];
    let survey_ids: Vec<String> = seeded.surveys.iter().map(|s| s.id.clone()).collect();
    let responses_count = |name, slug, stage| Scenario {
        name,
        slug,
        stage,
        load: get(format!("{surveys}responses_count/")),
        sql: sql(
            pgbench::RESPONSES_COUNT,
            vec![("project", project.to_string())],
        ),
    };
    let deep_list = |name, slug, offset: u32| Scenario {
        name,
        slug,
        stage: Stage::Reads,
        load: get(format!(
            "/api/projects/{deep}/surveys/?limit=100&offset={offset}"
        )),
        sql: sql(
            pgbench::LIST_SURVEYS,
            vec![
                ("project", deep.to_string()),
                ("offset", offset.to_string()),
            ],
        ),
    };
    vec![
        Scenario {
            name: "GET survey",
            slug: "get_survey",
            stage: Stage::Reads,
            load: get(format!("{surveys}{survey}/")),
            sql: sql(
                pgbench::GET_SURVEY,
                vec![("project", project.to_string()), ("survey", survey.clone())],
            ),
        },
        Scenario {
            name: "list surveys limit=100",
            slug: "list_surveys",
            stage: Stage::Reads,
            load: get(format!("{surveys}?limit=100")),
            sql: sql(
                pgbench::LIST_SURVEYS,
                vec![("project", project.to_string()), ("offset", "0".into())],
            ),
        },
        Scenario {
            name: "create survey",
            slug: "create_survey",
            stage: Stage::Writes,
            load: Load {
                method: "POST",
                paths: vec![surveys.clone()],
                body: Some(
                    seed::survey(&format!("Bench create {UNIQUE}"), seeded.flags[0]).to_string(),
                ),
            },
            sql: sql(
                pgbench::CREATE_SURVEY,
                vec![
                    ("project", project.to_string()),
                    ("user", tenants.user_id.to_string()),
                    ("flag", seeded.flags[0].to_string()),
                    ("questions", seed::questions().to_string()),
                    ("conditions", seed::conditions().to_string()),
                    ("appearance", seed::appearance().to_string()),
                ],
            ),
        },
        Scenario {
            name: "PATCH survey",
            slug: "patch_survey",
            stage: Stage::Writes,
            load: Load {
                method: "PATCH",
                paths: survey_ids
                    .iter()
                    .map(|id| format!("{surveys}{id}/"))
                    .collect(),
                body: Some(format!(r#"{{"name": "Bench patch {UNIQUE}"}}"#)),
            },
            sql: Sql {
                text: pgbench::update_survey(&survey_ids, CONCURRENCY),
                variables: vec![("project", project.to_string())],
            },
        },
        responses_count(
            "responses_count, 10k events",
            RESPONSES_COUNT_10K,
            Stage::Reads,
        ),
        responses_count(
            "responses_count, 1M events",
            RESPONSES_COUNT_1M,
            Stage::AllEvents,
        ),
        Scenario {
            name: "list plugins",
            slug: "list_plugins",
            stage: Stage::Reads,
            load: get(format!("/api/organizations/{organization}/plugins/")),
            sql: sql(
                pgbench::LIST_PLUGINS,
                vec![("organization", organization.clone())],
            ),
        },
        Scenario {
            name: "GET plugin source",
            slug: "plugin_source",
            stage: Stage::Reads,
            load: get(format!(
                "/api/organizations/{organization}/plugins/{plugin}/source/"
            )),
            sql: sql(pgbench::PLUGIN_SOURCE, vec![("plugin", plugin.to_string())]),
        },
        deep_list("list of 20k, offset=0", LIST_OFFSET_0, 0),
        deep_list("list of 20k, offset=10000", LIST_OFFSET_10000, 10_000),
    ]
}

fn get(path: String) -> Load {
    Load {
        method: "GET",
        paths: vec![path],
        body: None,
    }
}

fn sql(text: &str, variables: Vec<(&'static str, String)>) -> Sql {
    Sql {
        text: text.to_owned(),
        variables,
    }
}
