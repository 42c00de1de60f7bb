//! `Patch<T>`: one field of a partial update, where "not sent", "sent as null" and "sent with a
//! value" mean three different things.

/// One field of a partial update: not sent, sent as `null`, or sent with a value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Patch<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Patch<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Self::Absent)
    }

    /// The new value of a nullable field: `current` when absent.
    pub fn apply(self, current: Option<T>) -> Option<T> {
        match self {
            Self::Absent => current,
            Self::Null => None,
            Self::Value(value) => Some(value),
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Self::Absent => Patch::Absent,
            Self::Null => Patch::Null,
            Self::Value(value) => Patch::Value(f(value)),
        }
    }

    /// Like `map`, for a conversion that can fail.
    ///
    /// # Errors
    /// The conversion's error.
    pub fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Patch<U>, E> {
        Ok(match self {
            Self::Absent => Patch::Absent,
            Self::Null => Patch::Null,
            Self::Value(value) => Patch::Value(f(value)?),
        })
    }

    /// The value, if one was sent.
    pub fn value(self) -> Option<T> {
        match self {
            Self::Value(value) => Some(value),
            _ => None,
        }
    }

    /// Sets a non-nullable `field` to the value, if one was sent.
    pub fn assign_to(self, field: &mut T) {
        if let Self::Value(value) = self {
            *field = value;
        }
    }
}
