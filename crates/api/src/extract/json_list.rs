//! `JsonList`: the extractor of a request body meant to be a JSON list.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use serde_json::Value;

use super::body::SharedBody;
use super::json::{content_type, list_items, parse_list};
use crate::error::ApiError;

/// The parsed body: JSON of any shape (an empty body reads as `[]`), its items taken by the
/// handler with [`JsonList::items`]. A body that is not a list is refused there, not here: an
/// extractor's error would answer before the caller's key was checked.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonList(Value);

impl JsonList {
    /// The list's items.
    ///
    /// # Errors
    /// 400 for a body that is not a list.
    pub fn items(self) -> Result<Vec<Value>, ApiError> {
        list_items(self.0)
    }
}

impl FromRequest for JsonList {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        let body = SharedBody::of(&request, payload);
        Box::pin(async move {
            let bytes = body.bytes(&request).await?;
            parse_list(content_type(&request), &bytes).map(JsonList)
        })
    }
}
