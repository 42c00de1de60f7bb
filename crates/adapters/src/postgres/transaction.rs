//! A PostgreSQL transaction held open across the domain's primitive calls (the unit of work of
//! `domain::ports::Transaction`); `logged`, which lets a write carry its activity entry in the
//! same statement; and `for_update_of`, which locks one table of a joined read.

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, TransactionManager};
use domain::Unexpected;
use domain::ports::Transaction;

use crate::postgres::database::{Connection, Database};
use crate::postgres::errors::StorageContext as _;

/// A pooled connection inside `BEGIN`. Dropped before `commit` or `rollback` finished (a
/// cancelled request, a panic), it closes its connection instead of handing it back, so the
/// server rolls back and releases the locks at once rather than when the pool next looks.
pub(crate) struct PgTransaction {
    /// `None` once the transaction ended and the connection went back to the pool.
    connection: Option<Connection>,
}

impl PgTransaction {
    /// Takes a connection and opens a transaction on it.
    pub(crate) async fn begin(database: &Database) -> Result<Self, Unexpected> {
        let mut connection = database.connection().await?;
        AnsiTransactionManager::begin_transaction(&mut *connection)
            .await
            .during("beginning a transaction")?;
        Ok(Self {
            connection: Some(connection),
        })
    }

    /// The connection, for the transaction's statements.
    pub(crate) fn connection(&mut self) -> &mut AsyncPgConnection {
        self.connection
            .as_deref_mut()
            .expect("a transaction keeps its connection until it ends")
    }

    /// Ends the transaction with `end`; the connection goes back to the pool only if it worked.
    async fn end(
        mut self: Box<Self>,
        end: impl AsyncFnOnce(&mut AsyncPgConnection) -> QueryResult<()>,
        what: &'static str,
    ) -> Result<(), Unexpected> {
        end(self.connection()).await.during(what)?;
        self.connection.take();
        Ok(())
    }
}

impl Drop for PgTransaction {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            drop(Object::take(connection));
        }
    }
}

#[async_trait]
impl Transaction for PgTransaction {
    async fn commit(self: Box<Self>) -> Result<(), Unexpected> {
        let commit =
            async |c: &mut AsyncPgConnection| AnsiTransactionManager::commit_transaction(c).await;
        self.end(commit, "committing a transaction").await
    }

    async fn rollback(self: Box<Self>) -> Result<(), Unexpected> {
        let rollback =
            async |c: &mut AsyncPgConnection| AnsiTransactionManager::rollback_transaction(c).await;
        self.end(rollback, "rolling back a transaction").await
    }
}

/// `WITH logged AS (<log>) <write>`: the write and its log entry in one statement, which
/// PostgreSQL runs whole or not at all, so the log costs no round trip of its own. The result
/// is the write's (its `RETURNING`).
pub(crate) fn logged<L, W>(log: L, write: W) -> Logged<L, W> {
    Logged { log, write }
}

/// See [`logged`].
pub(crate) struct Logged<L, W> {
    log: L,
    write: W,
}

impl<L, W> QueryFragment<Pg> for Logged<L, W>
where
    L: QueryFragment<Pg>,
    W: QueryFragment<Pg>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH logged AS (");
        self.log.walk_ast(out.reborrow())?;
        out.push_sql(") ");
        self.write.walk_ast(out.reborrow())
    }
}

impl<L, W: Query> Query for Logged<L, W> {
    type SqlType = W::SqlType;
}

impl<L, W> QueryId for Logged<L, W> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

/// Whether a read inside a transaction locks the rows it is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    /// Locked until the transaction ends (see [`for_update_of`]).
    ForUpdate,
    None,
}

/// `<query> FOR UPDATE OF <table>`: locks the rows one table contributes to a joined read, which
/// diesel's locking clause cannot say (it locks every joined table, which PostgreSQL refuses for
/// the nullable side of an outer join). A row a concurrent write changed is read as that write
/// left it, as with any top-level lock (a lock taken in a sub-select would not re-read it).
pub(crate) fn for_update_of<Q>(query: Q, table: &'static str) -> ForUpdateOf<Q> {
    ForUpdateOf { query, table }
}

/// See [`for_update_of`].
pub(crate) struct ForUpdateOf<Q> {
    query: Q,
    table: &'static str,
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for ForUpdateOf<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        out.push_sql(" FOR UPDATE OF ");
        out.push_identifier(self.table)
    }
}

impl<Q: Query> Query for ForUpdateOf<Q> {
    type SqlType = Q::SqlType;
}

impl<Q> QueryId for ForUpdateOf<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}
