//! `/api/projects/{project_id}/webhooks/`: a project's webhooks on survey responses, their
//! secrets, deliveries, retries, test sends and activity log.

mod request;

pub(crate) use request::WebhookWrite;

use actix_web::web::{self, Json};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::webhook::{
    Attempt, CreatedWebhook, Delivery, DeliveryId, Webhook, WebhookId, WebhookService,
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::dto::ActivityResponse;
use crate::error::ApiError;
use crate::extract::{
    ActivityLogs, JsonObject, NumberedPage, PageNumber, Paginated, Pagination, ProjectCaller,
    Webhooks, path_id,
};

/// A webhook as the API shows it; the secret only in [`WebhookWithSecret`].
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Webhook)]
pub(crate) struct WebhookResponse {
    id: Uuid,
    url: String,
    events: Vec<&'static str>,
    /// `null`: every survey of the project.
    survey_ids: Option<Vec<Uuid>>,
    /// `standard` or `slack`.
    format: &'static str,
    enabled: bool,
    /// Why Burrow disabled the webhook: `gone` (the receiver answered 410) or `failing` (a
    /// delivery failed every attempt of the retry schedule); `null` otherwise.
    disabled_reason: Option<&'static str>,
    /// Failed attempts since the last delivered one.
    consecutive_failures: u32,
    description: String,
    team_id: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<Webhook> for WebhookResponse {
    fn from(webhook: Webhook) -> Self {
        let settings = webhook.settings;
        Self {
            id: webhook.id.0,
            url: settings.url,
            events: settings.events.iter().map(|event| event.as_str()).collect(),
            survey_ids: settings
                .survey_ids
                .map(|ids| ids.iter().map(|id| id.0).collect()),
            format: settings.format.as_str(),
            enabled: settings.enabled,
            disabled_reason: webhook.disabled_reason.map(|reason| reason.as_str()),
            consecutive_failures: webhook.consecutive_failures,
            description: settings.description,
            team_id: webhook.project_id.0,
            created_at: webhook.created_at,
            updated_at: webhook.updated_at,
        }
    }
}

/// A webhook with its signing secret: the answer to create and to `rotate_secret`, the only
/// times the secret is shown.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WebhookWithSecret)]
pub(crate) struct WebhookWithSecret {
    #[serde(flatten)]
    webhook: WebhookResponse,
    /// `whsec_…`: verify deliveries with it (Standard Webhooks libraries take it as is).
    secret: String,
}

impl From<CreatedWebhook> for WebhookWithSecret {
    fn from(created: CreatedWebhook) -> Self {
        Self {
            secret: created.secret.expose().to_owned(),
            webhook: created.webhook.into(),
        }
    }
}

/// One attempt at sending a delivery.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AttemptResponse {
    attempted_at: DateTime<Utc>,
    /// The receiver's status; `null` when it did not answer (see `error`).
    status_code: Option<u16>,
    error: Option<String>,
    duration_ms: u64,
}

impl From<Attempt> for AttemptResponse {
    fn from(attempt: Attempt) -> Self {
        Self {
            attempted_at: attempt.at,
            status_code: attempt.status_code,
            error: attempt.error,
            duration_ms: attempt.duration_ms,
        }
    }
}

/// A delivery and its attempts, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WebhookDelivery)]
pub(crate) struct DeliveryResponse {
    id: Uuid,
    /// The `webhook-id` header it is sent with, the same on every attempt.
    message_id: String,
    /// The payload's `type`: a `survey_response.*` event, or `webhook.test`.
    #[serde(rename = "type")]
    kind: &'static str,
    event_uuid: Option<Uuid>,
    survey_id: Option<String>,
    /// `pending`, `delivered` or `failed`.
    state: &'static str,
    next_attempt_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    attempts: Vec<AttemptResponse>,
}

impl From<Delivery> for DeliveryResponse {
    fn from(delivery: Delivery) -> Self {
        Self {
            id: delivery.id.0,
            message_id: delivery.id.message_id(),
            kind: delivery.kind.as_str(),
            event_uuid: delivery.event_uuid,
            survey_id: delivery.survey_id,
            state: delivery.state.as_str(),
            next_attempt_at: delivery.next_attempt_at,
            created_at: delivery.created_at,
            attempts: delivery.attempts.into_iter().map(Into::into).collect(),
        }
    }
}

