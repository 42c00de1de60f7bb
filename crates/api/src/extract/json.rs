//! Reading a request body as a JSON object, or a PostHog-shaped 4xx explaining why not.

use actix_web::HttpRequest;
use actix_web::http::header::CONTENT_TYPE;
use domain::ValidationError;
use domain::error::ValidationCode;
use serde_json::{Map, Value};

use crate::error::ApiError;

/// The request's media type without parameters, `""` when absent.
pub(crate) fn content_type(request: &HttpRequest) -> &str {
    request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Whether a media type is JSON (`application/json`, `application/…+json`).
pub(crate) fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Parses a body into a JSON object.
///
/// # Errors
/// 415 for a non-JSON media type, 400 `parse_error` for malformed JSON (including invalid UTF-8
/// and nesting deeper than 128), 400 `validation_error` for a non-object or a NUL character.
pub(crate) fn parse_object(
    content_type: &str,
    bytes: &[u8],
) -> Result<Map<String, Value>, ApiError> {
    if bytes.is_empty() {
        return Ok(Map::new());
    }
    let value = parse_json(content_type, bytes)?;
    let Value::Object(object) = value else {
        return Err(ValidationError::invalid_input(format!(
            "Invalid data. Expected a dictionary, but got {}.",
            python_type_name(&value)
        ))
        .into());
    };
    if let Some(path) = null_character_path(&object) {
        return Err(ValidationError {
            code: ValidationCode::NullCharactersNotAllowed,
            detail: "Null characters are not allowed.".into(),
            attr: Some(path),
        }
        .into());
    }
    Ok(object)
}

/// Parses a body meant to be a JSON list, for the few PostHog actions whose body is one
/// (`update_metadata`): an empty body is an empty list; whether another value is a list is
/// [`list_items`]' to say, once the caller is authenticated.
///
/// # Errors
/// As [`parse_object`], but for the value's shape.
pub(crate) fn parse_list(content_type: &str, bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.is_empty() {
        return Ok(Value::Array(Vec::new()));
    }
    let value = parse_json(content_type, bytes)?;
    let mut path = Vec::new();
    if value_has_nul(&value, &mut path) {
        return Err(ValidationError {
            code: ValidationCode::NullCharactersNotAllowed,
            detail: "Null characters are not allowed.".into(),
            attr: Some(path.join("__")),
        }
        .into());
    }
    Ok(value)
}

/// The items of a body [`parse_list`] read.
///
/// # Errors
/// 400 with DRF's message for a value that is not a list.
pub(crate) fn list_items(value: Value) -> Result<Vec<Value>, ApiError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(ValidationError::invalid_input(format!(
            "Expected a list of items but got type \"{}\".",
            python_type_name(&other)
        ))
        .into()),
    }
}

/// A JSON body of any shape.
fn parse_json(content_type: &str, bytes: &[u8]) -> Result<Value, ApiError> {
    if !is_json(content_type) {
        return Err(ApiError::unsupported_media_type(content_type));
    }
    serde_json::from_slice(bytes)
        .map_err(|error| ApiError::parse_error(format!("JSON parse error - {error}")))
}

/// The name DRF uses for a JSON value's type in its messages.
fn python_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The `__`-joined path of the first string or key holding `\u0000`, which PostgreSQL cannot store.
fn null_character_path(object: &Map<String, Value>) -> Option<String> {
    let mut path = Vec::new();
    object_has_nul(object, &mut path).then(|| path.join("__"))
}

fn object_has_nul(object: &Map<String, Value>, path: &mut Vec<String>) -> bool {
    object.iter().any(|(key, item)| {
        within(path, key.clone(), |path| {
            key.contains('\0') || value_has_nul(item, path)
        })
    })
}

fn value_has_nul(value: &Value, path: &mut Vec<String>) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .any(|(index, item)| within(path, index.to_string(), |path| value_has_nul(item, path))),
        Value::Object(map) => object_has_nul(map, path),
        _ => false,
    }
}

/// Runs `check` with `segment` appended to `path`, keeping it there only when `check` finds a NUL.
fn within(
    path: &mut Vec<String>,
    segment: String,
    check: impl FnOnce(&mut Vec<String>) -> bool,
) -> bool {
    path.push(segment);
    let found = check(path);
    if !found {
        path.pop();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(error: ApiError) -> serde_json::Value {
        serde_json::to_value(error.body()).unwrap()
    }

    #[test]
    fn an_empty_body_is_an_empty_object() {
        assert_eq!(parse_object("", b"").unwrap(), Map::new());
    }

    #[test]
    fn json_with_charset_and_vendor_types_are_accepted() {
        assert!(parse_object("application/json; charset=utf-8", b"{}").is_ok());
        assert!(parse_object("application/merge-patch+json", b"{}").is_ok());
    }

    #[test]
    fn other_media_types_are_415() {
        let error = parse_object("text/plain", b"{}").unwrap_err();
        assert_eq!(error.status().as_u16(), 415);
        assert_eq!(
            body_of(error)["detail"],
            "Unsupported media type \"text/plain\" in request."
        );
    }

    #[test]
    fn malformed_json_and_bad_utf8_and_deep_nesting_are_parse_errors() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        let deep_object = format!("{{\"a\":{deep}}}");
        for bad in [b"{".as_slice(), b"{\"a\":\"\xff\"}", deep_object.as_bytes()] {
            let body = body_of(parse_object("application/json", bad).unwrap_err());
            assert_eq!(body["code"], "parse_error");
            assert!(
                body["detail"]
                    .as_str()
                    .unwrap()
                    .starts_with("JSON parse error")
            );
        }
    }

    #[test]
    fn a_non_object_is_a_validation_error_naming_the_type() {
        let body = body_of(parse_object("application/json", b"[1]").unwrap_err());
        assert_eq!(body["type"], "validation_error");
        assert_eq!(
            body["detail"],
            "Invalid data. Expected a dictionary, but got list."
        );
    }

    #[test]
    fn a_list_body_is_read_and_anything_else_named() {
        let items = |bytes: &[u8]| list_items(parse_list("application/json", bytes).unwrap());
        assert_eq!(
            items(br#"[{"a": 1}]"#).unwrap(),
            vec![serde_json::json!({"a": 1})]
        );
        assert_eq!(
            list_items(parse_list("", b"").unwrap()).unwrap(),
            Vec::<Value>::new()
        );
        let body = body_of(items(b"{}").unwrap_err());
        assert_eq!(
            body["detail"],
            "Expected a list of items but got type \"dict\"."
        );
        let body = body_of(parse_list("application/json", br#"[{"a": "\u0000"}]"#).unwrap_err());
        assert_eq!(body["attr"], "0__a");
    }

    #[test]
    fn nul_characters_are_rejected_with_their_path() {
        let body = body_of(
            parse_object(
                "application/json",
                br#"{"questions":[{"question":"a\u0000b"}]}"#,
            )
            .unwrap_err(),
        );
        assert_eq!(body["code"], "null_characters_not_allowed");
        assert_eq!(body["attr"], "questions__0__question");
    }
}
