//! The use cases of `/webhooks/`: manage a project's webhooks, rotate their secrets, read and
//! retry their deliveries, send a test.

use std::sync::Arc;

use chrono::{Duration, Utc};
use uuid::Uuid;

use super::activity;
use super::dispatch::{ReceiverAnswer, WebhookSender, transmit};
use super::payload::test_body;
use super::{
    Delivery, DeliveryId, HostResolver, TargetPolicy, Webhook, WebhookChanges, WebhookId,
    WebhookRepository, WebhookSecret, WebhookSettings,
};
use crate::activity::ActivityPage;
use crate::error::OrNotFound as _;
use crate::error::{DomainError, ValidationError};
use crate::in_transaction;
use crate::ports::{Page, PageRequest};
use crate::survey::SurveyId;
use crate::tenancy::{ProjectId, UserId};

/// How long a rotated-out secret keeps signing beside the new one, so receivers can switch
/// without dropping deliveries.
const ROTATION_OVERLAP: Duration = Duration::hours(24);

/// A webhook with its secret, as create and rotation answer (the only times it is shown).
#[derive(Debug, Clone)]
pub struct CreatedWebhook {
    pub webhook: Webhook,
    pub secret: WebhookSecret,
}

pub struct WebhookService {
    webhooks: Arc<dyn WebhookRepository>,
    resolver: Arc<dyn HostResolver>,
    sender: Arc<dyn WebhookSender>,
    policy: TargetPolicy,
}

impl WebhookService {
    pub fn new(
        webhooks: Arc<dyn WebhookRepository>,
        resolver: Arc<dyn HostResolver>,
        sender: Arc<dyn WebhookSender>,
        policy: TargetPolicy,
    ) -> Self {
        Self {
            webhooks,
            resolver,
            sender,
            policy,
        }
    }

    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<Webhook>, DomainError> {
        Ok(self.webhooks.list(project, page).await?)
    }

    /// # Errors
    /// `NotFound` for a webhook the project does not have.
    pub async fn get(&self, project: ProjectId, id: WebhookId) -> Result<Webhook, DomainError> {
        self.webhooks.get(project, id).await?.or_not_found()
    }

    /// # Errors
    /// `Invalid` for a URL the policy refuses (literally or after DNS), no events, or surveys
    /// the project does not have.
    pub async fn create(
        &self,
        project: ProjectId,
        user: UserId,
        mut settings: WebhookSettings,
    ) -> Result<CreatedWebhook, DomainError> {
        self.check_url(&settings.url).await?;
        settings.events = events(settings.events)?;
        settings.survey_ids = self.surveys(project, settings.survey_ids).await?;
        let secret = WebhookSecret::generate();
        let webhook = in_transaction!(self.webhooks.begin(), |transaction| {
            let webhook = transaction.insert(project, &settings, &secret).await?;
            transaction
                .log_activity(project, webhook.id, &activity::created(&settings, user))
                .await?;
            Ok(webhook)
        })?;
        Ok(CreatedWebhook { webhook, secret })
    }

    /// # Errors
    /// `NotFound`, or `Invalid` as for create.
    pub async fn update(
        &self,
        project: ProjectId,
        user: UserId,
        id: WebhookId,
        mut changes: WebhookChanges,
    ) -> Result<Webhook, DomainError> {
        if let Some(url) = &changes.url {
            self.check_url(url).await?;
        }
        changes.events = changes.events.map(events).transpose()?;
        if let Some(surveys) = changes.survey_ids.take() {
            changes.survey_ids = Some(self.surveys(project, surveys).await?);
        }
        let reenabled = changes.enabled == Some(true);
        in_transaction!(self.webhooks.begin(), |transaction| {
            let current = transaction.lock(project, id).await?.or_not_found()?;
            let mut changed = current.clone();
            changed.settings = current.settings.changed(changes);
            if reenabled {
                // Enabled by its owner: what made Burrow disable it no longer stands.
                changed.disabled_reason = None;
                changed.consecutive_failures = 0;
            }
            let updated = transaction.update(&changed).await?;
            if let Some(entry) = activity::updated(&current.settings, &changed.settings, user) {
                transaction.log_activity(project, id, &entry).await?;
            }
            Ok(updated)
        })
    }

