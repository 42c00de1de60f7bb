//! A read replica (a streaming standby) for the reads that tolerate a bounded lag: survey
//! statistics and exports. Every other read stays on the primary, so what the management API
//! wrote is what it reads next.
//!
//! Lag is measured, not assumed: a watcher notes the primary's WAL position every
//! [`SAMPLE_EVERY`] and compares the replica's replay position with those notes. The replica is
//! *fresh* while it has replayed a position the primary had at most `max_lag` ago; otherwise (it
//! fell behind, stopped answering, or is not a standby) lag-tolerant reads go to the primary until
//! it catches up. An idle primary does not make a replica stale: its position does not move.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Nullable};
use domain::Unexpected;

use crate::postgres::database::{Database, PoolSettings};
use crate::postgres::errors::StorageContext as _;

/// How often the watcher notes the primary's position and reads the replica's.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);

/// The replica's pool and whether it is fresh enough to read from.
pub struct Replica {
    database: Database,
    fresh: AtomicBool,
}

impl Replica {
    /// A replica at `url` (libpq style; `target_session_attrs=any` or none), with a pool of
    /// `settings.max_size`, counted stale until the watcher found it fresh.
    ///
    /// # Errors
    /// When the settings are rejected by the pool builder.
    pub fn connect(url: &str, settings: PoolSettings) -> anyhow::Result<Arc<Self>> {
        Ok(Arc::new(Self {
            database: Database::connect(url, settings)?,
            fresh: AtomicBool::new(false),
        }))
    }

    /// Where a read that tolerates the lag goes: the replica while it is fresh and has a
    /// connection free, else `primary`. Every project's statistics and exports share the
    /// replica's small pool, so reads that fill it (one project's, slow or many) send the next
    /// ones — any project's — to the primary rather than making them queue behind.
    pub(crate) fn or<'a>(&'a self, primary: &'a Database) -> &'a Database {
        if self.fresh.load(Ordering::Relaxed) && self.database.has_room() {
            &self.database
        } else {
            primary
        }
    }

    /// Watches the replica's lag behind `primary` for as long as the server runs (a loop beside
    /// it), keeping [`Replica::or`] on the replica only while it is within `max_lag`.
    pub async fn watch(self: Arc<Self>, primary: Database, max_lag: Duration) {
        let mut notes = PositionNotes::default();
        let mut was_fresh = false;
        loop {
            if let Ok(position) = position(&primary, PRIMARY_POSITION).await {
                notes.note(Instant::now(), position);
            }
            let replayed = position(&self.database, REPLAYED_POSITION).await;
            let fresh = replayed
                .as_ref()
                .is_ok_and(|replayed| notes.fresh(Instant::now(), *replayed, max_lag));
            self.fresh.store(fresh, Ordering::Relaxed);
            if fresh != was_fresh {
                match &replayed {
                    Ok(_) if fresh => {
                        tracing::info!("read replica within its lag bound: reading from it")
                    }
                    Ok(_) => tracing::warn!(
                        ?max_lag,
                        "read replica behind its lag bound: reading from the primary"
                    ),
                    Err(error) => {
                        tracing::warn!(%error, "read replica unavailable: reading from the primary")
                    }
                }
                was_fresh = fresh;
            }
            tokio::time::sleep(SAMPLE_EVERY).await;
        }
    }
}

/// The primary's current WAL position, in bytes.
const PRIMARY_POSITION: &str = "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint AS position";
/// The last WAL position the replica replayed; `NULL` on a server that is not a standby.
const REPLAYED_POSITION: &str =
    "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint AS position";

#[derive(QueryableByName)]
struct Position {
    #[diesel(sql_type = Nullable<BigInt>)]
    position: Option<i64>,
}

/// Runs one of the position queries; a `NULL` (not a standby) is an error.
async fn position(database: &Database, query: &'static str) -> Result<i64, Unexpected> {
    // In here only: its `load` would shadow `AtomicBool::load` above.
    use diesel_async::RunQueryDsl as _;
    let mut conn = database.connection().await?;
    let row: Position = diesel::sql_query(query)
        .get_result(&mut conn)
        .await
        .during("reading a WAL position")?;
    row.position
        .ok_or_else(|| Unexpected::new(anyhow::anyhow!("the replica is not a standby")))
}

/// The primary's positions as noted over the last while, oldest first.
#[derive(Default)]
struct PositionNotes {
    notes: VecDeque<(Instant, i64)>,
}

/// Notes kept at most (the bound's maximum, 600 s, at [`SAMPLE_EVERY`]).
const MOST_NOTES: usize = 4 * 600;

impl PositionNotes {
    fn note(&mut self, at: Instant, position: i64) {
        if self.notes.len() == MOST_NOTES {
            self.notes.pop_front();
        }
        self.notes.push_back((at, position));
    }

    /// Whether a replica that replayed up to `replayed` is within `max_lag` at `now`: it has
    /// the primary's latest noted position, or one the primary had at most `max_lag` ago (what
    /// it lacks was written after that note, so it is at most that old). Notes older than the
    /// bound are forgotten, all but the newest.
    fn fresh(&mut self, now: Instant, replayed: i64, max_lag: Duration) -> bool {
        while self.notes.len() > 1
            && self
                .notes
                .front()
                .is_some_and(|(at, _)| now.duration_since(*at) > max_lag)
        {
            self.notes.pop_front();
        }
        if self
            .notes
            .back()
            .is_some_and(|(_, latest)| *latest <= replayed)
        {
            return true;
        }
        self.notes
            .iter()
            .rev()
            .find(|(_, position)| *position <= replayed)
            .is_some_and(|(at, _)| now.duration_since(*at) <= max_lag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAG: Duration = Duration::from_secs(2);

    fn at(start: Instant, millis: u64) -> Instant {
        start + Duration::from_millis(millis)
    }

    #[test]
    fn a_replica_that_replayed_the_latest_position_is_fresh() {
        let start = Instant::now();
        let mut notes = PositionNotes::default();
        notes.note(at(start, 0), 100);
        notes.note(at(start, 250), 200);
        assert!(notes.fresh(at(start, 300), 200, LAG));
    }

    #[test]
    fn a_replica_behind_is_fresh_while_what_it_lacks_is_younger_than_the_bound() {
        let start = Instant::now();
        let mut notes = PositionNotes::default();
        notes.note(at(start, 0), 100);
        notes.note(at(start, 1_000), 150);
        notes.note(at(start, 1_250), 200);
        // It has 150, which the primary had at 1 s: what it lacks came later.
        assert!(notes.fresh(at(start, 2_500), 150, LAG));
        assert!(!notes.fresh(at(start, 3_100), 150, LAG));
        // Between two notes, the older one bounds it.
        let mut notes = PositionNotes::default();
        notes.note(at(start, 0), 100);
        notes.note(at(start, 1_000), 200);
        assert!(!notes.fresh(at(start, 2_500), 150, LAG));
    }

    #[test]
    fn an_idle_primary_keeps_a_caught_up_replica_fresh_however_long() {
        let start = Instant::now();
        let mut notes = PositionNotes::default();
        for second in 0..60 {
            notes.note(at(start, second * 1_000), 500);
        }
        assert!(notes.fresh(at(start, 60_000), 500, LAG));
    }

    #[test]
    fn a_replica_without_notes_or_older_than_every_note_is_stale() {
        let start = Instant::now();
        let mut notes = PositionNotes::default();
        assert!(!notes.fresh(start, 500, LAG));
        notes.note(at(start, 0), 600);
        assert!(!notes.fresh(at(start, 100), 500, LAG));
    }
}
