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

/// `during` for an error already taken out of its `Result` (after checking it for a conflict).
/// A connection that broke (the server went away mid-request) is reported as unavailable.
pub(crate) fn unexpected(error: diesel::result::Error, what: &'static str) -> Unexpected {
    let lost = matches!(
        error,
        diesel::result::Error::DatabaseError(
            DatabaseErrorKind::UnableToSendCommand | DatabaseErrorKind::ClosedConnection,
            _
        )
    );
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
