//! Flag patterns compiled once per node: a `/flags` request evaluates every flag of a project,
//! and compiling a pattern costs far more than matching it (`domain::feature_flag::pattern`).

use std::sync::Arc;

use domain::feature_flag::pattern::{Patterns, compile};
use moka::sync::Cache;
use regex::Regex;

/// How many compiled patterns are remembered: at most about 80 MiB with both of the domain's
/// compile limits reached, a few KiB each for the patterns flags use.
const REMEMBERED: u64 = 256;

/// Compiled patterns, the most used remembered; a pattern that does not compile is remembered
/// as such, so it is not compiled again either.
pub struct MokaPatterns(Cache<String, Option<Arc<Regex>>>);

impl Default for MokaPatterns {
    fn default() -> Self {
        Self(Cache::new(REMEMBERED))
    }
}

impl Patterns for MokaPatterns {
    fn compiled(&self, pattern: &str) -> Option<Arc<Regex>> {
        if let Some(known) = self.0.get(pattern) {
            return known;
        }
        let regex = compile(pattern).ok().map(Arc::new);
        self.0.insert(pattern.to_owned(), regex.clone());
        regex
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_compiled_once_and_shared() {
        let patterns = MokaPatterns::default();
        let first = patterns.compiled(r"^pattern-\d+$").unwrap();
        let second = patterns.compiled(r"^pattern-\d+$").unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert!(patterns.compiled("(unclosed").is_none());
    }

    #[test]
    fn the_domains_compile_limits_apply() {
        assert!(
            MokaPatterns::default()
                .compiled(&"a{1000}".repeat(100))
                .is_none()
        );
    }
}
