//! The span every request runs in. It records the method and the path, the route pattern that
//! matched (once routing is done), and never the query string, which may carry a
//! `personal_api_key`, nor the project token posthog-js puts in `/array/{token}/…` paths.

use std::borrow::Cow;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::{Error, HttpMessage as _};
use tracing::Span;
use tracing_actix_web::{RequestId, RootSpanBuilder};

/// Builds request spans with a request id and without secrets.
pub struct RedactedRootSpan;

impl RootSpanBuilder for RedactedRootSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .map(ToString::to_string)
            .unwrap_or_default();
        tracing::info_span!(
            "request",
            method = %request.method(),
            path = %redacted_path(request.path()),
            request_id = %request_id,
            route = tracing::field::Empty,
            status = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        let status = match outcome {
            Ok(response) => {
                if let Some(route) = response.request().match_pattern() {
                    span.record("route", route);
                }
                response.status()
            }
            Err(error) => error.as_response_error().status_code(),
        };
        span.record("status", status.as_u16());
        span.in_scope(|| tracing::info!(status = status.as_u16(), "request completed"));
    }
}

/// What the span records for `path`: the path, with the segment after a leading `array` segment
/// (the project token of `/array/{token}/config` and `config.js`) replaced by `[redacted]`. The
/// path is recorded before routing and before trailing slashes are trimmed, so the rule reads the
/// path's own segments, empty ones skipped: it holds for every path under `/array/`, whether it
/// names a route or not.
fn redacted_path(path: &str) -> Cow<'_, str> {
    let mut named = path
        .split('/')
        .scan(0, |start, segment| {
            let at = *start;
            *start += segment.len() + 1;
            Some((at, segment))
        })
        .filter(|(_, segment)| !segment.is_empty());
    match (named.next(), named.next()) {
        (Some((_, "array")), Some((at, token))) => Cow::Owned(format!(
            "{}[redacted]{}",
            &path[..at],
            &path[at + token.len()..]
        )),
        _ => Cow::Borrowed(path),
    }
}

#[cfg(test)]
mod tests {
    use super::redacted_path;

    #[test]
    fn the_token_segment_of_array_paths_is_redacted_however_the_path_is_spelled() {
        for (path, logged) in [
            ("/array/phc_t/config", "/array/[redacted]/config"),
            ("/array/phc_t/config.js/", "/array/[redacted]/config.js/"),
            ("//array//phc_t/x/y", "//array//[redacted]/x/y"),
            ("/array/phc_t", "/array/[redacted]"),
        ] {
            assert_eq!(redacted_path(path), logged, "{path}");
        }
    }

    #[test]
    fn other_paths_are_recorded_as_they_are() {
        for path in ["/array", "/array/", "/arrays/phc_t", "/api/projects/1", "/"] {
            assert_eq!(redacted_path(path), path);
        }
    }
}
