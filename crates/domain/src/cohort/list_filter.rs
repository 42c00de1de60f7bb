//! Which of a project's live cohorts a list keeps: PostHog's list parameters (`type`,
//! `created_by_id`, `search`), typed. What each keeps is the port's to state
//! (`CohortRepository::list`).

use crate::error::ValidationError;
use crate::tenancy::UserId;

/// Longest text a cohort search takes: PostHog's `MAX_SEARCH_LENGTH` (a search is typed into a
/// picker, not pasted from a file).
pub const MAX_COHORT_SEARCH_CHARS: usize = 200;

/// What a cohorts list keeps; the default keeps every live cohort.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CohortListFilter {
    /// Static cohorts only (`Some(true)`), dynamic ones only (`Some(false)`), or both.
    pub is_static: Option<bool>,
    /// Only the cohorts this user created.
    pub created_by: Option<UserId>,
    /// Only the cohorts whose name holds this text.
    pub search: Option<CohortSearch>,
}

/// A text a cohort's name must hold, ignoring case, as a substring (`%`, `_` and `\` are
/// ordinary characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CohortSearch(String);

impl CohortSearch {
    /// `None` for an empty search, which keeps every cohort.
    ///
    /// # Errors
    /// PostHog's `Search query must be 200 characters or fewer.` (`attr: search`) beyond
    /// [`MAX_COHORT_SEARCH_CHARS`] characters.
    pub fn parse(raw: &str) -> Result<Option<Self>, ValidationError> {
        if raw.chars().count() > MAX_COHORT_SEARCH_CHARS {
            return Err(ValidationError::invalid(
                "search",
                format!("Search query must be {MAX_COHORT_SEARCH_CHARS} characters or fewer."),
            ));
        }
        Ok((!raw.is_empty()).then(|| Self(raw.to_owned())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_bounded_in_characters_and_an_empty_one_keeps_every_cohort() {
        let longest = "é".repeat(MAX_COHORT_SEARCH_CHARS);
        assert_eq!(
            CohortSearch::parse(&longest).unwrap().unwrap().as_str(),
            longest
        );
        let error = CohortSearch::parse(&format!("{longest}x")).unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (
                Some("search"),
                "Search query must be 200 characters or fewer."
            )
        );
        assert_eq!(CohortSearch::parse("").unwrap(), None);
    }
}
