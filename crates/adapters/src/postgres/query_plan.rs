//! PostgreSQL's plan of a statement, as tests read it to show a query scans no table whole.

use diesel::QueryableByName;

/// One line of `EXPLAIN`'s output.
#[derive(QueryableByName)]
pub(crate) struct PlanLine {
    #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
    pub(crate) line: String,
}
