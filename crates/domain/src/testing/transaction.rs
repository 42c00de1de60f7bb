//! The fakes' transaction: a working copy of the whole state, taken when it begins, that replaces
//! the shared state on commit and is dropped on rollback. Transactions take turns, as if every
//! write locked everything it touches, so concurrent ones cannot lose each other's writes. A
//! port written without a transaction (flags, persons, …) writes the shared state directly, and
//! a transaction committing after such a write overwrites it: tests interleave only
//! transactions (concurrency with the other ports is PostgreSQL's to show).

use async_trait::async_trait;
use futures_util::lock::OwnedMutexGuard;

use super::{InMemoryStore, State};
use crate::error::Unexpected;
use crate::ports::Transaction;

/// An open fake transaction: what each port's transaction primitives read and write.
pub(super) struct Draft {
    store: InMemoryStore,
    pub(super) state: State,
    _turn: OwnedMutexGuard<()>,
}

impl Draft {
    /// Waits for the transaction before it to end, then copies the state.
    pub(super) async fn begin(store: &InMemoryStore) -> Self {
        let turn = store.turn.clone().lock_owned().await;
        let state = store.lock().clone();
        Self {
            store: store.clone(),
            state,
            _turn: turn,
        }
    }
}

#[async_trait]
impl Transaction for Draft {
    async fn commit(self: Box<Self>) -> Result<(), Unexpected> {
        *self.store.lock() = self.state;
        Ok(())
    }

    async fn rollback(self: Box<Self>) -> Result<(), Unexpected> {
        Ok(())
    }
}
