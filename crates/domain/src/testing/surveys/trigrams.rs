//! pg_trgm's `similarity` and `word_similarity` (PostgreSQL's `contrib/pg_trgm/trgm_op.c`), for
//! the fake's survey search to tier and rank as PostgreSQL does.
//!
//! Where they may differ from PostgreSQL's: a word is a run of characters Rust calls
//! alphanumeric and is lowercased as Rust lowercases; PostgreSQL asks the database's locale, so
//! under a `C` ctype no letter outside ASCII belongs to a word there. PostgreSQL also stores a
//! trigram of multibyte characters as a 3-byte hash, which two different trigrams could share.
//! Contract tests search ASCII text.

use std::collections::{BTreeSet, HashMap};

/// Three characters of a word as padded below.
type Trigram = [char; 3];

/// The trigrams of `text`, word by word in order: each word (a run of alphanumeric characters),
/// lowercased and padded with two spaces before and one after, gives one trigram per character,
/// and one more.
fn trigrams(text: &str) -> Vec<Trigram> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .flat_map(|word| {
            let padded: Vec<char> = "  "
                .chars()
                .chain(word.to_lowercase().chars())
                .chain(" ".chars())
                .collect();
            padded
                .windows(3)
                .map(|three| [three[0], three[1], three[2]])
                .collect::<Vec<_>>()
        })
        .collect()
}

/// pg_trgm's `CALCSML`: shared trigrams over all trigrams of both, in `float4`.
fn ratio(shared: usize, first: usize, second: usize) -> f32 {
    shared as f32 / (first + second - shared) as f32
}

/// `similarity(a, b)`: the trigrams both share, over the trigrams either has.
pub(super) fn similarity(a: &str, b: &str) -> f32 {
    let a: BTreeSet<Trigram> = trigrams(a).into_iter().collect();
    let b: BTreeSet<Trigram> = trigrams(b).into_iter().collect();
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    ratio(a.intersection(&b).count(), a.len(), b.len())
}

/// `word_similarity(needle, text)`: the greatest similarity between the needle's trigrams and
/// any run of consecutive trigrams of `text` (`calc_word_similarity` without its flags).
pub(super) fn word_similarity(needle: &str, text: &str) -> f32 {
    let needle: BTreeSet<Trigram> = trigrams(needle).into_iter().collect();
    // Each distinct trigram of the text numbered, and the text as those numbers.
    let mut numbers: HashMap<Trigram, usize> = HashMap::new();
    let mut found = Vec::new();
    let positions: Vec<usize> = trigrams(text)
        .into_iter()
        .map(|trigram| {
            *numbers.entry(trigram).or_insert_with(|| {
                found.push(needle.contains(&trigram));
                found.len() - 1
            })
        })
        .collect();
    best_run(&positions, &found, needle.len())
}

/// `iterate_word_similarity`: walks the text's trigrams, and at each one the needle has, tries
/// every start of the run ending there, keeping the best start for the runs that follow.
fn best_run(positions: &[usize], found: &[bool], needle_len: usize) -> f32 {
    let mut last_seen: Vec<Option<usize>> = vec![None; found.len()];
    let (mut distinct, mut shared) = (0, 0);
    let mut lower: Option<usize> = None;
    let mut best = 0.0_f32;
    for (upper, &trigram) in positions.iter().enumerate() {
        if lower.is_some() || found[trigram] {
            if last_seen[trigram].is_none() {
                distinct += 1;
                if found[trigram] {
                    shared += 1;
                }
            }
            last_seen[trigram] = Some(upper);
        }
        if !found[trigram] {
            continue;
        }
        let start = *lower.get_or_insert_with(|| {
            distinct = 1;
            upper
        });
        let mut current = ratio(shared, needle_len, distinct);
        let mut kept_start = start;
        let (mut run_shared, mut run_distinct) = (shared, distinct);
        for (tried, &dropped) in positions.iter().enumerate().take(upper + 1).skip(start) {
            let similarity = ratio(run_shared, needle_len, run_distinct);
            if similarity > current {
                current = similarity;
                distinct = run_distinct;
                shared = run_shared;
                kept_start = tried;
            }
            if last_seen[dropped] == Some(tried) {
                run_distinct -= 1;
                if found[dropped] {
                    run_shared -= 1;
                }
            }
        }
        best = best.max(current);
        let passed = positions.iter().enumerate().take(kept_start).skip(start);
        for (dropped, &trigram) in passed {
            if last_seen[trigram] == Some(dropped) {
                last_seen[trigram] = None;
            }
        }
        lower = Some(kept_start);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values PostgreSQL 15's pg_trgm answers for the same arguments (`SELECT similarity(…)`,
    /// `word_similarity(…)`).
    #[test]
    fn the_values_are_pg_trgms() {
        assert_eq!(word_similarity("word", "two words"), 0.8);
        assert_eq!(similarity("word", "two words"), 4.0 / 11.0);
        assert_eq!(
            word_similarity("onbording", "Onboarding feedback"),
            8.0 / 13.0
        );
        assert_eq!(word_similarity("onbording", "Landing"), 0.3);
        assert_eq!(
            word_similarity("custmers", "Why customers leave"),
            7.0 / 12.0
        );
        assert_eq!(word_similarity("feedback", "Net promoter score"), 0.0);
        assert_eq!(word_similarity("", "anything"), 0.0);
        assert_eq!(similarity("", "anything"), 0.0);
        assert_eq!(word_similarity("NPS", "nps"), 1.0);
    }
}
