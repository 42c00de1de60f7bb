//! `prepared`: an `UPDATE` of one SQL text kept prepared on its connection, as diesel keeps
//! every other statement.
//!
//! Diesel prepares every `UPDATE` afresh each time it runs, because a changeset may leave
//! columns out, so one statement type can be many SQL texts. Afresh costs a round trip of its
//! own (`Parse`, then `Bind` and `Execute`) and PostgreSQL's parse and plan, every time: for a
//! survey's rename, more than the update itself. An update whose changeset writes every column
//! it names (`treat_none_as_null`, no optional column) is a fixed set of SQL texts, so it is safe
//! to keep, cached by its text (never by its type, which may stand for several texts). An
//! update whose columns depend on the data (a flag's `FlagChangeset`) must not go through here:
//! each of its shapes would stay prepared on every connection.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;

/// Keeps `statement` prepared, cached by its SQL text. Wraps the whole statement (diesel asks
/// only the outermost part whether it may be kept), e.g. `prepared(logged(log, update))`.
pub(crate) fn prepared<Q>(statement: Q) -> Prepared<Q> {
    Prepared(statement)
}

/// See [`prepared`].
pub(crate) struct Prepared<Q>(Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Prepared<Q> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

impl<Q: Query> Query for Prepared<Q> {
    type SqlType = Q::SqlType;
}

/// No static id: the statement cache keys it by its SQL text.
impl<Q> QueryId for Prepared<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}
