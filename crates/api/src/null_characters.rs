//! PostgreSQL's text cannot hold U+0000, so a path or query value carrying one (`%00`) could
//! only fail deep inside a query. Such requests are refused up front with the 400 bodies get
//! for the same thing (`null_characters_not_allowed`), whatever route they are for.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use domain::ValidationError;
use domain::error::ValidationCode;

use crate::error::ApiError;

/// Middleware (for `middleware::from_fn`).
///
/// # Errors
/// The 400 for a URL carrying `%00`; else whatever the inner service returns.
pub(crate) async fn refuse_null_characters<B: MessageBody>(
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, actix_web::Error> {
    let uri = request.uri();
    let carries_nul = |text: &str| {
        text.as_bytes()
            .windows(3)
            .any(|w| w.eq_ignore_ascii_case(b"%00"))
    };
    if carries_nul(uri.path()) || uri.query().is_some_and(carries_nul) {
        let refusal: ApiError = ValidationError::general(
            ValidationCode::NullCharactersNotAllowed,
            "Null characters are not allowed.",
        )
        .into();
        return Err(refusal.into());
    }
    next.call(request).await
}
