//! Realistic data, seeded through the HTTP API (never SQL) so it stays valid as the schema
//! evolves: feature flags, rich surveys (branching, conditions, appearance, a linked flag and a
//! targeting flag), source plugins with their files, simple surveys in bulk, survey answers sent
//! to the public capture endpoint the way PostHog's SDKs send them, and a site's flags and persons.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use anyhow::{Context as _, anyhow, bail};
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::api::Api;

/// Requests in flight while seeding: enough to keep both cores busy without long queues.
const WORKERS: usize = 8;
/// Capture requests in flight; each is one transaction of a whole batch.
const SENDERS: usize = 4;
/// Events per capture request: half the server's default limit of 10,000 (and ~2 MB of its
/// 20 MiB), as a busy SDK proxy might send.
const EVENTS_PER_BATCH: usize = 5_000;
/// How far back the launched surveys started: before every seeded answer, so all of them count.
const LAUNCHED_DAYS_AGO: i64 = 30;
/// The seeded answers are spread over this many days before seeding.
const ANSWERED_OVER_DAYS: i64 = 7;
/// Distinct persons answering.
const PERSONS: usize = 40_000;

/// A seeded survey, with the ids of its three questions (rating, single choice, open).
pub(super) struct Survey {
    pub(super) id: String,
    question_ids: Vec<String>,
}

/// Feature flags to link surveys to; returns their ids.
pub(super) fn flags(api: &Api, project: i64, count: usize) -> anyhow::Result<Vec<i64>> {
    in_parallel(count, WORKERS, |n| {
        let flag = api.post(
            &format!("/api/projects/{project}/feature_flags/"),
            &json!({
                "key": format!("bench-flag-{n}"),
                "name": format!("Bench flag {n}"),
                "filters": {"groups": [{
                    "properties": [{"key": "plan", "type": "person", "operator": "exact", "value": ["pro", "enterprise"]}],
                    "rollout_percentage": 10 * (n % 10 + 1),
                }]},
            }),
        )?;
        id_of(&flag).and_then(|id| id.as_i64().context("a flag id that is not a number"))
    })
}

/// Flags as a site has them, evaluated by `/flags` for every visitor: five kinds in turn — a
/// plan match with a partial rollout, two condition sets (country, or email domain), a
/// multivariate flag on a property the SDK sends, a regex on the email, and exclusions
/// (`is_not`, `is_set`) — then a cohort's, a dependent and a group flag. Returns their ids.
pub(super) fn site_flags(api: &Api, project: i64, count: usize) -> anyhow::Result<Vec<i64>> {
    let mut ids = plain_site_flags(api, project, count.saturating_sub(SPECIAL_SITE_FLAGS))?;
    ids.extend(special_site_flags(api, project, ids.first().copied())?);
    Ok(ids)
}

/// The site flags of other kinds, last among them: one filtering by a cohort (of plan or
/// country), one depending on the first site flag, and one aggregated by a group type.
const SPECIAL_SITE_FLAGS: usize = 3;

fn special_site_flags(api: &Api, project: i64, first: Option<i64>) -> anyhow::Result<Vec<i64>> {
    let first = first.context("the site's first flag, which one flag depends on")?;
    let cohort = api.post(
        &format!("/api/projects/{project}/cohorts/"),
        &json!({"name": "Paying or American", "filters": {"properties": {"type": "OR", "values": [
            {"type": "AND", "values": [person("plan", "exact", json!(["pro", "enterprise"]))]},
            {"type": "AND", "values": [person("country", "exact", json!(["US"]))]}]}}}),
    )?;
    let cohort = id_of(&cohort)?.clone();
    let specials = [
        json!({"groups": [{"properties": [
            {"key": "id", "type": "cohort", "operator": "in", "value": cohort}],
            "rollout_percentage": 70}]}),
        json!({"groups": [{"properties": [
            {"key": first.to_string(), "type": "flag", "operator": "flag_evaluates_to", "value": true},
            person("country", "is_set", json!("is_set"))]}]}),
        json!({"aggregation_group_type_index": 0, "groups": [{"rollout_percentage": 50}]}),
    ];
    specials
        .into_iter()
        .enumerate()
        .map(|(n, filters)| {
            let flag = api.post(
                &format!("/api/projects/{project}/feature_flags/"),
                &json!({"key": format!("site-special-{n}"), "name": format!("Site special {n}"),
                        "filters": filters}),
            )?;
            id_of(&flag).and_then(|id| id.as_i64().context("a flag id that is not a number"))
        })
        .collect()
}

