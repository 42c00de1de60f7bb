//! The request body, read once and parsed at most once, and shared: authentication may look for
//! `personal_api_key` in it and the handler then takes the parsed object, without either
//! consuming it from the other.

use std::cell::RefCell;
use std::rc::Rc;

use actix_web::dev::Payload;
use actix_web::http::header::CONTENT_LENGTH;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{HttpMessage as _, HttpRequest};
use futures_util::StreamExt as _;
use tokio::sync::OnceCell;

use serde_json::{Map, Value};

use super::json::{content_type, parse_object};
use crate::body_budget::Held;
use crate::error::ApiError;
use crate::settings::ApiSettings;

struct BodyCell {
    payload: RefCell<Option<Payload>>,
    bytes: OnceCell<Result<Bytes, ApiError>>,
    /// The body as a JSON object, once authentication parsed it, until the handler takes it.
    object: RefCell<Option<Result<Map<String, Value>, ApiError>>>,
}

/// A handle on the request's body; every extractor of one request gets the same one.
#[derive(Clone)]
pub(crate) struct SharedBody(Rc<BodyCell>);

impl SharedBody {
    /// Takes the payload on first call; later calls (from other extractors) share it.
    pub(crate) fn of(request: &HttpRequest, payload: &mut Payload) -> Self {
        if let Some(cell) = request.extensions().get::<SharedBody>() {
            return cell.clone();
        }
        let shared = Self(Rc::new(BodyCell {
            payload: RefCell::new(Some(payload.take())),
            bytes: OnceCell::new(),
            object: RefCell::new(None),
        }));
        request.extensions_mut().insert(shared.clone());
        shared
    }

    /// The whole body, read at most once.
    ///
    /// # Errors
    /// 413 when it exceeds the configured limit; 400 when the connection breaks mid-body.
    pub(crate) async fn bytes(&self, request: &HttpRequest) -> Result<Bytes, ApiError> {
        let limit = request
            .app_data::<ApiSettings>()
            .map_or(ApiSettings::DEFAULT_MAX_BODY_BYTES, |s| s.max_body_bytes);
        self.0
            .bytes
            .get_or_init(|| async {
                let payload = self.0.payload.borrow_mut().take();
                read_limited(request, payload, limit).await
            })
            .await
            .clone()
    }

    /// Looks into the body parsed as a JSON object, keeping the object for [`Self::object`].
    ///
    /// # Errors
    /// What [`parse_object`] refuses, and what reading the body fails with.
    pub(crate) async fn inspect<T>(
        &self,
        request: &HttpRequest,
        look: impl FnOnce(&Map<String, Value>) -> T,
    ) -> Result<T, ApiError> {
        let bytes = self.bytes(request).await?;
        let mut kept = self.0.object.borrow_mut();
        let parsed = kept.get_or_insert_with(|| parse_object(content_type(request), &bytes));
        parsed.as_ref().map(look).map_err(Clone::clone)
    }

    /// The body as a JSON object: the one [`Self::inspect`] parsed, else parsed now.
    ///
    /// # Errors
    /// What [`parse_object`] refuses, and what reading the body fails with.
    pub(crate) async fn object(
        &self,
        request: &HttpRequest,
    ) -> Result<Map<String, Value>, ApiError> {
        if let Some(parsed) = self.0.object.borrow_mut().take() {
            return parsed;
        }
        let bytes = self.bytes(request).await?;
        parse_object(content_type(request), &bytes)
    }
}

/// The whole body of `payload`, refused with a 413 past `limit` bytes.
///
/// # Errors
/// 413 past the limit; 400 when the connection breaks mid-body.
pub(crate) async fn read_limited(
    request: &HttpRequest,
    payload: Option<Payload>,
    limit: usize,
) -> Result<Bytes, ApiError> {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|length| length > limit) {
        return Err(ApiError::payload_too_large(limit));
    }
    let Some(mut payload) = payload else {
        return Ok(Bytes::new());
    };
    let mut held = held_for(request);
    // Sized once from the declared length (never past the limit), so a large body is not
    // copied through every doubling on its way in; only what arrives is counted and touched.
    let mut body = BytesMut::with_capacity(declared.unwrap_or(0).min(limit));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|error| {
            ApiError::parse_error(format!("Could not read the request body: {error}"))
        })?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::payload_too_large(limit));
        }
        held.grow_to(body.len() + chunk.len()).await?;
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from_owner(HeldBody { body, _held: held }))
}

/// This request's share of the node's [`BodyBudget`](crate::body_budget::BodyBudget).
pub(crate) fn held_for(request: &HttpRequest) -> Held {
    request
        .app_data::<ApiSettings>()
        .map_or_else(Held::unbudgeted, |settings| settings.body_budget.hold())
}

/// A body with its share of the budget, given back when the last `Bytes` of it is dropped.
struct HeldBody {
    body: BytesMut,
    _held: Held,
}

impl AsRef<[u8]> for HeldBody {
    fn as_ref(&self) -> &[u8] {
        &self.body
    }
}
