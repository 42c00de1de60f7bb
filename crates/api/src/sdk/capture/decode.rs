//! PostHog's ingestion body, read as a stream: the three shapes (one event, `{"batch":[…]}`, a
//! bare array) with the project token in any of the places the SDKs put it. The transport's
//! encodings are undone first by `sdk/transport.rs`.
//!
//! Nothing is built that Burrow will not keep, so a small body cannot take memory out of
//! proportion: events are counted as they are read and the read stops past the limit; of each
//! event only its name, ids, times and token are read, and of its properties only the
//! `$survey_*` ones, where it was answered (`CONTEXT_PROPERTIES`: `$session_id`,
//! `$current_url`, …), `$set` and the `$group_*` ones of `$groupidentify`, left as slices of the
//! body until the token is known and the event turns out to be one whose properties are kept
//! ([`CapturePayload::into_batch`]): a survey event, an enrollment, or a group identify.
//!
//! Sizes are bounded as they are read, as PostHog's capture bounds them: an event's bytes are
//! counted as its keys and values go by (each value is taken as the slice of the body it spans:
//! what skipping it costs, plus serde_json's UTF-8 check of the slice), and the read stops as
//! soon as they pass the event limit; a survey event's answers are measured as the slices they
//! are kept as. One event or answer past its limit refuses the whole request (PostHog answers
//! the first failing event's error), so nothing of it is stored.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::fmt;

use chrono::{DateTime, Utc};
use domain::ValidationError;
use domain::error::ValidationCode;
use domain::survey_response::{
    CONTEXT_PROPERTIES, CaptureBatch, CapturedEvent, MAX_ANSWER_BYTES, MAX_EVENT_BYTES,
    SurveyEventKind, keeps_properties,
};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use crate::error::ApiError;

/// What a capture request carried: the token it names (if any), and its events as read, still
/// borrowing the body.
#[derive(Debug, Default)]
pub(crate) struct CapturePayload<'b> {
    pub token: Option<String>,
    sent_at: Option<DateTime<Utc>>,
    events: Vec<WireEvent<'b>>,
}

/// The body in the OpenAPI document (`CaptureBody`): the fields this reader looks at first.
/// Written out here, not derived, because the body is read by the serde seeds below, which no
/// derive can describe.
impl PartialSchema for CapturePayload<'_> {
    fn schema() -> RefOr<Schema> {
        let or_null = |kind| SchemaType::from_iter([kind, Type::Null]);
        ObjectBuilder::new()
            .description(Some(
                "An SDK's capture request: one event, or a batch, with the project's public token.",
            ))
            .property(
                "api_key",
                ObjectBuilder::new()
                    .schema_type(or_null(Type::String))
                    .description(Some(
                        "The project's public token (also read as `token`, or from the query \
                         string).",
                    )),
            )
            .property(
                "event",
                ObjectBuilder::new()
                    .schema_type(or_null(Type::String))
                    .description(Some("One event's name, when the body is one event.")),
            )
            .property(
                "properties",
                ObjectBuilder::new().schema_type(or_null(Type::Object)),
            )
            .property(
                "batch",
                ArrayBuilder::new()
                    .schema_type(or_null(Type::Array))
                    .items(ObjectBuilder::new())
                    .description(Some("Several events.")),
            )
            .into()
    }
}

impl ToSchema for CapturePayload<'_> {
    fn name() -> Cow<'static, str> {
        "CaptureBody".into()
    }
}