fn plain_site_flags(api: &Api, project: i64, count: usize) -> anyhow::Result<Vec<i64>> {
    in_parallel(count, WORKERS, |n| {
        let filters = match n % 5 {
            0 => json!({"groups": [{
                "properties": [person("plan", "exact", json!(["pro", "enterprise"]))],
                "rollout_percentage": 10 * (n % 10 + 1),
            }]}),
            1 => json!({"groups": [
                {"properties": [person("country", "exact", json!(["US", "GB"]))], "rollout_percentage": 100},
                {"properties": [person("email", "icontains", json!("@example.com"))], "rollout_percentage": 50},
            ]}),
            2 => json!({
                "groups": [{
                    "properties": [person("$browser", "exact", json!(["Chrome", "Firefox"]))],
                    "rollout_percentage": 60,
                }],
                "multivariate": {"variants": [
                    {"key": "control", "rollout_percentage": 50},
                    {"key": "test", "rollout_percentage": 30},
                    {"key": "bold", "rollout_percentage": 20},
                ]},
            }),
            3 => json!({"groups": [{
                "properties": [person("email", "regex", json!(format!(r"^person-\d*{}@", n % 10)))],
            }]}),
            _ => json!({"groups": [{
                "properties": [
                    person("plan", "is_not", json!(["free"])),
                    person("country", "is_set", json!("is_set")),
                ],
                "rollout_percentage": 80,
            }]}),
        };
        let flag = api.post(
            &format!("/api/projects/{project}/feature_flags/"),
            &json!({
                "key": format!("site-flag-{n}"),
                "name": format!("Site flag {n}"),
                "filters": filters,
            }),
        )?;
        id_of(&flag).and_then(|id| id.as_i64().context("a flag id that is not a number"))
    })
}

/// A flag condition on a person property.
fn person(key: &str, operator: &str, value: Value) -> Value {
    json!({"key": key, "type": "person", "operator": operator, "value": value})
}

/// The distinct ids of the SDK project's persons.
pub(super) fn person_ids(count: usize) -> Vec<String> {
    (0..count).map(|n| format!("person-{n}")).collect()
}

