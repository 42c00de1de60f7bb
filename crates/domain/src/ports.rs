//! What every port shares: paging, transactions (the unit of work a service runs its writes
//! in), and the readiness check behind `/_readyz`. Each aggregate's own port lives beside it
//! (`survey::port`, `feature_flag::port`, `tenancy::port`, …).
//! A port method's `Unexpected` is always a storage failure, so their docs do not repeat it.

use async_trait::async_trait;

use crate::error::{DomainError, Unexpected};

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

/// An open transaction of a store: what a use case writes through it becomes visible all at
/// once on `commit`, or not at all. Each aggregate's transaction trait adds the primitive reads
/// and writes its use cases are made of; the sequence lives in the domain service, once, and
/// runs alike on every store.
#[async_trait]
pub trait Transaction: Send {
    /// # Errors
    /// `Unexpected` when the store cannot commit; nothing was written then.
    async fn commit(self: Box<Self>) -> Result<(), Unexpected>;

    /// Undoes everything written through the transaction. A store also rolls back a
    /// transaction dropped without either, at a higher cost (PostgreSQL closes the connection).
    ///
    /// # Errors
    /// `Unexpected` when the store could not say it rolled back.
    async fn rollback(self: Box<Self>) -> Result<(), Unexpected>;
}

/// Runs one write as a unit of work: `in_transaction!(store.begin(), |tx| { … })` opens the
/// transaction, runs the block with `tx` (`&mut` the store's transaction), then commits when the
/// block's `Result<_, DomainError>` is `Ok`, or rolls back and returns its error as is; a
/// failed `begin` is returned as is. Every write goes through here, so no use case can forget
/// to end its transaction. A macro, not a function taking an async closure: the block stays an
/// ordinary `async` block, so the write's future is `Send` (rustc cannot yet prove it for an
/// async closure over a `&mut dyn` transaction), and writers can be spawned.
#[macro_export]
macro_rules! in_transaction {
    ($begin:expr, |$transaction:ident| $work:block) => {
        match $begin.await {
            Err(error) => Err($crate::DomainError::from(error)),
            Ok(mut transaction) => {
                let outcome: Result<_, $crate::DomainError> = async {
                    let $transaction = &mut *transaction;
                    $work
                }
                .await;
                $crate::ports::conclude(transaction, outcome).await
            }
        }
    };
}

/// Ends `transaction` as the work done in it turned out: commits when it succeeded, rolls back
/// when it failed and returns its error as is. `in_transaction!`'s ending; use that.
///
/// # Errors
/// The work's error, or `Unexpected` when the commit fails.
pub async fn conclude<T, R>(
    transaction: Box<T>,
    outcome: Result<R, DomainError>,
) -> Result<R, DomainError>
where
    T: Transaction + ?Sized,
{
    match outcome {
        Ok(value) => {
            transaction.commit().await?;
            Ok(value)
        }
        Err(error) => {
            if let Err(failure) = transaction.rollback().await {
                // The work's error is what the caller needs; the store has discarded the
                // transaction either way.
                tracing::warn!(error = %failure, "rolling back a failed write");
            }
            Err(error)
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
