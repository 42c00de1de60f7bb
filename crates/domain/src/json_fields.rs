//! Typed fields over the JSON objects clients send (a flag's filters; a survey's questions,
//! branching, appearance and conditions).
//!
//! PostHog's clients send these objects with keys Burrow does not know; they must come back
//! exactly as sent. So a typed field takes a key's value when it has the field's type, and an
//! unknown key or a null stays as sent in the object's `extra` map. A known key of another shape
//! is refused when a client sends it ([`Source::Sent`]) and kept in `extra` when it is read from
//! storage ([`Source::Stored`]: rows written before the refusal stay readable). Reading and
//! writing a known key happens here and in the types' conversions only, so the rules never look
//! a key up by name.

use std::borrow::Cow;
use std::fmt;
use std::iter::Peekable;

use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a typed object is read from, which decides what a known key of another shape does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A client's request: such a key is refused ([`WrongShape`]).
    Sent,
    /// A stored row, written when such keys were kept: the key stays in `extra`, as read.
    Stored,
}

/// A known key sent with a value not of its field's type; it holds that value, for the message.
#[derive(Debug)]
pub(crate) struct WrongShape(pub(crate) Value);

/// Types `value`, the value of a known key: `Ok(None)` hands it back to be kept, null or of
/// another shape read from storage.
fn typed<T: DeserializeOwned>(value: &Value, source: Source) -> Result<Option<T>, WrongShape> {
    if value.is_null() {
        return Ok(None);
    }
    match (T::deserialize(value), source) {
        (Ok(typed), _) => Ok(Some(typed)),
        (Err(_), Source::Stored) => Ok(None),
        (Err(_), Source::Sent) => Err(WrongShape(value.clone())),
    }
}

/// Removes `key` from `object` and returns its value typed; a null, or a value of another shape
/// read from storage, stays where it is (see [`Source`]).
///
/// # Errors
/// A value of another shape, sent.
pub(crate) fn take_as<T: DeserializeOwned>(
    object: &mut Map<String, Value>,
    key: &str,
    source: Source,
) -> Result<Option<T>, WrongShape> {
    let Some(value) = object.get(key) else {
        return Ok(None);
    };
    let typed = typed(value, source)?;
    if typed.is_some() {
        object.remove(key);
    }
    Ok(typed)
}

/// [`take_as`] of what was stored: a value of another shape stays where it is.
pub(crate) fn take<T: DeserializeOwned>(object: &mut Map<String, Value>, key: &str) -> Option<T> {
    take_as(object, key, Source::Stored).unwrap_or(None)
}

/// An object's entries as read, with the values of the `N` keys a type reads kept apart from
/// the rest: taking those out is a look at a short array, not a search and rebalance of a map
/// (a list of surveys reads thousands of such objects). [`Fields::take_as`] behaves as
/// [`take_as`].
pub(crate) struct Fields<const N: usize> {
    keys: &'static [&'static str; N],
    known: [Option<Value>; N],
    rest: Map<String, Value>,
}

impl<const N: usize> Fields<N> {
    /// The entries of `object`, its `keys` set apart.
    pub(crate) fn from_map(object: Map<String, Value>, keys: &'static [&'static str; N]) -> Self {
        let mut fields = Self::empty(keys);
        for (key, value) in object {
            fields.insert(Cow::Owned(key), value);
        }
        fields
    }

    /// Reads an object straight from `deserializer`, its `keys` set apart (a later duplicate
    /// key wins, as in a `Map`).
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
        keys: &'static [&'static str; N],
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FieldsVisitor(Self::empty(keys)))
    }

    fn empty(keys: &'static [&'static str; N]) -> Self {
        Self {
            keys,
            known: std::array::from_fn(|_| None),
            rest: Map::new(),
        }
    }

    fn insert(&mut self, key: Cow<'_, str>, value: Value) {
        match self.keys.iter().position(|known| *known == key) {
            Some(index) => self.known[index] = Some(value),
            None => {
                self.rest.insert(key.into_owned(), value);
            }
        }
    }

    /// The value under `key` typed (it is then taken out), as [`take_as`] takes it.
    ///
    /// # Errors
    /// A value of another shape, sent.
    pub(crate) fn take_as<T: DeserializeOwned>(
        &mut self,
        key: &str,
        source: Source,
    ) -> Result<Option<T>, WrongShape> {
        let Some(index) = self.keys.iter().position(|known| *known == key) else {
            return take_as(&mut self.rest, key, source);
        };
        let slot = &mut self.known[index];
        let Some(value) = slot.as_ref() else {
            return Ok(None);
        };
        let typed = typed(value, source)?;
        if typed.is_some() {
            *slot = None;
        }
        Ok(typed)
    }

    /// Every entry not taken, as sent.
    pub(crate) fn into_extra(self) -> Map<String, Value> {
        let mut extra = self.rest;
        for (key, value) in self.keys.iter().zip(self.known) {
            if let Some(value) = value {
                extra.insert((*key).to_owned(), value);
            }
        }
        extra
    }
}

