//! Turning diesel failures into the domain's error vocabulary, with context for the logs.

use anyhow::Context as _;
use diesel::result::DatabaseErrorKind;
use domain::Unexpected;

/// Attaches what was being done to a storage failure and makes it a domain `Unexpected`.
pub(crate) trait StorageContext<T> {
    fn during(self, what: &'static str) -> Result<T, Unexpected>;
}

impl<T> StorageContext<T> for Result<T, diesel::result::Error> {
    fn during(self, what: &'static str) -> Result<T, Unexpected> {
        self.context(what).map_err(Unexpected::new)
    }
}

/// `during` for an error already taken out of its `Result` (after checking it for a conflict).
pub(crate) fn unexpected(error: diesel::result::Error, what: &'static str) -> Unexpected {
    Unexpected::new(anyhow::Error::new(error).context(what))
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
