//! PostHog's survey search (`?search=`): an exact tier (the term in the name or the description,
//! ignoring case) and, only when nothing matches exactly, a similar tier (pg_trgm word
//! similarity, which forgives typos and unfinished words). Results are ordered by a relevance
//! score. The thresholds and weights are PostHog's (`posthog/helpers/trigram_search.py`); stores
//! apply them as `SurveyRepository::list` states.

use super::{SurveyFilter, SurveyRepository};
use crate::error::{Unexpected, ValidationError};
use crate::tenancy::ProjectId;

/// Longest `?search=` taken, in characters as sent: PostHog's `MAX_SEARCH_LENGTH`.
pub const MAX_SEARCH_CHARS: usize = 200;

/// A survey is similar by name when `word_similarity(term, name)` is above this.
pub const NAME_SIMILARITY: f64 = 0.3;

/// A survey is similar by description when `word_similarity(term, description)` is above this:
/// higher than for names, as a short term reaches 0.3 against almost any long prose.
pub const DESCRIPTION_SIMILARITY: f64 = 0.4;

/// How much the description's word similarity weighs in the score, beside the name's word and
/// whole similarities: a survey matched by its description alone ranks below one matched by name.
pub const DESCRIPTION_WEIGHT: f64 = 0.5;

/// What a search looks for: the text as sent without NUL characters and surrounding whitespace,
/// never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTerm(String);

impl SearchTerm {
    /// `None` when nothing is left to look for (a blank search lists as no search does).
    ///
    /// # Errors
    /// PostHog's `Search query must be 200 characters or fewer.` (`attr: search`) when `raw`, as
    /// sent, is longer than [`MAX_SEARCH_CHARS`] characters.
    pub fn parse(raw: &str) -> Result<Option<Self>, ValidationError> {
        if raw.chars().count() > MAX_SEARCH_CHARS {
            return Err(ValidationError::invalid(
                "search",
                format!("Search query must be {MAX_SEARCH_CHARS} characters or fewer."),
            ));
        }
        let term = raw.replace('\0', "");
        let term = term.trim();
        Ok((!term.is_empty()).then(|| Self(term.to_owned())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

wire_enum! {
    /// The tier a search answered from, which every survey of its answer matched in
    /// (`search_match_type`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum SearchMatch {
        /// The term is in the name or the description, ignoring case.
        Exact = "exact",
        /// Only similar: no survey the filters keep holds the term.
        Similar = "similar",
    }
}

/// A search as a list applies it: the term and the tier the surveys must match in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurveySearch {
    pub term: SearchTerm,
    pub tier: SearchMatch,
}

impl SurveySearch {
    /// The search for `term` among the surveys `filter` keeps (its own search aside): exact
    /// when any of them holds the term, similar otherwise. PostHog shows similar surveys only
    /// when none matches exactly, so a typo still finds something while exact hits are never
    /// buried under fuzzy ones.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn among(
        surveys: &dyn SurveyRepository,
        project: ProjectId,
        filter: &SurveyFilter,
        term: SearchTerm,
    ) -> Result<Self, Unexpected> {
        let tier = if surveys.holds_term(project, filter, &term).await? {
            SearchMatch::Exact
        } else {
            SearchMatch::Similar
        };
        Ok(Self { term, tier })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_is_bounded_as_sent_and_kept_without_nuls_and_surrounding_blanks() {
        let longest = "é".repeat(MAX_SEARCH_CHARS);
        assert_eq!(
            SearchTerm::parse(&longest).unwrap().unwrap().as_str(),
            longest
        );
        let error = SearchTerm::parse(&format!("{longest}x")).unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (
                Some("search"),
                "Search query must be 200 characters or fewer."
            )
        );
        assert_eq!(
            SearchTerm::parse(" \0net\0 promoter\t")
                .unwrap()
                .unwrap()
                .as_str(),
            "net promoter"
        );
        assert_eq!(SearchTerm::parse("").unwrap(), None);
        assert_eq!(SearchTerm::parse(" \0 ").unwrap(), None);
    }
}