struct FieldsVisitor<const N: usize>(Fields<N>);

impl<'de, const N: usize> Visitor<'de> for FieldsVisitor<N> {
    type Value = Fields<N>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Fields<N>, A::Error> {
        while let Some(Key(key)) = map.next_key()? {
            let value = map.next_value::<Value>()?;
            self.0.insert(key, value);
        }
        Ok(self.0)
    }
}

/// An object's key, borrowed from the input where it can be (serde's `Cow` is always owned).
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(key.to_owned())))
    }

    fn visit_string<E>(self, key: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(key)))
    }
}

/// A typed object (one written by [`ObjectWriter`]) as the JSON object it stands for.
pub(crate) fn to_object<T: Serialize>(typed: &T) -> Map<String, Value> {
    match serde_json::to_value(typed) {
        Ok(Value::Object(object)) => object,
        _ => unreachable!("an ObjectWriter writes an object of JSON values"),
    }
}

/// Writes a typed field back under `key`, when it is set.
pub(crate) fn put<T: Serialize>(object: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        let value = serde_json::to_value(value)
            .expect("field types are strings, numbers, booleans and maps with string keys");
        object.insert(key.to_owned(), value);
    }
}

/// Writes a typed object straight to a serializer: its typed fields and its `extra` keys, key
/// for key and in the order of the `Map` that [`put`] would build from them, without building
/// it (the response of a list holds hundreds of these objects). Fields are given in ascending
/// key order; `extra`'s keys are merged in between.
pub(crate) struct ObjectWriter<'a, M> {
    map: M,
    extra: Peekable<serde_json::map::Iter<'a>>,
    last_key: &'a str,
}