/// Reads the events of an unpacked body, at most `max_events` of them.
///
/// # Errors
/// 400 for anything malformed (the whole request is refused) and for a survey event's answer
/// larger than [`MAX_ANSWER_BYTES`]; 413 past `max_events` and for an event larger than
/// [`MAX_EVENT_BYTES`].
pub(crate) fn decode(json: &[u8], max_events: usize) -> Result<CapturePayload<'_>, ApiError> {
    let reader = Reader {
        max_events,
        failure: RefCell::new(None),
    };
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let read = BodySeed(&reader)
        .deserialize(&mut deserializer)
        .and_then(|payload| deserializer.end().map(|()| payload));
    let (token, sent_at, events) = read.map_err(|error| {
        reader
            .failure
            .take()
            .unwrap_or_else(|| ApiError::parse_error(format!("Malformed payload: {error}")))
    })?;
    let mut token = token;
    for (index, event) in events.iter().enumerate() {
        event.check_answers(index)?;
        match (&token, event.token()) {
            (None, own) => token = own,
            (Some(batch), Some(own)) if *batch != own => {
                return Err(invalid(
                    "api_key",
                    "All events of a batch must belong to one project token.",
                ));
            }
            _ => {}
        }
    }
    Ok(CapturePayload {
        token,
        sent_at,
        events,
    })
}

impl CapturePayload<'_> {
    /// Each event's `uuid`, in order (`None` for an event without one).
    pub(crate) fn uuids(&self) -> impl Iterator<Item = Option<Uuid>> + '_ {
        self.events.iter().map(|event| event.uuid)
    }

    /// The batch the domain takes: every event with its name and ids, and the kept properties
    /// of survey events parsed (the only ones stored).
    ///
    /// # Errors
    /// 400 when a kept property is not JSON the domain can hold (never, for a body that parsed).
    pub(crate) fn into_batch(self) -> Result<CaptureBatch, ApiError> {
        let events = self
            .events
            .into_iter()
            .map(WireEvent::into_captured)
            .collect::<Result<_, _>>()?;
        Ok(CaptureBatch {
            events,
            sent_at: self.sent_at,
        })
    }
}

/// What is shared by the seeds of one read: the event limit, and the precise error the read
/// stopped for (serde's own error type can only carry a message).
///
/// Each seed announces, before it looks at its value, the refusal a value of the wrong type
/// gets ([`Reader::expect`]); the visitor of the right type withdraws it at once
/// ([`Reader::accepted`]). A wrong type then ends the read with serde's generic error and the
/// announced refusal still standing; any later error (malformed JSON) finds none.
struct Reader {
    max_events: usize,
    failure: RefCell<Option<ApiError>>,
}

impl Reader {
    fn expect(&self, refusal: ApiError) {
        *self.failure.borrow_mut() = Some(refusal);
    }

    fn accepted(&self) {
        self.failure.borrow_mut().take();
    }

    fn fail<E: de::Error>(&self, error: ApiError) -> E {
        *self.failure.borrow_mut() = Some(error);
        E::custom("refused")
    }
}

/// One event as read: raw where the value is only looked at once the event is known to be kept.
#[derive(Debug, Default)]
struct WireEvent<'b> {
    name: String,
    uuid: Option<Uuid>,
    ids: Ids,
    timestamp: Option<DateTime<Utc>>,
    offset_ms: Option<i64>,
    properties: WireProperties<'b>,
}

/// The properties capture reads: the ids, and the `$survey_*`, `$set` and `$group_*` values.
#[derive(Debug, Default)]
struct WireProperties<'b> {
    ids: Ids,
    kept: Vec<(Cow<'b, str>, &'b RawValue)>,
}

/// What the SDKs put both on an event and in its properties: who it is about and which project
/// it belongs to.
#[derive(Debug, Default)]
struct Ids {
    distinct_id: Option<String>,
    api_key: Option<String>,
    token: Option<String>,
}

impl Ids {
    /// Takes `raw` as the value of `key` when it is one of the ids: `false` when it is not.
    fn take(&mut self, key: &str, raw: &RawValue) -> bool {
        match key {
            "distinct_id" => self.distinct_id = id_text(raw),
            "api_key" => self.api_key = text(raw),
            "token" => self.token = text(raw),
            _ => return false,
        }
        true
    }

    /// Where the SDKs name the project: `api_key`, else `token`; empty is none.
    fn token(&self) -> Option<String> {
        self.api_key
            .as_ref()
            .or(self.token.as_ref())
            .filter(|token| !token.is_empty())
            .cloned()
    }
}

