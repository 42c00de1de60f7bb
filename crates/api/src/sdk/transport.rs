//! How PostHog's SDKs pack the bodies they send (capture and flags alike): form `data=` fields,
//! base64, gzip (announced by a header or a query flag, or only recognisable by its magic bytes,
//! as the web SDK sends it), or plain JSON.

use std::borrow::Cow;
use std::io::Read as _;

use actix_web::HttpRequest;
use actix_web::dev::Payload;
use actix_web::http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use actix_web::web::Bytes;
use base64::Engine as _;
use flate2::read::GzDecoder;

use crate::body_budget::Held;
use crate::error::ApiError;
use crate::extract::{held_for, read_limited};

/// The first two bytes of every gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How a request says its body is packed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Transport<'a> {
    pub query: &'a str,
    pub content_type: Option<&'a str>,
    pub content_encoding: Option<&'a str>,
}

impl<'a> Transport<'a> {
    /// What `request`'s query string and headers say.
    pub(crate) fn of(request: &'a HttpRequest) -> Self {
        let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
        Self {
            query: request.query_string(),
            content_type: header(CONTENT_TYPE),
            content_encoding: header(CONTENT_ENCODING),
        }
    }
}

/// The project token a GET names in its query: `?token=` (the web SDK, posthog-python) or
/// `?api_key=` (older SDKs).
pub(crate) fn query_token(request: &HttpRequest) -> Option<String> {
    url::form_urlencoded::parse(request.query_string().as_bytes())
        .find(|(key, _)| key == "token" || key == "api_key")
        .map(|(_, value)| value.into_owned())
}

/// How many times its own size a gzip body may inflate to (beyond [`INFLATION_FLOOR`]): JSON
/// batches compress ten to fifty times; a bomb's thousandfold is refused before it is inflated
/// in full.
const MAX_INFLATION_RATIO: usize = 100;

/// What any gzip body may inflate to whatever its ratio, so that small bodies of repetitive
/// events are never refused.
const INFLATION_FLOOR: usize = 1024 * 1024;

/// An SDK's request body, read and unpacked: the JSON text inside, and the node's body budget
/// held for it and for what unpacking copied and inflated (given back when dropped).
pub(crate) struct SdkBody {
    raw: Bytes,
    /// The text when an encoding was undone; `None` when it is the raw body itself.
    unpacked: Option<Vec<u8>>,
    _held: Held,
}

impl SdkBody {
    /// Reads `request`'s body (at most `max_bytes`) and undoes its transport's encodings. A
    /// form or base64 copy is counted against the budget once made (it is no larger than the
    /// body, counted as it arrived), what gzip may inflate to before it is inflated.
    ///
    /// # Errors
    /// 400 for anything malformed; 413 when the body, or what it inflates to, passes
    /// `max_bytes` (or the inflation ratio); 503 when the budget stays spent.
    pub(crate) async fn read(
        request: &HttpRequest,
        payload: Payload,
        max_bytes: usize,
    ) -> Result<Self, ApiError> {
        let raw = read_limited(request, Some(payload), max_bytes).await?;
        let packed = Packed::read(&raw, Transport::of(request))?;
        let mut held = held_for(request);
        let copied = match &packed.bytes {
            Cow::Owned(bytes) => bytes.len(),
            Cow::Borrowed(_) => 0,
        };
        held.grow_to(copied.saturating_add(packed.inflation_bound(max_bytes)))
            .await?;
        let unpacked = match packed.inflate(max_bytes)? {
            Cow::Owned(text) => Some(text),
            Cow::Borrowed(_) => None,
        };
        Ok(Self {
            raw,
            unpacked,
            _held: held,
        })
    }

    /// The JSON text.
    pub(crate) fn json(&self) -> &[u8] {
        self.unpacked.as_deref().unwrap_or(&self.raw)
    }
}

/// Undoes the transport's encodings: the JSON text inside, borrowed when nothing was encoded.
///
/// # Errors
/// 400 for anything malformed; 413 when the body inflates past `max_bytes` or past
/// [`MAX_INFLATION_RATIO`] times its own size (and [`INFLATION_FLOOR`]).
#[cfg(test)]
pub(crate) fn unpacked<'b>(
    body: &'b [u8],
    transport: Transport<'_>,
    max_bytes: usize,
) -> Result<Cow<'b, [u8]>, ApiError> {
    Packed::read(body, transport)?.inflate(max_bytes)
}

