//! The ports of stored webhooks and of the delivery queue the dispatcher drains.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{
    Attempt, Delivery, DeliveryId, DisabledReason, QueueBounds, ResponseEventSources, Webhook,
    WebhookFormat, WebhookId, WebhookSecret, WebhookSettings,
};
use crate::activity::{ActivityPage, NewActivity};
use crate::error::Unexpected;
use crate::ports::{Page, PageRequest, Transaction};
use crate::survey::SurveyId;
use crate::tenancy::ProjectId;

/// Webhooks and their deliveries as their owners manage them. Deliveries of response events are
/// not made here: `SurveyResponseRepository::record` writes each answer to the outbox with the
/// response, and the dispatcher fans it out ([`DeliveryQueue::fan_out`]).
#[async_trait]
pub trait WebhookRepository: Send + Sync {
    /// The project's webhooks, newest first (ties by id, descending).
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<Webhook>, Unexpected>;

    async fn get(&self, project: ProjectId, id: WebhookId) -> Result<Option<Webhook>, Unexpected>;

    /// Which of `surveys` the project does not have.
    async fn missing_surveys(
        &self,
        project: ProjectId,
        surveys: &[SurveyId],
    ) -> Result<Vec<SurveyId>, Unexpected>;

    /// The webhook's deliveries with their attempts, newest first: the order they were made
    /// in, reversed (one answer's deliveries are made together).
    async fn deliveries(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        page: PageRequest,
    ) -> Result<Page<Delivery>, Unexpected>;

    /// Makes a delivery due now, with a fresh set of attempts (its past attempts stay listed).
    /// `None` when the webhook has no such delivery.
    async fn retry(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        delivery: DeliveryId,
    ) -> Result<Option<Delivery>, Unexpected>;

    /// Opens a transaction for a webhook write and its activity entry.
    async fn begin(&self) -> Result<Box<dyn WebhookTransaction>, Unexpected>;

    /// The project's webhook activity, or one webhook's, newest first (ties by id,
    /// descending). Entries outlive their webhook.
    async fn activity(
        &self,
        project: ProjectId,
        webhook: Option<WebhookId>,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected>;

    /// What signing and sending to the webhook takes, for a test send.
    async fn signing(
        &self,
        project: ProjectId,
        id: WebhookId,
    ) -> Result<Option<SigningTarget>, Unexpected>;

    /// Stores a test delivery that was sent once (delivered or failed, never retried).
    async fn record_test(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        id: DeliveryId,
        body: &[u8],
        attempt: &Attempt,
        delivered: bool,
    ) -> Result<Delivery, Unexpected>;
}

/// The primitives a webhook write is made of, in one transaction; the sequence is the service's.
#[async_trait]
pub trait WebhookTransaction: Transaction {
    /// The project's webhook, locked until the transaction ends.
    async fn lock(
        &mut self,
        project: ProjectId,
        id: WebhookId,
    ) -> Result<Option<Webhook>, Unexpected>;

    /// Stores a new webhook with its secret.
    async fn insert(
        &mut self,
        project: ProjectId,
        settings: &WebhookSettings,
        secret: &WebhookSecret,
    ) -> Result<Webhook, Unexpected>;

    /// Stores a locked webhook's new settings, disabled reason and failure count, as given.
    async fn update(&mut self, webhook: &Webhook) -> Result<Webhook, Unexpected>;

    /// Replaces a locked webhook's secret; the replaced one keeps signing (beside the new one)
    /// until `previous_until`.
    async fn set_secret(
        &mut self,
        project: ProjectId,
        id: WebhookId,
        secret: &WebhookSecret,
        previous_until: DateTime<Utc>,
    ) -> Result<(), Unexpected>;

    /// Deletes a locked webhook at once, whatever its backlog: it is sent nothing more, and its
    /// deliveries are purged later, in batches ([`DeliveryQueue::purge_deleted`]).
    async fn delete(&mut self, project: ProjectId, id: WebhookId) -> Result<(), Unexpected>;

