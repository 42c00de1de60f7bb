//! The shared connection pool: built once at start-up and cloned into every repository.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use deadpool::Runtime;
use diesel::result::DatabaseErrorKind;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use domain::Unexpected;
use domain::ports::{ConnectionUsage, Readiness};

use crate::postgres::errors::StorageContext as _;
use crate::postgres::server_watch::{ServerWatch, found_unavailable};
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
    /// How many threads take a partition of `max_size` of their own (the HTTP workers, each
    /// claiming one with [`Database::claim_partition`]); every other thread shares one more. 0 or
    /// 1: a single pool for every thread.
    pub partitions: usize,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_size: 16,
            timeout: Duration::from_secs(5),
            partitions: 1,
        }
    }
}

/// Pools of async PostgreSQL connections. Cheap to clone.
///
/// A connection's I/O is driven by a task on the thread that opened it. Shared by every thread,
/// a connection opened by one worker (or by the main thread's background tasks) served requests
/// of another, and each query then woke the other thread twice (to send, and to hand back the
/// answer): on two cores, two workers answered `/flags` more slowly than one. So each HTTP
/// worker claims a partition of the connections as it starts, and its connections are opened,
/// driven and used by it alone; the other threads share the last partition.
#[derive(Clone)]
pub struct Database {
    partitions: Arc<[Pool<AsyncPgConnection>]>,
    /// The capture writers' connections, apart from the others (see [`writer_connections`]);
    /// `None` in a pool too small to spare any.
    writers: Option<Pool<AsyncPgConnection>>,
    /// Tells this database's claims apart from another's on the same thread (tests run many).
    id: usize,
    /// The next worker partition to hand out.
    claimed: Arc<AtomicUsize>,
    /// Where the pool connects, for connections that live outside it (the change listener).
    pub(crate) url: Arc<str>,
    /// What the pool's connections run, for tests counting statements.
    #[cfg(feature = "testing")]
    pub(crate) statements: StatementLog,
}

pub(crate) type Connection = Object<AsyncPgConnection>;

impl Database {
    /// Builds the pools; connections are opened lazily, on first use.
    ///
    /// # Errors
    /// When the settings are rejected by the pool builder.
    pub fn connect(url: &str, settings: PoolSettings) -> anyhow::Result<Self> {
        let statements = StatementLog::default();
        let manager = || {
            // Checking out a connection must not cost a round trip (`SELECT 1`) on every
            // request: a connection whose socket closed is known to be broken and is dropped
            // anyway, and one whose statement found its server unavailable (read-only, going
            // away: `server_watch`) is dropped as it comes back, so the next one opened goes to
            // whichever host of a multi-host URL takes writes.
            let mut config = ManagerConfig::default();
            config.recycling_method = RecyclingMethod::CustomFunction(Box::new(|connection| {
                let unavailable = found_unavailable(connection);
                Box::pin(async move {
                    if unavailable {
                        Err(diesel::result::Error::DatabaseError(
                            DatabaseErrorKind::ClosedConnection,
                            Box::new("its server was found unavailable".to_owned()),
                        ))
                    } else {
                        Ok(())
                    }
                })
            }));
            let log = statements.clone();
            config.custom_setup = Box::new(move |url| {
                let url = url.to_owned();
                let log = log.clone();
                Box::pin(async move {
                    let mut connection = AsyncPgConnection::establish(&url).await?;
                    connection.set_instrumentation(ServerWatch::new(log));
                    Ok(connection)
                })
            });
            AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config)
        };
        let pool = |size: usize| {
            Pool::builder(manager())
                .max_size(size)
                .wait_timeout(Some(settings.timeout))
                // Opening a connection should take milliseconds; a stuck server should not
                // stall requests.
                .create_timeout(Some(settings.timeout))
                .runtime(Runtime::Tokio1)
                .build()
                .context("building the PostgreSQL connection pool")
        };
        let writers = writer_connections(settings.max_size);
        let readers = settings.max_size - writers;
        // The workers' partitions, then the shared one; never a partition without connections.
        let partitions = match settings.partitions {
            0 | 1 => 1,
            workers => (workers + 1).min(readers.max(1)),
        };
        let partitions = (0..partitions)
            // The first `readers % partitions` partitions take one connection more.
            .map(|index| pool(readers / partitions + usize::from(index < readers % partitions)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            partitions,
            writers: (writers > 0).then(|| pool(writers)).transpose()?,
            id: NEXT_DATABASE.fetch_add(1, Ordering::Relaxed),
            claimed: Arc::default(),
            url: url.into(),
            #[cfg(feature = "testing")]
            statements,
        })
    }

    /// Every pool: the partitions, then the writers'.
    fn pools(&self) -> impl Iterator<Item = &Pool<AsyncPgConnection>> {
        self.partitions.iter().chain(&self.writers)
    }

    /// How many capture statements may run at once: one per writer connection (one in a pool
    /// too small to keep any apart).
    pub(crate) fn capture_writers(&self) -> usize {
        self.writers
            .as_ref()
            .map_or(1, |pool| pool.status().max_size)
    }

    /// Makes the calling thread (an HTTP worker, as it starts) use a partition of its own from
    /// now on, as long as one is left; threads that claim none share the last one.
    pub fn claim_partition(&self) {
        let index = self.claimed.fetch_add(1, Ordering::Relaxed);
        if index + 1 < self.partitions.len() {
            CLAIMED.with(|claimed| claimed.set(Some((self.id, index))));
        }
    }

    /// The partition the calling thread takes connections from: the one it claimed, or the
    /// shared one.
    fn partition_of_this_thread(&self) -> usize {
        let shared = self.partitions.len() - 1;
        CLAIMED.with(Cell::get).map_or(
            shared,
            |(database, index)| {
                if database == self.id { index } else { shared }
            },
        )
    }

    /// Whether this thread's partition hands out a connection without waiting: one is idle, or
    /// there is room to open one.
    pub(crate) fn has_room(&self) -> bool {
        let status = self.partitions[self.partition_of_this_thread()].status();
        status.available > 0 || status.size < status.max_size
    }

    /// A connection from this thread's partition.
    pub(crate) async fn connection(&self) -> Result<Connection, Unexpected> {
        take(&self.partitions[self.partition_of_this_thread()]).await
    }

    /// Closes `connection` instead of handing it back to its pool (which opens another when
    /// one is next needed): for a connection whose buffers grew with one large statement.
    pub(crate) fn close(connection: Connection) {
        drop(Object::take(connection));
    }

    /// A connection for a capture writer's statement: one of the writers' own.
    pub(crate) async fn writer_connection(&self) -> Result<Connection, Unexpected> {
        match &self.writers {
            Some(writers) => take(writers).await,
            None => self.connection().await,
        }
    }
}