impl WireEvent<'_> {
    /// The event's own token: on the event, or in its properties (the web SDK's place).
    fn token(&self) -> Option<String> {
        self.ids.token().or_else(|| self.properties.ids.token())
    }

    /// Refuses a survey event whose `$survey_response*` answer, as sent, is larger than
    /// [`MAX_ANSWER_BYTES`] (other events keep no properties, so theirs are not looked at).
    fn check_answers(&self, index: usize) -> Result<(), ApiError> {
        if SurveyEventKind::parse(&self.name).is_none() {
            return Ok(());
        }
        let oversized = self.properties.kept.iter().find(|(key, raw)| {
            key.starts_with("$survey_response") && raw.get().len() > MAX_ANSWER_BYTES
        });
        match oversized {
            Some((key, _)) => Err(ValidationError::field(
                key.as_ref(),
                ValidationCode::MaxLength,
                format!(
                    "Event {index}: {key} is larger than the limit of {MAX_ANSWER_BYTES} bytes."
                ),
            )
            .into()),
            None => Ok(()),
        }
    }

    fn into_captured(self) -> Result<CapturedEvent, ApiError> {
        let mut properties = Map::new();
        if keeps_properties(&self.name) {
            for (key, raw) in self.properties.kept {
                let value: Value = serde_json::from_str(raw.get()).map_err(|error| {
                    ApiError::parse_error(format!("Malformed payload: {error}"))
                })?;
                properties.insert(key.into_owned(), value);
            }
        }
        Ok(CapturedEvent {
            event: self.name,
            uuid: self.uuid,
            distinct_id: self.ids.distinct_id.or(self.properties.ids.distinct_id),
            timestamp: self.timestamp,
            offset_ms: self.offset_ms,
            properties,
        })
    }
}

/// The body: an array of events, or an object that is either `{"batch": […]}` or one event.
struct BodySeed<'r>(&'r Reader);

type Body<'b> = (Option<String>, Option<DateTime<Utc>>, Vec<WireEvent<'b>>);

impl<'de> DeserializeSeed<'de> for BodySeed<'_> {
    type Value = Body<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.expect(invalid(
            "batch",
            "The body must be an event or a batch of events.",
        ));
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BodySeed<'_> {
    type Value = Body<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an event or a batch of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok((None, None, EventsSeed(self.0).visit_seq(seq)?))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        self.0.accepted();
        let mut batch = None;
        let mut sent_at = None;
        let mut single = WireEvent::default();
        let seed = EventSeed::new(self.0, 0);
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.0.as_ref() {
                "batch" => batch = Some(map.next_value_seed(EventsSeed(self.0))?),
                "sent_at" => sent_at = timestamp(map.next_value()?),
                _ => seed.field(&key.0, &mut single, &mut map)?,
            }
        }
        let token = single.ids.token();
        Ok(match batch {
            Some(events) => (token, sent_at, events),
            None => (token, sent_at, vec![single]),
        })
    }
}

/// A list of events, counted as it is read.
struct EventsSeed<'r>(&'r Reader);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = Vec<WireEvent<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0
            .expect(invalid("batch", "batch must be a list of events."));
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = Vec<WireEvent<'de>>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a list of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        self.0.accepted();
        let mut events = Vec::new();
        loop {
            let index = events.len();
            if index == self.0.max_events {
                // One more element, of any kind, is one too many.
                return match seq.next_element::<IgnoredAny>()? {
                    Some(_) => Err(self.0.fail(ApiError::too_many_events(self.0.max_events))),
                    None => Ok(events),
                };
            }
            match seq.next_element_seed(EventSeed::new(self.0, index))? {
                Some(event) => events.push(event),
                None => return Ok(events),
            }
        }
    }
}

/// The event at `index` of a batch, and its bytes read so far.
struct EventSeed<'r> {
    reader: &'r Reader,
    index: usize,
    bytes: Cell<usize>,
}

