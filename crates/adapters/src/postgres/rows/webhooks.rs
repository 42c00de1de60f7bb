//! The rows of `webhooks`, `webhook_deliveries`, `webhook_attempts` and `webhook_activity`.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::activity::NewActivity;
use domain::survey::SurveyId;
use domain::tenancy::ProjectId;
use domain::webhook::{
    Attempt, Delivery, DeliveryId, DeliveryKind, DeliveryState, DisabledReason, Webhook,
    WebhookEvent, WebhookFormat, WebhookId, WebhookSettings,
};
use serde_json::Value;
use uuid::Uuid;

use crate::postgres::schema::{webhook_activity, webhook_attempts, webhook_deliveries, webhooks};

/// A webhook as stored, less its secrets.
#[derive(Queryable, Selectable, QueryableByName)]
#[diesel(table_name = webhooks, check_for_backend(diesel::pg::Pg))]
pub(crate) struct WebhookRow {
    id: Uuid,
    project_id: i32,
    url: String,
    events: Vec<String>,
    survey_ids: Option<Vec<Uuid>>,
    format: String,
    enabled: bool,
    disabled_reason: Option<String>,
    description: String,
    consecutive_failures: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<WebhookRow> for Webhook {
    fn from(row: WebhookRow) -> Self {
        Self {
            id: WebhookId(row.id),
            project_id: ProjectId(row.project_id),
            settings: WebhookSettings {
                url: row.url,
                events: row
                    .events
                    .iter()
                    .filter_map(|event| WebhookEvent::parse(event))
                    .collect(),
                survey_ids: row
                    .survey_ids
                    .map(|ids| ids.into_iter().map(SurveyId).collect()),
                format: WebhookFormat::parse(&row.format).unwrap_or_default(),
                enabled: row.enabled,
                description: row.description,
            },
            disabled_reason: row
                .disabled_reason
                .as_deref()
                .and_then(DisabledReason::parse),
            consecutive_failures: row.consecutive_failures.unsigned_abs(),
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_deliveries, check_for_backend(diesel::pg::Pg))]
pub(crate) struct DeliveryRow {
    pub id: Uuid,
    webhook_id: Uuid,
    kind: String,
    event_uuid: Option<Uuid>,
    survey_id: Option<String>,
    state: String,
    next_attempt_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_attempts, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AttemptRow {
    pub delivery_id: Uuid,
    attempted_at: DateTime<Utc>,
    status_code: Option<i16>,
    error: Option<String>,
    duration_ms: i32,
}

impl From<AttemptRow> for Attempt {
    fn from(row: AttemptRow) -> Self {
        Self {
            at: row.attempted_at,
            status_code: row.status_code.and_then(|code| u16::try_from(code).ok()),
            error: row.error,
            duration_ms: row.duration_ms.unsigned_abs().into(),
        }
    }
}

pub(crate) fn delivery(row: DeliveryRow, attempts: Vec<Attempt>) -> Delivery {
    let state = DeliveryState::parse(&row.state).unwrap_or(DeliveryState::Pending);
    Delivery {
        id: DeliveryId(row.id),
        webhook_id: WebhookId(row.webhook_id),
        kind: DeliveryKind::parse(&row.kind).unwrap_or(DeliveryKind::Test),
        event_uuid: row.event_uuid,
        survey_id: row.survey_id,
        state,
        next_attempt_at: (state == DeliveryState::Pending).then_some(row.next_attempt_at),
        attempts,
        created_at: row.created_at,
    }
}

/// A webhook activity entry as inserted.
#[derive(Insertable)]
#[diesel(table_name = webhook_activity)]
pub(crate) struct NewWebhookActivityRow<'a> {
    id: Uuid,
    project_id: i32,
    webhook_id: Uuid,
    user_id: i32,
    activity: &'static str,
    detail: &'a Value,
}

impl<'a> NewWebhookActivityRow<'a> {
    pub fn new(project: ProjectId, webhook: WebhookId, activity: &'a NewActivity) -> Self {
        Self {
            id: Uuid::now_v7(),
            project_id: project.0,
            webhook_id: webhook.0,
            user_id: activity.user.0,
            activity: activity.activity,
            detail: &activity.detail,
        }
    }
}
