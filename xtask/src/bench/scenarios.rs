//! The measured scenarios: each is one kind of request, loaded with wrk, beside what it is
//! measured against — mostly the SQL it minimally needs, loaded with pgbench.

use serde_json::{Map, Value, json};

use super::database::Tenants;
use super::pgbench::{self, Sql};
use super::wrk::{Body, Load, UNIQUE};
use super::{BATCH_EVENTS, CONCURRENCY, seed};

/// When a scenario runs: reads first; then the SDK's requests of a customer's site, before the
/// million events are seeded (a heap grown by them, or the table they fill, would tell nothing
/// about a site's visitors); counting responses again once all events are seeded; writes last,
/// because the rows they add and the row versions they leave (pgbench's tens of thousands among
/// them) would change what the reads measure.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// After everything is seeded but the bulk of the survey events.
    Reads,
    /// The SDK project's requests, reads before captures (whose `$set` changes what `/flags`
    /// answers).
    Sdk,
    /// After all survey events are seeded.
    AllEvents,
    /// After everything else.
    Writes,
}

impl Stage {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Reads => "reads",
            Self::Sdk => "sdk",
            Self::AllEvents => "all_events",
            Self::Writes => "writes",
        }
    }
}

/// What a scenario's requests per second are divided by, in the same run.
pub(super) enum Yardstick {
    /// pgbench's transactions per second running the SQL the request minimally needs.
    Sql(Sql),
    /// Another scenario's requests per second (by slug): for requests that need no SQL, the
    /// HTTP floor of `/_health`.
    Scenario(&'static str),
    /// None: the scenario is itself a yardstick.
    None,
}

/// The slugs of the scenarios the report compares with each other.
pub(super) const RESPONSES_COUNT_10K: &str = "responses_count_10k";
pub(super) const RESPONSES_COUNT_1M: &str = "responses_count_1m";
pub(super) const LIST_OFFSET_0: &str = "list_offset_0";
pub(super) const LIST_OFFSET_10000: &str = "list_offset_10000";
pub(super) const HEALTH: &str = "health";
pub(super) const FLAGS: &str = "flags";
pub(super) const REMOTE_CONFIG: &str = "remote_config";
pub(super) const SURVEY_FEED: &str = "survey_feed";
pub(super) const CAPTURE_SAME_SURVEY: &str = "capture_same_survey";
pub(super) const CAPTURE_DIFFERENT_SURVEYS: &str = "capture_different_surveys";
pub(super) const CAPTURE_BATCH: &str = "capture_batch";

/// Where an SDK body takes a seeded person's distinct id, one after another.
const PERSON: &str = "{person}";
/// Where an SDK body takes a launched survey's id, one after another.
const SURVEY: &str = "{survey}";

pub(super) struct Scenario {
    pub(super) name: &'static str,
    /// File names under `target/bench/`.
    pub(super) slug: &'static str,
    pub(super) stage: Stage,
    pub(super) load: Load,
    pub(super) yardstick: Yardstick,
}

/// What the scenarios address: the tenants and the ids of what was seeded.
pub(super) struct Seeded<'a> {
    pub(super) tenants: &'a Tenants,
    pub(super) flags: &'a [i64],
    pub(super) surveys: &'a [seed::Survey],
    pub(super) plugins: &'a [i64],
    /// The SDK project's launched surveys and its persons' distinct ids.
    pub(super) sdk_surveys: &'a [seed::Survey],
    pub(super) persons: &'a [String],
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
        yardstick: sql(
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
        yardstick: sql(
            pgbench::LIST_SURVEYS,
            vec![
                ("project", deep.to_string()),
                ("offset", offset.to_string()),
            ],
        ),
    };
    let mut scenarios = vec![
        Scenario {
            name: "GET survey",
            slug: "get_survey",
            stage: Stage::Reads,
            load: get(format!("{surveys}{survey}/")),
            yardstick: sql(
                pgbench::GET_SURVEY,
                vec![("project", project.to_string()), ("survey", survey.clone())],
            ),
        },
        Scenario {
            name: "list surveys limit=100",
            slug: "list_surveys",
            stage: Stage::Reads,
            load: get(format!("{surveys}?limit=100")),
            yardstick: sql(
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
                body: Some(Body::one(
                    seed::survey(&format!("Bench create {UNIQUE}"), seeded.flags[0]).to_string(),
                )),
                personal_key: true,
            },
            yardstick: sql(
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
                body: Some(Body::one(format!(r#"{{"name": "Bench patch {UNIQUE}"}}"#))),
                personal_key: true,
            },
            yardstick: Yardstick::Sql(Sql {
                text: pgbench::update_survey(&survey_ids, CONCURRENCY),
                variables: vec![("project", project.to_string())],
            }),
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
            yardstick: sql(
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
            yardstick: sql(pgbench::PLUGIN_SOURCE, vec![("plugin", plugin.to_string())]),
        },
        deep_list("list of 20k, offset=0", LIST_OFFSET_0, 0),
        deep_list("list of 20k, offset=10000", LIST_OFFSET_10000, 10_000),
    ];
    scenarios.extend(sdk(seeded));
    scenarios
}

/// What every visitor of a customer's site makes posthog-js ask: the HTTP floor, `/flags`, the
/// remote config, the survey feed, and captured answers, one at a time (32 visitors answering
/// one survey, then 32 answering different ones) and in batches.
pub(super) fn sdk(seeded: &Seeded<'_>) -> Vec<Scenario> {
    let token = &seeded.tenants.sdk_project_token;
    let project = seeded.tenants.sdk_project_id.to_string();
    let persons = seeded.persons.to_vec();
    let surveys: Vec<String> = seeded.sdk_surveys.iter().map(|s| s.id.clone()).collect();
    let event_sql = |text: &str| {
        sql(
            text,
            vec![
                ("project", project.clone()),
                ("persons", persons.len().to_string()),
                ("survey", surveys[0].clone()),
                (
                    "properties",
                    Value::Object(answer_properties(&surveys[0])).to_string(),
                ),
            ],
        )
    };
    let capture_one = |name, slug, surveys: Vec<String>| {
        let mut event = answer(PERSON, SURVEY);
        event["api_key"] = token.as_str().into();
        Scenario {
            name,
            slug,
            stage: Stage::Sdk,
            load: sdk_post(
                "/i/v0/e/",
                Body::one(event.to_string())
                    .taking(PERSON, persons.clone())
                    .taking(SURVEY, surveys),
            ),
            yardstick: event_sql(pgbench::INSERT_EVENT),
        }
    };
    let flags = json!({
        "token": token,
        "distinct_id": PERSON,
        "person_properties": {"$browser": "Chrome", "$os": "Mac OS X", "$current_url": "https://example.com/pricing"},
        "groups": {"company": seed::BENCH_COMPANY},
    });
    vec![
        Scenario {
            name: "GET /_health",
            slug: HEALTH,
            stage: Stage::Sdk,
            load: sdk_get("/_health".into()),
            yardstick: Yardstick::None,
        },
        Scenario {
            name: "POST /flags v2",
            slug: FLAGS,
            stage: Stage::Sdk,
            load: sdk_post(
                "/flags/?v=2",
                Body::one(flags.to_string()).taking(PERSON, persons.clone()),
            ),
            yardstick: sql(
                pgbench::READ_PERSON,
                vec![
                    ("project", project.clone()),
                    ("persons", persons.len().to_string()),
                ],
            ),
        },
        Scenario {
            name: "GET remote config",
            slug: REMOTE_CONFIG,
            stage: Stage::Sdk,
            load: sdk_get(format!("/array/{token}/config")),
            yardstick: Yardstick::Scenario(HEALTH),
        },
        Scenario {
            name: "GET survey feed",
            slug: SURVEY_FEED,
            stage: Stage::Sdk,
            load: sdk_get(format!("/api/surveys/?token={token}")),
            yardstick: Yardstick::Scenario(HEALTH),
        },
        capture_one(
            "capture 1 answer, one survey",
            CAPTURE_SAME_SURVEY,
            vec![surveys[0].clone()],
        ),
        capture_one(
            "capture 1 answer, 20 surveys",
            CAPTURE_DIFFERENT_SURVEYS,
            surveys.clone(),
        ),
        Scenario {
            name: "capture batch of 100",
            slug: CAPTURE_BATCH,
            stage: Stage::Sdk,
            load: sdk_post(
                "/batch/",
                Body::batch(
                    format!(
                        r#"{{"api_key": {}, "batch": ["#,
                        Value::from(token.as_str())
                    ),
                    answer(PERSON, SURVEY).to_string(),
                    BATCH_EVENTS,
                    "]}".into(),
                )
                .taking(PERSON, persons.clone())
                .taking(SURVEY, surveys.clone()),
            ),
            yardstick: event_sql(&pgbench::insert_events(BATCH_EVENTS)),
        },
    ]
}

/// A survey answer as posthog-js sends it, by `person` for `survey`, marking the person as
/// having answered it (which turns the survey's internal targeting flag off for them).
fn answer(person: &str, survey: &str) -> Value {
    let mut properties = answer_properties(survey);
    properties.insert(
        "$set".into(),
        json!({format!("$survey_responded/{survey}"): true}),
    );
    json!({
        "event": "survey sent",
        "distinct_id": person,
        "uuid": UNIQUE,
        "properties": properties,
    })
}

/// The `$survey_*` properties of an answer: what capture stores of it.
fn answer_properties(survey: &str) -> Map<String, Value> {
    Map::from_iter([
        ("$survey_id".to_owned(), survey.into()),
        ("$survey_response".to_owned(), "9".into()),
        ("$survey_completed".to_owned(), true.into()),
    ])
}

fn get(path: String) -> Load {
    Load {
        method: "GET",
        paths: vec![path],
        body: None,
        personal_key: true,
    }
}

/// A GET as the SDKs send it: named by the project's token, without a personal key.
fn sdk_get(path: String) -> Load {
    Load {
        personal_key: false,
        ..get(path)
    }
}

fn sdk_post(path: &str, body: Body) -> Load {
    Load {
        method: "POST",
        paths: vec![path.to_owned()],
        body: Some(body),
        personal_key: false,
    }
}

fn sql(text: &str, variables: Vec<(&'static str, String)>) -> Yardstick {
    Yardstick::Sql(Sql {
        text: text.to_owned(),
        variables,
    })
}
