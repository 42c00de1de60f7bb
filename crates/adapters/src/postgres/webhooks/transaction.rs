//! `WebhookTransaction` on `PgTransaction`: the primitives a webhook write runs inside the
//! domain's unit of work (lock, insert, update, rotate the secret, delete, log activity).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::Unexpected;
use domain::activity::NewActivity;
use domain::tenancy::ProjectId;
use domain::webhook::{
    DisabledReason, Webhook, WebhookEvent, WebhookId, WebhookSecret, WebhookSettings,
    WebhookTransaction,
};
use uuid::Uuid;

use super::survey_uuids;
use crate::postgres::errors::StorageContext;
use crate::postgres::rows::{NewWebhookActivityRow, WebhookRow};
use crate::postgres::schema::{webhook_activity, webhooks};
use crate::postgres::transaction::PgTransaction;

#[async_trait]
impl WebhookTransaction for PgTransaction {
    async fn lock(
        &mut self,
        project: ProjectId,
        id: WebhookId,
    ) -> Result<Option<Webhook>, Unexpected> {
        let row = webhooks::table
            .filter(webhooks::project_id.eq(project.0))
            .filter(webhooks::id.eq(id.0))
            .select(WebhookRow::as_select())
            .for_update()
            .first::<WebhookRow>(self.connection().await?)
            .await
            .optional_during("locking a webhook")?;
        Ok(row.map(Webhook::from))
    }

    async fn insert(
        &mut self,
        project: ProjectId,
        settings: &WebhookSettings,
        secret: &WebhookSecret,
    ) -> Result<Webhook, Unexpected> {
        let row = diesel::insert_into(webhooks::table)
            .values((
                webhooks::id.eq(Uuid::now_v7()),
                webhooks::project_id.eq(project.0),
                webhooks::url.eq(&settings.url),
                webhooks::events.eq(event_names(&settings.events)),
                webhooks::survey_ids.eq(settings.survey_ids.as_deref().map(survey_uuids)),
                webhooks::format.eq(settings.format.as_str()),
                webhooks::enabled.eq(settings.enabled),
                webhooks::description.eq(&settings.description),
                webhooks::secret.eq(secret.expose()),
            ))
            .returning(WebhookRow::as_returning())
            .get_result::<WebhookRow>(self.connection().await?)
            .await
            .during("creating a webhook")?;
        Ok(row.into())
    }

    async fn update(&mut self, webhook: &Webhook) -> Result<Webhook, Unexpected> {
        let settings = &webhook.settings;
        let row = diesel::update(
            webhooks::table
                .filter(webhooks::project_id.eq(webhook.project_id.0))
                .filter(webhooks::id.eq(webhook.id.0)),
        )
        .set((
            webhooks::url.eq(&settings.url),
            webhooks::events.eq(event_names(&settings.events)),
            webhooks::survey_ids.eq(settings.survey_ids.as_deref().map(survey_uuids)),
            webhooks::format.eq(settings.format.as_str()),
            webhooks::enabled.eq(settings.enabled),
            webhooks::description.eq(&settings.description),
            webhooks::disabled_reason.eq(webhook.disabled_reason.map(DisabledReason::as_str)),
            webhooks::consecutive_failures
                .eq(i32::try_from(webhook.consecutive_failures).unwrap_or(i32::MAX)),
            webhooks::updated_at.eq(diesel::dsl::now),
        ))
        .returning(WebhookRow::as_returning())
        .get_result::<WebhookRow>(self.connection().await?)
        .await
        .during("changing a webhook")?;
        Ok(row.into())
    }

    async fn set_secret(
        &mut self,
        project: ProjectId,
        id: WebhookId,
        secret: &WebhookSecret,
        previous_until: DateTime<Utc>,
    ) -> Result<(), Unexpected> {
        diesel::update(
            webhooks::table
                .filter(webhooks::project_id.eq(project.0))
                .filter(webhooks::id.eq(id.0)),
        )
        .set((
            webhooks::previous_secret.eq(webhooks::secret.nullable()),
            webhooks::previous_secret_expires_at.eq(previous_until),
            webhooks::secret.eq(secret.expose()),
            webhooks::updated_at.eq(diesel::dsl::now),
        ))
        .execute(self.connection().await?)
        .await
        .during("rotating a webhook's secret")?;
        Ok(())
    }

    async fn delete(&mut self, project: ProjectId, id: WebhookId) -> Result<(), Unexpected> {
        diesel::delete(
            webhooks::table
                .filter(webhooks::project_id.eq(project.0))
                .filter(webhooks::id.eq(id.0)),
        )
        .execute(self.connection().await?)
        .await
        .during("deleting a webhook")?;
        Ok(())
    }

    async fn log_activity(
        &mut self,
        project: ProjectId,
        id: WebhookId,
        activity: &NewActivity,
    ) -> Result<(), Unexpected> {
        diesel::insert_into(webhook_activity::table)
            .values(NewWebhookActivityRow::new(project, id, activity))
            .execute(self.connection().await?)
            .await
            .during("logging a webhook's activity")?;
        Ok(())
    }
}

fn event_names(events: &[WebhookEvent]) -> Vec<&'static str> {
    events.iter().map(|event| event.as_str()).collect()
}
