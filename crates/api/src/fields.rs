//! Reading request fields out of a JSON object with DRF's messages: absent, null and value are
//! kept apart (`Patch`), and a wrong type names the field. Every request DTO reads its body here.

use chrono::{DateTime, Datelike as _, NaiveDate, NaiveDateTime, Utc};
use serde_json::{Map, Value};

use domain::error::{ValidationCode, ValidationError};
use domain::patch::Patch;

/// DRF's `invalid_choice` error for `attr`, naming `value` as sent (a string without quotes).
pub(crate) fn not_a_choice(attr: &str, value: &Value) -> ValidationError {
    let shown = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    ValidationError::invalid_choice(attr, &shown)
}

/// Typed access to the fields of a request body.
pub(crate) struct Fields<'a>(pub &'a Map<String, Value>);

impl Fields<'_> {
    pub fn raw(&self, name: &str) -> Patch<&Value> {
        match self.0.get(name) {
            None => Patch::Absent,
            Some(Value::Null) => Patch::Null,
            Some(value) => Patch::Value(value),
        }
    }

    /// A string field (`Not a valid string.` otherwise).
    pub fn string(&self, name: &str) -> Result<Patch<String>, ValidationError> {
        self.typed(name, "Not a valid string.", |v| {
            v.as_str().map(str::to_owned)
        })
    }

    /// A string field stored in a column of at most `max_chars` characters: longer is DRF's
    /// `max_length` error, never a database error.
    pub fn bounded_string(
        &self,
        name: &str,
        max_chars: usize,
    ) -> Result<Patch<String>, ValidationError> {
        let patch = self.string(name)?;
        if let Patch::Value(text) = &patch
            && text.chars().count() > max_chars
        {
            return Err(ValidationError::too_long(name, max_chars));
        }
        Ok(patch)
    }

    /// A boolean field; accepts what DRF accepts (`true`, `"true"`, `1`, …).
    pub fn boolean(&self, name: &str) -> Result<Patch<bool>, ValidationError> {
        self.typed(name, "Must be a valid boolean.", |value| match value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => match n.as_i64() {
                Some(1) => Some(true),
                Some(0) => Some(false),
                _ => None,
            },
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "true" | "t" | "yes" | "y" | "on" | "1" => Some(true),
                "false" | "f" | "no" | "n" | "off" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        })
    }

    /// An integer field (a JSON integer, or a string holding one, as DRF accepts).
    pub fn integer(&self, name: &str) -> Result<Patch<i64>, ValidationError> {
        self.typed(name, "A valid integer is required.", |value| match value {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                    .map(|f| f as i64)
            }),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        })
    }

    /// An integer field within `min..=max`, with DRF's min/max messages.
    pub fn bounded_integer(
        &self,
        name: &str,
        min: i64,
        max: i64,
    ) -> Result<Patch<i32>, ValidationError> {
        let patch = self.integer(name)?;
        if let Patch::Value(value) = patch {
            if value < min {
                return Err(ValidationError::field(
                    name,
                    ValidationCode::MinValue,
                    format!("Ensure this value is greater than or equal to {min}."),
                ));
            }
            if value > max {
                return Err(ValidationError::field(
                    name,
                    ValidationCode::MaxValue,
                    format!("Ensure this value is less than or equal to {max}."),
                ));
            }
        }
        Ok(patch.map(|v| i32::try_from(v).expect("bounded to i32 range")))
    }

    /// A date-time field: ISO 8601, naive values taken as UTC.
    pub fn datetime(&self, name: &str) -> Result<Patch<DateTime<Utc>>, ValidationError> {
        self.typed(
            name,
            "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
            |value| value.as_str().and_then(parse_datetime),
        )
    }

    fn typed<T>(
        &self,
        name: &str,
        message: &str,
        convert: impl FnOnce(&Value) -> Option<T>,
    ) -> Result<Patch<T>, ValidationError> {
        match self.raw(name) {
            Patch::Absent => Ok(Patch::Absent),
            Patch::Null => Ok(Patch::Null),
            Patch::Value(value) => convert(value)
                .map(Patch::Value)
                .ok_or_else(|| ValidationError::invalid(name, message)),
        }
    }
}

/// A field that may be left out but not sent as `null`: `None` when absent.
///
/// # Errors
/// `This field may not be null.` for `attr`.
pub(crate) fn non_null<T>(patch: Patch<T>, attr: &str) -> Result<Option<T>, ValidationError> {
    match patch {
        Patch::Absent => Ok(None),
        Patch::Null => Err(not_null(attr)),
        Patch::Value(value) => Ok(Some(value)),
    }
}