/// A body with its form and base64 encodings undone, and whether it is still gzipped.
struct Packed<'b> {
    bytes: Cow<'b, [u8]>,
    gzip: bool,
}

impl<'b> Packed<'b> {
    /// Undoes the form and base64 encodings, and tells gzip apart (announced by a header or a
    /// query flag, or recognised by its magic bytes).
    ///
    /// # Errors
    /// 400 for anything malformed.
    fn read(body: &'b [u8], transport: Transport<'_>) -> Result<Self, ApiError> {
        let mut compression = query_value(transport.query, "compression");
        let is_form = transport
            .content_type
            .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"))
            || body.starts_with(b"data=");
        // Copied only when an encoding is undone: a plain body is parsed where it lies.
        let mut bytes = Cow::Borrowed(body);
        if is_form {
            let mut data = None;
            for (key, value) in url::form_urlencoded::parse(body) {
                match key.as_ref() {
                    "data" => data = Some(value.into_owned()),
                    "compression" => compression = Some(value.into_owned()),
                    _ => {}
                }
            }
            let data = data.ok_or_else(|| ApiError::parse_error("The form has no data field."))?;
            let looks_like_json = data.trim_start().starts_with(['{', '[']);
            bytes = Cow::Owned(
                if compression.as_deref() == Some("base64") || !looks_like_json {
                    base64_decode(&data)?
                } else {
                    data.into_bytes()
                },
            );
        } else if compression.as_deref() == Some("base64") {
            bytes = Cow::Owned(base64_decode(&String::from_utf8_lossy(body))?);
        }
        if compression.as_deref() == Some("lz64") {
            return Err(ApiError::parse_error(
                "lz64 compression is not supported; send gzip, base64 or plain JSON.",
            ));
        }
        let gzip_announced = matches!(compression.as_deref(), Some("gzip" | "gzip-js"))
            || transport
                .content_encoding
                .is_some_and(|e| e.eq_ignore_ascii_case("gzip"));
        let gzip = gzip_announced || bytes.starts_with(&GZIP_MAGIC);
        Ok(Self { bytes, gzip })
    }

    /// The most a gzip body may inflate to: `max_bytes`, and [`MAX_INFLATION_RATIO`] times its
    /// own size beyond [`INFLATION_FLOOR`]; 0 for a body that is not gzip.
    fn inflation_bound(&self, max_bytes: usize) -> usize {
        if !self.gzip {
            return 0;
        }
        let by_ratio = self
            .bytes
            .len()
            .saturating_mul(MAX_INFLATION_RATIO)
            .max(INFLATION_FLOOR);
        max_bytes.min(by_ratio)
    }

    /// The JSON text: inflated when gzip, within [`Self::inflation_bound`].
    ///
    /// # Errors
    /// 400 for a broken gzip stream; 413 past the bound.
    fn inflate(self, max_bytes: usize) -> Result<Cow<'b, [u8]>, ApiError> {
        if !self.gzip {
            return Ok(self.bytes);
        }
        let bound = self.inflation_bound(max_bytes);
        Ok(Cow::Owned(gunzip(&self.bytes, bound)?))
    }
}

/// One `key=value` of a query string.
fn query_value(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// Standard base64; form decoding turned its `+` into spaces, which are put back (as PostHog
/// does), and padding is optional.
fn base64_decode(data: &str) -> Result<Vec<u8>, ApiError> {
    let cleaned: String = data
        .trim()
        .replace(' ', "+")
        .trim_end_matches('=')
        .to_owned();
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(cleaned)
        .map_err(|error| ApiError::parse_error(format!("The data is not valid base64: {error}")))
}

/// Inflates at most `max_bytes`: a small bomb must not become a large allocation.
fn gunzip(bytes: &[u8], max_bytes: usize) -> Result<Vec<u8>, ApiError> {
    let mut inflated = Vec::new();
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    GzDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut inflated)
        .map_err(|error| ApiError::parse_error(format!("The body is not valid gzip: {error}")))?;
    if inflated.len() > max_bytes {
        return Err(ApiError::payload_too_large(max_bytes));
    }
    Ok(inflated)
}
