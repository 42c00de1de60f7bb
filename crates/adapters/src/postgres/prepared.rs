//! `prepared`: a statement diesel would prepare afresh on every run, kept prepared on its
//! connection as diesel keeps every other statement, when its SQL is a fixed set of texts.
//!
//! Diesel prepares afresh, each time they run, every `UPDATE` (a changeset may leave columns
//! out, so one statement type can be many SQL texts) and every `sql_query` (its text is any
//! string). Afresh costs a round trip of its own (`Parse`, then `Bind` and `Execute`) and
//! PostgreSQL a parse and a plan every time: for a survey's rename, more than the update
//! itself. A statement that can only be a fixed set of SQL texts (an update whose changeset
//! writes every column it names, `treat_none_as_null`; a `sql_query` of a constant) is safe to
//! keep, cached by its text (never by its type, which may stand for several texts). A statement
//! whose text depends on the data (a flag's `FlagChangeset`, a filter built from a request)
//! must not go through here: each of its texts would stay prepared on every connection.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::result::QueryResult;

/// Keeps `statement` prepared, cached by its SQL text. Wraps the whole statement (diesel asks
/// only the outermost part whether it may be kept), e.g. `prepared(logged(log, update))`, and
/// the binds of a `sql_query`.
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

query_like!(Prepared<Q>);

/// A wrapper of a query `Q` as a query of `Q`'s rows, with no static id: the statement cache
/// keys it by its SQL text.
macro_rules! query_like {
    ($wrapper:ident<$($lifetime:lifetime,)? Q>) => {
        impl<Q: diesel::query_builder::Query> diesel::query_builder::Query
            for $wrapper<$($lifetime,)? Q>
        {
            type SqlType = Q::SqlType;
        }

        impl<Q> diesel::query_builder::QueryId for $wrapper<$($lifetime,)? Q> {
            type QueryId = ();
            const HAS_STATIC_QUERY_ID: bool = false;
        }
    };
}
pub(crate) use query_like;