/// Stores `persons` with the properties the site's flags look at, the way capture stores them:
/// from a survey event's `$set`. The events are `survey shown`, so the surveys get no answers.
/// With them, the `$groupidentify` of the company every `/flags` request names
/// ([`BENCH_COMPANY`]), which gives the project its group type for the site's group flag.
pub(super) fn persons(
    api: &Api,
    token: &str,
    surveys: &[Survey],
    persons: &[String],
) -> anyhow::Result<()> {
    let batch = persons
        .iter()
        .enumerate()
        .map(|(n, distinct_id)| {
            let mut properties = Map::new();
            properties.insert(
                "$survey_id".into(),
                surveys[n % surveys.len()].id.clone().into(),
            );
            properties.insert(
                "$set".into(),
                json!({
                    "email": format!("{distinct_id}@{}", ["example.com", "acme.io"][n % 2]),
                    "plan": (["free", "pro", "enterprise"][n % 3]),
                    "country": (["US", "DE", "FR", "GB", "BR"][n % 5]),
                }),
            );
            Event {
                event: "survey shown",
                distinct_id: distinct_id.clone(),
                uuid: Uuid::now_v7(),
                timestamp: Utc::now(),
                properties,
            }
        })
        .chain([Event {
            event: "$groupidentify",
            distinct_id: "bench".to_owned(),
            uuid: Uuid::now_v7(),
            timestamp: Utc::now(),
            properties: json!({"$group_type": "company", "$group_key": BENCH_COMPANY,
                               "$group_set": {"name": "Acme", "employees": 120}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        }])
        .collect();
    api.capture(serde_json::to_vec(&Batch {
        api_key: token,
        batch,
    })?)
}

/// The group (of type `company`, index 0) every bench `/flags` request names.
pub(super) const BENCH_COMPANY: &str = "acme";

/// Rich surveys named `Bench survey <n>`, each linked to one of `flags` and with a targeting
/// flag of its own.
pub(super) fn surveys(
    api: &Api,
    project: i64,
    flags: &[i64],
    count: usize,
) -> anyhow::Result<Vec<Survey>> {
    in_parallel(count, WORKERS, |n| {
        let made = api.post(
            &format!("/api/projects/{project}/surveys/"),
            &survey(&format!("Bench survey {n:04}"), flags[n % flags.len()]),
        )?;
        let question_ids = made["questions"]
            .as_array()
            .context("a survey without questions")?
            .iter()
            .map(|question| question["id"].as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .context("a question without an id")?;
        Ok(Survey {
            id: id_of(&made)?
                .as_str()
                .context("a survey id that is not a string")?
                .to_owned(),
            question_ids,
        })
    })
}

/// Simple one-question surveys, for the deep-offset lists.
pub(super) fn simple_surveys(api: &Api, project: i64, count: usize) -> anyhow::Result<()> {
    in_parallel(count, WORKERS, |n| {
        api.post(
            &format!("/api/projects/{project}/surveys/"),
            &json!({
                "name": format!("Simple survey {n:05}"),
                "type": "popover",
                "questions": [{"type": "open", "question": "What could we do better?"}],
            }),
        )
    })?;
    Ok(())
}

/// Launches surveys: a `start_date` in the past, so their answers count.
pub(super) fn launch(api: &Api, project: i64, surveys: &[Survey]) -> anyhow::Result<()> {
    let start =
        (Utc::now() - Duration::days(LAUNCHED_DAYS_AGO)).to_rfc3339_opts(SecondsFormat::Secs, true);
    in_parallel(surveys.len(), WORKERS, |n| {
        api.patch(
            &format!("/api/projects/{project}/surveys/{}/", surveys[n].id),
            &json!({"start_date": start}),
        )
    })?;
    Ok(())
}

/// Source plugins in the organization, each with a `plugin.json` and an `index.ts`; returns
/// their ids.
pub(super) fn plugins(api: &Api, organization: &str, count: usize) -> anyhow::Result<Vec<i64>> {
    let plugins = format!("/api/organizations/{organization}/plugins/");
    in_parallel(count, WORKERS, |n| {
        let name = format!("Bench plugin {n:03}");
        let made = api.post(
            &plugins,
            &json!({"plugin_type": "source", "name": name, "description": "Enriches events"}),
        )?;
        let id = id_of(&made)?
            .as_i64()
            .context("a plugin id that is not a number")?;
        api.patch(
            &format!("{plugins}{id}/update_source/"),
            &json!({"plugin.json": plugin_json(&name).to_string(), "index.ts": PLUGIN_SOURCE}),
        )?;
        Ok(id)
    })
}

/// A survey as a product team would make it: three questions with branching, page conditions,
/// appearance settings, a linked flag and targeting filters (which make a targeting flag).
pub(super) fn survey(name: &str, linked_flag: i64) -> Value {
    json!({
        "name": name,
        "description": "How customers feel about the new pricing page",
        "type": "popover",
        "linked_flag_id": linked_flag,
        "targeting_flag_filters": {"groups": [{
            "properties": [{"key": "email", "type": "person", "operator": "icontains", "value": "@example.com"}],
            "rollout_percentage": 50,
        }]},
        "questions": questions(),
        "conditions": conditions(),
        "appearance": appearance(),
        "enable_partial_responses": true,
    })
}

/// A rating (0–10), a single choice of three and an open question; detractors and "No" skip to
/// the open question, "Maybe" ends the survey.
pub(super) fn questions() -> Value {
    json!([
        {
            "type": "rating",
            "question": "How likely are you to recommend us to a friend?",
            "display": "number",
            "scale": 10,
            "lowerBoundLabel": "Unlikely",
            "upperBoundLabel": "Very likely",
            "branching": {"type": "response_based", "responseValues": {"detractors": 2, "passives": 1, "promoters": 1}},
        },
        {
            "type": "single_choice",
            "question": "Did you find what you were looking for?",
            "choices": ["Yes", "No", "Maybe"],
            "branching": {"type": "response_based", "responseValues": {"0": 2, "1": 2, "2": "end"}},
        },
        {
            "type": "open",
            "question": "What could we do better?",
            "description": "Anything at all: <b>we read every answer</b>.",
            "descriptionContentType": "html",
            "buttonText": "Send",
        },
    ])
}

pub(super) fn conditions() -> Value {
    json!({
        "url": "https://example.com/pricing",
        "urlMatchType": "icontains",
        "seenSurveyWaitPeriodInDays": 14,
        "deviceTypes": ["Desktop", "Tablet"],
        "deviceTypesMatchType": "icontains",
    })
}

pub(super) fn appearance() -> Value {
    json!({
        "position": "right",
        "backgroundColor": "#eeeded",
        "borderColor": "#c9c6c6",
        "submitButtonColor": "black",
        "ratingButtonColor": "white",
        "ratingButtonActiveColor": "black",
        "placeholder": "Start typing...",
        "displayThankYouMessage": true,
        "thankYouMessageHeader": "Thank you for your feedback!",
        "surveyPopupDelaySeconds": 5,
        "whiteLabel": false,
    })
}

fn plugin_json(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Adds the company of the person to every event",
        "url": "https://example.com/plugins/enrich",
        "main": "index.ts",
        "config": [
            {"key": "api_url", "name": "API URL", "type": "string", "default": "https://api.example.com", "required": true},
            {"key": "api_token", "name": "API token", "type": "string", "secret": true, "required": true},
            {"key": "fields", "name": "Fields to add", "type": "string", "default": "company,plan"},
        ],
    })
}

const PLUGIN_SOURCE: &str = r#"import { Plugin, PluginEvent, PluginMeta } from '@posthog/plugin-scaffold'

type EnrichPlugin = Plugin<{
    config: { api_url: string; api_token: string; fields: string }
    global: { fields: string[] }
}>

export const setupPlugin: EnrichPlugin['setupPlugin'] = async ({ config, global }) => {
    global.fields = config.fields.split(',').map((field) => field.trim()).filter(Boolean)
}

export async function processEvent(event: PluginEvent, { config, global, cache }: PluginMeta<EnrichPlugin>) {
    const email = event.properties?.email
    if (!email) {
        return event
    }
    const cached = await cache.get(email, null)
    const company = cached ?? (await lookup(config.api_url, config.api_token, email))
    if (!cached) {
        await cache.set(email, company, 3600)
    }
    for (const field of global.fields) {
        event.properties[`company_${field}`] = company?.[field]
    }
    return event
}

export const jobs = {
    refreshCompanies: async (_payload: unknown, { cache }: PluginMeta<EnrichPlugin>) => {
        await cache.expire('companies', 0)
    },
}

export async function runEveryHour({ jobs }: PluginMeta<EnrichPlugin>) {
    await jobs.refreshCompanies({}).runNow()
}

async function lookup(url: string, token: string, email: string) {
    const response = await fetch(`${url}/companies?email=${encodeURIComponent(email)}`, {
        headers: { Authorization: `Bearer ${token}` },
    })
    return response.ok ? await response.json() : null
}
"#;

/// Survey answers for launched surveys, sent to `/batch/` with the project's public token. Event
/// `n` answers survey `n % surveys`, each event its own submission, the events spread over the
/// days before `now` in order.
pub(super) struct Answers<'a> {
    pub(super) api: &'a Api,
    pub(super) token: &'a str,
    pub(super) surveys: &'a [Survey],
    /// How many events there will be in all (spreads their times).
    pub(super) total: usize,
    pub(super) now: DateTime<Utc>,
}

