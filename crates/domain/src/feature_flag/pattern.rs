//! The regular expressions of flags' `regex` and `not_regex` filters: compiled with bounds on
//! what one pattern may cost, checked when a flag is written, and handed to evaluation by the
//! [`Patterns`] port, so a node can compile each pattern once for every evaluation after (a
//! `/flags` request evaluates every flag of a project).

use std::sync::Arc;

use regex::{Regex, RegexBuilder};

/// Largest compiled program one pattern may become.
const PROGRAM_LIMIT: usize = 64 * 1024;
/// Largest lazy-DFA cache one pattern may grow while matching.
const DFA_LIMIT: usize = 256 * 1024;

/// `pattern` compiled with the bounds above.
///
/// # Errors
/// The regex crate's reason: a syntax it does not have (look-around), or a pattern too large.
pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .size_limit(PROGRAM_LIMIT)
        .dfa_size_limit(DFA_LIMIT)
        .build()
}

/// Where evaluation gets its compiled patterns. Not async: evaluation is pure computation, and
/// an implementation answers from memory or by compiling.
pub trait Patterns: Send + Sync {
    /// `pattern` as [`compile`] makes it; `None` when it does not compile (a flag stored before
    /// patterns were checked at write time). Shared in an `Arc` rather than cloned: a clone of
    /// a `Regex` starts with empty match caches.
    fn compiled(&self, pattern: &str) -> Option<Arc<Regex>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_past_the_size_bound_do_not_compile() {
        assert!(compile(&"a{1000}".repeat(100)).is_err());
        assert!(compile("(?=look-around)").is_err());
    }
}
