//! One property filter of a flag's condition set against a person's properties, with the rules
//! of PostHog's flag service (`rust/feature-flags`, `property_matching.rs`, evaluating with all
//! properties known): a filter that cannot be applied (bad regex, a number that is not one, an
//! unknown operator or filter type) does not match; it is never an error.

use std::borrow::Cow;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, Utc};
use serde_json::{Map, Value};

use crate::feature_flag::pattern::Patterns;
use crate::feature_flag::semver;
use crate::feature_flag::{GROUP_FILTER_TYPE, Operator, PropertyFilter};

/// Whether `properties` (a person's, or a group's in a flag aggregated by group) satisfy one
/// filter of a condition set, `now` anchoring relative dates such as `-7d` and `patterns`
/// compiling regex filters.
///
/// `person` filters (or legacy ones without a type) and `group` ones are evaluated against the
/// properties given, as the SDKs do (writes keep each kind in conditions of its own
/// aggregation); cohort and flag filters are evaluated by the caller, other kinds never match.
pub fn matches(
    filter: &PropertyFilter,
    properties: &Map<String, Value>,
    now: DateTime<Utc>,
    patterns: &dyn Patterns,
) -> bool {
    if !filter.about_persons() && filter.kind.as_deref() != Some(GROUP_FILTER_TYPE) {
        return false;
    }
    let Some(key) = filter.key.as_deref() else {
        return false;
    };
    let operator = filter.operator();
    let actual = properties.get(key);
    match operator {
        Operator::IsSet => return actual.is_some(),
        Operator::IsNotSet => return actual.is_none(),
        _ => {}
    }
    let Some(expected) = &filter.value else {
        return false;
    };
    match operator {
        Operator::Exact => actual.is_some_and(|actual| exact(expected, actual)),
        Operator::IsNot => actual.is_none_or(|actual| !exact(expected, actual)),
        Operator::IContains => actual.is_some_and(|actual| icontains(actual, expected)),
        Operator::NotIContains => actual.is_none_or(|actual| !icontains(actual, expected)),
        Operator::Regex => {
            actual.is_some_and(|actual| regex_search(patterns, expected, actual) == Some(true))
        }
        Operator::NotRegex => {
            actual.is_none_or(|actual| regex_search(patterns, expected, actual) == Some(false))
        }
        Operator::Gt | Operator::Gte | Operator::Lt | Operator::Lte => {
            actual.is_some_and(|actual| compare(&operator, actual, expected))
        }
        Operator::IsDateBefore | Operator::IsDateAfter | Operator::IsDateExact => {
            actual.is_some_and(|actual| compare_dates(&operator, actual, expected, now))
        }
        Operator::IContainsMulti => actual.is_some_and(|actual| icontains_any(actual, expected)),
        Operator::NotIContainsMulti => actual.is_none_or(|actual| !icontains_any(actual, expected)),
        Operator::StartsWith | Operator::EndsWith => {
            actual.is_some_and(|actual| !actual.is_null() && affix(&operator, actual, expected))
        }
        Operator::NotStartsWith | Operator::NotEndsWith => {
            actual.is_none_or(|actual| !actual.is_null() && !affix(&operator, actual, expected))
        }
        Operator::SemverEq
        | Operator::SemverNeq
        | Operator::SemverGt
        | Operator::SemverGte
        | Operator::SemverLt
        | Operator::SemverLte
        | Operator::SemverTilde
        | Operator::SemverCaret
        | Operator::SemverWildcard => {
            actual.is_some_and(|actual| compare_versions(&operator, actual, expected))
        }
        // Cohort and flag filters, which match no one here, and names no one evaluates.
        Operator::In | Operator::NotIn | Operator::FlagEvaluatesTo | Operator::Other(_) => false,
        Operator::IsSet | Operator::IsNotSet => false,
    }
}

/// The pattern a `regex` or `not_regex` filter compiles, as [`matches`] reads it; `None` for
/// other filters. Lets a snapshot compile every pattern of its flags once, up front.
pub fn regex_pattern(filter: &PropertyFilter) -> Option<String> {
    match filter.operator() {
        Operator::Regex | Operator::NotRegex => {
            filter.value.as_ref().map(|value| text(value).into_owned())
        }
        _ => None,
    }
}

/// A value as text: strings as they are (borrowed: every `/flags` request compares about as
/// many as its flags have filters), anything else as compact JSON (`true`, `1.5`).
fn text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => Cow::Borrowed(text),
        other => Cow::Owned(other.to_string()),
    }
}