/// Newest first, ties by id (descending).
pub(crate) async fn list(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
    pagination: Pagination,
) -> Result<Json<Paginated<WebhookResponse>>, ApiError> {
    let page = webhooks
        .list(access.project.id, pagination.page_request())
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn create(
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
    JsonObject(body): JsonObject,
) -> Result<HttpResponse, ApiError> {
    let created = webhooks
        .create(
            access.project.id,
            access.principal.user.id,
            request::new_webhook(&body)?,
        )
        .await?;
    Ok(HttpResponse::Created().json(WebhookWithSecret::from(created)))
}

pub(crate) async fn retrieve(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
) -> Result<Json<WebhookResponse>, ApiError> {
    let webhook = webhooks
        .get(access.project.id, path_id::<WebhookId>(&request)?)
        .await?;
    Ok(Json(webhook.into()))
}

pub(crate) async fn update(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
    JsonObject(body): JsonObject,
) -> Result<Json<WebhookResponse>, ApiError> {
    let id = path_id::<WebhookId>(&request)?;
    let webhook = webhooks
        .update(
            access.project.id,
            access.principal.user.id,
            id,
            request::webhook_changes(&body)?,
        )
        .await?;
    Ok(Json(webhook.into()))
}

/// Deletes the webhook with its deliveries.
pub(crate) async fn delete(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
) -> Result<HttpResponse, ApiError> {
    webhooks
        .delete(
            access.project.id,
            access.principal.user.id,
            path_id::<WebhookId>(&request)?,
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(crate) async fn rotate_secret(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
) -> Result<Json<WebhookWithSecret>, ApiError> {
    let rotated = webhooks
        .rotate_secret(
            access.project.id,
            access.principal.user.id,
            path_id::<WebhookId>(&request)?,
        )
        .await?;
    Ok(Json(rotated.into()))
}

/// Newest first (the order they were made in, reversed), each with its attempts (newest first).
pub(crate) async fn deliveries(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
    pagination: Pagination,
) -> Result<Json<Paginated<DeliveryResponse>>, ApiError> {
    let page = webhooks
        .deliveries(
            access.project.id,
            path_id::<WebhookId>(&request)?,
            pagination.page_request(),
        )
        .await?;
    Ok(Json(Paginated::new(&request, pagination, page)))
}

pub(crate) async fn retry(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
) -> Result<Json<DeliveryResponse>, ApiError> {
    let delivery = webhooks
        .retry(
            access.project.id,
            path_id::<WebhookId>(&request)?,
            path_id::<DeliveryId>(&request)?,
        )
        .await?;
    Ok(Json(delivery.into()))
}

/// Sends a `webhook.test` event now and answers with its delivery (delivered or failed).
pub(crate) async fn test(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<Webhooks>,
) -> Result<Json<DeliveryResponse>, ApiError> {
    let delivery = webhooks
        .test(access.project.id, path_id::<WebhookId>(&request)?)
        .await?;
    Ok(Json(delivery.into()))
}

/// The activity of every webhook of the project, deleted ones included.
pub(crate) async fn project_activity(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<ActivityLogs>,
    numbered: PageNumber,
) -> Result<Json<NumberedPage<ActivityResponse>>, ApiError> {
    let page = webhooks
        .activity(access.project.id, None, numbered.page_request())
        .await?;
    Ok(ActivityResponse::page(&request, numbered, page))
}

/// One webhook's activity; 404 for a webhook the project does not have (any more).
pub(crate) async fn webhook_activity(
    request: HttpRequest,
    webhooks: web::Data<WebhookService>,
    ProjectCaller(access, _): ProjectCaller<ActivityLogs>,
    numbered: PageNumber,
) -> Result<Json<NumberedPage<ActivityResponse>>, ApiError> {
    let id = path_id::<WebhookId>(&request)?;
    let page = webhooks
        .activity(access.project.id, Some(id), numbered.page_request())
        .await?;
    Ok(ActivityResponse::page(&request, numbered, page))
}
