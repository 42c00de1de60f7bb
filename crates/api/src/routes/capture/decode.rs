//! PostHog's ingestion body, read: the three shapes (one event, `{"batch":[…]}`, a bare array)
//! with the project token in any of the places the SDKs put it. The transport's encodings are
//! undone first by `sdk_transport`.

use chrono::{DateTime, Utc};
use domain::ValidationError;
use domain::error::ValidationCode;
use domain::survey_response::{CaptureBatch, CapturedEvent};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::ApiError;
use crate::sdk_transport::{Transport, unpack};

/// What a capture request carried, decoded: the token it names (if any) and its events.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct CapturePayload {
    pub token: Option<String>,
    pub batch: CaptureBatch,
}

/// Undoes the transport's encodings and reads the events.
///
/// # Errors
/// 400 for anything malformed (the whole request is refused); 413 when the body inflates past
/// `max_bytes`.
pub(crate) fn decode(
    body: &[u8],
    transport: Transport<'_>,
    max_bytes: usize,
) -> Result<CapturePayload, ApiError> {
    read_payload(unpack(body, transport, max_bytes)?)
}

/// The body's shape: `{"batch":[…], "api_key", "sent_at"}`, a bare array of events, or one
/// event. The token may also sit on each event or in its properties (all must agree).
fn read_payload(json: Value) -> Result<CapturePayload, ApiError> {
    let (mut token, sent_at, events) = match json {
        Value::Array(events) => (None, None, events),
        Value::Object(mut body) => {
            let token = token_in(&body);
            let sent_at = body.get("sent_at").and_then(timestamp);
            match body.remove("batch") {
                Some(Value::Array(events)) => (token, sent_at, events),
                Some(_) => return Err(invalid("batch", "batch must be a list of events.")),
                None => (token, sent_at, vec![Value::Object(body)]),
            }
        }
        _ => {
            return Err(invalid(
                "batch",
                "The body must be an event or a batch of events.",
            ));
        }
    };
    let mut captured = Vec::with_capacity(events.len());
    for (index, event) in events.into_iter().enumerate() {
        let Value::Object(event) = event else {
            return Err(invalid("batch", format!("Event {index} is not an object.")));
        };
        if token.is_none() {
            token = event_token(&event);
        } else if let Some(other) = event_token(&event)
            && token.as_ref() != Some(&other)
        {
            return Err(invalid(
                "api_key",
                "All events of a batch must belong to one project token.",
            ));
        }
        captured.push(read_event(index, event)?);
    }
    Ok(CapturePayload {
        token,
        batch: CaptureBatch {
            events: captured,
            sent_at,
        },
    })
}

fn read_event(index: usize, mut event: Map<String, Value>) -> Result<CapturedEvent, ApiError> {
    let name = match event.remove("event") {
        Some(Value::String(name)) => name,
        None | Some(Value::Null) => String::new(),
        Some(_) => {
            return Err(invalid(
                "event",
                format!("Event {index}: event must be a string."),
            ));
        }
    };
    let uuid =
        match event.get("uuid") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(Uuid::parse_str(text).map_err(|_| {
                invalid("uuid", format!("Event {index}: uuid is not a valid UUID."))
            })?),
            Some(_) => {
                return Err(invalid(
                    "uuid",
                    format!("Event {index}: uuid must be a string."),
                ));
            }
        };
    let properties = match event.remove("properties") {
        Some(Value::Object(properties)) => properties,
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(invalid(
                "properties",
                format!("Event {index}: properties must be an object."),
            ));
        }
    };
    Ok(CapturedEvent {
        event: name,
        uuid,
        distinct_id: event.get("distinct_id").and_then(id_text),
        timestamp: event.get("timestamp").and_then(timestamp),
        offset_ms: event.get("offset").and_then(Value::as_i64),
        properties,
    })
}

/// Where a batch names its project: `api_key`, else `token`.
fn token_in(body: &Map<String, Value>) -> Option<String> {
    ["api_key", "token"]
        .into_iter()
        .find_map(|key| body.get(key).and_then(Value::as_str))
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
}

/// An event's own token: on the event, or in its properties (the web SDK's place).
fn event_token(event: &Map<String, Value>) -> Option<String> {
    token_in(event).or_else(|| {
        event
            .get("properties")
            .and_then(Value::as_object)
            .and_then(token_in)
    })
}

/// Ids come as strings or numbers.
fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// An ISO 8601 time; an unreadable one is treated as absent, as PostHog's ingestion does.
fn timestamp(value: &Value) -> Option<DateTime<Utc>> {
    let text = value.as_str()?;
    DateTime::parse_from_rfc3339(text)
        .map(|at| at.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            text.parse::<chrono::NaiveDateTime>()
                .ok()
                .map(|naive| naive.and_utc())
        })
}

