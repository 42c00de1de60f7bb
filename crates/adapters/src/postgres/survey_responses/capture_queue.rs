//! Group commit for captures: every visitor's answer is a capture, and each one written alone
//! pays a statement, a commit and its WAL flush for a few rows. Captures that arrive while the
//! writers are busy wait here and are written together, one statement per project, when a
//! writer is free; a capture that finds a writer free is written at once, so a quiet node adds
//! no delay. Each capture is answered only once its statement committed (an acknowledged answer
//! is stored), and a writer is a task of its own, so a client that hangs up cannot cut off the
//! write that other captures wait on.
//!
//! Each running writer adds its new responses to a counter slot of its own, so concurrent
//! writers never wait on one survey's counter row; the slots are few and fixed (the surveys'
//! counts stay as many rows as writers ever ran at once, however many connections came and went).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use domain::Unexpected;
use domain::tenancy::ProjectId;
use futures_util::future::join_all;
use tokio::sync::oneshot;
use uuid::Uuid;

use super::capture::{Capture, CounterSlot, MOST_ROWS_TOGETHER, write_captures};
use crate::postgres::database::Database;

/// Captures waiting for a writer, and the writers that run.
pub(super) struct CaptureQueue {
    database: Database,
    state: Arc<Mutex<Queue>>,
}

struct Queue {
    waiting: VecDeque<Waiting>,
    /// The counter slots of the writers not running. At most this many statements write
    /// captures at once, each on a pooled connection: the rest of the pool stays free for reads,
    /// and captures queue instead of piling onto PostgreSQL's commits.
    idle_writers: Vec<CounterSlot>,
}

impl Queue {
    /// The captures that waited longest, up to [`MOST_ROWS_TOGETHER`] rows (events and sets).
    fn next_statement(&mut self) -> Vec<Waiting> {
        let mut rows = 0;
        let mut next = Vec::new();
        while let Some(first) = self.waiting.front() {
            rows += first.capture.rows();
            if rows > MOST_ROWS_TOGETHER && !next.is_empty() {
                break;
            }
            next.extend(self.waiting.pop_front());
        }
        next
    }
}

struct Waiting {
    capture: Capture,
    stored: oneshot::Sender<Result<usize, Unexpected>>,
}

impl CaptureQueue {
    /// A queue with `writers` writers (at least one), each with its own counter slot.
    pub(super) fn new(database: Database, writers: usize) -> Self {
        Self {
            database,
            state: Arc::new(Mutex::new(Queue {
                waiting: VecDeque::new(),
                idle_writers: CounterSlot::for_writers(writers.max(1)),
            })),
        }
    }

    /// Writes the capture, with whatever else waits for a writer by then; answers how many of
    /// its events were new once they are committed.
    pub(super) async fn record(&self, capture: Capture) -> Result<usize, Unexpected> {
        let (stored, answer) = oneshot::channel();
        let ready = {
            let mut queue = lock(&self.state);
            queue.waiting.push_back(Waiting { capture, stored });
            queue
                .idle_writers
                .pop()
                .map(|slot| (slot, queue.next_statement()))
        };
        if let Some((slot, ready)) = ready {
            let writer = Writer {
                database: self.database.clone(),
                state: self.state.clone(),
                slot,
                done: false,
            };
            tokio::spawn(writer.write_until_none_wait(ready));
        }
        answer
            .await
            .map_err(|_| Unexpected::new("the capture's writer stopped before it answered"))?
    }
}

/// A running writer: it counts as writing (its slot taken) until it finds the queue empty, or
/// if it panics.
struct Writer {
    database: Database,
    state: Arc<Mutex<Queue>>,
    slot: CounterSlot,
    done: bool,
}

impl Writer {
    /// Writes `ready`, then what queued meanwhile, until nothing waits. The queue is found
    /// empty and the writer stops counting under one lock, so a capture queued at that moment
    /// starts a writer of its own.
    async fn write_until_none_wait(mut self, mut ready: Vec<Waiting>) {
        loop {
            write_together(&self.database, self.slot, ready).await;
            let mut queue = lock(&self.state);
            if queue.waiting.is_empty() {
                queue.idle_writers.push(self.slot);
                self.done = true;
                return;
            }
            ready = queue.next_statement();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.done {
            lock(&self.state).idle_writers.push(self.slot);
        }
    }
}

fn lock(state: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    // The queue's invariants hold between statements: a panic elsewhere leaves it usable.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One statement per project for what waited. When a statement of several captures fails, each
/// is written alone (at once, side by side), so one capture cannot fail the others; when the
/// database could not be reached, all are told so without trying again.
async fn write_together(database: &Database, slot: CounterSlot, ready: Vec<Waiting>) {
    let mut projects: BTreeMap<ProjectId, Vec<Waiting>> = BTreeMap::new();
    for waiting in ready {
        projects
            .entry(waiting.capture.project)
            .or_default()
            .push(waiting);
    }
    join_all(
        projects
            .into_values()
            .map(|group| write_group(database, slot, group)),
    )
    .await;
}

async fn write_group(database: &Database, slot: CounterSlot, group: Vec<Waiting>) {
    let captures: Vec<&Capture> = group.iter().map(|w| &w.capture).collect();
    match write_captures(database, slot, &captures).await {
        Ok(new) => answer(group, new),
        Err(error) if group.len() > 1 && !error.is_unavailable() => {
            tracing::warn!(error = %error, captures = group.len(), "writing captures together failed; writing each alone");
            join_all(
                group
                    .into_iter()
                    .map(|one| write_alone(database, slot, one)),
            )
            .await;
        }
        Err(error) => refuse(group, error),
    }
}

async fn write_alone(database: &Database, slot: CounterSlot, waiting: Waiting) {
    match write_captures(database, slot, &[&waiting.capture]).await {
        Ok(new) => answer(vec![waiting], new),
        Err(error) => refuse(vec![waiting], error),
    }
}

/// Tells each capture the write failed: the first gets the error itself, the others its words
/// (and whether the database was unreachable, which decides 503 or 500).
fn refuse(group: Vec<Waiting>, error: Unexpected) {
    let (reason, unavailable) = (error.to_string(), error.is_unavailable());
    let mut error = Some(error);
    for waiting in group {
        let error = error.take().unwrap_or_else(|| {
            if unavailable {
                Unexpected::unavailable(reason.clone())
            } else {
                Unexpected::new(reason.clone())
            }
        });
        let _ = waiting.stored.send(Err(error));
    }
}

/// Tells each capture how many of its events were new: an event that several captures carried
/// counts for the first of them. A capture whose client hung up is not told.
fn answer(group: Vec<Waiting>, mut new: HashSet<Uuid>) {
    for waiting in group {
        let stored = waiting
            .capture
            .events
            .iter()
            .filter(|event| new.remove(&event.uuid))
            .count();
        let _ = waiting.stored.send(Ok(stored));
    }
}
