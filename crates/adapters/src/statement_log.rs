//! The statement log: every statement a pooled connection runs (`BEGIN` and `COMMIT` included)
//! becomes a `debug` event of target `burrow::sql`, its SQL text without the bound values (which
//! may be tokens, secrets or personal data). Operators turn it on to see what a request costs
//! (`RUST_LOG=burrow::sql=debug`), and tests count a use case's statements with it.

use std::fmt;

use diesel::connection::{Instrumentation, InstrumentationEvent};

/// The target of the statement log's events.
pub const STATEMENT_LOG_TARGET: &str = "burrow::sql";

/// Installed on every connection the pool opens.
pub(crate) struct StatementLog;

impl Instrumentation for StatementLog {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let InstrumentationEvent::FinishQuery { query, error, .. } = event {
            tracing::debug!(
                target: STATEMENT_LOG_TARGET,
                statement = %WithoutBinds(query),
                failed = error.is_some(),
                "statement"
            );
        }
    }
}

/// A statement's SQL, without the ` -- binds: […]` diesel's rendering ends with.
struct WithoutBinds<'a>(&'a dyn fmt::Display);

impl fmt::Display for WithoutBinds<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rendered = self.0.to_string();
        let sql = rendered
            .split_once(" -- binds: ")
            .map_or(rendered.as_str(), |(sql, _)| sql);
        f.write_str(sql)
    }
}