impl<'r> EventSeed<'r> {
    fn new(reader: &'r Reader, index: usize) -> Self {
        Self {
            reader,
            index,
            bytes: Cell::new(0),
        }
    }

    /// Counts `bytes` more of the event, refusing it once they pass [`MAX_EVENT_BYTES`].
    fn count<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        let read = self.bytes.get().saturating_add(bytes);
        self.bytes.set(read);
        if read > MAX_EVENT_BYTES {
            return Err(self.reader.fail(ApiError::event_too_large(self.index)));
        }
        Ok(())
    }

    /// Counts an object's entry: its key and the quotes, colon and comma around it (an
    /// object's text is its opening brace and its entries so counted, less whitespace).
    fn count_entry<E: de::Error>(&self, key: &str, value: &RawValue) -> Result<(), E> {
        self.count(key.len() + value.get().len() + 4)
    }
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = WireEvent<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let index = self.index;
        self.reader
            .expect(invalid("batch", format!("Event {index} is not an object.")));
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = WireEvent<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an event")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        self.reader.accepted();
        self.count(1)?;
        let mut event = WireEvent::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            self.field(&key.0, &mut event, &mut map)?;
        }
        Ok(event)
    }
}

impl EventSeed<'_> {
    /// Reads the value of `key` into `event`, counting its bytes; unknown keys are counted and
    /// skipped unread.
    fn field<'de, A: MapAccess<'de>>(
        &self,
        key: &str,
        event: &mut WireEvent<'de>,
        map: &mut A,
    ) -> Result<(), A::Error> {
        let index = self.index;
        if key == "properties" {
            self.count(key.len() + 4)?;
            event.properties = map.next_value_seed(PropertiesSeed(self))?;
            return Ok(());
        }
        let raw: &'de RawValue = map.next_value()?;
        self.count_entry(key, raw)?;
        if event.ids.take(key, raw) {
            return Ok(());
        }
        let refuse = |attr, what| {
            self.reader
                .fail(invalid(attr, format!("Event {index}: {attr} {what}.")))
        };
        match key {
            "event" => {
                event.name = match text(raw) {
                    Some(name) => name,
                    None if raw.get() == "null" => String::new(),
                    None => return Err(refuse("event", "must be a string")),
                };
            }
            "uuid" => {
                event.uuid = match text(raw) {
                    Some(uuid) => Some(
                        Uuid::parse_str(&uuid)
                            .map_err(|_| refuse("uuid", "is not a valid UUID"))?,
                    ),
                    None if raw.get() == "null" => None,
                    None => return Err(refuse("uuid", "must be a string")),
                };
            }
            "timestamp" => event.timestamp = timestamp(raw),
            "offset" => event.offset_ms = serde_json::from_str(raw.get()).ok(),
            _ => {}
        }
        Ok(())
    }
}

/// An event's `properties`: an object, or null for none.
struct PropertiesSeed<'s, 'r>(&'s EventSeed<'r>);

impl<'de> DeserializeSeed<'de> for PropertiesSeed<'_, '_> {
    type Value = WireProperties<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let index = self.0.index;
        self.0.reader.expect(invalid(
            "properties",
            format!("Event {index}: properties must be an object."),
        ));
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PropertiesSeed<'_, '_> {
    type Value = WireProperties<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object of properties")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        self.0.reader.accepted();
        self.0.count(1)?;
        let mut properties = WireProperties::default();
        while let Some(Key(key)) = map.next_key()? {
            let raw: &'de RawValue = map.next_value()?;
            self.0.count_entry(&key, raw)?;
            if properties.ids.take(&key, raw) {
                continue;
            }
            if read_property(&key) {
                properties.kept.push((key, raw));
            }
        }
        Ok(properties)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.reader.accepted();
        self.0.count("null".len())?;
        Ok(WireProperties::default())
    }
}

