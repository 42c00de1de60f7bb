//! PostHog's bucketing hash: where a person falls, in [0, 1], for a flag's rollout and variants.

use sha1::{Digest as _, Sha1};

/// `0xFFFFFFFFFFFFFFF`: the largest value of 15 hex digits, PostHog's `LONG_SCALE`.
const LONG_SCALE: u64 = 0xFFF_FFFF_FFFF_FFFF;

/// The salt of the rollout check.
pub const ROLLOUT_SALT: &str = "";
/// The salt of the variant choice.
pub const VARIANT_SALT: &str = "variant";

/// PostHog's `_hash(key, distinct_id, salt)`: SHA-1 of `"{key}.{distinct_id}{salt}"`, its first
/// 15 hex digits read as an integer and divided by [`LONG_SCALE`]. The same person gets the same
/// number for the same flag, on PostHog and here, so they land in the same bucket.
///
/// A `/flags` request hashes every flag once or twice, so the input is fed in parts (no string
/// built) to an implementation that uses the CPU's SHA instructions where it has them.
pub fn hash(key: &str, distinct_id: &str, salt: &str) -> f64 {
    let digest = Sha1::new()
        .chain_update(key)
        .chain_update(".")
        .chain_update(distinct_id)
        .chain_update(salt)
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // 16 hex digits are the first 8 bytes; dropping the last digit keeps 15.
    let value = u64::from_be_bytes(first) >> 4;
    value as f64 / LONG_SCALE as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_posthogs() {
        // As posthog-python writes it: `int(sha1("a.b").hexdigest()[:15], 16) / LONG_SCALE`.
        // PostHog's own vectors are checked in `tests/flag_consistency.rs`.
        let digest: String = Sha1::digest("a.b")
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let expected = u64::from_str_radix(&digest[..15], 16).unwrap() as f64 / LONG_SCALE as f64;
        assert_eq!(hash("a", "b", ""), expected);
        assert!((0.0..=1.0).contains(&hash("flag", "person", VARIANT_SALT)));
        assert_ne!(
            hash("flag", "person", ROLLOUT_SALT),
            hash("flag", "person", VARIANT_SALT)
        );
    }
}
