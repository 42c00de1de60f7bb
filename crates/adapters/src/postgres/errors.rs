//! Turning diesel failures into the domain's error vocabulary, with context for the logs.

use diesel::result::DatabaseErrorKind;
use domain::{DomainError, Unexpected};

/// Attaches what was being done to a storage failure and makes it a domain `Unexpected`.
pub(crate) trait StorageContext<T> {
    fn during(self, what: &'static str) -> Result<T, Unexpected>;

    /// `during` for a query of one row that may find none (`None`, as diesel's `optional`).
    fn optional_during(self, what: &'static str) -> Result<Option<T>, Unexpected>;
}

impl<T> StorageContext<T> for Result<T, diesel::result::Error> {
    fn during(self, what: &'static str) -> Result<T, Unexpected> {
        self.map_err(|error| unexpected(error, what))
    }

    fn optional_during(self, what: &'static str) -> Result<Option<T>, Unexpected> {
        diesel::OptionalExtension::optional(self).during(what)
    }
}

/// Whether `error` says the server cannot take this statement now (gone, going, starting, or
/// read-only: a standby, or a primary being demoted), so the same request may succeed once a
/// primary answers. Told by kind, which is told by SQLSTATE, never by the message (it follows the
/// server's `lc_messages`): `ClosedConnection` is a connection that broke or was ended, and —
/// through the patched diesel-async (`vendor/diesel-async/PATCHED.md`) — any error of class 08
/// (connection exception) or 57P0x (`admin_shutdown`, `crash_shutdown`, `cannot_connect_now`,
/// `database_dropped`, `idle_session_timeout`); `UnableToSendCommand` is a failure with no
/// SQLSTATE at all (the socket); `ReadOnlyTransaction` is 25006 `read_only_sql_transaction`.
///
/// A write that fails so may have been committed all the same (the server can end the
/// connection after the commit, before confirming it): the client's retry must be safe, as
/// capture's per-uuid dedup makes it.
pub(crate) fn is_unavailable(error: &diesel::result::Error) -> bool {
    matches!(
        error,
        diesel::result::Error::DatabaseError(
            DatabaseErrorKind::UnableToSendCommand
                | DatabaseErrorKind::ClosedConnection
                | DatabaseErrorKind::ReadOnlyTransaction,
            _,
        )
    )
}

/// `during` for an error already taken out of its `Result` (after checking it for a conflict).
/// A server that is unavailable ([`is_unavailable`]) is reported as such (a 503 the client
/// retries): which of its forms a request sees depends only on when the server's goodbye
/// arrived.
pub(crate) fn unexpected(error: diesel::result::Error, what: &'static str) -> Unexpected {
    let unavailable = is_unavailable(&error);
    let error = anyhow::Error::new(error).context(what);
    if unavailable {
        Unexpected::unavailable(error)
    } else {
        Unexpected::new(error)
    }
}

/// Whether the failure is a unique violation of `constraint` (a constraint or a unique index),
/// so a conflict the domain names (a taken key, a taken name) is told apart from any other.
pub(crate) fn is_unique_violation(error: &diesel::result::Error, constraint: &str) -> bool {
    matches!(
        error,
        diesel::result::Error::DatabaseError(DatabaseErrorKind::UniqueViolation, info)
            if info.constraint_name() == Some(constraint)
    )
}

/// Whether `error` is a check violation of `constraint` (a `CHECK` or a trigger raising one).
pub(crate) fn is_check_violation(error: &diesel::result::Error, constraint: &str) -> bool {
    matches!(
        error,
        diesel::result::Error::DatabaseError(DatabaseErrorKind::CheckViolation, info)
            if info.constraint_name() == Some(constraint)
    )
}

/// A write's failure: `Conflict` for a unique violation of `constraint`, else `Unexpected`.
pub(crate) fn write_error(
    error: diesel::result::Error,
    constraint: &str,
    what: &'static str,
) -> DomainError {
    if is_unique_violation(&error, constraint) {
        DomainError::Conflict
    } else {
        DomainError::Unexpected(unexpected(error, what))
    }
}

#[cfg(test)]
mod tests {
    use diesel::result::Error;

    use super::*;

    fn database_error(kind: DatabaseErrorKind, message: &str) -> Error {
        Error::DatabaseError(kind, Box::new(message.to_owned()))
    }

    #[test]
    fn a_server_going_away_is_unavailable_however_its_goodbye_arrives() {
        for error in [
            database_error(DatabaseErrorKind::ClosedConnection, "connection closed"),
            database_error(DatabaseErrorKind::UnableToSendCommand, "broken pipe"),
        ] {
            assert!(unexpected(error, "reading").is_unavailable());
        }
    }

    #[test]
    fn a_server_that_refuses_writes_is_unavailable_until_a_primary_answers() {
        let error = database_error(
            DatabaseErrorKind::ReadOnlyTransaction,
            "cannot execute INSERT in a read-only transaction",
        );
        assert!(unexpected(error, "writing").is_unavailable());
    }

    #[test]
    fn other_failures_are_not_unavailable() {
        for error in [
            database_error(DatabaseErrorKind::Unknown, "division by zero"),
            // The message alone says nothing: only the code (the kind) does.
            database_error(
                DatabaseErrorKind::Unknown,
                "terminating connection due to administrator command",
            ),
            database_error(DatabaseErrorKind::CheckViolation, "violates check"),
            database_error(
                DatabaseErrorKind::SerializationFailure,
                "could not serialize access due to concurrent update",
            ),
            database_error(
                DatabaseErrorKind::Unknown,
                "canceling statement due to statement timeout",
            ),
            Error::NotFound,
        ] {
            assert!(!unexpected(error, "reading").is_unavailable());
        }
    }
}
