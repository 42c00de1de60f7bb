//! The database's own ceiling for each scenario: `pgbench` runs the SQL that scenario minimally
//! needs (read from the schema in `migrations/` and the adapters' queries) at the same
//! concurrency, against the same database. Burrow's requests per second divided by pgbench's
//! transactions per second says how much of the database's capacity a request reaches; the
//! scripts are written to `target/bench/sql/` so they can be rerun by hand.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};

use super::{CONCURRENCY, LOAD_THREADS, RUN_SECONDS};

/// One pgbench transaction, with the `-D` variables it reads.
pub(super) struct Sql {
    pub(super) text: String,
    pub(super) variables: Vec<(&'static str, String)>,
}

/// `GET /api/projects/{project}/surveys/{id}/`: the survey row with its creator.
pub(super) const GET_SURVEY: &str = "\
SELECT s.*, u.uuid, u.distinct_id, u.first_name, u.last_name, u.email, u.is_email_verified
FROM surveys s
LEFT JOIN users u ON u.id = s.created_by_id
WHERE s.id = :survey AND s.project_id = :project;
";

/// `GET /api/projects/{project}/surveys/?limit=100&offset={offset}`: the count of the project's
/// surveys (they are deleted outright, so there is no deleted flag to filter on), then one page
/// of them with their creators, ordered as the API orders them.
pub(super) const LIST_SURVEYS: &str = "\
SELECT count(*) FROM surveys WHERE project_id = :project;
SELECT s.*, u.uuid, u.distinct_id, u.first_name, u.last_name, u.email, u.is_email_verified
FROM surveys s
LEFT JOIN users u ON u.id = s.created_by_id
WHERE s.project_id = :project
ORDER BY s.created_at DESC, s.id DESC
LIMIT 100 OFFSET :offset;
";

/// `POST /api/projects/{project}/surveys/`: one INSERT with a random name and the seeded
/// surveys' JSON, passed as text so PostgreSQL parses it on every call as it does the API's.
pub(super) const CREATE_SURVEY: &str = "\
\\set n random(1, 9000000000000000000)
INSERT INTO surveys (id, project_id, name, description, type, linked_flag_id, questions,
                     conditions, appearance, created_by_id, enable_partial_responses)
VALUES (gen_random_uuid(), :project, 'pgbench survey ' || :n::text, '', 'popover', :flag,
        :questions::jsonb, :conditions::jsonb, :appearance::jsonb, :user, true);
";

/// `PATCH /api/projects/{project}/surveys/{id}/` with a new name: one UPDATE … RETURNING of one
/// of the seeded surveys (written out below: pgbench has no arrays of variables). Each of the
/// `clients` updates its own share of them, as wrk's connections take them in turn, so clients do
/// not wait on each other's row locks.
pub(super) fn update_survey(ids: &[String], clients: u32) -> String {
    let share = ids.len() / clients as usize;
    let mut sql = format!(
        "\\set k 1 + :client_id * {share} + random(0, {})\n\\set n random(1, 9000000000000000000)\n",
        share - 1
    );
    sql.push_str(
        "UPDATE surveys SET name = 'pgbench patch ' || :n::text, updated_at = now()\n\
         WHERE project_id = :project AND id = ('{",
    );
    sql.push_str(&ids.join(","));
    sql.push_str("}'::uuid[])[:k::int]\nRETURNING *;\n");
    sql
}

/// `GET /api/projects/{project}/surveys/responses_count/`: the adapter's query — each survey's
/// counter slots added up, less the responses from before the project's first launch.
pub(super) const RESPONSES_COUNT: &str = "\
WITH since AS MATERIALIZED (SELECT min(start_date) AS at FROM surveys WHERE project_id = :project),
counters AS (
    SELECT survey_id, sum(responses)::int8 AS responses
    FROM survey_response_counts
    WHERE project_id = :project
    GROUP BY survey_id
)
SELECT c.survey_id, c.responses - early.responses AS responses
FROM counters c
CROSS JOIN since
CROSS JOIN LATERAL (
    SELECT count(*) AS responses
    FROM survey_responses r
    WHERE r.project_id = :project AND r.survey_id = c.survey_id AND r.timestamp < since.at
) early
WHERE since.at IS NOT NULL
ORDER BY c.survey_id;
";

/// `GET /api/organizations/{organization}/plugins/`: the count and first page of the plugins the
/// organization sees (its own, global ones, ones its projects configure), by id, with the
/// organization's name.
pub(super) const LIST_PLUGINS: &str = "\
SELECT count(*) FROM plugins p
WHERE p.organization_id = :organization OR p.is_global
   OR p.id IN (SELECT c.plugin_id FROM plugin_configs c JOIN projects j ON j.id = c.project_id
               WHERE j.organization_id = :organization AND NOT c.deleted);
SELECT p.id, p.organization_id, p.plugin_type, p.name, p.description, p.url, p.icon,
       p.config_schema, p.tag, p.latest_tag, p.latest_tag_checked_at, p.is_global,
       p.is_stateless, p.capabilities, p.metrics, p.public_jobs, o.name AS organization_name
FROM plugins p
JOIN organizations o ON o.id = p.organization_id
WHERE p.organization_id = :organization OR p.is_global
   OR p.id IN (SELECT c.plugin_id FROM plugin_configs c JOIN projects j ON j.id = c.project_id
               WHERE j.organization_id = :organization AND NOT c.deleted)
ORDER BY p.id
LIMIT 100;
";

/// `GET /api/organizations/{organization}/plugins/{id}/source/`: the plugin's files.
pub(super) const PLUGIN_SOURCE: &str = "\
SELECT filename, source FROM plugin_source_files WHERE plugin_id = :plugin;
";

/// `POST /flags`: the read of the person's stored properties, as the persons adapter makes it,
/// for one of the seeded persons (`person-0` … ).
pub(super) const READ_PERSON: &str = "\
\\set n random(0, :persons - 1)
SELECT properties FROM person_properties
WHERE project_id = :project AND distinct_id = 'person-' || :n
LIMIT 1;
";

/// Capture of one answer: the INSERT of the survey event, as the responses adapter writes it
/// (a retried uuid is skipped, and the new ones are returned).
pub(super) const INSERT_EVENT: &str = "\
\\set n random(0, :persons - 1)
INSERT INTO survey_events (project_id, uuid, event, survey_id, distinct_id, timestamp,
                           submission_id, properties)
VALUES (:project, gen_random_uuid(), 'survey sent', :survey, 'person-' || :n, now(), NULL,
        :properties::jsonb)
ON CONFLICT DO NOTHING
RETURNING uuid;
";

/// Capture of a batch of `events` answers: the same INSERT, of all of them in one statement.
pub(super) fn insert_events(events: usize) -> String {
    format!(
        "\
INSERT INTO survey_events (project_id, uuid, event, survey_id, distinct_id, timestamp,
                           submission_id, properties)
SELECT :project, gen_random_uuid(), 'survey sent', :survey,
       'person-' || floor(random() * :persons)::int, now(), NULL, :properties::jsonb
FROM generate_series(1, {events})
ON CONFLICT DO NOTHING
RETURNING uuid;
"
    )
}

