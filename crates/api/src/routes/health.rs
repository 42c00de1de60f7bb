//! Liveness (`/_health`: the process answers) and readiness (`/_readyz`: PostgreSQL answers).

use actix_web::{HttpResponse, web};
use domain::ports::Readiness;
use serde_json::json;

use crate::error::ApiError;

pub(crate) async fn health() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

pub(crate) async fn ready(readiness: web::Data<dyn Readiness>) -> Result<HttpResponse, ApiError> {
    match readiness.check().await {
        Ok(()) => Ok(HttpResponse::Ok().json(json!({"status": "ok"}))),
        Err(error) => {
            tracing::warn!(error = %error, "readiness check failed");
            Err(ApiError::service_unavailable("Database is unreachable."))
        }
    }
}
