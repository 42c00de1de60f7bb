//! `WebhookRepository` over `webhooks`, `webhook_deliveries`, `webhook_attempts` and
//! `webhook_activity`: webhooks read, their deliveries listed and retried, test sends recorded
//! (writes go through `WebhookTransaction`, `transaction.rs`). Deliveries of response events
//! are made by the queue (`PgDeliveryQueue`) from the outbox the capture statement writes.

mod transaction;

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Int2, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid, Varchar};
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::activity::ActivityPage;
use domain::ports::{Page, PageRequest};
use domain::survey::SurveyId;
use domain::tenancy::ProjectId;
use domain::webhook::{
    Attempt, Delivery, DeliveryId, DeliveryKind, DeliveryState, SigningTarget, Webhook,
    WebhookFormat, WebhookId, WebhookRepository, WebhookSecret, WebhookTransaction,
};
use uuid::Uuid;

use crate::postgres::activity::{Owner, WEBHOOK_ACTIVITY};
use crate::postgres::confirmed::confirmed;
use crate::postgres::errors::StorageContext;
use crate::postgres::paging::{page, window};
use crate::postgres::rows::{AttemptRow, DeliveryRow, WebhookRow, delivery};
use crate::postgres::schema::{surveys, webhook_attempts, webhook_deliveries, webhooks};
use crate::postgres::transaction::PgTransaction;

crate::postgres::over_the_pool! {
    /// Webhooks and their deliveries, in PostgreSQL.
    PgWebhookRepository
}

/// A test delivery, sent once already, with its attempt.
const RECORD_TEST: &str = "
WITH delivery AS (
    INSERT INTO webhook_deliveries (id, webhook_id, project_id, kind, state, attempts_made, body)
    SELECT $1, w.id, w.project_id, 'webhook.test', $4, 1, $5
    FROM webhooks w WHERE w.project_id = $2 AND w.id = $3
    RETURNING id
)
INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms)
SELECT id, $6, $7, $8, $9 FROM delivery";

/// Survey ids as the `webhooks.survey_ids` column holds them.
fn survey_uuids(surveys: &[SurveyId]) -> Vec<Uuid> {
    surveys.iter().map(|survey| survey.0).collect()
}

pub(crate) fn attempt_columns(attempt: &Attempt) -> (Option<i16>, i32) {
    (
        attempt
            .status_code
            .and_then(|code| i16::try_from(code).ok()),
        i32::try_from(attempt.duration_ms).unwrap_or(i32::MAX),
    )
}

