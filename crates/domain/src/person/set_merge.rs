//! How what a capture `$set`s merges into a person's properties: each key given replaces the
//! stored value, as PostHog applies `$set` (jsonb `||`), except `$last_seen_survey_date`, which
//! only moves forward. Capture sets it from the time of each `survey shown` event, and batches
//! (an SDK's retries, its queued events sent after a newer batch, other devices of the person)
//! arrive in any order: the last one written must not take the person back to an older date,
//! or a survey's wait period would end early.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

/// When the person last saw a survey, on any device: what PostHog's ingestion sets on every
/// `survey shown` event (`surveyShownHandler`) and each survey's internal targeting flag
/// compares with its wait period.
pub const LAST_SEEN_SURVEY_DATE: &str = "$last_seen_survey_date";

/// The date as capture stores it: RFC 3339 in UTC with milliseconds
/// (`2026-01-15T10:00:00.000Z`, what JavaScript's `toISOString` writes), so that two such
/// dates compare as their text does (which is how PostgreSQL compares them, `||`'s statement
/// keeping the later).
pub fn last_seen_survey_date(at: DateTime<Utc>) -> Value {
    Value::String(at.to_rfc3339_opts(SecondsFormat::Millis, true))
}

/// Merges `set` into `properties`: every key replaces the stored value, but a
/// [`LAST_SEEN_SURVEY_DATE`] earlier than the one there is dropped, when both are dates as
/// capture stores them (any other value is set as `$set` sets it).
pub fn merge_set(properties: &mut Map<String, Value>, set: Map<String, Value>) {
    for (key, value) in set {
        if key == LAST_SEEN_SURVEY_DATE && later_stored(properties.get(&key), &value) {
            continue;
        }
        properties.insert(key, value);
    }
}

fn later_stored(stored: Option<&Value>, sent: &Value) -> bool {
    match (stored, sent) {
        (Some(Value::String(stored)), Value::String(sent)) => {
            stored_shape(stored) && stored_shape(sent) && stored > sent
        }
        _ => false,
    }
}

/// Whether `text` is a date as [`last_seen_survey_date`] writes it, digit for digit (the
/// statement checks the same shape with `~`).
fn stored_shape(text: &str) -> bool {
    const SHAPE: &[u8; 24] = b"dddd-dd-ddTdd:dd:dd.dddZ";
    text.len() == SHAPE.len()
        && text
            .bytes()
            .zip(SHAPE)
            .all(|(byte, expected)| match expected {
                b'd' => byte.is_ascii_digit(),
                _ => byte == *expected,
            })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn at(seconds: i64) -> Value {
        last_seen_survey_date(
            Utc.timestamp_opt(1_800_000_000 + seconds, 5_000_000)
                .unwrap(),
        )
    }

    fn merged(stored: Value, set: Value) -> Value {
        let Value::Object(mut properties) = stored else {
            panic!("stored properties are an object");
        };
        let Value::Object(set) = set else {
            panic!("a set is an object");
        };
        merge_set(&mut properties, set);
        Value::Object(properties)
    }

    #[test]
    fn dates_are_written_to_the_millisecond_in_utc() {
        assert_eq!(at(0), json!("2027-01-15T08:00:00.005Z"));
    }

    #[test]
    fn every_key_replaces_the_stored_one_but_an_older_last_seen_date() {
        assert_eq!(
            merged(
                json!({"a": 1, "b": 2, "$last_seen_survey_date": at(60)}),
                json!({"a": 3, "$last_seen_survey_date": at(0)})
            ),
            json!({"a": 3, "b": 2, "$last_seen_survey_date": at(60)})
        );
        assert_eq!(
            merged(
                json!({"$last_seen_survey_date": at(0)}),
                json!({"$last_seen_survey_date": at(60)})
            ),
            json!({"$last_seen_survey_date": at(60)})
        );
        assert_eq!(
            merged(json!({}), json!({"$last_seen_survey_date": at(0)})),
            json!({"$last_seen_survey_date": at(0)})
        );
    }

    #[test]
    fn a_last_seen_value_of_another_shape_is_set_as_any_key() {
        for (stored, sent) in [
            (json!("not a date"), at(0)),
            (json!("2099-01-01T00:00:00Z"), at(0)),
            (at(60), json!("2000-01-01")),
            (at(60), json!(null)),
            (at(60), json!(5)),
        ] {
            assert_eq!(
                merged(
                    json!({"$last_seen_survey_date": stored}),
                    json!({"$last_seen_survey_date": sent.clone()})
                ),
                json!({"$last_seen_survey_date": sent})
            );
        }
    }
}
