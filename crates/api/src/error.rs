//! The one error type of the HTTP layer. Every failure a client sees is rendered here in
//! PostHog's `{"type","code","detail","attr"}` shape.

use std::borrow::Cow;

use actix_web::http::StatusCode;
use actix_web::http::header::{ContentType, RETRY_AFTER};
use actix_web::{HttpResponse, ResponseError};
use domain::access::AccessError;
use domain::{DomainError, Unexpected, ValidationError};
use serde::Serialize;

/// A failed request, ready to be rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    body: ErrorBody,
    /// Seconds the client should wait before trying again (`Retry-After`).
    retry_after: Option<u64>,
    /// Set when the database is why the request failed, for `/metrics`.
    fault: Option<Fault>,
}

/// How the database failed a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// It could not be reached (503).
    Unavailable,
    /// It answered with an error nothing but a fix can resolve (500).
    Failed,
}

/// The wire shape shared with PostHog (drf-exceptions-hog).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorBody {
    #[serde(rename = "type")]
    pub kind: Cow<'static, str>,
    pub code: Cow<'static, str>,
    pub detail: String,
    pub attr: Option<String>,
}

impl ApiError {
    pub fn new(
        status: StatusCode,
        kind: impl Into<Cow<'static, str>>,
        code: impl Into<Cow<'static, str>>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            status,
            body: ErrorBody {
                kind: kind.into(),
                code: code.into(),
                detail: detail.into(),
                attr: None,
            },
            retry_after: None,
            fault: None,
        }
    }

    /// An `invalid_request` error: the request itself cannot be served.
    pub(crate) fn invalid_request(
        status: StatusCode,
        code: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(status, "invalid_request", code, detail)
    }

    /// A 401: the caller is not known.
    pub(crate) fn unauthorized(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            code,
            detail,
        )
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn body(&self) -> &ErrorBody {
        &self.body
    }

    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    /// 404 `Not found.` — also what a resource of another tenant looks like.
    pub fn not_found() -> Self {
        Self::not_found_with("Not found.")
    }

    pub fn not_found_with(detail: impl Into<String>) -> Self {
        Self::invalid_request(StatusCode::NOT_FOUND, "not_found", detail)
    }

    pub fn parse_error(detail: impl Into<String>) -> Self {
        Self::invalid_request(StatusCode::BAD_REQUEST, "parse_error", detail)
    }

    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::invalid_request(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!("Unsupported media type \"{content_type}\" in request."),
        )
    }

    /// 415 for a `Content-Encoding` capture v1 does not undo (it takes gzip and plain bodies).
    pub fn unsupported_encoding(encoding: &str) -> Self {
        Self::invalid_request(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_encoding",
            format!("Unsupported content encoding \"{encoding}\"; send gzip or plain JSON."),
        )
    }

    pub fn method_not_allowed(method: &str) -> Self {
        Self::invalid_request(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("Method \"{method}\" not allowed."),
        )
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            format!("Request body is larger than the limit of {limit} bytes."),
        )
    }

    /// A capture batch with more events than the operator allows.
    pub fn too_many_events(limit: usize) -> Self {
        Self::invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            format!("A capture request may carry at most {limit} events."),
        )
    }

    /// A captured event larger than PostHog's event limit: its status and code (PostHog's
    /// capture answers `413 payload_too_large`, "maximum event size exceeded").
    pub fn event_too_large(index: usize) -> Self {
        use domain::survey_response::MAX_EVENT_BYTES;
        Self::invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("Event {index} exceeds the maximum event size of {MAX_EVENT_BYTES} bytes."),
        )
    }

    pub fn permission_denied(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "authentication_error",
            "permission_denied",
            detail,
        )
    }

    pub fn service_unavailable(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "service_unavailable",
            detail,
        )
    }

    /// A key over its rate limit, in DRF's words (PostHog's throttles), with `Retry-After`.
    pub fn throttled(wait: std::time::Duration) -> Self {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let seconds = seconds.max(1);
        let unit = if seconds == 1 { "second" } else { "seconds" };
        Self {
            retry_after: Some(seconds),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "throttled_error",
                "throttled",
                format!("Request was throttled. Expected available in {seconds} {unit}."),
            )
        }
    }

    /// The node holds as many request bodies as its memory budget allows (`BodyBudget`):
    /// nothing was done, and the same request may be sent again shortly.
    pub fn busy() -> Self {
        Self::server_busy(
            "The server is reading as many request bodies as its memory allows. Try again shortly.",
        )
    }

    /// 503 `server_busy` with `Retry-After: 1`: the node has as much of some work in hand as
    /// it may.
    fn server_busy(detail: &'static str) -> Self {
        Self {
            retry_after: Some(1),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "server_busy",
                detail,
            )
        }
    }

    /// The node's evaluation slots this project may use stayed taken (`EvaluationSlots`): nothing
    /// was done, and the same request may be sent again shortly.
    fn evaluating_busy() -> Self {
        Self::server_busy(
            "The server is evaluating as many of this project's flags as it may at once. Try again shortly.",
        )
    }

    /// The project's flags take more memory than a node serves a project
    /// (`domain::sdk::SNAPSHOT_FLAG_BYTES`): its flag definitions cannot be given whole, and a
    /// part would make server SDKs evaluate the rest as missing. Their previous definitions
    /// stay in use; shrinking or deactivating flags ends it.
    pub fn flags_withheld(bytes: u64) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "flags_too_large",
            format!(
                "This project's active flags take {bytes} bytes of filters, more than the {} a \
                 node serves. Deactivate or shrink flags.",
                domain::sdk::SNAPSHOT_FLAG_BYTES
            ),
        )
    }

    /// The database could not be reached: nothing was done, and the same request may be sent
    /// again. Logged (without secrets) inside the request's span.
    fn database_unavailable(cause: &Unexpected) -> Self {
        tracing::warn!(error = %error_chain(cause), "database unavailable");
        Self {
            retry_after: Some(1),
            fault: Some(Fault::Unavailable),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "database_unavailable",
                "The database is unavailable. Try again shortly.",
            )
        }
    }

    /// The opaque 500. The cause is logged here, inside the request's span (which carries the
    /// request id), and never sent to the client.
    pub fn internal(cause: &dyn std::error::Error) -> Self {
        tracing::error!(error = %error_chain(cause), "request failed unexpectedly");
        Self::internal_without_cause()
    }

    pub(crate) fn internal_without_cause() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "error",
            "A server error occurred.",
        )
    }
}

