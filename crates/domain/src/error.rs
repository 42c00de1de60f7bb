//! Error types shared by every aggregate: field validation failures, the one error every resource's
//! ports and use cases return, and opaque infrastructure faults.

use std::fmt;

/// A failure of the infrastructure behind a port (database down, broken invariant in storage).
///
/// The domain cannot act on it, only report it; the HTTP layer turns it into a logged 500, or a
/// 503 when the storage could not be reached at all or the node is too busy (the client may
/// retry those as they are).
#[derive(Debug)]
pub struct Unexpected {
    cause: Box<dyn std::error::Error + Send + Sync + 'static>,
    unavailable: bool,
    busy: bool,
}

impl Unexpected {
    /// Wraps any error coming out of an adapter.
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        Self {
            cause: error.into(),
            unavailable: false,
            busy: false,
        }
    }

    /// The storage could not be reached (refused, timed out, connection lost, going away or
    /// read-only). The same request may succeed once it is back; a write that met it may have
    /// been kept (a commit whose confirmation was lost), which capture's retries allow for
    /// (docs/operations.md, "During a failover").
    pub fn unavailable(
        error: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        Self {
            cause: error.into(),
            unavailable: true,
            busy: false,
        }
    }

    /// The node is doing as much of what the request needs as it may at once (its evaluation
    /// slots stayed taken): nothing was done, and the same request may succeed shortly.
    pub fn busy(error: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        Self {
            cause: error.into(),
            unavailable: false,
            busy: true,
        }
    }

    pub fn is_unavailable(&self) -> bool {
        self.unavailable
    }

    pub fn is_busy(&self) -> bool {
        self.busy
    }
}

/// Transparent: it reads as its cause, so logs show the adapter's chain of contexts once.
impl fmt::Display for Unexpected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.cause.fmt(f)
    }
}

impl std::error::Error for Unexpected {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.source()
    }
}

/// What a service answers for a row the caller cannot see: absent is `NotFound`.
pub(crate) trait OrNotFound<T> {
    fn or_not_found(self) -> Result<T, DomainError>;
}

impl<T> OrNotFound<T> for Option<T> {
    fn or_not_found(self) -> Result<T, DomainError> {
        self.ok_or(DomainError::NotFound)
    }
}

/// Why a resource's use case (or a port behind it) failed. One enum for every aggregate, so the
/// HTTP layer maps each case to a status in one place.
#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    /// The request breaks a rule; nothing was written.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// No such resource in this tenant (a resource of another tenant looks the same).
    #[error("Not found.")]
    NotFound,
    /// The caller may see the resource but not do this to it; the message says why.
    #[error("{0}")]
    Forbidden(String),
    /// A server this one depends on (a plugin's upstream host) failed; the message says which
    /// and why, without secrets.
    #[error("{0}")]
    Upstream(String),
    /// Storage refused a write that breaks the aggregate's uniqueness rule (a taken survey name,
    /// a taken flag key). Only repositories return it; the service turns it into the
    /// validation error its clients expect, with `DomainError::conflict_as`.
    #[error("the write conflicts with a stored row")]
    Conflict,
    #[error(transparent)]
    Unexpected(#[from] Unexpected),
}

impl DomainError {
    /// A storage conflict as the validation error the use case reports; other errors unchanged.
    pub fn conflict_as(self, error: impl FnOnce() -> ValidationError) -> Self {
        match self {
            Self::Conflict => Self::Invalid(error()),
            other => other,
        }
    }
}

/// Machine-readable reason of a validation failure, spelled as PostHog's API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidationCode {
    Required,
    Blank,
    MaxLength,
    MinValue,
    MaxValue,
    InvalidChoice,
    Invalid,
    Unique,
    Null,
    NullCharactersNotAllowed,
    InvalidKey,
    InvalidOperator,
    UnsupportedOperator,
    InvalidValue,
    InvalidDate,
    CohortDoesNotExist,
}

impl ValidationCode {
    /// The wire form (`invalid` is rewritten to `invalid_input`, as drf-exceptions-hog does).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Blank => "blank",
            Self::MaxLength => "max_length",
            Self::MinValue => "min_value",
            Self::MaxValue => "max_value",
            Self::InvalidChoice => "invalid_choice",
            Self::Invalid => "invalid_input",
            Self::Unique => "unique",
            Self::Null => "null",
            Self::InvalidKey => "invalid_key",
            Self::InvalidOperator => "invalid_operator",
            Self::UnsupportedOperator => "unsupported_operator",
            Self::InvalidValue => "invalid_value",
            Self::InvalidDate => "invalid_date",
            Self::CohortDoesNotExist => "cohort_does_not_exist",
            Self::NullCharactersNotAllowed => "null_characters_not_allowed",
        }
    }
}

/// One rejected input: what was wrong (`detail`), why (`code`) and which field (`attr`, if any).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ValidationError {
    pub code: ValidationCode,
    pub detail: String,
    pub attr: Option<String>,
}

impl ValidationError {
    /// An error about one field.
    pub fn field(attr: impl Into<String>, code: ValidationCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: detail.into(),
            attr: Some(attr.into()),
        }
    }

    /// An error about the request as a whole (`attr: null`).
    pub fn general(code: ValidationCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: detail.into(),
            attr: None,
        }
    }

    /// `This field is required.` for `attr`.
    pub fn required(attr: impl Into<String>) -> Self {
        Self::field(attr, ValidationCode::Required, "This field is required.")
    }

    /// A broken rule about `attr` (code `invalid_input`), the most common kind.
    pub fn invalid(attr: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::field(attr, ValidationCode::Invalid, detail)
    }

    /// DRF's `blank` error for `attr`.
    pub fn blank(attr: impl Into<String>) -> Self {
        Self::field(attr, ValidationCode::Blank, "This field may not be blank.")
    }

    /// DRF's `invalid_choice` error for `attr`, naming what was sent.
    pub fn invalid_choice(attr: impl Into<String>, sent: &str) -> Self {
        let detail = format!("\"{sent}\" is not a valid choice.");
        Self::field(attr, ValidationCode::InvalidChoice, detail)
    }

    /// DRF's `max_length` error for `attr`.
    pub fn too_long(attr: impl Into<String>, max_chars: usize) -> Self {
        let detail = format!("Ensure this field has no more than {max_chars} characters.");
        Self::field(attr, ValidationCode::MaxLength, detail)
    }

    /// An `invalid_input` error about the request as a whole.
    pub fn invalid_input(detail: impl Into<String>) -> Self {
        Self::general(ValidationCode::Invalid, detail)
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.attr {
            Some(attr) => write!(f, "{attr}: {}", self.detail),
            None => f.write_str(&self.detail),
        }
    }
}