#[async_trait]
impl WebhookRepository for PgWebhookRepository {
    async fn list(
        &self,
        project: ProjectId,
        page_request: PageRequest,
    ) -> Result<Page<Webhook>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let count = webhooks::table
            .filter(webhooks::project_id.eq(project.0))
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting webhooks")?;
        let rows = window(
            webhooks::table
                .filter(webhooks::project_id.eq(project.0))
                .order((webhooks::created_at.desc(), webhooks::id.desc()))
                .select(WebhookRow::as_select()),
            page_request,
        )
        .load::<WebhookRow>(&mut conn)
        .await
        .during("listing webhooks")?;
        Ok(page(count, rows.into_iter().map(Webhook::from).collect()))
    }

    async fn get(&self, project: ProjectId, id: WebhookId) -> Result<Option<Webhook>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = webhooks::table
            .filter(webhooks::project_id.eq(project.0))
            .filter(webhooks::id.eq(id.0))
            .select(WebhookRow::as_select())
            .first::<WebhookRow>(&mut conn)
            .await
            .optional_during("reading a webhook")?;
        Ok(row.map(Webhook::from))
    }

    async fn begin(&self) -> Result<Box<dyn WebhookTransaction>, Unexpected> {
        Ok(Box::new(PgTransaction::open(&self.database).await?))
    }

    async fn activity(
        &self,
        project: ProjectId,
        webhook: Option<WebhookId>,
        page_request: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let mut conn = self.database.connection().await?;
        let webhook = webhook.map(|webhook| webhook.0);
        WEBHOOK_ACTIVITY
            .page(&mut conn, Owner::Project(project.0), webhook, page_request)
            .await
    }

    async fn missing_surveys(
        &self,
        project: ProjectId,
        wanted: &[SurveyId],
    ) -> Result<Vec<SurveyId>, Unexpected> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.database.connection().await?;
        let found: Vec<Uuid> = surveys::table
            .filter(surveys::project_id.eq(project.0))
            .filter(surveys::id.eq_any(survey_uuids(wanted)))
            .select(surveys::id)
            .load(&mut conn)
            .await
            .during("checking a webhook's surveys")?;
        Ok(wanted
            .iter()
            .filter(|survey| !found.contains(&survey.0))
            .copied()
            .collect())
    }

    async fn deliveries(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        page_request: PageRequest,
    ) -> Result<Page<Delivery>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let listed = || {
            webhook_deliveries::table
                .filter(webhook_deliveries::project_id.eq(project.0))
                .filter(webhook_deliveries::webhook_id.eq(webhook.0))
        };
        let count = listed()
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .during("counting a webhook's deliveries")?;
        let rows = window(
            listed()
                .order(webhook_deliveries::seq.desc())
                .select(DeliveryRow::as_select()),
            page_request,
        )
        .load::<DeliveryRow>(&mut conn)
        .await
        .during("listing a webhook's deliveries")?;
        let mut attempts = attempts_of(&mut conn, rows.iter().map(|row| row.id).collect()).await?;
        let items = rows
            .into_iter()
            .map(|row| {
                let made = attempts.remove(&row.id).unwrap_or_default();
                delivery(row, made)
            })
            .collect();
        Ok(page(count, items))
    }

    async fn retry(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        id: DeliveryId,
    ) -> Result<Option<Delivery>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row: Option<DeliveryRow> = confirmed(
            diesel::update(
                webhook_deliveries::table
                    .filter(webhook_deliveries::project_id.eq(project.0))
                    .filter(webhook_deliveries::webhook_id.eq(webhook.0))
                    .filter(webhook_deliveries::id.eq(id.0)),
            )
            .set((
                webhook_deliveries::state.eq(DeliveryState::Pending.as_str()),
                webhook_deliveries::next_attempt_at.eq(diesel::dsl::now),
                webhook_deliveries::attempts_made.eq(0),
            ))
            .returning(DeliveryRow::as_returning()),
            &mut conn,
        )
        .await
        .optional_during("retrying a delivery")?;
        let Some(row) = row else {
            return Ok(None);
        };
        let mut attempts = attempts_of(&mut conn, vec![row.id]).await?;
        let made = attempts.remove(&row.id).unwrap_or_default();
        Ok(Some(delivery(row, made)))
    }

    async fn signing(
        &self,
        project: ProjectId,
        id: WebhookId,
    ) -> Result<Option<SigningTarget>, Unexpected> {
        let mut conn = self.database.connection().await?;
        let row = webhooks::table
            .filter(webhooks::project_id.eq(project.0))
            .filter(webhooks::id.eq(id.0))
            .select((
                webhooks::url,
                webhooks::format,
                webhooks::secret,
                webhooks::previous_secret,
                webhooks::previous_secret_expires_at,
            ))
            .first::<(
                String,
                String,
                String,
                Option<String>,
                Option<DateTime<Utc>>,
            )>(&mut conn)
            .await
            .optional_during("reading a webhook's target")?;
        Ok(row.map(|(url, format, secret, previous, expires)| {
            let mut secrets = vec![WebhookSecret::from_stored(secret)];
            if expires.is_some_and(|expires| expires > Utc::now()) {
                secrets.extend(previous.map(WebhookSecret::from_stored));
            }
            SigningTarget {
                url,
                format: WebhookFormat::parse(&format).unwrap_or_default(),
                secrets,
            }
        }))
    }

    async fn record_test(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        id: DeliveryId,
        body: &[u8],
        attempt: &Attempt,
        delivered: bool,
    ) -> Result<Delivery, Unexpected> {
        let state = if delivered {
            DeliveryState::Delivered
        } else {
            DeliveryState::Failed
        };
        let (status_code, duration_ms) = attempt_columns(attempt);
        let mut conn = self.database.connection().await?;
        diesel::sql_query(RECORD_TEST)
            .bind::<SqlUuid, _>(id.0)
            .bind::<Int4, _>(project.0)
            .bind::<SqlUuid, _>(webhook.0)
            .bind::<Varchar, _>(state.as_str())
            .bind::<Bytea, _>(body)
            .bind::<Timestamptz, _>(attempt.at)
            .bind::<Nullable<Int2>, _>(status_code)
            .bind::<Nullable<Text>, _>(attempt.error.as_deref())
            .bind::<Int4, _>(duration_ms)
            .execute(&mut conn)
            .await
            .during("recording a test delivery")?;
        Ok(Delivery {
            id,
            webhook_id: webhook,
            kind: DeliveryKind::Test,
            event_uuid: None,
            survey_id: None,
            state,
            next_attempt_at: None,
            attempts: vec![attempt.clone()],
            created_at: attempt.at,
        })
    }
}

/// The attempts of these deliveries, newest first, by delivery.
async fn attempts_of(
    conn: &mut crate::postgres::database::Connection,
    deliveries: Vec<Uuid>,
) -> Result<HashMap<Uuid, Vec<Attempt>>, Unexpected> {
    if deliveries.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = webhook_attempts::table
        .filter(webhook_attempts::delivery_id.eq_any(deliveries))
        .order((webhook_attempts::delivery_id, webhook_attempts::id.desc()))
        .select(AttemptRow::as_select())
        .load::<AttemptRow>(conn)
        .await
        .during("reading delivery attempts")?;
    let mut by_delivery: HashMap<Uuid, Vec<Attempt>> = HashMap::new();
    for row in rows {
        by_delivery
            .entry(row.delivery_id)
            .or_default()
            .push(row.into());
    }
    Ok(by_delivery)
}
