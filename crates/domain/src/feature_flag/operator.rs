//! `Operator`: how a property filter compares, as PostHog's flag service reads `operator`.

use serde::{Serialize, Serializer};

/// How a property filter compares, as PostHog's flag service reads `operator`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operator {
    Exact,
    IsNot,
    IContains,
    NotIContains,
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
    /// An operator evaluation does not know, kept as sent: it matches no one.
    Other(String),
}

impl Operator {
    /// The operators evaluation applies, by their names on the wire: what a client may send
    /// (another name is kept, and matches no one) and what the API's schema lists.
    pub const NAMED: [(&'static str, Self); 15] = [
        ("exact", Self::Exact),
        ("is_not", Self::IsNot),
        ("icontains", Self::IContains),
        ("not_icontains", Self::NotIContains),
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
    ];
}

impl From<String> for Operator {
    fn from(name: String) -> Self {
        Self::NAMED
            .iter()
            .find(|(known, _)| *known == name)
            .map_or(Self::Other(name), |(_, operator)| operator.clone())
    }
}

impl Operator {
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
}

impl Serialize for Operator {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}
