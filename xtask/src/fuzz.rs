//! `cargo xtask fuzz [--quick]`: property-based fuzzing of every operation of Burrow's OpenAPI
//! document with schemathesis (from PyPI, in its own venv under `target/schemathesis`).
//!
//! A real `burrow serve` runs against a fresh migrated database; `burrow admin bootstrap` makes
//! the organization, project, user and key, and a flag, a survey (with a captured response), a
//! source plugin and a plugin config are made through the API so the operations on them reach
//! real rows (their ids are fixed path parameters, set in the generated `schemathesis.toml`).
//! Every generated request carries the key as a Bearer header, and the run fails on any 5xx or
//! any answer the document does not allow. The full run generates at least `MIN_FULL_CASES`
//! cases; `--quick` (what `cargo xtask test` runs) a few per operation.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::admin;
use crate::api::Api;
use crate::bench::database::psql;
use crate::server::Server;
use crate::{build_burrow, postgres, pypi, run, target_dir};

/// schemathesis, as published on PyPI.
const SCHEMATHESIS: &str = "schemathesis==4.32.5";
const DATABASE: &str = "burrow_fuzz";
/// The least the full run must generate.
const MIN_FULL_CASES: u64 = 2_000;

/// The checks that judge each answer. `all` minus:
/// - `positive_data_acceptance`: the document describes shapes, not every rule (a survey name
///   taken, a flag id of another project, a plugin URL nobody serves), so schema-valid bodies are
///   rightly refused with a 400;
/// - `negative_data_rejection`: unknown or ill-typed query parameters are ignored or fall back to
///   defaults (as PostHog's pagination does), so some schema-invalid requests rightly succeed;
/// - `missing_required_header`, `response_headers_conformance`: the document declares no headers;
/// - `use_after_free`, `ensure_resource_availability`: stateful checks that need links between
///   operations, which the document does not declare;
/// - `unsupported_method`, `allow_header_conformance`: the HTTP tests (`methods.rs`) check 405 and
///   `Allow` on every route;
/// - `ignored_auth`, `object_level_authorization`: the HTTP tests (`auth.rs`, `tenancy.rs`) check
///   every route without a key, with a key lacking the scope, and across tenants.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
                      response_schema_conformance";

pub(crate) fn run_fuzz(args: &[String]) -> anyhow::Result<()> {
    let quick = args.iter().any(|arg| arg == "--quick");
    let examples = if quick { 4 } else { 30 };
    let st = schemathesis()?;
    let server = postgres::ensure()?;
    let burrow = build_burrow(false)?;
    psql(
        &server.database_url("postgres"),
        &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
    )?;
    let database_url = server.database_url(DATABASE);
    run(Command::new(&burrow)
        .args(["migrate", "--create-database"])
        .env("DATABASE_URL", &database_url))?;
    let tenant: Bootstrap = admin(
        &burrow,
        &database_url,
        &[
            "bootstrap",
            "--email",
            "fuzz@burrow.local",
            "--first-name",
            "Fuzz",
            "--organization",
            "Fuzz Organization",
            "--project",
            "Fuzz Project",
        ],
    )?;
    let dir = target_dir().join("fuzz");
    fs::create_dir_all(&dir)?;
    let serve = Server::start(&burrow, &database_url, &dir.join("burrow.log"))?;
    let base = serve.base_url();
    let api = Api::new(base.clone(), tenant.personal_api_key.clone());
    let seeded = seed(&api, &tenant)?;
    let config = dir.join("schemathesis.toml");
    fs::write(&config, config_toml(&tenant, &seeded))?;
    let log = dir.join("schemathesis.log");
    let output = Command::new(&st)
        .arg("--no-color")
        .arg("--config-file")
        .arg(&config)
        .args(["run", &format!("{base}/api/schema/")])
        .args(["--checks", CHECKS])
        .args(["--phases", "examples,coverage,fuzzing"])
        .args(["--max-examples", &examples.to_string()])
        // One worker: with two, hypothesis (describing its filters while schemathesis' coverage
        // phase runs in threads) now and then fails with "AST constructor recursion depth
        // mismatch", an error of the tool, not of Burrow.
        .args(["--workers", "1", "--output-truncate", "true"])
        .args([
            "--header",
            &format!("Authorization: Bearer {}", tenant.personal_api_key),
        ])
        .current_dir(&dir)
        .output()
        .context("starting schemathesis")?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    fs::write(&log, &text)?;
    drop(serve);
    let cases = generated_cases(&text);
    eprintln!("{}", summary(&text));
    eprintln!(
        "fuzz: {} cases generated ({examples} at most per operation and phase); log {}",
        cases.map_or_else(|| "?".into(), |n| n.to_string()),
        log.display()
    );
    if !output.status.success() {
        bail!("schemathesis found failures; see {}", log.display());
    }
    let least = if quick { 1 } else { MIN_FULL_CASES };
    match cases {
        Some(cases) if cases >= least => Ok(()),
        _ => bail!(
            "schemathesis generated fewer than {least} cases; see {}",
            log.display()
        ),
    }
}