    async fn log_activity(
        &mut self,
        project: ProjectId,
        id: WebhookId,
        activity: &NewActivity,
    ) -> Result<(), Unexpected>;
}

/// Where and how a webhook's deliveries are sent.
#[derive(Debug, Clone, PartialEq)]
pub struct SigningTarget {
    pub url: String,
    pub format: WebhookFormat,
    /// The current secret first, then a rotated-out one still honoured.
    pub secrets: Vec<WebhookSecret>,
}

/// A delivery the dispatcher claimed: nobody else attempts it until its lease ends.
#[derive(Debug, Clone, PartialEq)]
pub struct DueDelivery {
    pub id: DeliveryId,
    pub webhook: WebhookId,
    pub target: SigningTarget,
    /// The body of its earlier attempts; `None` before the first, when it is built from
    /// `sources`.
    pub body: Option<Vec<u8>>,
    /// What the body is built from; `None` when the event is gone (then the delivery fails).
    pub sources: Option<ResponseEventSources>,
    /// Attempts made since it was created or retried by hand.
    pub attempts_made: u32,
}

/// How an attempt ended, for the queue to store.
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    /// The body sent, stored at the first attempt so every retry sends the same bytes; `None`
    /// when nothing could be built to send.
    pub body: Option<Vec<u8>>,
    pub attempt: Attempt,
    pub next: NextStep,
    /// Switch the webhook off, saying why.
    pub disable: Option<DisabledReason>,
}

/// What becomes of a delivery after an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NextStep {
    Delivered,
    /// Try again at this time (or when the webhook is enabled again, if it is not).
    RetryAt(DateTime<Utc>),
    /// No attempts left.
    Failed,
}

/// What one fan-out did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FanOut {
    /// Outbox entries taken (captured answers).
    pub entries: u64,
    /// Deliveries made of them.
    pub deliveries: u64,
    /// What the bounds dropped.
    pub dropped: Vec<Dropped>,
}

/// Backlog dropped because it outgrew its [`QueueBounds`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub project: ProjectId,
    /// The webhook whose oldest pending deliveries were dropped; `None`: the project's oldest
    /// outbox entries (answers then delivered to none of its webhooks).
    pub webhook: Option<WebhookId>,
    pub count: u64,
}

/// The deliveries every node's dispatcher drains.
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Turns captured answers waiting in the outbox into deliveries: up to
    /// `bounds.fan_out_per_project` of each project's oldest entries, each becoming a delivery
    /// of its kinds (`created` or `updated`, and `completed` when it completes its submission)
    /// for every enabled webhook of the project subscribed to the kind and the survey
    /// (`survey_ids`, compared lowercased), made in each webhook's order (capture order, then
    /// created/updated before completed). An entry whose event was deleted meanwhile makes
    /// nothing. Then applies the bounds: a webhook keeps its newest
    /// `min(pending_per_webhook, pending_per_project / the project's enabled webhooks)` pending
    /// deliveries, a project's outbox its newest `outbox_per_project` entries; the rest is
    /// dropped and reported. One fan-out runs at a time across nodes (another finds nothing to
    /// do), so a webhook's deliveries are made in order.
    ///
    /// # Errors
    /// `Unexpected` when storage fails (nothing is taken then).
    async fn fan_out(&self, bounds: &QueueBounds) -> Result<FanOut, Unexpected>;

    /// Claims up to `limit` due deliveries of enabled webhooks, each the oldest pending one of
    /// its webhook (so a webhook's deliveries go out one at a time, in the order they were
    /// made), at most `per_project` of a project, every project's first before any project's
    /// second (then by due time), leasing them for `lease`: a node that dies mid-send leaves its
    /// claim to be taken again after it. Concurrent claims never return the same delivery. Its
    /// cost grows with the number of webhooks, not with their backlog.
    async fn claim_due(
        &self,
        limit: u32,
        per_project: u32,
        lease: Duration,
    ) -> Result<Vec<DueDelivery>, Unexpected>;

    /// Stores an attempt and its consequences: the delivery's state, the webhook's failure
    /// count (reset by a delivered attempt), and the webhook switched off if asked. A delivery
    /// dropped or purged meanwhile stores nothing.
    async fn settle(&self, id: DeliveryId, settlement: &Settlement) -> Result<(), Unexpected>;

    /// Deletes up to `limit` deliveries (with their attempts) of webhooks that were deleted.
    /// Returns how many went.
    async fn purge_deleted(&self, limit: u32) -> Result<u64, Unexpected>;

    /// Deletes up to `limit` delivered or failed deliveries made before `before`, with their
    /// attempts; pending ones are kept however old. Returns how many went.
    async fn forget_finished(&self, before: DateTime<Utc>, limit: u32) -> Result<u64, Unexpected>;
}