/// An error and its sources, `outer: inner: …`, for one log field.
fn error_chain(cause: &dyn std::error::Error) -> String {
    let mut chain = cause.to_string();
    let mut source = cause.source();
    while let Some(inner) = source {
        chain.push_str(": ");
        chain.push_str(&inner.to_string());
        source = inner.source();
    }
    chain
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.body.code,
            self.body.detail
        )
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        response.content_type(ContentType::json());
        if let Some(seconds) = self.retry_after {
            response.insert_header((RETRY_AFTER, seconds));
        }
        response.json(&self.body)
    }
}

impl From<ValidationError> for ApiError {
    fn from(error: ValidationError) -> Self {
        let mut invalid = Self::new(
            StatusCode::BAD_REQUEST,
            "validation_error",
            error.code.as_str(),
            error.detail,
        );
        invalid.body.attr = error.attr;
        invalid
    }
}

impl From<Unexpected> for ApiError {
    fn from(error: Unexpected) -> Self {
        if error.is_unavailable() {
            return Self::database_unavailable(&error);
        }
        if error.is_busy() {
            return Self::evaluating_busy();
        }
        Self {
            fault: Some(Fault::Failed),
            ..Self::internal(&error)
        }
    }
}

impl From<AccessError> for ApiError {
    fn from(error: AccessError) -> Self {
        let detail = error.to_string();
        match error {
            AccessError::NotAuthenticated => Self::unauthorized("not_authenticated", detail),
            AccessError::InvalidKey(_) => Self::unauthorized("authentication_failed", detail),
            AccessError::MissingScope(_)
            | AccessError::NotProjectMember
            | AccessError::NotOrganizationMember
            | AccessError::KeyNotScopedToProject(_)
            | AccessError::KeyNotScopedToOrganization(_) => Self::permission_denied(detail),
            AccessError::MissingProjectToken => Self::unauthorized("missing_api_key", detail),
            AccessError::InvalidProjectToken => Self::unauthorized("invalid_api_key", detail),
            AccessError::ProjectNotFound | AccessError::OrganizationNotFound => {
                Self::not_found_with(detail)
            }
            AccessError::Unexpected(cause) => cause.into(),
        }
    }
}

/// Every resource's use-case errors, mapped here and nowhere else.
impl From<DomainError> for ApiError {
    fn from(error: DomainError) -> Self {
        match error {
            DomainError::Invalid(invalid) => invalid.into(),
            DomainError::NotFound => Self::not_found(),
            DomainError::Forbidden(detail) => Self::permission_denied(detail),
            DomainError::Upstream(detail) => Self::new(
                StatusCode::BAD_GATEWAY,
                "server_error",
                "upstream_error",
                detail,
            ),
            // Services turn conflicts into the validation error their clients expect; one that
            // arrives here is a service that forgot to, which is a bug worth a logged 500.
            DomainError::Conflict => Self::internal(&error),
            DomainError::Unexpected(cause) => cause.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::error::ValidationCode;

    #[test]
    fn validation_errors_keep_code_detail_and_attr() {
        let error: ApiError = ValidationError::field(
            "name",
            ValidationCode::Blank,
            "This field may not be blank.",
        )
        .into();
        assert_eq!(error.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            serde_json::to_value(error.body()).unwrap(),
            serde_json::json!({"type": "validation_error", "code": "blank", "detail": "This field may not be blank.", "attr": "name"})
        );
    }

    #[test]
    fn invalid_is_rewritten_to_invalid_input() {
        let error: ApiError = ValidationError::general(ValidationCode::Invalid, "nope").into();
        assert_eq!(error.body().code, "invalid_input");
        assert_eq!(error.body().attr, None);
    }

    #[test]
    fn a_busy_node_is_a_503_server_busy_to_retry_and_no_database_failure() {
        let error: ApiError = Unexpected::busy("slots taken").into();
        assert_eq!(error.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(error.retry_after, Some(1));
        assert_eq!(
            (error.body().kind.as_ref(), error.body().code.as_ref()),
            ("server_error", "server_busy")
        );
        assert!(error.fault.is_none(), "not counted as a failure");
    }
}