/// Writes `sql` to `script` with a comment on how to rerun it.
pub(super) fn write(
    script: &Path,
    name: &str,
    sql: &Sql,
    database_url: &str,
) -> anyhow::Result<()> {
    let mut text = format!(
        "-- `cargo xtask bench`, scenario \"{name}\": the SQL it minimally needs. Rerun with\n--   {}\n",
        shell_words(&command_line(script, &sql.variables, database_url))
    );
    text.push_str(&sql.text);
    std::fs::write(script, text).with_context(|| format!("writing {}", script.display()))
}

/// Runs `script` for the bench's run time; returns pgbench's transactions per second without the
/// initial connection time.
pub(super) fn run(
    script: &Path,
    variables: &[(&'static str, String)],
    database_url: &str,
) -> anyhow::Result<f64> {
    let arguments = command_line(script, variables, database_url);
    let output = Command::new(&arguments[0])
        .args(&arguments[1..])
        .output()
        .context("starting pgbench")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "pgbench -f {} failed ({}): {}{}",
            script.display(),
            output.status,
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    stdout
        .lines()
        .filter(|line| line.contains("(without initial connection time)"))
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|tps| tps.parse().ok())
        .with_context(|| format!("no tps in pgbench's output: {stdout}"))
}

fn command_line(
    script: &Path,
    variables: &[(&'static str, String)],
    database_url: &str,
) -> Vec<String> {
    let mut arguments: Vec<String> = [
        "pgbench",
        "-n",
        "-M",
        "prepared",
        "-c",
        &CONCURRENCY.to_string(),
        "-j",
        &LOAD_THREADS.to_string(),
        "-T",
        &RUN_SECONDS.to_string(),
        "-f",
        &script.display().to_string(),
    ]
    .map(str::to_owned)
    .into();
    for (name, value) in variables {
        arguments.push("-D".into());
        arguments.push(format!("{name}={value}"));
    }
    arguments.push(database_url.to_owned());
    arguments
}

/// A command line a POSIX shell reads back as `words`.
fn shell_words(words: &[String]) -> String {
    let mut line = String::new();
    for word in words {
        if !line.is_empty() {
            line.push(' ');
        }
        if word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./:@,".contains(c))
        {
            line.push_str(word);
        } else {
            let _ = write!(line, "'{}'", word.replace('\'', r"'\''"));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rerun_lines_quote_what_a_shell_would_split() {
        let words = [
            "pgbench",
            "-D",
            "project=7",
            "-D",
            r#"questions=[{"a": "it's"}]"#,
        ];
        assert_eq!(
            shell_words(&words.map(str::to_owned)),
            r#"pgbench -D project=7 -D 'questions=[{"a": "it'\''s"}]'"#
        );
    }

    #[test]
    fn updates_pick_one_of_the_ids_written_out() {
        let ids: Vec<String> = ["a", "b", "c", "d", "e"].map(str::to_owned).into();
        let sql = update_survey(&ids, 2);
        assert!(sql.starts_with("\\set k 1 + :client_id * 2 + random(0, 1)\n"));
        assert!(sql.contains("id = ('{a,b,c,d,e}'::uuid[])[:k::int]"));
    }
}
