//! A PostgreSQL transaction held open across the domain's primitive calls (the unit of work of
//! `domain::ports::Transaction`); `with` and `logged`, which put writes that go together (a
//! write and its activity entry) in one statement; and `for_update_of`, which locks one table
//! of a joined read.

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::result::QueryResult;
use diesel::sql_types::Bool;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, RunQueryDsl as _, SimpleAsyncConnection as _};
use domain::Unexpected;
use domain::ports::Transaction;
use futures_util::future::join;

use crate::postgres::database::{Connection, Database};
use crate::postgres::errors::StorageContext as _;
use crate::postgres::server_watch::mark_unavailable;

/// A pooled connection for one transaction. `BEGIN` goes out with the transaction's first
/// statement: in the same round trip when that statement is a read ([`Self::read`]). Dropped
/// before `commit` or `rollback` finished (a cancelled request, a panic), it closes its
/// connection instead of handing it back, so the server rolls back and releases the locks at
/// once rather than when the pool next looks.
///
/// A write inside it is acknowledged only after `commit`, whose `COMMIT` PostgreSQL answers
/// only once the commit is done, its wait for a synchronous standby included; a connection
/// that ends before that answer is a failure (unavailable), never a success. A rollback asks in
/// the same round trip whether the server still takes writes, and a connection to one that
/// does not (a standby, a primary being demoted) is not pooled again (`server_watch`): the
/// failure that led to the rollback was likely its refusal.
///
/// `BEGIN`, `COMMIT` and `ROLLBACK` are sent as plain statements, not through diesel's
/// transaction manager, which cannot send `BEGIN` along with another statement; nothing here
/// uses diesel's own transactions, so it has no state to keep.
pub(crate) struct PgTransaction {
    /// `None` once the transaction ended and the connection went back to the pool.
    connection: Option<Connection>,
    /// Whether `BEGIN` went out, so the end must be sent too (a transaction that ran no
    /// statement ends without either).
    begun: bool,
}

impl PgTransaction {
    /// Takes a connection for a transaction, which begins with its first statement.
    pub(crate) async fn open(database: &Database) -> Result<Self, Unexpected> {
        Ok(Self {
            connection: Some(database.connection().await?),
            begun: false,
        })
    }

    fn pooled(&mut self) -> &mut AsyncPgConnection {
        self.connection
            .as_deref_mut()
            .expect("a transaction keeps its connection until it ends")
    }

    /// The connection, inside the transaction, for any statement (`BEGIN` goes out first, on
    /// its own, when it has not yet; a hot path's first read pipelines it, [`Self::read`]).
    pub(crate) async fn connection(&mut self) -> Result<&mut AsyncPgConnection, Unexpected> {
        if !self.begun {
            self.begun = true;
            self.pooled()
                .batch_execute("BEGIN")
                .await
                .during("beginning a transaction")?;
        }
        Ok(self.pooled())
    }

    /// Runs a read inside the transaction. The transaction's first statement, when it is a
    /// read, goes out pipelined after `BEGIN`, so the two cost one round trip; a read, unlike
    /// a write, would do no harm should `BEGIN` fail and the read run outside the transaction
    /// (the transaction fails then, as the error says).
    pub(crate) async fn read<T, E>(
        &mut self,
        read: impl AsyncFnOnce(&mut &AsyncPgConnection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<Unexpected>,
    {
        let begun = self.begun;
        let connection: &AsyncPgConnection = self.pooled();
        let mut reading = connection;
        if begun {
            return read(&mut reading).await;
        }
        let mut beginning = connection;
        // `join` polls `BEGIN` first, which queues it on the connection before the read.
        let (began, outcome) = join(beginning.batch_execute("BEGIN"), read(&mut reading)).await;
        self.begun = true;
        began.during("beginning a transaction")?;
        outcome
    }

    /// `COMMIT` (nothing to send when the transaction never began); the connection goes back
    /// to the pool only if that worked.
    async fn commit_now(mut self: Box<Self>) -> Result<(), Unexpected> {
        if self.begun {
            self.pooled()
                .batch_execute("COMMIT")
                .await
                .during("committing a transaction")?;
        }
        self.connection.take();
        Ok(())
    }

    /// `ROLLBACK` (nothing to send when the transaction never began), pipelined with a read of whether the server takes writes, so a connection
    /// to one that does not is marked and dropped by the pool.
    async fn roll_back(mut self: Box<Self>) -> Result<(), Unexpected> {
        if !self.begun {
            return Ok(());
        }
        let connection: &AsyncPgConnection = self.pooled();
        let (mut ending, mut asking) = (connection, connection);
        // `join` polls `ROLLBACK` first, which queues it on the connection before the read.
        let (ended, writable) = join(
            ending.batch_execute("ROLLBACK"),
            diesel::select(sql::<Bool>(
                "current_setting('transaction_read_only') = 'off'",
            ))
            .get_result::<bool>(&mut asking),
        )
        .await;
        ended.during("rolling back a transaction")?;
        if !writable.during("asking whether the server takes writes")? {
            mark_unavailable(self.pooled());
        }
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
        self.commit_now().await
    }

    async fn rollback(self: Box<Self>) -> Result<(), Unexpected> {
        self.roll_back().await
    }
}

/// `WITH logged AS (<log>) <write>`: the write and its log entry in one statement, which
/// PostgreSQL runs whole or not at all, so the log costs no round trip of its own. The result
/// is the write's (its `RETURNING`).
pub(crate) fn logged<'a, W>(log: impl QueryFragment<Pg> + Send + 'a, write: W) -> With<'a, W> {
    with("logged", log).then(write)
}

/// `WITH <name> AS (<statement>), …`: writes that go together in one statement, which
/// PostgreSQL runs whole or not at all, each a round trip saved. A statement may read the
/// `RETURNING` of those named before it; [`Ctes::then`] gives the statement's result.
pub(crate) fn with<'a>(
    name: &'static str,
    statement: impl QueryFragment<Pg> + Send + 'a,
) -> Ctes<'a> {
    Ctes(Vec::new()).and(name, statement)
}

/// See [`with`].
pub(crate) struct Ctes<'a>(Vec<(&'static str, Box<dyn QueryFragment<Pg> + Send + 'a>)>);

impl<'a> Ctes<'a> {
    /// One more statement, after those named so far.
    pub(crate) fn and(
        mut self,
        name: &'static str,
        statement: impl QueryFragment<Pg> + Send + 'a,
    ) -> Self {
        self.0.push((name, Box::new(statement)));
        self
    }

    /// The statement's last part, whose result is the statement's.
    pub(crate) fn then<Q>(self, query: Q) -> With<'a, Q> {
        With { ctes: self, query }
    }
}

/// See [`with`].
pub(crate) struct With<'a, Q> {
    ctes: Ctes<'a>,
    query: Q,
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for With<'_, Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        for (position, (name, statement)) in self.ctes.0.iter().enumerate() {
            out.push_sql(if position == 0 { "WITH " } else { ", " });
            out.push_identifier(name)?;
            out.push_sql(" AS (");
            statement.walk_ast(out.reborrow())?;
            out.push_sql(")");
        }
        out.push_sql(" ");
        self.query.walk_ast(out.reborrow())
    }
}

crate::postgres::prepared::query_like!(With<'_, Q>);

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

crate::postgres::prepared::query_like!(ForUpdateOf<Q>);
