//! The regular expressions of flags' `regex` and `not_regex` filters: compiled with bounds on
//! what one pattern may cost, checked when a flag is written, and compiled once per pattern for
//! every evaluation after (a `/flags` request evaluates every flag of a project).

use std::sync::{Arc, OnceLock};

use moka::sync::Cache;
use regex::{Regex, RegexBuilder};

/// Largest compiled program one pattern may become.
const PROGRAM_LIMIT: usize = 64 * 1024;
/// Largest lazy-DFA cache one pattern may grow while matching.
const DFA_LIMIT: usize = 256 * 1024;
/// How many compiled patterns are remembered: at most about 80 MiB with both limits reached,
/// a few KiB each for the patterns flags use.
const REMEMBERED: u64 = 256;

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

/// `pattern` compiled, from the process's cache when it was compiled before; `None` when it
/// does not compile (a flag stored before patterns were checked at write time).
pub(crate) fn compiled(pattern: &str) -> Option<Arc<Regex>> {
    static CACHE: OnceLock<Cache<String, Option<Arc<Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Cache::new(REMEMBERED));
    if let Some(known) = cache.get(pattern) {
        return known;
    }
    let regex = compile(pattern).ok().map(Arc::new);
    cache.insert(pattern.to_owned(), regex.clone());
    regex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_compiled_once_and_shared() {
        let first = compiled(r"^pattern-\d+$").unwrap();
        let second = compiled(r"^pattern-\d+$").unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert!(compiled("(unclosed").is_none());
    }

    #[test]
    fn patterns_past_the_size_bound_do_not_compile() {
        assert!(compile(&"a{1000}".repeat(100)).is_err());
        assert!(compile("(?=look-around)").is_err());
    }
}