/// `a.to_lowercase() == b.to_lowercase()`, without lowercasing copies when both are ASCII.
fn eq_lowercased(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        a.eq_ignore_ascii_case(b)
    } else {
        a.to_lowercase() == b.to_lowercase()
    }
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        other => text(other).trim().parse::<f64>().ok(),
    }
}

/// `exact`: case-insensitive text equality; a list matches when any item does; a filter of
/// booleans (`true`, `"False"`) compares truthiness, so `"true"` and `true` are one value.
fn exact(expected: &Value, actual: &Value) -> bool {
    if is_boolean_like(expected) {
        return is_truthy(expected) == is_truthy(actual);
    }
    let actual = text(actual);
    match expected {
        Value::Array(items) => items.iter().any(|item| eq_lowercased(&text(item), &actual)),
        single => eq_lowercased(&text(single), &actual),
    }
}

fn is_boolean_like(value: &Value) -> bool {
    match value {
        Value::Bool(_) => true,
        Value::String(text) => eq_lowercased(text, "true") || eq_lowercased(text, "false"),
        Value::Array(items) => items.iter().all(is_boolean_like),
        _ => false,
    }
}

fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Bool(flag) => *flag,
        Value::String(text) => text.eq_ignore_ascii_case("true"),
        Value::Array(items) => items.iter().all(is_truthy),
        _ => false,
    }
}

/// Whether `expected` is in `actual`, ASCII letters in either case (PostHog's `icontains`).
/// `str::contains` stays linear in the text a `/flags` body sends; lowercased copies are made
/// only when either side has an uppercase ASCII letter.
fn icontains(actual: &Value, expected: &Value) -> bool {
    let (haystack, needle) = (text(actual), text(expected));
    let has_uppercase = |text: &str| text.bytes().any(|byte| byte.is_ascii_uppercase());
    if has_uppercase(&haystack) || has_uppercase(&needle) {
        haystack
            .to_ascii_lowercase()
            .contains(&needle.to_ascii_lowercase())
    } else {
        haystack.contains(&*needle)
    }
}

/// `icontains_multi`: whether any of the filter's values (one, when it is not a list) is in
/// the person's.
fn icontains_any(actual: &Value, expected: &Value) -> bool {
    match expected {
        Value::Array(items) => items.iter().any(|item| icontains(actual, item)),
        single => icontains(actual, single),
    }
}

/// `starts_with` and `ends_with` (and their negations, before negating), ASCII letters in
/// either case, as the SDKs compare: only the affix's length of the person's text is looked at,
/// and nothing is copied.
fn affix(operator: &Operator, actual: &Value, expected: &Value) -> bool {
    let (text, affix) = (text(actual), text(expected));
    let (text, affix) = (text.as_bytes(), affix.as_bytes());
    let Some(rest) = text.len().checked_sub(affix.len()) else {
        return false;
    };
    let part = match operator {
        Operator::StartsWith | Operator::NotStartsWith => &text[..affix.len()],
        _ => &text[rest..],
    };
    part.eq_ignore_ascii_case(affix)
}

/// The `semver_*` operators, as the SDKs compare (`semver.rs`): a person's value or a filter's
/// that is not a version matches neither way.
fn compare_versions(operator: &Operator, actual: &Value, expected: &Value) -> bool {
    let Some(version) = semver::parse(&text(actual)) else {
        return false;
    };
    let expected = text(expected);
    let range = match operator {
        Operator::SemverTilde => semver::tilde(&expected),
        Operator::SemverCaret => semver::caret(&expected),
        Operator::SemverWildcard => semver::wildcard(&expected),
        _ => {
            let Some(expected) = semver::parse(&expected) else {
                return false;
            };
            return match operator {
                Operator::SemverEq => version == expected,
                Operator::SemverNeq => version != expected,
                Operator::SemverGt => version > expected,
                Operator::SemverGte => version >= expected,
                Operator::SemverLt => version < expected,
                _ => version <= expected,
            };
        }
    };
    range.is_some_and(|range| range.contains(version))
}

/// Whether the pattern finds a match anywhere in the value; `None` for a pattern that does not
/// compile (neither `regex` nor `not_regex` matches then).
fn regex_search(patterns: &dyn Patterns, pattern: &Value, actual: &Value) -> Option<bool> {
    let regex = patterns.compiled(&text(pattern))?;
    Some(regex.is_match(&text(actual)))
}

