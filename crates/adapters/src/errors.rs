//! Turning diesel failures into the domain's error vocabulary, with context for the logs.

use anyhow::Context as _;
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
