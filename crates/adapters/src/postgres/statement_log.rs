//! The statement log: every statement a pooled connection runs (`BEGIN` and `COMMIT` included)
//! becomes a `debug` event of target `burrow::sql`, its SQL text without the bound values (which
//! may be tokens, secrets or personal data). Operators turn it on to see what a request costs
//! (`RUST_LOG=burrow::sql=debug`); tests record one pool's statements while a use case runs
//! (`testing::statements_of`) to count them.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use diesel::connection::{Instrumentation, InstrumentationEvent};

/// The target of the statement log's events.
pub const STATEMENT_LOG_TARGET: &str = "burrow::sql";

/// One pool's statement log, installed on every connection it opens.
#[derive(Clone, Default)]
pub(crate) struct StatementLog {
    recorder: Arc<Recorder>,
}

#[derive(Default)]
struct Recorder {
    /// Checked first, so a pool nobody records costs no lock per statement.
    on: AtomicBool,
    recorded: Mutex<Recorded>,
}

/// What a pool's connections did while recorded.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Every statement run, in order.
    pub statements: Vec<String>,
    /// The statements a connection prepared to keep (diesel's `CacheQuery`), the first time it
    /// ran each. A statement prepared afresh on every run never shows here.
    pub kept_prepared: Vec<String>,
}

impl StatementLog {
    /// Starts keeping the statements this pool runs, forgetting any kept before.
    #[cfg(feature = "testing")]
    pub(crate) fn start_recording(&self) {
        *self.recorder.recorded() = Recorded::default();
        self.recorder.on.store(true, Ordering::SeqCst);
    }

    /// Stops keeping statements and returns what was recorded since `start_recording`.
    #[cfg(feature = "testing")]
    pub(crate) fn stop_recording(&self) -> Recorded {
        self.recorder.on.store(false, Ordering::SeqCst);
        std::mem::take(&mut *self.recorder.recorded())
    }
}

impl Recorder {
    fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        // A panic while holding the lock leaves lists of strings, still fine to use.
        self.recorded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Instrumentation for StatementLog {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        let recording = self.recorder.on.load(Ordering::SeqCst);
        let (query, error) = match event {
            InstrumentationEvent::FinishQuery { query, error, .. } => (query, error),
            InstrumentationEvent::CacheQuery { sql, .. } => {
                if recording {
                    self.recorder.recorded().kept_prepared.push(sql.to_owned());
                }
                return;
            }
            _ => return,
        };
        if !recording && !tracing::enabled!(target: STATEMENT_LOG_TARGET, tracing::Level::DEBUG) {
            return;
        }
        let sql = without_binds(query);
        tracing::debug!(
            target: STATEMENT_LOG_TARGET,
            statement = %sql,
            failed = error.is_some(),
            "statement"
        );
        if recording {
            self.recorder.recorded().statements.push(sql);
        }
    }
}

/// A statement's SQL, without the ` -- binds: […]` diesel's rendering ends with.
fn without_binds(query: &dyn fmt::Display) -> String {
    let mut rendered = query.to_string();
    if let Some(end) = rendered.find(" -- binds: ") {
        rendered.truncate(end);
    }
    rendered
}