    /// Deletes the webhook and its deliveries, sent or not.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn delete(
        &self,
        project: ProjectId,
        user: UserId,
        id: WebhookId,
    ) -> Result<(), DomainError> {
        in_transaction!(self.webhooks.begin(), |transaction| {
            let current = transaction.lock(project, id).await?.or_not_found()?;
            transaction.delete(project, id).await?;
            transaction
                .log_activity(project, id, &activity::deleted(&current.settings, user))
                .await?;
            Ok(())
        })
    }

    /// A new secret; the old one keeps signing beside it for a day.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn rotate_secret(
        &self,
        project: ProjectId,
        user: UserId,
        id: WebhookId,
    ) -> Result<CreatedWebhook, DomainError> {
        let secret = WebhookSecret::generate();
        let until = Utc::now() + ROTATION_OVERLAP;
        let webhook = in_transaction!(self.webhooks.begin(), |transaction| {
            let webhook = transaction.lock(project, id).await?.or_not_found()?;
            transaction.set_secret(project, id, &secret, until).await?;
            transaction
                .log_activity(
                    project,
                    id,
                    &activity::secret_rotated(&webhook.settings, user),
                )
                .await?;
            Ok(webhook)
        })?;
        Ok(CreatedWebhook { webhook, secret })
    }

    /// The project's webhook activity, or one webhook's (404 for a webhook the project does
    /// not have any more).
    ///
    /// # Errors
    /// `NotFound`; `Unexpected` when storage fails.
    pub async fn activity(
        &self,
        project: ProjectId,
        webhook: Option<WebhookId>,
        page: PageRequest,
    ) -> Result<ActivityPage, DomainError> {
        if let Some(id) = webhook {
            self.get(project, id).await?;
        }
        Ok(self.webhooks.activity(project, webhook, page).await?)
    }

    /// # Errors
    /// `NotFound` for a webhook the project does not have.
    pub async fn deliveries(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        page: PageRequest,
    ) -> Result<Page<Delivery>, DomainError> {
        self.get(project, webhook).await?;
        Ok(self.webhooks.deliveries(project, webhook, page).await?)
    }

    /// Makes the delivery due now, with the schedule's attempts afresh.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` while the webhook is disabled (it would not be sent).
    pub async fn retry(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        delivery: DeliveryId,
    ) -> Result<Delivery, DomainError> {
        if !self.get(project, webhook).await?.settings.enabled {
            return Err(ValidationError::invalid_input(
                "This webhook is disabled: enable it to retry its deliveries.",
            )
            .into());
        }
        self.webhooks
            .retry(project, webhook, delivery)
            .await?
            .or_not_found()
    }

    /// Sends a sample `webhook.test` event now, once, and records it among the deliveries.
    ///
    /// # Errors
    /// `NotFound`.
    pub async fn test(&self, project: ProjectId, id: WebhookId) -> Result<Delivery, DomainError> {
        let target = self.webhooks.signing(project, id).await?.or_not_found()?;
        let body = test_body(project, target.format, Utc::now());
        let delivery = DeliveryId(Uuid::now_v7());
        let (attempt, answer) = transmit(self.sender.as_ref(), &target, delivery, &body).await;
        let delivered = matches!(
            answer,
            ReceiverAnswer::Status { code, .. } if (200..300).contains(&code)
        );
        Ok(self
            .webhooks
            .record_test(project, id, delivery, &body, &attempt, delivered)
            .await?)
    }

    async fn check_url(&self, text: &str) -> Result<(), ValidationError> {
        let url = self.policy.url(text)?;
        self.policy
            .check_resolved(&url, self.resolver.as_ref())
            .await
    }

    /// The survey filter without repeats, every survey the project's.
    async fn surveys(
        &self,
        project: ProjectId,
        surveys: Option<Vec<SurveyId>>,
    ) -> Result<Option<Vec<SurveyId>>, DomainError> {
        let Some(mut surveys) = surveys else {
            return Ok(None);
        };
        if surveys.is_empty() {
            return Err(ValidationError::invalid(
                "survey_ids",
                "Choose at least one survey, or null for every survey.",
            )
            .into());
        }
        surveys.sort_unstable();
        surveys.dedup();
        if let Some(missing) = self
            .webhooks
            .missing_surveys(project, &surveys)
            .await?
            .first()
        {
            return Err(ValidationError::invalid(
                "survey_ids",
                format!("Survey {} does not exist in this project.", missing.0),
            )
            .into());
        }
        Ok(Some(surveys))
    }
}

/// The events sorted and without repeats; at least one.
fn events(
    mut events: Vec<super::WebhookEvent>,
) -> Result<Vec<super::WebhookEvent>, ValidationError> {
    events.sort_unstable();
    events.dedup();
    if events.is_empty() {
        return Err(ValidationError::invalid(
            "events",
            "Choose at least one event.",
        ));
    }
    Ok(events)
}