/// What `burrow admin bootstrap` prints.
#[derive(Deserialize)]
struct Bootstrap {
    organization_id: String,
    project_id: i64,
    project_api_token: String,
    personal_api_key: String,
}

/// Rows the fuzzed operations act on.
struct Seeded {
    flag_id: i64,
    survey_id: String,
    response_uuid: String,
    plugin_id: i64,
    config_id: i64,
}

fn seed(api: &Api, tenant: &Bootstrap) -> anyhow::Result<Seeded> {
    let project = format!("/api/projects/{}", tenant.project_id);
    let organization = format!("/api/organizations/{}", tenant.organization_id);
    let flag = api.post(
        &format!("{project}/feature_flags/"),
        &json!({"key": "fuzz-flag", "name": "Fuzz flag"}),
    )?;
    let survey = api.post(
        &format!("{project}/surveys/"),
        &json!({
            "name": "Fuzz survey",
            "type": "popover",
            "questions": [{"type": "open", "question": "Why?"}],
            "start_date": "2026-01-01T00:00:00Z",
        }),
    )?;
    let survey_id = text(&survey, "id")?;
    let question = survey["questions"][0]["id"]
        .as_str()
        .context("the survey's question has an id")?
        .to_owned();
    let response_uuid = "0192f5a4-0000-7000-8000-0000000f0220".to_owned();
    api.capture(
        json!({
            "api_key": tenant.project_api_token,
            "batch": [{
                "event": "survey sent",
                "distinct_id": "fuzz-person",
                "uuid": response_uuid,
                "properties": {
                    "$survey_id": survey_id,
                    format!("$survey_response_{question}"): "Because",
                },
            }],
        })
        .to_string()
        .into_bytes(),
    )?;
    let plugin = api.post(
        &format!("{organization}/plugins/"),
        &json!({"plugin_type": "source", "name": "Fuzz plugin"}),
    )?;
    let plugin_id = number(&plugin, "id")?;
    let config = api.post(
        &format!("{project}/plugin_configs/"),
        &json!({"plugin": plugin_id, "enabled": true, "order": 1, "config": {}}),
    )?;
    Ok(Seeded {
        flag_id: number(&flag, "id")?,
        survey_id,
        response_uuid,
        plugin_id,
        config_id: number(&config, "id")?,
    })
}

fn text(value: &Value, field: &str) -> anyhow::Result<String> {
    value[field]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("no {field} in {value}"))
}

fn number(value: &Value, field: &str) -> anyhow::Result<i64> {
    value[field]
        .as_i64()
        .with_context(|| format!("no {field} in {value}"))
}

/// Path parameters fixed to the seeded rows (random ids would only ever meet 404s), and the
/// project token for the SDK endpoints.
fn config_toml(tenant: &Bootstrap, seeded: &Seeded) -> String {
    format!(
        "# Written by `cargo xtask fuzz`.\n\
         [parameters]\n\
         \"path.project_id\" = {project}\n\
         \"path.organization_id\" = \"{organization}\"\n\
         \"path.key_id\" = \"@current\"\n\
         \"path.survey_id\" = \"{survey}\"\n\
         \"path.response_uuid\" = \"{response}\"\n\
         \"path.flag_id\" = {flag}\n\
         \"path.plugin_id\" = {plugin}\n\
         \"path.config_id\" = {config}\n\
         \"query.token\" = \"{token}\"\n",
        project = tenant.project_id,
        organization = tenant.organization_id,
        survey = seeded.survey_id,
        response = seeded.response_uuid,
        flag = seeded.flag_id,
        plugin = seeded.plugin_id,
        config = seeded.config_id,
        token = tenant.project_api_token,
    )
}

/// `N generated` from schemathesis' summary.
fn generated_cases(output: &str) -> Option<u64> {
    output.lines().find_map(|line| {
        let (count, _) = line.trim().split_once(" generated,")?;
        count.trim().parse().ok()
    })
}

/// schemathesis' closing summary, from its `SUMMARY` banner on.
fn summary(output: &str) -> &str {
    output
        .find("SUMMARY")
        .and_then(|at| output[..at].rfind('\n'))
        .map_or(output, |start| &output[start..])
}

/// Installs schemathesis into its own venv in `target/schemathesis` unless that version is
/// there already; returns its `st`.
fn schemathesis() -> anyhow::Result<PathBuf> {
    let venv = target_dir().join("schemathesis");
    pypi::ensure_venv(&venv, SCHEMATHESIS)?;
    Ok(venv.join("bin").join("st"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_case_count_is_read_from_the_summary() {
        let output = "Test cases:\n  5708 generated, 1 found 1 unique failure\n\nSeed: 1\n";
        assert_eq!(generated_cases(output), Some(5708));
        assert_eq!(generated_cases("no summary"), None);
        assert_eq!(
            generated_cases("  - 3 operations mostly rejected generated data"),
            None
        );
    }
}
