//! The last line of defence: a handler or extractor that panics still answers PostHog's JSON 500,
//! logged inside the request's span (so with its request id), instead of a dropped connection.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use futures_util::FutureExt as _;

use crate::error::ApiError;

/// Middleware (for `middleware::from_fn`): runs the rest of the chain, turning a panic into a 500.
///
/// # Errors
/// Whatever the inner service returns, and the opaque 500 `ApiError` after a panic.
pub(crate) async fn catch_panic<B: MessageBody>(
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, actix_web::Error> {
    AssertUnwindSafe(async move { next.call(request).await })
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            tracing::error!(panic = panic_message(&*panic), "request handler panicked");
            Err(ApiError::internal_without_cause().into())
        })
}

/// The text a panic was raised with, when it has one.
fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests {
    use actix_web::middleware::from_fn;
    use actix_web::{App, HttpResponse, test, web};

    use super::*;

    #[actix_web::test]
    async fn a_panicking_handler_answers_the_json_500() {
        let app = test::init_service(
            App::new()
                .route(
                    "/boom",
                    web::get().to(|| async {
                        if true {
                            panic!("kaboom");
                        }
                        HttpResponse::Ok().finish()
                    }),
                )
                .route("/fine", web::get().to(HttpResponse::Ok))
                .wrap(from_fn(catch_panic)),
        )
        .await;
        // What the server then writes to the client: the error rendered as a response.
        let error =
            test::try_call_service(&app, test::TestRequest::get().uri("/boom").to_request())
                .await
                .expect_err("the panic is turned into an error");
        let response = error.error_response();
        assert_eq!(response.status().as_u16(), 500);
        let bytes = actix_web::body::to_bytes(response.into_body())
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"type": "server_error", "code": "error", "detail": "A server error occurred.", "attr": null})
        );
        let fine =
            test::call_service(&app, test::TestRequest::get().uri("/fine").to_request()).await;
        assert_eq!(fine.status().as_u16(), 200);
    }
}
