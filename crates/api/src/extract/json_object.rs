//! `JsonObject`: the extractor of a request body that is a JSON object.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use serde_json::{Map, Value};

use super::body::SharedBody;
use crate::error::ApiError;

/// The parsed body. Empty bodies read as `{}` (as DRF does); unknown fields are the handler's
/// to ignore.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonObject(pub Map<String, Value>);

impl FromRequest for JsonObject {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        let body = SharedBody::of(&request, payload);
        Box::pin(async move { body.object(&request).await.map(JsonObject) })
    }
}
