//! Versions as PostHog's SDKs compare them for the `semver_*` operators (posthog-python's
//! `parse_semver` and `_*_bounds`, @posthog/core's `parseFeatureFlagSemver`): `major.minor.patch`
//! with missing parts 0, a leading `v` and surrounding space ignored, and what follows `-` or `+`
//! dropped, so a pre-release equals its release (`1.2.3-rc.1` is `1.2.3`). PostHog's own flag
//! service orders pre-releases below their release; Burrow answers as the SDKs do, so a flag
//! evaluated locally and through `/flags` agrees.

/// A version as the SDKs compare it: `(major, minor, patch)`.
pub type Version = (u128, u128, u128);

/// The versions a range operator accepts: from `lower` (included) to `upper` (excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub lower: Version,
    pub upper: Version,
}

impl Range {
    pub fn contains(&self, version: Version) -> bool {
        self.lower <= version && version < self.upper
    }
}

/// Reads a version; `None` when it is not one (a part that is not a number, or has a leading
/// zero, as semver 2.0.0 forbids).
pub fn parse(text: &str) -> Option<Version> {
    let text = text.trim().trim_start_matches(['v', 'V']);
    let base = text.split('-').next()?.split('+').next()?;
    let mut parts = base.split('.');
    let major = number(parts.next()?)?;
    let mut optional = || match parts.next() {
        None | Some("") => Some(0),
        Some(part) => number(part),
    };
    Some((major, optional()?, optional()?))
}

/// `~1.2.3`: from 1.2.3 to the next minor, 1.3.0.
pub fn tilde(text: &str) -> Option<Range> {
    let (major, minor, patch) = parse(text)?;
    Some(Range {
        lower: (major, minor, patch),
        upper: (major, minor.checked_add(1)?, 0),
    })
}

/// `^1.2.3`: from 1.2.3 to the next version that may break it (2.0.0; 0.3.0 for 0.2.3; 0.0.4
/// for 0.0.3).
pub fn caret(text: &str) -> Option<Range> {
    let lower = parse(text)?;
    let upper = match lower {
        (0, 0, patch) => (0, 0, patch.checked_add(1)?),
        (0, minor, _) => (0, minor.checked_add(1)?, 0),
        (major, _, _) => (major.checked_add(1)?, 0, 0),
    };
    Some(Range { lower, upper })
}

/// `1.*` (1.0.0 to 2.0.0), `1.2.*` (1.2.0 to 1.3.0), `1.2.3` (that patch alone): every `*` is
/// dropped, then trailing dots, as posthog-python reads the pattern.
pub fn wildcard(text: &str) -> Option<Range> {
    let cleaned = text.trim().trim_start_matches(['v', 'V']).replace('*', "");
    let mut parts = cleaned
        .trim_end_matches('.')
        .split('.')
        .filter(|p| !p.is_empty());
    let major = number(parts.next()?)?;
    let Some(minor) = parts.next() else {
        return Some(Range {
            lower: (major, 0, 0),
            upper: (major.checked_add(1)?, 0, 0),
        });
    };
    let minor = number(minor)?;
    let Some(patch) = parts.next() else {
        return Some(Range {
            lower: (major, minor, 0),
            upper: (major, minor.checked_add(1)?, 0),
        });
    };
    let patch = number(patch)?;
    Some(Range {
        lower: (major, minor, patch),
        upper: (major, minor, patch.checked_add(1)?),
    })
}

/// A numeric identifier: digits without a leading zero (`0` itself is one). One past `u128`
/// (the SDKs' integers have no bound) reads as `u128::MAX`, so it still orders above the rest.
fn number(part: &str) -> Option<u128> {
    let digits = !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
    if !digits || (part.len() > 1 && part.starts_with('0')) {
        return None;
    }
    Some(part.parse().unwrap_or(u128::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_the_sdks_read_them() {
        for (text, version) in [
            ("1.2.3", Some((1, 2, 3))),
            (" v1.2.3 ", Some((1, 2, 3))),
            ("V2", Some((2, 0, 0))),
            ("1.2", Some((1, 2, 0))),
            ("1.", Some((1, 0, 0))),
            ("1..3", Some((1, 0, 3))),
            ("1.2.3.4", Some((1, 2, 3))),
            ("1.2.3-rc.1", Some((1, 2, 3))),
            ("1.2.3+build.7", Some((1, 2, 3))),
            ("0.0.0", Some((0, 0, 0))),
            ("01.2.3", None),
            ("1.02", None),
            ("", None),
            (".1", None),
            ("1.x", None),
            ("-1.2", None),
            ("one", None),
            (
                "1.99999999999999999999999999999999999999999",
                Some((1, u128::MAX, 0)),
            ),
        ] {
            assert_eq!(parse(text), version, "{text:?}");
        }
    }

    #[test]
    fn ranges_as_the_sdks_bound_them() {
        let range = |lower, upper| Some(Range { lower, upper });
        assert_eq!(tilde("1.2.3"), range((1, 2, 3), (1, 3, 0)));
        assert_eq!(tilde("1.2"), range((1, 2, 0), (1, 3, 0)));
        assert_eq!(caret("1.2.3"), range((1, 2, 3), (2, 0, 0)));
        assert_eq!(caret("0.2.3"), range((0, 2, 3), (0, 3, 0)));
        assert_eq!(caret("0.0.3"), range((0, 0, 3), (0, 0, 4)));
        assert_eq!(wildcard("1.*"), range((1, 0, 0), (2, 0, 0)));
        assert_eq!(wildcard("1.2.*"), range((1, 2, 0), (1, 3, 0)));
        assert_eq!(wildcard("1.*.*"), range((1, 0, 0), (2, 0, 0)));
        assert_eq!(wildcard("1.2.3"), range((1, 2, 3), (1, 2, 4)));
        assert_eq!(wildcard("*"), None);
        assert_eq!(wildcard("x.*"), None);
        assert!(caret("1.2.3").unwrap().contains((1, 9, 0)));
        assert!(!caret("1.2.3").unwrap().contains((2, 0, 0)));
    }
}
