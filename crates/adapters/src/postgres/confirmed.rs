//! `confirmed`: a write with a result (`RETURNING`, a function's answer) run outside an explicit
//! transaction, answered only once PostgreSQL confirmed its commit.
//!
//! Such a statement is sent with the extended protocol (`Bind`, `Execute`, `Sync`) in an
//! implicit transaction, which PostgreSQL commits at `Sync` — after the statement's rows and
//! its `CommandComplete` — and confirms with `ReadyForQuery`. diesel's `get_result` answers on
//! the first row: a commit waiting for a synchronous standby let the row out with PostgreSQL's
//! warning as a fast shutdown cut the wait (the commit local only, the connection ended with
//! nothing more), and a result larger than PostgreSQL's 8 kB output buffer left before the
//! commit even began. Reading the statement's answer to its end waits for `ReadyForQuery`
//! in the same round trip (the server sends it with the rows), and a connection that ends first
//! is an error (see `errors::is_unavailable`).
//!
//! The other ways Burrow writes are confirmed already: `execute` reads to `ReadyForQuery`
//! (tokio-postgres returns the count only then), `load` reads every row to it, and an explicit
//! transaction's `COMMIT` is answered (its `CommandComplete`) only after the commit and its
//! synchronous-replication wait; a write inside a transaction is acknowledged only after that
//! `COMMIT`.
//!
//! A commit that wrote nothing does not wait for the standby at all: a write that may find its
//! work already done (capture's retry of events stored before) must still write, or it would
//! acknowledge a local copy no standby has (`record_capture.sql` emits a WAL message for that).

use diesel::result::QueryResult;
use diesel_async::methods::LoadQuery;
use diesel_async::return_futures::LoadFuture;
use diesel_async::{AsyncConnectionCore, RunQueryDsl};
use futures_util::FutureExt as _;
use futures_util::future::Map;

/// `get_result` for a write outside a transaction: its one row (`NotFound` when there is none,
/// as `get_result`, so `.optional()` applies), once PostgreSQL confirmed the commit. Its future
/// is a named type, as diesel-async's are (an opaque one would make the compiler prove `Send`
/// for every lifetime a statement borrows, which it cannot).
pub(crate) fn confirmed<'conn, 'query, Q, U, C>(
    statement: Q,
    conn: &'conn mut C,
) -> Confirmed<'conn, 'query, Q, C, U>
where
    C: AsyncConnectionCore,
    Q: RunQueryDsl<C> + LoadQuery<'query, C, U> + 'query,
    U: Send,
{
    statement.load(conn).map(only_row)
}

/// The future of [`confirmed`].
pub(crate) type Confirmed<'conn, 'query, Q, C, U> =
    Map<LoadFuture<'conn, 'query, Q, C, U>, OnlyRow<U>>;

type OnlyRow<U> = fn(QueryResult<Vec<U>>) -> QueryResult<U>;

fn only_row<U>(rows: QueryResult<Vec<U>>) -> QueryResult<U> {
    rows?
        .into_iter()
        .next()
        .ok_or(diesel::result::Error::NotFound)
}
