//! The SQL migrations, embedded in the binary, and creating the database they run in.

use anyhow::{Context as _, anyhow};
use diesel::QueryableByName;
use diesel::connection::SimpleConnection as _;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness as _, embed_migrations};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");
/// Serialises `migrate` runs from several nodes started at once.
const MIGRATION_LOCK_KEY: i64 = 0x6275_7272_6f77; // "burrow"

/// Applies every pending migration and returns the versions applied (empty when up to date).
///
/// # Errors
/// When PostgreSQL is unreachable or a migration fails (that migration is rolled back).
pub async fn run_migrations(database_url: &str) -> anyhow::Result<Vec<String>> {
    let url = database_url.to_owned();
    tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<String>> {
        let mut conn =
            <AsyncConnectionWrapper<AsyncPgConnection> as diesel::Connection>::establish(&url)
                .context("connecting to PostgreSQL to migrate")?;
        conn.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
            .context("taking the migration lock")?;
        let applied = conn
            .run_pending_migrations(MIGRATIONS)
            .map(|versions| versions.iter().map(ToString::to_string).collect())
            .map_err(|error| anyhow!("running migrations: {error}"));
        conn.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"))
            .context("releasing the migration lock")?;
        applied
    })
    .await
    .context("migration task panicked")?
}

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    found: bool,
}

/// Creates the database named in `database_url` if it does not exist yet; returns whether it
/// created it. Connects to the server's `postgres` database to do so.
///
/// # Errors
/// When the URL has no database name or the server refuses.
pub async fn ensure_database_exists(database_url: &str) -> anyhow::Result<bool> {
    let mut url = url::Url::parse(database_url).context("DATABASE_URL is not a URL")?;
    let name = url.path().trim_start_matches('/').to_owned();
    anyhow::ensure!(!name.is_empty(), "DATABASE_URL names no database");
    url.set_path("/postgres");
    let mut conn = AsyncPgConnection::establish(url.as_str())
        .await
        .with_context(|| {
            format!(
                "connecting to the maintenance database at {}",
                redacted(&url)
            )
        })?;
    let exists =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS found")
            .bind::<diesel::sql_types::Text, _>(&name)
            .get_result::<Found>(&mut conn)
            .await
            .context("looking up the database")?
            .found;
    if exists {
        return Ok(false);
    }
    diesel::sql_query(format!("CREATE DATABASE {}", quote_identifier(&name)))
        .execute(&mut conn)
        .await
        .with_context(|| format!("creating database {name}"))?;
    Ok(true)
}

/// Quotes a PostgreSQL identifier (`"…"`, inner quotes doubled).
pub(crate) fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The URL without its password, for messages.
pub(crate) fn redacted(url: &url::Url) -> String {
    let mut shown = url.clone();
    if shown.password().is_some() {
        let _ = shown.set_password(Some("***"));
    }
    shown.to_string()
}