/// `gt`, `gte`, `lt`, `lte`: both sides as numbers (numeric strings count); anything else does
/// not match.
fn compare(operator: &Operator, actual: &Value, expected: &Value) -> bool {
    let (Some(actual), Some(expected)) = (number(actual), number(expected)) else {
        return false;
    };
    match operator {
        Operator::Gt => actual > expected,
        Operator::Gte => actual >= expected,
        Operator::Lt => actual < expected,
        _ => actual <= expected,
    }
}

fn compare_dates(
    operator: &Operator,
    actual: &Value,
    expected: &Value,
    now: DateTime<Utc>,
) -> bool {
    let Some(actual) = person_date(actual, now) else {
        return false;
    };
    let Some(expected) = expected.as_str().and_then(|text| parse_date(text, now)) else {
        return false;
    };
    match operator {
        Operator::IsDateBefore => actual < expected,
        Operator::IsDateAfter => actual > expected,
        _ => actual == expected,
    }
}

/// A person's date property: a Unix timestamp (number or numeric text) or a date text.
fn person_date(value: &Value, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match value {
        Value::String(text) => match text.parse::<f64>() {
            Ok(seconds) => timestamp(seconds),
            Err(_) => parse_date(text, now),
        },
        Value::Number(number) => timestamp(number.as_f64()?),
        _ => None,
    }
}

fn timestamp(seconds: f64) -> Option<DateTime<Utc>> {
    if !seconds.is_finite() {
        return None;
    }
    let whole = seconds.floor();
    let nanos = ((seconds - whole) * 1_000_000_000.0).round() as u32;
    DateTime::from_timestamp(whole as i64, nanos.min(999_999_999))
}

/// A date as flags write them: relative (`-7d`, `3h`, `-1m`, `2y`, counted back from `now`),
/// RFC 3339, a bare `YYYY-MM-DD` (midnight) or a date and time without an offset, all in UTC.
pub fn parse_date(text: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Some(relative) = relative_date(text, now) {
        return relative;
    }
    if let Ok(date) = DateTime::parse_from_rfc3339(text) {
        return Some(date.with_timezone(&Utc));
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Some(date.and_hms_opt(0, 0, 0)?.and_utc());
    }
    [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ]
    .into_iter()
    .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
    .map(|naive| naive.and_utc())
}

/// `Some(None)` for text shaped like a relative date that cannot be one (a count of 10,000 or
/// more, as PostHog refuses); `None` for text of another shape.
fn relative_date(text: &str, now: DateTime<Utc>) -> Option<Option<DateTime<Utc>>> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let unit = digits.chars().last()?;
    let count = &digits[..digits.len() - unit.len_utf8()];
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !matches!(unit, 'h' | 'd' | 'w' | 'm' | 'y') {
        return None;
    }
    let Ok(count) = count.parse::<u32>() else {
        return Some(None);
    };
    if count >= 10_000 {
        return Some(None);
    }
    let count_i64 = i64::from(count);
    Some(match unit {
        'h' => now.checked_sub_signed(Duration::hours(count_i64)),
        'd' => now.checked_sub_signed(Duration::days(count_i64)),
        'w' => now.checked_sub_signed(Duration::weeks(count_i64)),
        'm' => months_back(now, count),
        _ => months_back(now, count.checked_mul(12)?),
    })
}

