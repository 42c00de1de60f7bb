//! Throwaway databases for adapter and HTTP tests: each test gets its own database, cloned from
//! a template that was migrated once, so tests run in parallel without sharing rows, and dropped
//! when the test lets go of it, so a machine shared with other work is left as it was found.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use sha2::{Digest, Sha256};

use crate::postgres::database::{Database, PoolSettings};
use crate::postgres::migrations::{quote_identifier, run_migrations};
pub use crate::postgres::statement_log::Recorded;

/// Server used when `BURROW_TEST_DATABASE_URL` is unset: the local trust-auth cluster.
const DEFAULT_SERVER_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
/// Prefix of every database a test creates, followed by the id of the test process and `_`:
/// `cargo xtask test` drops those whose process is gone (a killed run's) before a run.
pub const TEST_DATABASE_PREFIX: &str = "burrow_test_";
/// Prefix of the migrated templates.
pub const TEMPLATE_PREFIX: &str = "burrow_template_";
const TEMPLATE_LOCK_KEY: i64 = 0x6275_7272_7465; // serialises template creation
/// The tables `count_rows` may count; anything else is refused rather than spliced into SQL.
const TABLES: &[&str] = &[
    "organizations",
    "projects",
    "users",
    "organization_memberships",
    "personal_api_keys",
    "feature_flags",
    "surveys",
    "survey_activity",
    "plugins",
    "plugin_configs",
    "survey_events",
    "survey_responses",
    "survey_response_counts",
    "person_properties",
    "hash_key_overrides",
    "webhooks",
    "webhook_deliveries",
    "webhook_outbox",
];

/// One test's private, migrated database, dropped when the last clone of it is dropped.
#[derive(Clone)]
pub struct TestDatabase {
    /// Connection URL of the database, for code that connects by itself (the CLI, the server).
    pub url: String,
    pub database: Database,
    _dropped_with: Arc<DropOnRelease>,
}

/// Drops a test's database when the test releases it: `DROP DATABASE … WITH (FORCE)`, which
/// ends the connections a server under test may still hold. Run on a thread of its own with a
/// runtime of its own, since `Drop` cannot await and the test's runtime may be shutting down.
struct DropOnRelease {
    server: url::Url,
    name: String,
}

impl Drop for DropOnRelease {
    fn drop(&mut self) {
        let server = self.server.clone();
        let name = std::mem::take(&mut self.name);
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("a runtime to drop a test database")?;
            runtime.block_on(async {
                let mut admin = AsyncPgConnection::establish(server.as_str()).await?;
                diesel::sql_query(format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    quote_identifier(&name)
                ))
                .execute(&mut admin)
                .await?;
                anyhow::Ok(())
            })
        })
        .join();
        // Best effort: `cargo xtask test` drops what a failed drop left at its next run.
        if let Ok(Err(error)) = dropped {
            eprintln!("leaving a test database behind: {error:#}");
        }
    }
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    exists: bool,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    count: i64,
}

/// A `varchar(n)` column of the schema.
#[derive(Debug, QueryableByName)]
pub struct LimitedColumn {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub table: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub column: String,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pub max_chars: i32,
}

impl TestDatabase {
    /// Creates a fresh database from the migrated template (building the template first if
    /// this set of migrations has none yet).
    ///
    /// # Panics
    /// When PostgreSQL is unreachable: tests cannot run without it.
    pub async fn create() -> Self {
        Self::try_create().await.expect("creating a test database")
    }

    async fn try_create() -> anyhow::Result<Self> {
        let server = std::env::var("BURROW_TEST_DATABASE_URL")
            .unwrap_or_else(|_| DEFAULT_SERVER_URL.to_owned());
        let server = url::Url::parse(&server).context("BURROW_TEST_DATABASE_URL is not a URL")?;
        let mut admin = AsyncPgConnection::establish(server.as_str())
            .await
            .with_context(|| format!("connecting to {server}"))?;
        let template = format!("{TEMPLATE_PREFIX}{}", migrations_fingerprint()?);
        ensure_template(&mut admin, &server, &template).await?;

        let name = format!(
            "{TEST_DATABASE_PREFIX}{}_{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        );
        diesel::sql_query(format!(
            "CREATE DATABASE {} TEMPLATE {}",
            quote_identifier(&name),
            quote_identifier(&template)
        ))
        .execute(&mut admin)
        .await
        .with_context(|| format!("creating {name} from {template}"))?;
        let url = with_database(&server, &name);
        // Small pool: each test is one client; five leaves room for concurrent requests.
        let settings = PoolSettings {
            max_size: 5,
            ..PoolSettings::default()
        };
        let database = Database::connect(&url, settings)?;
        Ok(Self {
            url,
            database,
            _dropped_with: Arc::new(DropOnRelease { server, name }),
        })
    }

    /// Counts every row of `table`, deleted or not, so a test can check that a failed write
    /// left nothing behind.
    ///
    /// # Panics
    /// When `table` is not one of this schema's tables, or PostgreSQL fails.
    pub async fn count_rows(&self, table: &str) -> i64 {
        assert!(
            TABLES.contains(&table),
            "{table} is not a table of the schema"
        );
        let mut conn = self
            .database
            .connection()
            .await
            .expect("taking a connection to count rows");
        diesel::sql_query(format!(
            "SELECT count(*) AS count FROM {}",
            quote_identifier(table)
        ))
        .get_result::<Count>(&mut conn)
        .await
        .expect("counting rows")
        .count
    }

    /// Every column of the schema with a length limit, so a test can hold each to the request
    /// parser that bounds it (a new one without a bound fails that test).
    ///
    /// # Panics
    /// When PostgreSQL fails.
    pub async fn limited_columns(&self) -> Vec<LimitedColumn> {
        let mut conn = self
            .database
            .connection()
            .await
            .expect("taking a connection to read the schema");
        diesel::sql_query(
            "SELECT table_name::text AS table, column_name::text AS column, \
             character_maximum_length::integer AS max_chars \
             FROM information_schema.columns \
             WHERE table_schema = 'public' AND character_maximum_length IS NOT NULL \
             AND table_name NOT LIKE '\\_\\_%' ORDER BY 1, 2",
        )
        .load(&mut conn)
        .await
        .expect("reading the schema's columns")
    }

    /// Runs one statement as an operator at a `psql` prompt would, for tests of changes no API
    /// makes (a key's scopes edited in place).
    ///
    /// # Panics
    /// When PostgreSQL fails.
    pub async fn execute(&self, sql: &str) {
        let mut conn = self
            .database
            .connection()
            .await
            .expect("taking a connection to run a statement");
        diesel::sql_query(sql)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|error| panic!("running {sql}: {error}"));
    }
}

