//! The survey search in SQL, as `SurveyRepository::list` states it: pg_trgm's functions (the
//! extension is created by the migration `2026-11-29-010000_survey_search`), each tier's
//! predicate and the relevance order. Every value is a bound parameter, so the statements stay
//! prepared. No trigram index: a project's surveys are read by `project_id`, and the tiers'
//! comparisons (`word_similarity(…) > x`) are not what a trigram index serves.

use diesel::dsl::{Asc, Desc};
use diesel::expression::BoxableExpression;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Double, Float, Text};
use domain::survey::{
    DESCRIPTION_SIMILARITY, DESCRIPTION_WEIGHT, NAME_SIMILARITY, SearchMatch, SearchTerm,
    SurveySearch,
};

use crate::postgres::schema::surveys;
use crate::postgres::text::contains_pattern;

type Pg = diesel::pg::Pg;

/// A condition on a survey row.
pub(crate) type Predicate = Box<dyn BoxableExpression<surveys::table, Pg, SqlType = Bool>>;

/// A number computed from a survey row.
type Number = Box<dyn BoxableExpression<surveys::table, Pg, SqlType = Double>>;

diesel::define_sql_function! {
    /// pg_trgm's similarity of `term` to the most similar run of words of `text`.
    fn word_similarity(term: Text, text: Text) -> Float;
}

diesel::define_sql_function! {
    /// pg_trgm's similarity of two texts as wholes.
    fn similarity(text: Text, term: Text) -> Float;
}

diesel::define_sql_function! {
    /// A `real` as `double precision`, which the thresholds and the score are computed in.
    fn float8(value: Float) -> Double;
}

/// The exact tier: the term in the name or the description, ignoring case, its `%`, `_` and
/// `\` matched literally.
pub(crate) fn exactly_matching(term: &SearchTerm) -> Predicate {
    let pattern = contains_pattern(term.as_str());
    Box::new(
        surveys::name
            .ilike(pattern.clone())
            .or(surveys::description.ilike(pattern)),
    )
}

/// The surveys a search keeps: those of its tier.
pub(crate) fn in_tier(search: &SurveySearch) -> Predicate {
    let term = &search.term;
    match search.tier {
        SearchMatch::Exact => exactly_matching(term),
        SearchMatch::Similar => {
            let text = term.as_str().to_owned();
            let similar = float8(word_similarity(text.clone(), surveys::name))
                .gt(NAME_SIMILARITY)
                .or(float8(word_similarity(text, surveys::description)).gt(DESCRIPTION_SIMILARITY));
            Box::new(similar.and(diesel::dsl::not(exactly_matching(term))))
        }
    }
}

/// The relevance score of a survey for `term`.
fn score(term: &SearchTerm) -> Number {
    let term = term.as_str().to_owned();
    Box::new(
        float8(word_similarity(term.clone(), surveys::name))
            + float8(similarity(surveys::name, term.clone()))
            + float8(word_similarity(term, surveys::description)) * DESCRIPTION_WEIGHT,
    )
}

/// A search's order: the most relevant first, then by name.
pub(crate) fn by_relevance(term: &SearchTerm) -> (Desc<Number>, Asc<surveys::name>) {
    (score(term).desc(), surveys::name.asc())
}
