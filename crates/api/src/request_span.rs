//! The span every request runs in. It records the method and the path, the route pattern that
//! matched (once routing is done), and never the query string, which may carry a
//! `personal_api_key`.

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
            path = %request.path(),
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