fn invalid(attr: &str, detail: impl Into<String>) -> ApiError {
    ValidationError::field(attr, ValidationCode::Invalid, detail).into()
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use flate2::Compression;
    use flate2::write::GzEncoder;
    use serde_json::json;

    use super::*;
    use base64::Engine as _;

    const MAX: usize = 1024 * 1024;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn web_sdk_batch() -> Value {
        json!({
            "api_key": "phc_token",
            "sent_at": "2026-11-23T10:00:00.000Z",
            "batch": [{
                "uuid": "0192f5a4-0000-7000-8000-000000000001",
                "event": "survey sent",
                "timestamp": "2026-11-23T09:59:59.000Z",
                "properties": {"distinct_id": "person", "token": "phc_token", "$survey_id": "s"}
            }]
        })
    }

    fn decoded(body: &[u8], transport: Transport<'_>) -> CapturePayload {
        decode(body, transport, MAX).unwrap()
    }

    #[test]
    fn gzip_is_recognised_by_its_magic_bytes_whatever_the_content_type() {
        let body = gzip(web_sdk_batch().to_string().as_bytes());
        let transport = Transport {
            content_type: Some("text/plain"),
            ..Transport::default()
        };
        let payload = decoded(&body, transport);
        assert_eq!(payload.token.as_deref(), Some("phc_token"));
        assert_eq!(payload.batch.events.len(), 1);
        assert_eq!(payload.batch.events[0].event, "survey sent");
        assert!(payload.batch.sent_at.is_some());
    }

    #[test]
    fn gzip_announced_by_header_or_query_is_inflated() {
        let body = gzip(web_sdk_batch().to_string().as_bytes());
        for transport in [
            Transport {
                content_encoding: Some("gzip"),
                ..Transport::default()
            },
            Transport {
                query: "compression=gzip-js&ver=1.449.2",
                ..Transport::default()
            },
        ] {
            assert_eq!(decoded(&body, transport).batch.events.len(), 1);
        }
    }

    #[test]
    fn form_data_in_base64_is_decoded() {
        let encoded = base64::engine::general_purpose::STANDARD.encode(web_sdk_batch().to_string());
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("data", &encoded)
            .finish();
        let transport = Transport {
            query: "compression=base64",
            content_type: Some("application/x-www-form-urlencoded"),
            ..Transport::default()
        };
        let payload = decoded(body.as_bytes(), transport);
        assert_eq!(payload.batch.events.len(), 1);
        // Without the query flag, a form whose data is not JSON is base64 too.
        let payload = decoded(body.as_bytes(), Transport::default());
        assert_eq!(payload.batch.events.len(), 1);
    }

    #[test]
    fn base64_whose_plus_signs_became_spaces_still_decodes() {
        let event = json!({"event": "survey sent", "api_key": "t", "properties": {"x": ">>>???"}});
        let encoded = base64::engine::general_purpose::STANDARD.encode(event.to_string());
        assert!(encoded.contains('+') || encoded.contains('/'));
        let body = format!("data={}", encoded.replace('+', " "));
        assert_eq!(
            decoded(body.as_bytes(), Transport::default())
                .batch
                .events
                .len(),
            1
        );
    }

    #[test]
    fn a_single_event_and_a_bare_array_are_batches_of_their_events() {
        let single = json!({"event": "survey shown", "distinct_id": 7, "api_key": "t"});
        let payload = decoded(single.to_string().as_bytes(), Transport::default());
        assert_eq!(payload.token.as_deref(), Some("t"));
        assert_eq!(payload.batch.events[0].distinct_id.as_deref(), Some("7"));
        let array = json!([{"event": "a", "properties": {"token": "t"}}, {"event": "b"}]);
        let payload = decoded(array.to_string().as_bytes(), Transport::default());
        assert_eq!(payload.token.as_deref(), Some("t"));
        assert_eq!(payload.batch.events.len(), 2);
    }

    #[test]
    fn two_tokens_in_one_batch_are_refused() {
        let array = json!([{"event": "a", "api_key": "one"}, {"event": "b", "token": "two"}]);
        let error = decode(array.to_string().as_bytes(), Transport::default(), MAX).unwrap_err();
        assert_eq!(error.status().as_u16(), 400);
    }

    #[test]
    fn malformed_payloads_are_400s() {
        for body in [
            &b"not json"[..],
            b"42",
            br#"{"batch": 3}"#,
            br#"{"batch": [3]}"#,
            br#"{"event": "x", "uuid": "nope"}"#,
            br#"{"event": "x", "properties": []}"#,
            b"data=%%%",
            &[0x1f, 0x8b, 0, 1, 2],
        ] {
            let error = decode(body, Transport::default(), MAX).unwrap_err();
            assert_eq!(
                error.status().as_u16(),
                400,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_limit() {
        let body = gzip(&vec![b' '; 10 * 1024]);
        let error = decode(&body, Transport::default(), 1024).unwrap_err();
        assert_eq!(error.status().as_u16(), 413);
    }

    #[test]
    fn unreadable_timestamps_are_absent() {
        let single = json!({"event": "a", "timestamp": "yesterday", "sent_at": 5});
        let payload = decoded(single.to_string().as_bytes(), Transport::default());
        assert_eq!(payload.batch.events[0].timestamp, None);
    }
}