/// `now` moved back by calendar months, the day clamped to the target month's last day (as
/// `relativedelta` does).
fn months_back(now: DateTime<Utc>, months: u32) -> Option<DateTime<Utc>> {
    let index = i64::from(now.year()) * 12 + i64::from(now.month0()) - i64::from(months);
    let year = i32::try_from(index.div_euclid(12)).ok()?;
    let month = u32::try_from(index.rem_euclid(12)).ok()? + 1;
    let last_day = (28..=31)
        .rev()
        .find(|day| NaiveDate::from_ymd_opt(year, month, *day).is_some())?;
    let date = NaiveDate::from_ymd_opt(year, month, now.day().min(last_day))?;
    Some(date.and_time(now.time()).and_utc())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;
    use crate::testing::CompiledEachTime;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2020, 3, 31, 12, 0, 0).unwrap()
    }

    /// The comparisons made without lowercased copies answer as the copies did.
    #[test]
    fn case_insensitive_comparisons_agree_with_lowercased_copies() {
        // The empty text first; then case pairs, ASCII and not (final sigma, dotted I, Kelvin).
        let texts = "|a|A|Pro|PRO|pro |@Example.COM|x@example.com|true|TRUE|Straße|STRASSE|ΟΔΟΣ|οδος|οδοσ|İ|i̇|K|k|é|É";
        for a in texts.split('|') {
            for b in texts.split('|') {
                let (left, right) = (json!(a), json!(b));
                assert_eq!(
                    eq_lowercased(a, b),
                    a.to_lowercase() == b.to_lowercase(),
                    "{a:?} = {b:?}"
                );
                assert_eq!(
                    icontains(&left, &right),
                    a.to_ascii_lowercase().contains(&b.to_ascii_lowercase()),
                    "{a:?} icontains {b:?}"
                );
            }
        }
    }

    fn check(filter: Value, properties: Value) -> bool {
        PropertyFilter::read(filter).is_ok_and(|filter| {
            matches(
                &filter,
                properties.as_object().unwrap(),
                now(),
                &CompiledEachTime,
            )
        })
    }

    fn person(key: &str, operator: &str, value: Value) -> Value {
        json!({"key": key, "operator": operator, "value": value, "type": "person"})
    }

    #[test]
    fn each_operator_as_posthog_applies_it() {
        let cases = [
            // (filter, properties, expected)
            (
                person("url", "starts_with", json!("HTTPS://")),
                json!({"url": "https://x"}),
                true,
            ),
            (
                person("url", "starts_with", json!("http://")),
                json!({"url": "https://x"}),
                false,
            ),
            (
                person("url", "starts_with", json!("https")),
                json!({"url": null}),
                false,
            ),
            (
                person("url", "not_starts_with", json!("http://")),
                json!({"url": "https://x"}),
                true,
            ),
            (
                person("url", "not_starts_with", json!("http")),
                json!({"url": null}),
                false,
            ),
            (
                person("email", "ends_with", json!("@Example.com")),
                json!({"email": "a@example.COM"}),
                true,
            ),
            (
                person("email", "not_ends_with", json!(".org")),
                json!({"email": "a@b.com"}),
                true,
            ),
            (person("n", "ends_with", json!(5)), json!({"n": 15}), true),
            (
                person("tags", "icontains_multi", json!(["VIP", "beta"])),
                json!({"tags": "beta-tester"}),
                true,
            ),
            (
                person("tags", "icontains_multi", json!(["vip"])),
                json!({"tags": "free"}),
                false,
            ),
            (
                person("tags", "not_icontains_multi", json!(["vip"])),
                json!({"tags": "free"}),
                true,
            ),
            (
                person("v", "semver_eq", json!("1.2.3")),
                json!({"v": "v1.2.3-rc.1"}),
                true,
            ),
            (
                person("v", "semver_neq", json!("1.2.3")),
                json!({"v": "1.2.4"}),
                true,
            ),
            (
                person("v", "semver_gt", json!("1.2.3")),
                json!({"v": "1.10.0"}),
                true,
            ),
            (
                person("v", "semver_gte", json!("1.2.0")),
                json!({"v": "1.2"}),
                true,
            ),
            (
                person("v", "semver_lt", json!("2.0.0")),
                json!({"v": "10.0.0"}),
                false,
            ),
            (
                person("v", "semver_lte", json!("1.2.3")),
                json!({"v": "1.2.3+build"}),
                true,
            ),
            (
                person("v", "semver_tilde", json!("1.2.3")),
                json!({"v": "1.2.9"}),
                true,
            ),
            (
                person("v", "semver_tilde", json!("1.2.3")),
                json!({"v": "1.3.0"}),
                false,
            ),
            (
                person("v", "semver_caret", json!("0.2.3")),
                json!({"v": "0.2.9"}),
                true,
            ),
            (
                person("v", "semver_caret", json!("0.2.3")),
                json!({"v": "0.3.0"}),
                false,
            ),
            (
                person("v", "semver_wildcard", json!("1.2.*")),
                json!({"v": "1.2.77"}),
                true,
            ),
            (
                person("v", "semver_wildcard", json!("1.2.*")),
                json!({"v": "1.3.0"}),
                false,
            ),
            (
                person("v", "semver_gt", json!("1.0.0")),
                json!({"v": "01.2.0"}),
                false,
            ),
            (
                person("v", "semver_gt", json!("1.0.0")),
                json!({"v": 2}),
                true,
            ),
            (
                person("v", "semver_eq", json!("1.0.0")),
                json!({"v": null}),
                false,
            ),
            (
                person("v", "semver_neq", json!("1.0.0")),
                json!({"v": "x"}),
                false,
            ),
            (
                person("email", "exact", json!("A@B.com")),
                json!({"email": "a@b.com"}),
                true,
            ),
            (
                person("email", "exact", json!(["x", "a@b.com"])),
                json!({"email": "A@B.COM"}),
                true,
            ),
            (
                person("email", "exact", json!(["x", "y"])),
                json!({"email": "a@b.com"}),
                false,
            ),
            (person("n", "exact", json!("5")), json!({"n": 5}), true),
            (person("n", "exact", json!(["5", 6])), json!({"n": 6}), true),
            (
                person("beta", "exact", json!(["true"])),
                json!({"beta": true}),
                true,
            ),
            (
                person("beta", "exact", json!("True")),
                json!({"beta": "true"}),
                true,
            ),
            (
                person("beta", "exact", json!(false)),
                json!({"beta": true}),
                false,
            ),
            (
                person("email", "is_not", json!("a@b.com")),
                json!({"email": "c@d.com"}),
                true,
            ),
            (
                person("email", "is_not", json!("A@b.com")),
                json!({"email": "a@b.com"}),
                false,
            ),
            (
                person("email", "icontains", json!("EXAMPLE")),
                json!({"email": "x@example.com"}),
                true,
            ),
            (
                person("email", "icontains", json!("other")),
                json!({"email": "x@example.com"}),
                false,
            ),
            (
                person("email", "not_icontains", json!("other")),
                json!({"email": "x@example.com"}),
                true,
            ),
            (
                person("email", "not_icontains", json!("EXAMPLE")),
                json!({"email": "x@example.com"}),
                false,
            ),
            (
                person("email", "regex", json!(r"@example\.com$")),
                json!({"email": "x@example.com"}),
                true,
            ),
            (
                person("email", "regex", json!(r"^y")),
                json!({"email": "x@example.com"}),
                false,
            ),
            (
                person("email", "not_regex", json!(r"^y")),
                json!({"email": "x@example.com"}),
                true,
            ),
            (
                person("email", "not_regex", json!(r"^x")),
                json!({"email": "x@example.com"}),
                false,
            ),
            (person("age", "gt", json!(18)), json!({"age": 19}), true),
            (
                person("age", "gt", json!("18")),
                json!({"age": "18"}),
                false,
            ),
            (
                person("age", "gte", json!("18")),
                json!({"age": "18"}),
                true,
            ),
            (person("age", "lt", json!(18)), json!({"age": "9"}), true),
            (person("age", "lt", json!(18)), json!({"age": 18.5}), false),
            (
                person("age", "lte", json!(18.5)),
                json!({"age": 18.5}),
                true,
            ),
            (person("age", "gt", json!(1)), json!({"age": "old"}), false),
            (person("age", "gt", json!("x")), json!({"age": 3}), false),
            (person("age", "gt", json!(1)), json!({"age": null}), false),
            (
                person("plan", "is_set", json!("is_set")),
                json!({"plan": null}),
                true,
            ),
            (person("plan", "is_set", json!("is_set")), json!({}), false),
            (
                person("plan", "is_not_set", json!("is_not_set")),
                json!({}),
                true,
            ),
            (
                person("plan", "is_not_set", json!("is_not_set")),
                json!({"plan": "x"}),
                false,
            ),
            (
                person("seen", "is_date_before", json!("2020-01-01")),
                json!({"seen": "2019-12-31T23:59:59Z"}),
                true,
            ),
            (
                person("seen", "is_date_before", json!("2020-01-01")),
                json!({"seen": "2020-01-01"}),
                false,
            ),
            (
                person("seen", "is_date_after", json!("2020-01-01T00:00:00+02:00")),
                json!({"seen": "2019-12-31T23:00:00Z"}),
                true,
            ),
            (
                person("seen", "is_date_after", json!("-7d")),
                json!({"seen": "2020-03-30"}),
                true,
            ),
            (
                person("seen", "is_date_after", json!("-7d")),
                json!({"seen": "2020-03-20"}),
                false,
            ),
            (
                person("seen", "is_date_before", json!("-1m")),
                json!({"seen": "2020-02-28"}),
                true,
            ),
            (
                person("seen", "is_date_before", json!("-1m")),
                json!({"seen": "2020-03-01"}),
                false,
            ),
            (
                person("seen", "is_date_after", json!("2020-01-01")),
                json!({"seen": 1_600_000_000}),
                true,
            ),
            (
                person("seen", "is_date_after", json!("2020-01-01")),
                json!({"seen": "1600000000"}),
                true,
            ),
            (
                person("seen", "is_date_after", json!("someday")),
                json!({"seen": "2020-03-30"}),
                false,
            ),
            (
                person("seen", "is_date_after", json!("2020-01-01")),
                json!({"seen": "yesterday"}),
                false,
            ),
            (
                person("seen", "is_date_after", json!("-10000d")),
                json!({"seen": "2020-03-30"}),
                false,
            ),
        ];
        for (index, (filter, properties, expected)) in cases.into_iter().enumerate() {
            assert_eq!(
                check(filter.clone(), properties.clone()),
                expected,
                "case {index}: {filter} on {properties}"
            );
        }
    }

    #[test]
    fn a_missing_property_matches_only_the_negative_operators() {
        let matching = ["is_not", "not_icontains", "not_regex", "is_not_set"];
        for operator in [
            "exact",
            "is_not",
            "icontains",
            "not_icontains",
            "regex",
            "not_regex",
            "gt",
            "gte",
            "lt",
            "lte",
            "is_set",
            "is_not_set",
            "is_date_before",
            "is_date_after",
        ] {
            assert_eq!(
                check(
                    person("absent", operator, json!("1")),
                    json!({"other": "1"})
                ),
                matching.contains(&operator),
                "{operator}"
            );
        }
    }

    #[test]
    fn a_bad_regex_matches_neither_way() {
        let properties = json!({"email": "x@example.com"});
        assert!(!check(
            person("email", "regex", json!("(unclosed")),
            properties.clone()
        ));
        assert!(!check(
            person("email", "not_regex", json!("(unclosed")),
            properties.clone()
        ));
        // Look-around is not in Rust's regex syntax: refused, never a panic.
        assert!(!check(person("email", "regex", json!("(?=x)")), properties));
    }

    #[test]
    fn filters_other_than_person_ones_never_match() {
        let properties = json!({"plan": "pro"});
        assert!(check(
            json!({"key": "plan", "value": "pro"}),
            properties.clone()
        ));
        for kind in ["cohort", "flag", "event"] {
            let filter = json!({"key": "plan", "value": "pro", "operator": "exact", "type": kind});
            assert!(!check(filter, properties.clone()), "{kind}");
        }
        // A group filter reads the properties it is given: a group's, in a group flag.
        let group = json!({"key": "plan", "value": "pro", "type": "group", "group_type_index": 0});
        assert!(check(group, properties.clone()));
        assert!(!check(
            person("plan", "semver_gt", json!("1.0.0")),
            properties.clone()
        ));
        assert!(!check(
            person("plan", "exact", Value::Null),
            properties.clone()
        ));
        assert!(!check(json!("plan"), properties));
    }

    #[test]
    fn relative_dates_count_back_from_now() {
        assert_eq!(
            parse_date("-1d", now()),
            Some(Utc.with_ymd_and_hms(2020, 3, 30, 12, 0, 0).unwrap())
        );
        assert_eq!(
            parse_date("2h", now()),
            Some(Utc.with_ymd_and_hms(2020, 3, 31, 10, 0, 0).unwrap())
        );
        assert_eq!(
            parse_date("-1w", now()),
            Some(Utc.with_ymd_and_hms(2020, 3, 24, 12, 0, 0).unwrap())
        );
        assert_eq!(
            parse_date("-1m", now()),
            Some(Utc.with_ymd_and_hms(2020, 2, 29, 12, 0, 0).unwrap())
        );
        assert_eq!(
            parse_date("-13m", now()),
            Some(Utc.with_ymd_and_hms(2019, 2, 28, 12, 0, 0).unwrap())
        );
        assert_eq!(
            parse_date("-1y", now()),
            Some(Utc.with_ymd_and_hms(2019, 3, 31, 12, 0, 0).unwrap())
        );
        assert_eq!(parse_date("-1s", now()), None);
        assert_eq!(parse_date("-d", now()), None);
        assert_eq!(parse_date("99999999999999999999d", now()), None);
    }
}