/// `This field may not be null.` for `attr`.
pub(crate) fn not_null(attr: &str) -> ValidationError {
    ValidationError::field(attr, ValidationCode::Null, "This field may not be null.")
}

/// Parses ISO 8601 date-times; values without an offset are UTC. Only years 1–9999 (in UTC)
/// are accepted: what PostgreSQL stores and every client can read back.
pub(crate) fn parse_datetime(raw: &str) -> Option<DateTime<Utc>> {
    parse_any_datetime(raw).filter(|at| (1..=9999).contains(&at.year()))
}

fn parse_any_datetime(raw: &str) -> Option<DateTime<Utc>> {
    let raw = raw.trim();
    if let Ok(with_offset) = DateTime::parse_from_rfc3339(raw) {
        return Some(with_offset.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%z",
    ] {
        if let Ok(with_offset) = DateTime::parse_from_str(raw, format) {
            return Some(with_offset.with_timezone(&Utc));
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(raw, format) {
            return Some(naive.and_utc());
        }
    }
    NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|naive| naive.and_utc())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn absent_null_and_value_are_distinct() {
        let body = fields(json!({"a": null, "b": "x"}));
        let f = Fields(&body);
        assert_eq!(f.string("missing").unwrap(), Patch::Absent);
        assert_eq!(f.string("a").unwrap(), Patch::Null);
        assert_eq!(f.string("b").unwrap(), Patch::Value("x".into()));
    }

    #[test]
    fn wrong_types_name_the_field_with_drfs_message() {
        let body = fields(json!({"name": 5, "archived": "maybe", "count": "x"}));
        let f = Fields(&body);
        let error = f.string("name").unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (Some("name"), "Not a valid string.")
        );
        assert_eq!(
            f.boolean("archived").unwrap_err().detail,
            "Must be a valid boolean."
        );
        assert_eq!(
            f.integer("count").unwrap_err().detail,
            "A valid integer is required."
        );
    }

    #[test]
    fn bounded_integers_use_min_and_max_messages() {
        let body = fields(json!({"low": -1, "high": 501, "ok": "7"}));
        let f = Fields(&body);
        let low = f.bounded_integer("low", 0, 500).unwrap_err();
        assert_eq!(
            (low.code, low.detail.as_str()),
            (
                ValidationCode::MinValue,
                "Ensure this value is greater than or equal to 0."
            )
        );
        let high = f.bounded_integer("high", 0, 500).unwrap_err();
        assert_eq!(
            (high.code, high.detail.as_str()),
            (
                ValidationCode::MaxValue,
                "Ensure this value is less than or equal to 500."
            )
        );
        assert_eq!(f.bounded_integer("ok", 0, 500).unwrap(), Patch::Value(7));
    }

    #[test]
    fn datetimes_accept_offsets_naive_values_and_dates() {
        let utc = |s: &str| parse_datetime(s).map(|d| d.to_rfc3339());
        assert_eq!(
            utc("2024-05-22T14:40:09Z").unwrap(),
            "2024-05-22T14:40:09+00:00"
        );
        assert_eq!(
            utc("2024-05-22T16:40:09+02:00").unwrap(),
            "2024-05-22T14:40:09+00:00"
        );
        assert_eq!(
            utc("2024-05-22T14:40:09.123456").unwrap(),
            "2024-05-22T14:40:09.123456+00:00"
        );
        assert_eq!(
            utc("2024-05-22T14:40").unwrap(),
            "2024-05-22T14:40:00+00:00"
        );
        assert_eq!(utc("2024-05-22").unwrap(), "2024-05-22T00:00:00+00:00");
        assert!(parse_datetime("garbage").is_none());
        assert!(parse_datetime("2024-13-01T00:00:00Z").is_none());
    }

    #[test]
    fn datetimes_outside_years_1_to_9999_are_refused() {
        assert!(parse_datetime("-5000-01-01T00:00:00").is_none());
        assert!(parse_datetime("0000-12-31T23:00:00Z").is_none());
        assert!(parse_datetime("0001-01-01T00:30:00+01:00").is_none());
        assert!(parse_datetime("+10000-01-01T00:00:00Z").is_none());
        assert!(parse_datetime("0001-01-01T00:00:00Z").is_some());
        assert!(parse_datetime("9999-12-31T23:59:59Z").is_some());
    }
}
