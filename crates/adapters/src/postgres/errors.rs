//! Turning diesel failures into the domain's error vocabulary, with context for the logs.

use diesel::result::DatabaseErrorKind;
use domain::{DomainError, Unexpected};

/// Attaches what was being done to a storage failure and makes it a domain `Unexpected`.
pub(crate) trait StorageContext<T> {
    fn during(self, what: &'static str) -> Result<T, Unexpected>;
}

impl<T> StorageContext<T> for Result<T, diesel::result::Error> {
    fn during(self, what: &'static str) -> Result<T, Unexpected> {
        self.map_err(|error| unexpected(error, what))
    }
}

/// What PostgreSQL says as it ends a connection for its own shutdown or a crash (SQLSTATE 57P01,
/// 57P02, 57P03). diesel hands over the message of such an error, not its code, so it is told
/// by the message (the server's English default).
const SERVER_GOING_AWAY: [&str; 3] = [
    "terminating connection due to administrator command",
    "terminating connection because of crash of another server process",
    "the database system is ",
];

/// `during` for an error already taken out of its `Result` (after checking it for a conflict).
/// A connection that broke, or that the server ended as it went away, is reported as
/// unavailable: which of the two a request sees depends only on when the server's goodbye
/// arrived.
pub(crate) fn unexpected(error: diesel::result::Error, what: &'static str) -> Unexpected {
    let lost = match &error {
        diesel::result::Error::DatabaseError(
            DatabaseErrorKind::UnableToSendCommand | DatabaseErrorKind::ClosedConnection,
            _,
        ) => true,
        diesel::result::Error::DatabaseError(DatabaseErrorKind::Unknown, info) => SERVER_GOING_AWAY
            .iter()
            .any(|message| info.message().starts_with(message)),
        _ => false,
    };
    let error = anyhow::Error::new(error).context(what);
    if lost {
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
            database_error(
                DatabaseErrorKind::Unknown,
                "terminating connection due to administrator command",
            ),
            database_error(
                DatabaseErrorKind::Unknown,
                "the database system is shutting down",
            ),
        ] {
            assert!(unexpected(error, "reading").is_unavailable());
        }
    }

    #[test]
    fn other_failures_are_not_unavailable() {
        for error in [
            database_error(DatabaseErrorKind::Unknown, "division by zero"),
            database_error(DatabaseErrorKind::CheckViolation, "violates check"),
            Error::NotFound,
        ] {
            assert!(!unexpected(error, "reading").is_unavailable());
        }
    }
}
