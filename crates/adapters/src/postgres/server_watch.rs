//! A pooled connection's instrumentation: the statement log, and whether a statement found the
//! connection's server unavailable, so the pool drops the connection instead of handing it out
//! again.
//!
//! A server that went away closes its connections, and the pool drops a closed one anyway; a
//! server that turned read-only (a primary being demoted, `default_transaction_read_only`) keeps
//! them open, and each would fail every write until it closed. Dropped, it is replaced by a
//! connection to whichever host of a multi-host `DATABASE_URL` takes writes
//! (`target_session_attrs=read-write`).
//!
//! diesel reports a statement's failure to the instrumentation when the statement's future
//! ends: `execute`'s whole answer, but only the start of a read's (a read whose rows then fail
//! is not seen here; one whose connection ends is closed anyway). A writer that reads its
//! answer marks its connection itself ([`mark_unavailable`]).

use diesel::connection::{Instrumentation, InstrumentationEvent};
use diesel_async::{AsyncConnection as _, AsyncPgConnection};

use crate::postgres::errors::is_unavailable;
use crate::postgres::statement_log::StatementLog;

/// See the module's documentation.
pub(crate) struct ServerWatch {
    log: StatementLog,
    server_unavailable: bool,
}

impl ServerWatch {
    pub(crate) fn new(log: StatementLog) -> Self {
        Self {
            log,
            server_unavailable: false,
        }
    }
}

impl Instrumentation for ServerWatch {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let InstrumentationEvent::FinishQuery {
            error: Some(error), ..
        } = &event
            && is_unavailable(error)
        {
            self.server_unavailable = true;
        }
        self.log.on_connection_event(event);
    }
}

/// Notes that a statement on `connection` found its server unavailable.
pub(crate) fn mark_unavailable(connection: &mut AsyncPgConnection) {
    if let Some(watch) = watch_of(connection) {
        watch.server_unavailable = true;
    }
}

/// Whether a statement on `connection` found its server unavailable: the pool's check before
/// handing a connection out again, at no round trip.
pub(crate) fn found_unavailable(connection: &mut AsyncPgConnection) -> bool {
    watch_of(connection).is_some_and(|watch| watch.server_unavailable)
}

/// The connection's watch. Called only while no statement of the connection is under way (the
/// pool's check, or after a statement's answer), when diesel-async hands its instrumentation
/// out.
fn watch_of(connection: &mut AsyncPgConnection) -> Option<&mut ServerWatch> {
    connection.instrumentation().downcast_mut::<ServerWatch>()
}
