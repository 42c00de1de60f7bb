//! `Operator`: how a property filter compares, by the names PostHog's SDKs evaluate.

use serde::{Serialize, Serializer};

use crate::error::{ValidationCode, ValidationError};

/// How a property filter compares: every operator posthog-python and posthog-node evaluate
/// locally, and those PostHog's flag service adds (`icontains_multi`, `in`, `not_in`,
/// `flag_evaluates_to`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operator {
    Exact,
    IsNot,
    IContains,
    NotIContains,
    IContainsMulti,
    NotIContainsMulti,
    StartsWith,
    NotStartsWith,
    EndsWith,
    NotEndsWith,
    Regex,
    NotRegex,
    Gt,
    Gte,
    Lt,
    Lte,
    IsSet,
    IsNotSet,
    IsDateBefore,
    IsDateAfter,
    IsDateExact,
    SemverEq,
    SemverNeq,
    SemverGt,
    SemverGte,
    SemverLt,
    SemverLte,
    SemverTilde,
    SemverCaret,
    SemverWildcard,
    /// A cohort's membership (cohort filters).
    In,
    NotIn,
    /// A flag's answer (flag filters).
    FlagEvaluatesTo,
    /// Another name, stored before operators were checked when written: it matches no one.
    Other(String),
}

impl Operator {
    /// The operators by their names on the wire: what a client may send and what the API's
    /// schema lists.
    pub const NAMED: [(&'static str, Self); 33] = [
        ("exact", Self::Exact),
        ("is_not", Self::IsNot),
        ("icontains", Self::IContains),
        ("not_icontains", Self::NotIContains),
        ("icontains_multi", Self::IContainsMulti),
        ("not_icontains_multi", Self::NotIContainsMulti),
        ("starts_with", Self::StartsWith),
        ("not_starts_with", Self::NotStartsWith),
        ("ends_with", Self::EndsWith),
        ("not_ends_with", Self::NotEndsWith),
        ("regex", Self::Regex),
        ("not_regex", Self::NotRegex),
        ("gt", Self::Gt),
        ("gte", Self::Gte),
        ("lt", Self::Lt),
        ("lte", Self::Lte),
        ("is_set", Self::IsSet),
        ("is_not_set", Self::IsNotSet),
        ("is_date_before", Self::IsDateBefore),
        ("is_date_after", Self::IsDateAfter),
        ("is_date_exact", Self::IsDateExact),
        ("semver_eq", Self::SemverEq),
        ("semver_neq", Self::SemverNeq),
        ("semver_gt", Self::SemverGt),
        ("semver_gte", Self::SemverGte),
        ("semver_lt", Self::SemverLt),
        ("semver_lte", Self::SemverLte),
        ("semver_tilde", Self::SemverTilde),
        ("semver_caret", Self::SemverCaret),
        ("semver_wildcard", Self::SemverWildcard),
        ("in", Self::In),
        ("not_in", Self::NotIn),
        ("flag_evaluates_to", Self::FlagEvaluatesTo),
    ];

    /// Names PostHog rewrites when a flag is written (`min` is stored as `gte`).
    const ALIASES: [(&'static str, Self); 2] = [("min", Self::Gte), ("max", Self::Lte)];

    /// Operators PostHog knows that no flag evaluates: refused with their own message.
    const UNSUPPORTED: [&'static str; 3] = ["between", "not_between", "is_cleaned_path_exact"];

    /// The operator a client sent, as PostHog's flag serializer takes it.
    ///
    /// # Errors
    /// A name no flag evaluates, with PostHog's message and code.
    pub fn parse(name: &str) -> Result<Self, ValidationError> {
        if let Some((_, operator)) = Self::NAMED
            .iter()
            .chain(&Self::ALIASES)
            .find(|(known, _)| *known == name)
        {
            return Ok(operator.clone());
        }
        Err(if Self::UNSUPPORTED.contains(&name) {
            ValidationError::field(
                "filters",
                ValidationCode::UnsupportedOperator,
                format!("Unsupported operator for feature flags: {name}"),
            )
        } else {
            ValidationError::field(
                "filters",
                ValidationCode::InvalidOperator,
                format!("Invalid operator: {name}"),
            )
        })
    }

    /// A stored operator: a name not evaluated is kept, and matches no one.
    pub fn stored(name: String) -> Self {
        Self::parse(&name).unwrap_or(Self::Other(name))
    }

    /// Its name on the wire.
    pub fn name(&self) -> &str {
        match self {
            Self::Other(name) => name,
            known => Self::NAMED
                .iter()
                .find(|(_, operator)| operator == known)
                .map_or("", |(name, _)| name),
        }
    }

    /// Whether it compares versions, so its value must be one.
    pub fn is_semver(&self) -> bool {
        matches!(
            self,
            Self::SemverEq
                | Self::SemverNeq
                | Self::SemverGt
                | Self::SemverGte
                | Self::SemverLt
                | Self::SemverLte
                | Self::SemverTilde
                | Self::SemverCaret
                | Self::SemverWildcard
        )
    }
}

impl Serialize for Operator {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}
