//! Compiled flag patterns for tests: compiled again on every use, which costs a test nothing.

use std::sync::Arc;

use regex::Regex;

use crate::feature_flag::pattern::{Patterns, compile};

/// [`Patterns`] that remember nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompiledEachTime;

impl Patterns for CompiledEachTime {
    fn compiled(&self, pattern: &str) -> Option<Arc<Regex>> {
        compile(pattern).ok().map(Arc::new)
    }
}
