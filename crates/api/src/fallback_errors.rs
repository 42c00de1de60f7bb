//! A safety net: any error response that is not already JSON (actix's own 404s, 405s, payload
//! and query rejections) is rewritten into the PostHog error shape, so clients never see an
//! HTML, plain-text or empty error body. A handler whose error is a page for people (a hosted
//! survey that is closed) marks it [`ErrorPage`] to keep it.

use actix_web::dev::ServiceResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_TYPE, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{HttpResponse, ResponseError};

use crate::error::ApiError;

/// The middleware; wrap it outermost so it sees every response.
pub fn fallback_errors<B: 'static>() -> ErrorHandlers<B> {
    ErrorHandlers::new().default_handler(reshape)
}

/// Marks an error response rendered for a person on purpose (in the response's extensions), which
/// the safety net leaves as it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrorPage;

fn reshape<B>(response: ServiceResponse<B>) -> actix_web::Result<ErrorHandlerResponse<B>> {
    if response
        .response()
        .extensions()
        .get::<ErrorPage>()
        .is_some()
    {
        return Ok(ErrorHandlerResponse::Response(
            response.map_into_left_body(),
        ));
    }
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        return Ok(ErrorHandlerResponse::Response(
            response.map_into_left_body(),
        ));
    }
    let error = error_for(&response);
    let (request, original) = response.into_parts();
    let mut rendered: HttpResponse = error.error_response();
    // Keep headers the original set for the client (e.g. `Allow`, `Retry-After`).
    for (name, value) in original.headers() {
        if name != CONTENT_TYPE && name != actix_web::http::header::CONTENT_LENGTH {
            rendered.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rendered
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(ErrorHandlerResponse::Response(
        ServiceResponse::new(request, rendered).map_into_right_body(),
    ))
}

/// The error a bare status stands for, in PostHog's words.
fn error_for<B>(response: &ServiceResponse<B>) -> ApiError {
    let request = response.request();
    match response.status() {
        StatusCode::NOT_FOUND => ApiError::not_found(),
        StatusCode::METHOD_NOT_ALLOWED => ApiError::method_not_allowed(request.method().as_str()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::unsupported_media_type(
            request
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or(""),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            "Request body is too large.",
        ),
        StatusCode::UNAUTHORIZED => ApiError::unauthorized(
            "not_authenticated",
            "Authentication credentials were not provided.",
        ),
        StatusCode::FORBIDDEN => {
            ApiError::permission_denied("You do not have permission to perform this action.")
        }
        status if status.is_server_error() => {
            ApiError::new(status, "server_error", "error", "A server error occurred.")
        }
        status => ApiError::invalid_request(
            status,
            "invalid_input",
            status
                .canonical_reason()
                .unwrap_or("Bad request.")
                .to_owned()
                + ".",
        ),
    }
}
