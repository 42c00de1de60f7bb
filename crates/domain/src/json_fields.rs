//! Typed fields over the JSON objects clients send (a flag's filters; a survey's questions,
//! branching, appearance and conditions).
//!
//! PostHog's clients send these objects with keys Burrow does not know, and with known keys in
//! shapes Burrow does not check (`optional: "yes"`); both must come back exactly as sent. So a
//! typed field takes a key's value only when it has the field's type, and everything else (an
//! unknown key, a null, a value of another shape) stays as sent in the object's `extra` map.
//! Reading and writing a known key happens here and in the types' conversions only, so the rules
//! never look a key up by name.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Removes `key` from `object` and returns its value typed, when it is not null and has type
/// `T`; otherwise leaves it where it is.
pub(crate) fn take<T: DeserializeOwned>(object: &mut Map<String, Value>, key: &str) -> Option<T> {
    let value = object.get(key).filter(|value| !value.is_null())?;
    let typed = T::deserialize(value).ok()?;
    object.remove(key);
    Some(typed)
}

/// Writes a typed field back under `key`, when it is set.
pub(crate) fn put<T: Serialize>(object: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        let value = serde_json::to_value(value)
            .expect("field types are strings, numbers, booleans and maps with string keys");
        object.insert(key.to_owned(), value);
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
}
