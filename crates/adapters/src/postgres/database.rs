//! The shared connection pool: built once at start-up and cloned into every repository.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use deadpool::Runtime;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use domain::Unexpected;
use domain::ports::{ConnectionUsage, Readiness};

use crate::postgres::errors::StorageContext as _;
use crate::postgres::statement_log::StatementLog;

/// How the pool is sized and how long a request may wait on it.
#[derive(Debug, Clone, Copy)]
pub struct PoolSettings {
    /// Upper bound on open connections. Callers size it (`burrow serve`: four per core unless
    /// configured); nodes × this must stay under PostgreSQL's `max_connections` (100 by
    /// default) with room for operators and migrations.
    pub max_size: usize,
    /// How long a request waits for a free connection, and for a new one to open, before
    /// failing with a 503 instead of hanging: a saturated pool or an unreachable server should
    /// surface, not queue forever.
    pub timeout: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_size: 16,
            timeout: Duration::from_secs(5),
        }
    }
}

/// A pool of async PostgreSQL connections. Cheap to clone.
#[derive(Clone)]
pub struct Database {
    pool: Pool<AsyncPgConnection>,
    /// Where the pool connects, for connections that live outside it (the change listener).
    pub(crate) url: Arc<str>,
    /// What the pool's connections run, for tests counting statements.
    #[cfg(feature = "testing")]
    pub(crate) statements: StatementLog,
}

pub(crate) type Connection = Object<AsyncPgConnection>;

impl Database {
    /// Builds the pool; connections are opened lazily, on first use.
    ///
    /// # Errors
    /// When the settings are rejected by the pool builder.
    pub fn connect(url: &str, settings: PoolSettings) -> anyhow::Result<Self> {
        // Checking out a connection must not cost a round trip (`SELECT 1`) on every request:
        // a connection whose socket closed is known to be broken and is dropped anyway, and
        // one that fails mid-query is dropped then.
        let mut config = ManagerConfig::default();
        config.recycling_method = RecyclingMethod::Fast;
        let statements = StatementLog::default();
        let log = statements.clone();
        config.custom_setup = Box::new(move |url| {
            let url = url.to_owned();
            let log = log.clone();
            Box::pin(async move {
                let mut connection = AsyncPgConnection::establish(&url).await?;
                connection.set_instrumentation(log);
                Ok(connection)
            })
        });
        let manager =
            AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config);
        let pool = Pool::builder(manager)
            .max_size(settings.max_size)
            .wait_timeout(Some(settings.timeout))
            // Opening a connection should take milliseconds; a stuck server should not stall requests.
            .create_timeout(Some(settings.timeout))
            .runtime(Runtime::Tokio1)
            .build()
            .context("building the PostgreSQL connection pool")?;
        Ok(Self {
            pool,
            url: url.into(),
            #[cfg(feature = "testing")]
            statements,
        })
    }

    /// How many connections the pool opens at most.
    pub(crate) fn max_connections(&self) -> usize {
        self.pool.status().max_size
    }

    pub(crate) async fn connection(&self) -> Result<Connection, Unexpected> {
        self.pool
            .get()
            .await
            .context("taking a connection from the pool")
            // Refused, timed out or saturated: nothing was done, and the request may be retried.
            .map_err(Unexpected::unavailable)
    }
}

#[async_trait]
impl Readiness for Database {
    async fn check(&self) -> Result<(), Unexpected> {
        let mut conn = self.connection().await?;
        diesel::sql_query("SELECT 1")
            .execute(&mut conn)
            .await
            .during("pinging PostgreSQL")?;
        Ok(())
    }

    fn connections(&self) -> ConnectionUsage {
        let status = self.pool.status();
        ConnectionUsage {
            max: status.max_size,
            open: status.size,
            idle: status.available,
            waiting: status.waiting,
        }
    }
}