/// Whether a property is one capture may keep (`keeps_properties` decides, once the event's
/// name is known): survey events' `$survey_*`, context and `$set`, and `$groupidentify`'s
/// group.
fn read_property(key: &str) -> bool {
    matches!(key, "$set" | "$group_type" | "$group_key" | "$group_set")
        || key.starts_with("$survey_")
        || CONTEXT_PROPERTIES.contains(&key)
}

/// An object key, borrowed from the body where it has no escapes.
struct Key<'b>(Cow<'b, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a key")
            }

            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(key)))
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A JSON string's text; `None` for any other value.
fn text(raw: &RawValue) -> Option<String> {
    raw.get()
        .starts_with('"')
        .then(|| serde_json::from_str(raw.get()).ok())
        .flatten()
}

/// Ids come as strings or numbers (a number as serde_json writes it).
fn id_text(raw: &RawValue) -> Option<String> {
    text(raw).or_else(|| {
        serde_json::from_str::<serde_json::Number>(raw.get())
            .ok()
            .map(|number| number.to_string())
    })
}

/// An ISO 8601 time; an unreadable one is treated as absent, as PostHog's ingestion does.
fn timestamp(raw: &RawValue) -> Option<DateTime<Utc>> {
    let text = text(raw)?;
    DateTime::parse_from_rfc3339(&text)
        .map(|at| at.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            text.parse::<chrono::NaiveDateTime>()
                .ok()
                .map(|naive| naive.and_utc())
        })
}