async fn ensure_template(
    admin: &mut AsyncPgConnection,
    server: &url::Url,
    template: &str,
) -> anyhow::Result<()> {
    diesel::sql_query(format!("SELECT pg_advisory_lock({TEMPLATE_LOCK_KEY})"))
        .execute(admin)
        .await
        .context("taking the template lock")?;
    let result = build_template_if_missing(admin, server, template).await;
    diesel::sql_query(format!("SELECT pg_advisory_unlock({TEMPLATE_LOCK_KEY})"))
        .execute(admin)
        .await
        .context("releasing the template lock")?;
    result
}

async fn build_template_if_missing(
    admin: &mut AsyncPgConnection,
    server: &url::Url,
    template: &str,
) -> anyhow::Result<()> {
    let exists =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists")
            .bind::<diesel::sql_types::Text, _>(template)
            .get_result::<Exists>(admin)
            .await?
            .exists;
    if exists {
        return Ok(());
    }
    // Build under a temporary name and rename when complete, so a crash mid-way never leaves
    // a half-migrated template behind.
    let building = format!("{template}_building");
    diesel::sql_query(format!(
        "DROP DATABASE IF EXISTS {}",
        quote_identifier(&building)
    ))
    .execute(admin)
    .await?;
    diesel::sql_query(format!("CREATE DATABASE {}", quote_identifier(&building)))
        .execute(admin)
        .await?;
    run_migrations(&with_database(server, &building)).await?;
    diesel::sql_query(format!(
        "ALTER DATABASE {} RENAME TO {}",
        quote_identifier(&building),
        quote_identifier(template)
    ))
    .execute(admin)
    .await
    .context("publishing the migrated template")?;
    Ok(())
}

fn with_database(server: &url::Url, name: &str) -> String {
    let mut url = server.clone();
    url.set_path(&format!("/{name}"));
    url.to_string()
}

/// A short hash of every migration file, so a changed migration gets a new template.
fn migrations_fingerprint() -> anyhow::Result<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut files = Vec::new();
    for dir in std::fs::read_dir(&root).with_context(|| format!("reading {}", root.display()))? {
        let dir = dir?.path();
        for file in ["up.sql", "down.sql"] {
            let path = dir.join(file);
            if path.exists() {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut hasher = Sha256::new();
    for path in files {
        hasher.update(path.strip_prefix(&root)?.to_string_lossy().as_bytes());
        hasher.update(std::fs::read(&path)?);
    }
    Ok(hex::encode(&hasher.finalize()[..6]))
}

/// Runs `work` and returns, beside its output, the statements `database`'s connections ran
/// meanwhile (`BEGIN` and `COMMIT` included), read off its statement log: what a use case costs
/// in round trips, checked by tests instead of timed. Each test has a pool of its own, so
/// nothing else runs on it meanwhile.
pub async fn statements_of<F: Future>(database: &Database, work: F) -> (F::Output, Vec<String>) {
    let (output, recorded) = recorded_of(database, work).await;
    (output, recorded.statements)
}

/// [`statements_of`], and which of them a connection prepared to keep: run on a pool none of
/// whose connections ran them before, a statement kept prepared shows among
/// `Recorded::kept_prepared`, one prepared afresh on every run (a round trip and a parse each
/// time) never does.
pub async fn recorded_of<F: Future>(database: &Database, work: F) -> (F::Output, Recorded) {
    database.statements.start_recording();
    let output = work.await;
    (output, database.statements.stop_recording())
}
