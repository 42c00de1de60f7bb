//! Typed fields over the JSON objects clients send (a flag's filters; a survey's questions,
//! branching, appearance and conditions).
//!
//! PostHog's clients send these objects with keys Burrow does not know, and with known keys in
//! shapes Burrow does not check (`optional: "yes"`); both must come back exactly as sent. So a
//! typed field takes a key's value only when it has the field's type, and everything else (an
//! unknown key, a null, a value of another shape) stays as sent in the object's `extra` map.
//! Reading and writing a known key happens here and in the types' conversions only, so the rules
//! never look a key up by name.

use std::iter::Peekable;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

/// Removes `key` from `object` and returns its value typed, when it is not null and has type
/// `T`; otherwise leaves it where it is.
pub(crate) fn take<T: DeserializeOwned>(object: &mut Map<String, Value>, key: &str) -> Option<T> {
    // One search of the map when the value is typed (the usual case), one more to put it back
    // when it is not.
    let (sent_key, value) = object.remove_entry(key)?;
    let typed = (!value.is_null())
        .then(|| T::deserialize(&value).ok())
        .flatten();
    if typed.is_none() {
        object.insert(sent_key, value);
    }
    typed
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
    fn a_set_field_is_written_back_and_an_unset_one_is_not() {
        let mut fields = Map::new();
        put(&mut fields, "text", Some("hi"));
        put::<bool>(&mut fields, "flag", None);
        assert_eq!(Value::Object(fields), json!({"text": "hi"}));
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
