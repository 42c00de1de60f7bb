//! `JsonOrForm`: a body that is a JSON object or, as DRF also parses one, a
//! `multipart/form-data` form (how a file is uploaded, such as a cohort's CSV). The form is read
//! from the body already bounded by the API's body limit, and bounded in parts.

use std::future::{Future, ready};
use std::pin::Pin;

use actix_multipart::Multipart;
use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest};
use futures_util::{StreamExt as _, TryStreamExt as _};
use serde_json::{Map, Value};

use super::body::{SharedBody, held_for};
use super::json::content_type;
use super::scopes::{ExtractorScope, Unscoped};
use crate::body_budget::Held;
use crate::error::ApiError;

/// Most parts one form may hold (a cohort's form has five fields at most).
const MAX_FORM_PARTS: usize = 32;

/// The body: a JSON object (empty bodies read as `{}`), or a form.
#[derive(Debug)]
pub enum JsonOrForm {
    Json(Map<String, Value>),
    Form(Form),
}

/// A form's parts in the order sent: text fields, and files (parts with a `filename`), each by
/// its field name. It holds the node's body budget for its copies of the parts until dropped.
#[derive(Debug)]
pub struct Form {
    pub fields: Vec<(String, String)>,
    pub files: Vec<(String, Bytes)>,
    _held: Held,
}

impl Form {
    /// The first file sent as `name`.
    pub fn file(&self, name: &str) -> Option<&Bytes> {
        self.files
            .iter()
            .find_map(|(field, file)| (field == name).then_some(file))
    }
}

impl FromRequest for JsonOrForm {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        let body = SharedBody::of(&request, payload);
        Box::pin(async move {
            if !is_form(content_type(&request)) {
                return body.object(&request).await.map(JsonOrForm::Json);
            }
            let bytes = body.bytes(&request).await?;
            let mut held = held_for(&request);
            // The parts are copies of the body, no larger than it.
            held.grow_to(bytes.len()).await?;
            let (fields, files) = read_form(&request, bytes).await?;
            Ok(JsonOrForm::Form(Form {
                fields,
                files,
                _held: held,
            }))
        })
    }
}

impl ExtractorScope for JsonOrForm {
    type Resource = Unscoped;
}

/// Whether a media type is `multipart/form-data`.
fn is_form(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("multipart/form-data"))
}

type Parts = (Vec<(String, String)>, Vec<(String, Bytes)>);

/// The parts of a form body.
///
/// # Errors
/// 400 `parse_error` for a malformed form, a text field that is not UTF-8, or more than
/// [`MAX_FORM_PARTS`] parts.
async fn read_form(request: &HttpRequest, bytes: Bytes) -> Result<Parts, ApiError> {
    let stream = futures_util::stream::once(ready(Ok::<_, PayloadError>(bytes)));
    let mut multipart = Multipart::new(request.headers(), stream);
    let (mut fields, mut files) = (Vec::new(), Vec::new());
    let mut parts = 0;
    while let Some(mut part) = multipart.try_next().await.map_err(malformed)? {
        parts += 1;
        if parts > MAX_FORM_PARTS {
            return Err(malformed(format!(
                "a form may hold at most {MAX_FORM_PARTS} parts"
            )));
        }
        let name = part.name().unwrap_or_default().to_owned();
        let is_file = part
            .content_disposition()
            .is_some_and(|disposition| disposition.get_filename().is_some());
        let mut content = Vec::new();
        while let Some(chunk) = part.next().await {
            content.extend_from_slice(&chunk.map_err(malformed)?);
        }
        if is_file {
            files.push((name, Bytes::from(content)));
        } else {
            let text = String::from_utf8(content)
                .map_err(|_| malformed(format!("the field {name} is not UTF-8 text")))?;
            fields.push((name, text));
        }
    }
    Ok((fields, files))
}

/// DRF's 400 for a form it cannot parse.
fn malformed(error: impl std::fmt::Display) -> ApiError {
    ApiError::parse_error(format!("Multipart form parse error - {error}"))
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::CONTENT_TYPE;
    use actix_web::test::TestRequest;

    use super::*;

    const BOUNDARY: &str = "XyZ";

    fn form_request(body: &'static str) -> (HttpRequest, Payload) {
        TestRequest::post()
            .insert_header((
                CONTENT_TYPE,
                format!("multipart/form-data; boundary={BOUNDARY}"),
            ))
            .set_payload(body.replace('\n', "\r\n"))
            .to_http_parts()
    }

    async fn extract(body: &'static str) -> Result<JsonOrForm, ApiError> {
        let (request, mut payload) = form_request(body);
        JsonOrForm::from_request(&request, &mut payload).await
    }

    #[actix_web::test]
    async fn a_form_is_read_into_its_fields_and_files() {
        let body = "--XyZ
Content-Disposition: form-data; name=\"name\"

Beta
--XyZ
Content-Disposition: form-data; name=\"csv\"; filename=\"people.csv\"
Content-Type: text/csv

alice
bob
--XyZ--
";
        let JsonOrForm::Form(form) = extract(body).await.unwrap() else {
            panic!("a form");
        };
        assert_eq!(form.fields, [("name".to_owned(), "Beta".to_owned())]);
        assert_eq!(
            form.file("csv").map(|file| file.as_ref()),
            Some(&b"alice\r\nbob"[..])
        );
        assert_eq!(form.file("other"), None);
    }

    #[actix_web::test]
    async fn a_malformed_form_is_a_parse_error() {
        for body in [
            "no boundary here",
            "--XyZ\nContent-Disposition: form-data; name=\"name\"\n\nunterminated",
        ] {
            let error = extract(body).await.unwrap_err();
            assert_eq!(error.status().as_u16(), 400);
            assert_eq!(error.body().code, "parse_error");
        }
    }

    #[actix_web::test]
    async fn forms_are_bounded_in_parts() {
        let part = "--XyZ\nContent-Disposition: form-data; name=\"x\"\n\n1\n";
        let body: String = part.repeat(MAX_FORM_PARTS + 1) + "--XyZ--\n";
        let error = extract(Box::leak(body.into_boxed_str())).await.unwrap_err();
        assert!(
            error.body().detail.contains("at most 32 parts"),
            "{:?}",
            error.body()
        );
    }

    #[actix_web::test]
    async fn a_json_body_is_an_object() {
        let (request, mut payload) = TestRequest::post()
            .insert_header((CONTENT_TYPE, "application/json"))
            .set_payload(r#"{"name": "Beta"}"#)
            .to_http_parts();
        let read = JsonOrForm::from_request(&request, &mut payload).await;
        assert!(matches!(read, Ok(JsonOrForm::Json(object)) if object["name"] == "Beta"));
    }
}