impl<'a, M: SerializeMap> ObjectWriter<'a, M> {
    pub(crate) fn new<S>(serializer: S, extra: &'a Map<String, Value>) -> Result<Self, M::Error>
    where
        S: Serializer<SerializeMap = M, Error = M::Error>,
    {
        Ok(Self {
            map: serializer.serialize_map(None)?,
            extra: extra.iter().peekable(),
            last_key: "",
        })
    }

    /// Writes the field under `key` when it is set, after the `extra` keys that sort before it.
    /// A set field stands for its key, as [`put`] replaces the key in `extra`.
    pub(crate) fn field<T: Serialize + ?Sized>(
        &mut self,
        key: &'a str,
        value: Option<&T>,
    ) -> Result<(), M::Error> {
        debug_assert!(
            self.last_key < key,
            "typed fields are written in ascending key order: {key:?} came after {:?}",
            self.last_key
        );
        self.last_key = key;
        while let Some((sent, sent_value)) = self.extra.next_if(|(sent, _)| sent.as_str() < key) {
            self.map.serialize_entry(sent, sent_value)?;
        }
        if let Some(value) = value {
            self.extra.next_if(|(sent, _)| sent.as_str() == key);
            self.map.serialize_entry(key, value)?;
        }
        Ok(())
    }

    /// Writes the `extra` keys after the last field's, and closes the object.
    pub(crate) fn end(mut self) -> Result<M::Ok, M::Error> {
        for (sent, sent_value) in self.extra {
            self.map.serialize_entry(sent, sent_value)?;
        }
        self.map.end()
    }
}

/// The length of `value`'s JSON text, counted as it is written rather than kept.
pub(crate) fn json_length(value: &impl Serialize) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail, nor can serializing values of JSON.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        let Value::Object(object) = value else {
            panic!("an object: {value}");
        };
        object
    }

    #[test]
    fn a_value_of_the_fields_type_is_taken_and_anything_else_stays() {
        let mut fields = object(json!({"text": "hi", "flag": "yes", "gone": null}));
        assert_eq!(take::<String>(&mut fields, "text"), Some("hi".into()));
        assert_eq!(take::<bool>(&mut fields, "flag"), None);
        assert_eq!(take::<bool>(&mut fields, "gone"), None);
        assert_eq!(take::<bool>(&mut fields, "absent"), None);
        assert_eq!(Value::Object(fields), json!({"flag": "yes", "gone": null}));
    }

    #[test]
    fn a_sent_value_of_another_shape_is_refused_and_a_sent_null_stays() {
        let mut sent = object(json!({"flag": "yes", "gone": null, "text": "hi"}));
        let WrongShape(refused) = take_as::<bool>(&mut sent, "flag", Source::Sent).unwrap_err();
        assert_eq!(refused, json!("yes"));
        assert_eq!(
            take_as::<bool>(&mut sent, "gone", Source::Sent).unwrap(),
            None
        );
        assert_eq!(
            take_as::<String>(&mut sent, "text", Source::Sent).unwrap(),
            Some("hi".into())
        );
        assert_eq!(Value::Object(sent), json!({"flag": "yes", "gone": null}));
        let mut fields = Fields::from_map(object(json!({"flag": 1})), &["flag"]);
        assert!(fields.take_as::<bool>("flag", Source::Sent).is_err());
        assert_eq!(
            fields.take_as::<bool>("flag", Source::Stored).unwrap(),
            None
        );
    }

    #[test]
    fn a_set_field_is_written_back_and_an_unset_one_is_not() {
        let mut fields = Map::new();
        put(&mut fields, "text", Some("hi"));
        put::<bool>(&mut fields, "flag", None);
        assert_eq!(Value::Object(fields), json!({"text": "hi"}));
    }

    #[test]
    fn fields_read_from_text_or_from_a_map_take_and_keep_the_same() {
        const KEYS: [&str; 3] = ["name", "size", "gone"];
        let text = r#"{"name": "n", "size": "big", "other": [1], "gone": null,
                       "na\u006de2": {"k": 1}, "name": "last"}"#;
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let mut from_text = Fields::deserialize(&mut deserializer, &KEYS).unwrap();
        let mut from_map = Fields::from_map(object(serde_json::from_str(text).unwrap()), &KEYS);
        for fields in [&mut from_text, &mut from_map] {
            let mut take = |key| fields.take_as::<Value>(key, Source::Stored).unwrap();
            assert_eq!(take("name"), Some(json!("last")));
            assert_eq!(fields.take_as::<u8>("size", Source::Stored).unwrap(), None);
            assert_eq!(fields.take_as::<u8>("gone", Source::Stored).unwrap(), None);
            assert_eq!(
                fields.take_as::<Vec<u8>>("other", Source::Stored).unwrap(),
                Some(vec![1])
            );
        }
        let kept = json!({"size": "big", "gone": null, "name2": {"k": 1}});
        assert_eq!(Value::Object(from_text.into_extra()), kept);
        assert_eq!(Value::Object(from_map.into_extra()), kept);
    }

    /// Two typed fields over `extra`, written by [`ObjectWriter`].
    struct Written {
        alpha: Option<u8>,
        mu: Option<&'static str>,
        extra: Map<String, Value>,
    }

    impl Serialize for Written {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut object = ObjectWriter::new(serializer, &self.extra)?;
            object.field("alpha", self.alpha.as_ref())?;
            object.field("mu", self.mu)?;
            object.end()
        }
    }

    #[test]
    fn the_writer_writes_what_put_builds_byte_for_byte() {
        let extras = [
            json!({}),
            json!({"a": 1, "b": null, "n": [1], "z": {"k": "v"}}),
            json!({"0": 0, "alpha": "kept when unset", "mu": "replaced when set"}),
        ];
        for extra in extras {
            for (alpha, mu) in [
                (None, None),
                (Some(7), None),
                (None, Some("m")),
                (Some(1), Some("x")),
            ] {
                let written = Written {
                    alpha,
                    mu,
                    extra: object(extra.clone()),
                };
                let mut built = object(extra.clone());
                put(&mut built, "alpha", alpha);
                put(&mut built, "mu", mu);
                assert_eq!(
                    serde_json::to_string(&written).unwrap(),
                    serde_json::to_string(&built).unwrap(),
                    "{extra} with {alpha:?}, {mu:?}"
                );
            }
        }
    }
}