fn invalid(attr: &str, detail: impl Into<String>) -> ApiError {
    ValidationError::invalid(attr, detail).into()
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use flate2::Compression;
    use flate2::write::GzEncoder;
    use serde_json::json;

    use super::*;
    use base64::Engine as _;

    use crate::sdk::transport::{Transport, unpacked};

    const MAX: usize = 1024 * 1024;
    const EVENTS: usize = 100;

    /// A body as the handler reads it: unpacked, decoded, and turned into the domain's batch.
    struct Decoded {
        token: Option<String>,
        batch: CaptureBatch,
    }

    fn decode_all(
        body: &[u8],
        transport: Transport<'_>,
        max_bytes: usize,
        max_events: usize,
    ) -> Result<Decoded, ApiError> {
        let json = unpacked(body, transport, max_bytes)?;
        let payload = decode(&json, max_events)?;
        let token = payload.token.clone();
        Ok(Decoded {
            token,
            batch: payload.into_batch()?,
        })
    }

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

    fn decoded(body: &[u8], transport: Transport<'_>) -> Decoded {
        decode_all(body, transport, MAX, EVENTS).unwrap()
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
        let error = decode_all(
            array.to_string().as_bytes(),
            Transport::default(),
            MAX,
            EVENTS,
        )
        .err()
        .unwrap();
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
            let error = decode_all(body, Transport::default(), MAX, EVENTS)
                .err()
                .unwrap();
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
        let error = decode_all(&body, Transport::default(), 1024, EVENTS)
            .err()
            .unwrap();
        assert_eq!(error.status().as_u16(), 413);
    }

    #[test]
    fn unreadable_timestamps_are_absent() {
        let single = json!({"event": "a", "timestamp": "yesterday", "sent_at": 5});
        let payload = decoded(single.to_string().as_bytes(), Transport::default());
        assert_eq!(payload.batch.events[0].timestamp, None);
    }

    #[test]
    fn reading_stops_at_the_event_limit_whatever_follows() {
        let over = format!("[{}]", ["{}"; 6].join(","));
        for body in [
            over.as_str(),
            "[{}, {}, {}, {}, {}, 3]",
            r#"{"batch": [{}, {}, {}, {}, {}, []], "api_key": "t"}"#,
        ] {
            let error = decode_all(body.as_bytes(), Transport::default(), MAX, 5)
                .err()
                .unwrap();
            assert_eq!(error.status().as_u16(), 413, "{body}");
        }
        let five = format!("[{}]", [r#"{"event": "a"}"#; 5].join(","));
        assert_eq!(
            decode_all(five.as_bytes(), Transport::default(), MAX, 5)
                .unwrap()
                .batch
                .events
                .len(),
            5
        );
    }

    #[test]
    fn only_survey_events_keep_properties_and_only_their_survey_ones_context_and_set() {
        let batch = json!([
            {"event": "$pageview", "properties": {"distinct_id": "p", "$survey_id": "s", "$set": {"a": 1}, "$current_url": "x"}},
            {"event": "survey sent", "properties": {"distinct_id": 7, "$survey_id": "s", "$survey_response": "yes", "$set": {"a": 1}, "$current_url": "x", "$lib": "web", "token": "t"}},
        ]);
        let decoded = decoded(batch.to_string().as_bytes(), Transport::default());
        assert_eq!(decoded.token.as_deref(), Some("t"));
        let [pageview, sent] = &decoded.batch.events[..] else {
            panic!("two events");
        };
        assert_eq!(pageview.distinct_id.as_deref(), Some("p"));
        assert!(pageview.properties.is_empty());
        assert_eq!(sent.distinct_id.as_deref(), Some("7"));
        assert_eq!(
            Value::Object(sent.properties.clone()),
            json!({"$survey_id": "s", "$survey_response": "yes", "$set": {"a": 1}, "$current_url": "x"})
        );
    }

    #[test]
    fn group_identifies_keep_their_group_and_other_events_drop_it() {
        let batch = json!([
            {"event": "$groupidentify", "properties": {"distinct_id": "p", "$group_type": "company",
             "$group_key": 42, "$group_set": {"name": "Acme"}, "$lib": "web", "$set": {"a": 1}}},
            {"event": "$pageview", "properties": {"distinct_id": "p", "$group_type": "company",
             "$group_key": "acme", "$group_set": {"name": "Ignored"}}},
        ]);
        let decoded = decoded(batch.to_string().as_bytes(), Transport::default());
        let [identify, pageview] = &decoded.batch.events[..] else {
            panic!("two events");
        };
        assert_eq!(
            Value::Object(identify.properties.clone()),
            json!({"$group_type": "company", "$group_key": 42, "$group_set": {"name": "Acme"},
                   "$set": {"a": 1}})
        );
        assert!(pageview.properties.is_empty());
    }

    #[test]
    fn a_gzip_body_inflating_past_its_ratio_is_refused_before_it_is_inflated_in_full() {
        // Six million empty events compress to about 17 KB.
        let events = format!("[{}]", vec!["{}"; 6_000_000].join(","));
        let body = gzip(events.as_bytes());
        assert!(body.len() < 64 * 1024, "{}", body.len());
        let error = decode_all(&body, Transport::default(), 20 * MAX, EVENTS)
            .err()
            .unwrap();
        assert_eq!(error.status().as_u16(), 413);
        // Within the floor, a highly compressible body is accepted.
        let small = format!("[{}]", vec![r#"{"event": "a"}"#; 50].join(","));
        assert_eq!(
            decode_all(&gzip(small.as_bytes()), Transport::default(), MAX, EVENTS)
                .unwrap()
                .batch
                .events
                .len(),
            50
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named_and_malformed_json_is_a_parse_error() {
        for (body, code, detail) in [
            (
                "42",
                "invalid_input",
                "The body must be an event or a batch of events.",
            ),
            (
                r#"{"batch": 3}"#,
                "invalid_input",
                "batch must be a list of events.",
            ),
            (
                r#"{"batch": [{}, 3]}"#,
                "invalid_input",
                "Event 1 is not an object.",
            ),
            (
                r#"[{"properties": []}]"#,
                "invalid_input",
                "Event 0: properties must be an object.",
            ),
            (r#"[{"properties": {"a": tru}}]"#, "parse_error", ""),
            (r#"[{"event": "a"}, {"#, "parse_error", ""),
        ] {
            let error = decode_all(body.as_bytes(), Transport::default(), MAX, EVENTS)
                .err()
                .unwrap();
            let rendered = error.body();
            assert_eq!(rendered.code, code, "{body}");
            if !detail.is_empty() {
                assert_eq!(rendered.detail, detail, "{body}");
            }
        }
    }

    #[test]
    fn an_event_past_the_event_limit_refuses_the_request_with_posthogs_413() {
        let big = "x".repeat(MAX_EVENT_BYTES);
        let batch = json!([
            {"event": "survey sent", "properties": {"$survey_id": "s"}},
            {"event": "$pageview", "properties": {"$current_url": big}},
        ]);
        let single = json!({"event": "$pageview", "properties": {"$current_url": big}});
        for (body, index) in [(batch, 1), (single, 0)] {
            let error = decode_all(
                body.to_string().as_bytes(),
                Transport::default(),
                20 * MAX,
                EVENTS,
            )
            .err()
            .unwrap();
            assert_eq!(error.status().as_u16(), 413);
            let rendered = error.body();
            assert_eq!(rendered.code, "payload_too_large");
            assert_eq!(
                rendered.detail,
                format!("Event {index} exceeds the maximum event size of 1000000 bytes.")
            );
        }
    }

    #[test]
    fn an_event_at_the_event_limit_is_read() {
        let event = |size: usize| {
            let mut event = json!({"event": "$pageview", "properties": {"$current_url": ""}});
            let text = event.to_string();
            event["properties"]["$current_url"] = json!("x".repeat(size - text.len()));
            event
        };
        let batch = Value::Array(vec![event(MAX_EVENT_BYTES)]);
        assert_eq!(batch[0].to_string().len(), MAX_EVENT_BYTES);
        let decoded = decoded(batch.to_string().as_bytes(), Transport::default());
        assert_eq!(decoded.batch.events.len(), 1);
    }

    #[test]
    fn a_survey_answer_past_the_answer_limit_is_refused_naming_it() {
        let answer = "y".repeat(MAX_ANSWER_BYTES);
        let batch = json!([{"event": "survey sent", "properties": {
            "$survey_id": "s", "$survey_response_q1": "fine", "$survey_response_q2": answer,
        }}]);
        let error = decode_all(
            batch.to_string().as_bytes(),
            Transport::default(),
            MAX,
            EVENTS,
        )
        .err()
        .unwrap();
        assert_eq!(error.status().as_u16(), 400);
        let rendered = error.body();
        assert_eq!(rendered.code, "max_length");
        assert_eq!(rendered.attr.as_deref(), Some("$survey_response_q2"));
        assert_eq!(
            rendered.detail,
            "Event 0: $survey_response_q2 is larger than the limit of 65536 bytes."
        );
    }

    #[test]
    fn an_answer_at_the_limit_and_large_properties_of_other_events_are_kept() {
        // The JSON text of the answer, quotes included, is exactly the limit.
        let answer = "y".repeat(MAX_ANSWER_BYTES - 2);
        let batch = json!([
            {"event": "survey sent", "properties": {"$survey_id": "s", "$survey_response": answer}},
            {"event": "$pageview", "properties": {"$survey_response": "z".repeat(MAX_ANSWER_BYTES)}},
        ]);
        let decoded = decoded(batch.to_string().as_bytes(), Transport::default());
        assert_eq!(
            decoded.batch.events[0].properties["$survey_response"],
            json!(answer)
        );
        assert!(decoded.batch.events[1].properties.is_empty());
    }

    #[test]
    fn the_read_stops_as_soon_as_an_event_passes_the_limit_whatever_follows() {
        let body = format!(
            r#"[{{"event": "survey sent", "properties": {{"pad": "{}", "rest": tru"#,
            "x".repeat(MAX_EVENT_BYTES)
        );
        let error = decode_all(body.as_bytes(), Transport::default(), 20 * MAX, EVENTS)
            .err()
            .unwrap();
        assert_eq!(error.status().as_u16(), 413, "{:?}", error.body());
    }
}
