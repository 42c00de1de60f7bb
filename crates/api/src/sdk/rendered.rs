//! Answers rendered once per SDK snapshot (`snapshot_renderings.rs`), sent as they are with a
//! weak entity tag: a client or a CDN in front of Burrow that asks again with `If-None-Match`
//! gets a 304 without a body, and `Cache-Control` says who may keep the answer and how long.

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use sha2::{Digest as _, Sha256};

use crate::settings::ApiSettings;

/// A rendered answer: its bytes, shared by every request that sends them, and a tag that
/// changes when they do (an HTTP entity tag: the first 16 hex digits of their SHA-256, as
/// PostHog's).
#[derive(Debug)]
pub(crate) struct Rendered {
    body: Bytes,
    tag: String,
}

impl Rendered {
    pub(crate) fn new(body: Vec<u8>) -> Self {
        let digest = Sha256::digest(&body);
        Self {
            tag: hex::encode(&digest[..8]),
            body: body.into(),
        }
    }
}

/// Who may keep an answer, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caching {
    /// Anyone (a browser, a CDN) for `max_age` seconds; with 0 they must ask again each time
    /// (an unchanged answer is then a 304).
    Public { max_age: u32 },
    /// Only the client that asked, checking each time: answers behind a personal key.
    Private,
}

impl Caching {
    /// Public, for as long as the deployment's settings allow.
    pub(crate) fn public(request: &HttpRequest) -> Self {
        Self::Public {
            max_age: request
                .app_data::<ApiSettings>()
                .map_or(ApiSettings::DEFAULT_SDK_MAX_AGE_SECS, |s| {
                    s.sdk_max_age_secs
                }),
        }
    }

    fn header(self) -> String {
        match self {
            Self::Public { max_age: 0 } => "public, no-cache".to_owned(),
            Self::Public { max_age } => format!("public, max-age={max_age}"),
            Self::Private => "private, must-revalidate".to_owned(),
        }
    }
}

/// `rendered` as a 200 of `content_type`, or a 304 when the request already holds it.
pub(crate) fn respond(
    request: &HttpRequest,
    rendered: &Rendered,
    content_type: &'static str,
    caching: Caching,
) -> HttpResponse {
    let etag = format!("W/\"{}\"", rendered.tag);
    let held = holds(request, &rendered.tag);
    let mut response = if held {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, caching.header()))
        // Whether the answer is compressed depends on the request's Accept-Encoding.
        .insert_header((header::VARY, HeaderValue::from_static("Accept-Encoding")));
    if held {
        return response.finish();
    }
    response
        .content_type(content_type)
        .body(rendered.body.clone())
}

/// [`respond`] with [`Caching::public`]: what the SDKs fetch from browsers.
pub(crate) fn public(
    request: &HttpRequest,
    rendered: &Rendered,
    content_type: &'static str,
) -> HttpResponse {
    respond(request, rendered, content_type, Caching::public(request))
}

/// Whether `If-None-Match` names the tag (weakly compared, as RFC 9110 asks for
/// `If-None-Match`: `W/` is ignored) or is `*`.
fn holds(request: &HttpRequest, tag: &str) -> bool {
    request
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|candidate| {
            candidate == "*"
                || candidate
                    .strip_prefix("W/")
                    .unwrap_or(candidate)
                    .trim_matches('"')
                    == tag
        })
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn with_if_none_match(value: &str) -> HttpRequest {
        TestRequest::default()
            .insert_header((header::IF_NONE_MATCH, value))
            .to_http_request()
    }

    #[test]
    fn a_held_tag_is_recognised_weak_strong_or_listed() {
        for value in ["W/\"abc\"", "\"abc\"", "\"x\", W/\"abc\"", "*"] {
            assert!(holds(&with_if_none_match(value), "abc"), "{value}");
        }
        for value in ["W/\"abcd\"", "\"ab\"", ""] {
            assert!(!holds(&with_if_none_match(value), "abc"), "{value}");
        }
        assert!(!holds(&TestRequest::default().to_http_request(), "abc"));
    }

    #[test]
    fn a_tag_is_the_first_16_hex_digits_of_the_sha256_of_the_answer() {
        let rendered = Rendered::new(b"{}".to_vec());
        assert_eq!(rendered.tag, "44136fa355b3678a");
        assert_eq!(Rendered::new(b"{}".to_vec()).tag, rendered.tag);
        assert_ne!(Rendered::new(b"[]".to_vec()).tag, rendered.tag);
    }

    #[test]
    fn caching_reads_as_http_says() {
        assert_eq!(Caching::Public { max_age: 0 }.header(), "public, no-cache");
        assert_eq!(
            Caching::Public { max_age: 30 }.header(),
            "public, max-age=30"
        );
        assert_eq!(Caching::Private.header(), "private, must-revalidate");
    }
}
