//! What every port shares: paging, and the readiness check behind `/_readyz`. Each aggregate's
//! own port lives beside it (`survey::port`, `feature_flag::port`, `tenancy::port`, …).

use async_trait::async_trait;

use crate::error::Unexpected;

/// A window into an ordered list: `limit` items starting at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub limit: u32,
    pub offset: u64,
}

/// One page of a list and the size of the whole list.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub count: u64,
    pub items: Vec<T>,
}

impl<T> Page<T> {
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            count: self.count,
            items: self.items.into_iter().map(f).collect(),
        }
    }
}

/// Whether the service's dependencies can serve requests (for `/_readyz`), and how busy their
/// connections are (for `/metrics`).
#[async_trait]
pub trait Readiness: Send + Sync {
    /// # Errors
    /// `Unexpected` describing what is unreachable.
    async fn check(&self) -> Result<(), Unexpected>;

    /// The storage's connection pool right now.
    fn connections(&self) -> ConnectionUsage;
}

/// A snapshot of a connection pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectionUsage {
    /// Connections the pool may open at most.
    pub max: usize,
    /// Connections open now.
    pub open: usize,
    /// Open connections no request holds.
    pub idle: usize,
    /// Requests waiting for a connection.
    pub waiting: usize,
}