async fn take(pool: &Pool<AsyncPgConnection>) -> Result<Connection, Unexpected> {
    pool.get()
        .await
        .context("taking a connection from the pool")
        // Refused, timed out or saturated: nothing was done, and the request may be retried.
        .map_err(Unexpected::unavailable)
}

/// How many of `max_size` connections only capture writers use: a quarter (none below four).
/// A capture statement carries up to a thousand events (one capture alone may carry more), and
/// a connection keeps buffers as large as the largest statement it sent for as long as it lives
/// (tokio-postgres never shrinks them; a heap profile after four 5,000-event batches found 11 MB
/// there). With writers on any connection, that memory spread over the whole pool: under 32
/// concurrent 100-event batches a pool of 16 peaked at 68 MB, with writers apart at 57 MB
/// (docs/benchmarks.md).
fn writer_connections(max_size: usize) -> usize {
    if max_size >= 4 { max_size / 4 } else { 0 }
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
        let mut usage = ConnectionUsage::default();
        for status in self.pools().map(Pool::status) {
            usage.max += status.max_size;
            usage.open += status.size;
            usage.idle += status.available;
            usage.waiting += status.waiting;
        }
        usage
    }
}

/// Numbers databases, so a thread's claim names the database it was made on.
static NEXT_DATABASE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The partition this thread claimed: (database, index).
    static CLAIMED: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The partitions' sizes, and the capture writers' connections.
    fn sizes(max_size: usize, partitions: usize) -> (Vec<usize>, usize) {
        let settings = PoolSettings {
            max_size,
            partitions,
            ..PoolSettings::default()
        };
        let database = Database::connect("postgres://localhost/none", settings).unwrap();
        let total: usize = database.pools().map(|pool| pool.status().max_size).sum();
        assert_eq!(total, max_size);
        let partitions = database
            .partitions
            .iter()
            .map(|pool| pool.status().max_size)
            .collect();
        (
            partitions,
            database.writers.map_or(0, |w| w.status().max_size),
        )
    }

    #[test]
    fn a_quarter_of_the_connections_is_the_capture_writers_and_the_rest_split_between_the_threads()
    {
        assert_eq!(sizes(8, 1), (vec![6], 2));
        assert_eq!(sizes(8, 2), (vec![2, 2, 2], 2));
        assert_eq!(sizes(16, 3), (vec![3, 3, 3, 3], 4));
        assert_eq!(sizes(9, 2), (vec![3, 2, 2], 2));
        assert_eq!(sizes(3, 1), (vec![3], 0), "too few to keep any apart");
        assert_eq!(
            sizes(2, 3),
            (vec![1, 1], 0),
            "never a partition without connections"
        );
    }

    #[test]
    fn each_worker_claims_a_partition_of_its_own_and_other_threads_share_the_last() {
        let settings = PoolSettings {
            max_size: 8,
            partitions: 2,
            ..PoolSettings::default()
        };
        let database = Database::connect("postgres://localhost/none", settings).unwrap();
        let claim = |database: Database| {
            std::thread::spawn(move || {
                database.claim_partition();
                database.partition_of_this_thread()
            })
            .join()
            .unwrap()
        };
        let mut workers = [claim(database.clone()), claim(database.clone())];
        workers.sort_unstable();
        assert_eq!(workers, [0, 1]);
        assert_eq!(claim(database.clone()), 2, "a third claim finds none left");
        assert_eq!(database.partition_of_this_thread(), 2);

        let other = Database::connect("postgres://localhost/none", settings).unwrap();
        other.claim_partition();
        assert_eq!(other.partition_of_this_thread(), 0);
        assert_eq!(
            database.partition_of_this_thread(),
            2,
            "a claim is per database"
        );
    }
}