/// A capture request body, as posthog-python's batch sends it.
#[derive(Serialize)]
struct Batch<'a> {
    api_key: &'a str,
    batch: Vec<Event>,
}

#[derive(Serialize)]
struct Event {
    event: &'static str,
    distinct_id: String,
    uuid: Uuid,
    timestamp: DateTime<Utc>,
    properties: Map<String, Value>,
}

impl Answers<'_> {
    /// Sends events `range` (numbered from 0) in concurrent batches.
    pub(super) fn send(&self, range: Range<usize>) -> anyhow::Result<()> {
        let batches = range.len().div_ceil(EVENTS_PER_BATCH);
        in_parallel(batches, SENDERS, |batch| {
            let first = range.start + batch * EVENTS_PER_BATCH;
            let last = (first + EVENTS_PER_BATCH).min(range.end);
            let body = Batch {
                api_key: self.token,
                batch: (first..last).map(|n| self.event(n)).collect(),
            };
            self.api.capture(serde_json::to_vec(&body)?)
        })?;
        Ok(())
    }

    /// Checks that `responses_count` adds up to `expected`: each seeded event is one response.
    pub(super) fn check_count(&self, project: i64, expected: usize) -> anyhow::Result<()> {
        let counts = self
            .api
            .get(&format!("/api/projects/{project}/surveys/responses_count/"))?;
        let counted: u64 = counts
            .as_object()
            .context("responses_count is not an object")?
            .values()
            .map(|count| count.as_u64().unwrap_or_default())
            .sum();
        if counted != expected as u64 {
            bail!("responses_count adds up to {counted} after {expected} seeded responses");
        }
        Ok(())
    }

    fn event(&self, n: usize) -> Event {
        let survey = &self.surveys[n % self.surveys.len()];
        let mut properties = Map::new();
        properties.insert("$survey_id".into(), survey.id.clone().into());
        properties.insert(
            "$survey_submission_id".into(),
            Uuid::now_v7().to_string().into(),
        );
        // The first answer under the legacy key older SDKs use, the others by question id.
        properties.insert("$survey_response".into(), (n % 11).to_string().into());
        properties.insert(
            format!("$survey_response_{}", survey.question_ids[1]),
            ["Yes", "No", "Maybe"][n % 3].into(),
        );
        properties.insert(
            format!("$survey_response_{}", survey.question_ids[2]),
            format!("Answer {n}: the pricing page could say more about discounts").into(),
        );
        properties.insert("$survey_completed".into(), true.into());
        let span = Duration::days(ANSWERED_OVER_DAYS);
        let before_now = span.num_seconds() * (self.total - n) as i64 / self.total as i64;
        Event {
            event: "survey sent",
            distinct_id: format!("person-{}", n % PERSONS),
            uuid: Uuid::now_v7(),
            timestamp: self.now - Duration::seconds(before_now),
            properties,
        }
    }
}

/// The `id` of an answer.
fn id_of(made: &Value) -> anyhow::Result<&Value> {
    made.get("id")
        .with_context(|| format!("an answer without an id: {made}"))
}

/// Runs `task(0..count)` on `workers` threads, stopping at the first error; returns the results
/// in order.
fn in_parallel<T: Send>(
    count: usize,
    workers: usize,
    task: impl Fn(usize) -> anyhow::Result<T> + Sync,
) -> anyhow::Result<Vec<T>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let finished = thread::scope(|scope| {
        let handles: Vec<_> = (0..workers.min(count))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        if n >= count || failed.load(Ordering::Relaxed) {
                            return Ok(done);
                        }
                        match task(n) {
                            Ok(value) => done.push((n, value)),
                            Err(error) => {
                                failed.store(true, Ordering::Relaxed);
                                return Err(error);
                            }
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(anyhow!("a seeding thread panicked")))
            })
            .collect::<Vec<_>>()
    });
    let mut results = Vec::with_capacity(count);
    for done in finished {
        results.extend(done?);
    }
    results.sort_unstable_by_key(|(n, _)| *n);
    Ok(results.into_iter().map(|(_, value)| value).collect())
}
