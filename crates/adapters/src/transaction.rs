//! A PostgreSQL transaction held open across the domain's primitive calls (the unit of work of
//! `domain::ports::Transaction`), and `logged`, which lets a write carry its activity entry in
//! the same statement.

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, TransactionManager};
use domain::Unexpected;
use domain::ports::Transaction;

use crate::database::{Connection, Database};
use crate::errors::StorageContext as _;

/// A pooled connection inside `BEGIN`. Dropped without `commit` or `rollback` (a panic), the
/// pool discards the connection, which ends the transaction on the server.
pub(crate) struct PgTransaction {
    connection: Connection,
}

impl PgTransaction {
    /// Takes a connection and opens a transaction on it.
    pub(crate) async fn begin(database: &Database) -> Result<Self, Unexpected> {
        let mut connection = database.connection().await?;
        AnsiTransactionManager::begin_transaction(&mut *connection)
            .await
            .during("beginning a transaction")?;
        Ok(Self { connection })
    }

    /// The connection, for the transaction's statements.
    pub(crate) fn connection(&mut self) -> &mut AsyncPgConnection {
        &mut self.connection
    }
}

#[async_trait]
impl Transaction for PgTransaction {
    async fn commit(mut self: Box<Self>) -> Result<(), Unexpected> {
        AnsiTransactionManager::commit_transaction(&mut *self.connection)
            .await
            .during("committing a transaction")
    }

    async fn rollback(mut self: Box<Self>) -> Result<(), Unexpected> {
        AnsiTransactionManager::rollback_transaction(&mut *self.connection)
            .await
            .during("rolling back a transaction")
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
