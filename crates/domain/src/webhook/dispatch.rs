//! The dispatcher: purge deleted webhooks' deliveries and fan captured answers out into
//! deliveries within the queue's bounds; apart from that, claim what is due and send it: sign,
//! send, and decide from the receiver's answer what happens next (Standard Webhooks' rules: 2xx
//! ends it, 410 switches the webhook off, 429/502/504 throttle and `retry-after` is honoured,
//! anything else is a failure retried on the schedule).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::Utc;
use futures_util::future::join_all;

use super::port::{Dropped, DueDelivery, NextStep, Settlement, SigningTarget};
use super::{
    Attempt, DeliveryId, DeliveryQueue, DisabledReason, QueueBounds, RetrySchedule, response_body,
    signature_header,
};
use crate::error::Unexpected;

/// One HTTP request a delivery attempt makes.
#[derive(Debug, Clone, PartialEq)]
pub struct Transmission<'a> {
    pub url: &'a str,
    /// `webhook-id`, `webhook-timestamp`, `webhook-signature` and `content-type`.
    pub headers: Vec<(&'static str, String)>,
    pub body: &'a [u8],
}

/// What a receiver did with a transmission.
#[derive(Debug, Clone, PartialEq)]
pub enum ReceiverAnswer {
    Status {
        code: u16,
        /// `retry-after`, in seconds, when the receiver sent one.
        retry_after: Option<Duration>,
    },
    /// No answer: refused or unresolvable address, timeout, connection error, redirect refused…
    Failed(String),
}

/// Sends signed requests to receivers. The adapter resolves the host itself, refuses addresses
/// the operator's policy does not allow, follows no redirect, and bounds time and answer size.
#[async_trait]
pub trait WebhookSender: Send + Sync {
    async fn send(&self, transmission: Transmission<'_>) -> ReceiverAnswer;
}

/// How the dispatcher drains the queue.
#[derive(Debug, Clone)]
pub struct DispatchSettings {
    /// Deliveries claimed per round (each a different webhook's), sent concurrently.
    pub batch: u32,
    /// What a round takes per project, and how large a backlog may grow.
    pub bounds: QueueBounds,
    /// How long a claim holds: longer than the sender's timeout, so a live node always settles
    /// before another may take the delivery over.
    pub lease: Duration,
    pub schedule: RetrySchedule,
    /// How long delivered and failed deliveries stay listed before they are forgotten.
    pub retention: Duration,
}

/// Finished deliveries forgotten per statement, so pruning never holds many locks at once.
const FORGET_BATCH: u32 = 1_000;

/// Deleted webhooks' deliveries purged per round, so a purge never holds many locks at once.
const PURGE_BATCH: u32 = 1_000;

/// Longest `retry-after` honoured, so a receiver cannot park a delivery for ever.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// What this node's dispatcher did with its attempts, for `/metrics`: counted as they happen,
/// read whenever the metrics are scraped.
#[derive(Debug, Default)]
pub struct DispatchCounts {
    delivered: AtomicU64,
    retried: AtomicU64,
    failed: AtomicU64,
    gone: AtomicU64,
    dropped_deliveries: AtomicU64,
    dropped_answers: AtomicU64,
}

impl DispatchCounts {
    /// Attempts so far by outcome: `delivered` (2xx), `retried` (failed, tried again later),
    /// `failed` (the schedule's last attempt failed), `gone` (410: the webhook was disabled).
    pub fn outcomes(&self) -> [(&'static str, u64); 4] {
        [
            ("delivered", self.delivered.load(Ordering::Relaxed)),
            ("retried", self.retried.load(Ordering::Relaxed)),
            ("failed", self.failed.load(Ordering::Relaxed)),
            ("gone", self.gone.load(Ordering::Relaxed)),
        ]
    }

    /// Backlog dropped so far because it outgrew its bounds: `delivery` (a webhook's oldest
    /// pending deliveries), `answer` (a project's oldest outbox entries, fanned out to none).
    pub fn dropped(&self) -> [(&'static str, u64); 2] {
        [
            ("delivery", self.dropped_deliveries.load(Ordering::Relaxed)),
            ("answer", self.dropped_answers.load(Ordering::Relaxed)),
        ]
    }

    fn count_dropped(&self, dropped: &Dropped) {
        let counter = match dropped.webhook {
            Some(_) => &self.dropped_deliveries,
            None => &self.dropped_answers,
        };
        counter.fetch_add(dropped.count, Ordering::Relaxed);
    }

    fn count(&self, settlement: &Settlement) {
        let counter = match (settlement.next, settlement.disable) {
            (NextStep::Delivered, _) => &self.delivered,
            (_, Some(DisabledReason::Gone)) => &self.gone,
            (NextStep::Failed, _) => &self.failed,
            (NextStep::RetryAt(_), _) => &self.retried,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Drains due deliveries: each node runs one, and they share the queue without sending a
/// delivery twice.
pub struct WebhookDispatcher {
    queue: Arc<dyn DeliveryQueue>,
    sender: Arc<dyn WebhookSender>,
    settings: DispatchSettings,
    counts: Arc<DispatchCounts>,
}

impl WebhookDispatcher {
    pub fn new(
        queue: Arc<dyn DeliveryQueue>,
        sender: Arc<dyn WebhookSender>,
        settings: DispatchSettings,
        counts: Arc<DispatchCounts>,
    ) -> Self {
        Self {
            queue,
            sender,
            settings,
            counts,
        }
    }

    /// Prepares the queue: purges a batch of deleted webhooks' deliveries, then fans out a
    /// bounded share of each project's captured answers, logging and counting what the bounds
    /// drop. Returns how much it did (deliveries purged and answers fanned out), so the caller
    /// can go again at once while there is more. Nodes run it apart from [`Self::send_due`], so
    /// slow receivers never hold answers back from becoming deliveries.
    ///
    /// # Errors
    /// `Unexpected` when storage fails (the answers stay in the outbox for the next try).
    pub async fn fan_out(&self) -> Result<u64, Unexpected> {
        let purged = self.queue.purge_deleted(PURGE_BATCH).await?;
        let fanned = self.queue.fan_out(&self.settings.bounds).await?;
        for dropped in &fanned.dropped {
            self.counts.count_dropped(dropped);
            match dropped.webhook {
                Some(webhook) => tracing::warn!(
                    project = dropped.project.0,
                    webhook = %webhook.0,
                    dropped = dropped.count,
                    "a webhook's backlog reached its bound: its oldest pending deliveries were dropped"
                ),
                None => tracing::warn!(
                    project = dropped.project.0,
                    dropped = dropped.count,
                    "a project's webhook outbox reached its bound: its oldest answers were dropped"
                ),
            }
        }
        Ok(purged + fanned.entries)
    }

    /// One round of sending: claims what is due (projects in turn), sends it concurrently, and
    /// stores each outcome. Returns how many deliveries were attempted, so the caller can go
    /// again at once while there is work.
    ///
    /// # Errors
    /// `Unexpected` when the queue cannot be read or an outcome cannot be stored (that delivery
    /// is then attempted again once its lease ends: at least once, never lost).
    pub async fn send_due(&self) -> Result<usize, Unexpected> {
        let due = self
            .queue
            .claim_due(
                self.settings.batch,
                self.settings.bounds.claims_per_project,
                self.settings.lease,
            )
            .await?;
        let attempted = due.len();
        let settled = join_all(due.into_iter().map(|delivery| async move {
            let id = delivery.id;
            let settlement = self.attempt(delivery).await;
            self.counts.count(&settlement);
            self.queue.settle(id, &settlement).await
        }))
        .await;
        settled.into_iter().collect::<Result<Vec<()>, _>>()?;
        Ok(attempted)
    }

    /// Forgets delivered and failed deliveries older than the retention, a batch at a time until
    /// none is left. Returns how many went.
    ///
    /// # Errors
    /// `Unexpected` when storage fails.
    pub async fn forget_finished(&self) -> Result<u64, Unexpected> {
        let Some(before) = chrono::Duration::from_std(self.settings.retention)
            .ok()
            .and_then(|retention| Utc::now().checked_sub_signed(retention))
        else {
            return Ok(0);
        };
        let mut forgotten = 0;
        loop {
            let batch = self.queue.forget_finished(before, FORGET_BATCH).await?;
            forgotten += batch;
            if batch < u64::from(FORGET_BATCH) {
                return Ok(forgotten);
            }
        }
    }

    async fn attempt(&self, delivery: DueDelivery) -> Settlement {
        let body = match (delivery.body, &delivery.sources) {
            (Some(body), _) => body,
            (None, Some(sources)) => response_body(sources, delivery.target.format),
            (None, None) => {
                return Settlement {
                    body: None,
                    attempt: Attempt {
                        at: Utc::now(),
                        status_code: None,
                        error: Some("The survey event this delivery was about is gone.".into()),
                        duration_ms: 0,
                    },
                    next: NextStep::Failed,
                    disable: None,
                };
            }
        };
        let (attempt, answer) =
            transmit(self.sender.as_ref(), &delivery.target, delivery.id, &body).await;
        let failed = delivery.attempts_made.saturating_add(1);
        let (next, disable) = match answer {
            ReceiverAnswer::Status { code, .. } if (200..300).contains(&code) => {
                (NextStep::Delivered, None)
            }
            // The receiver wants no more: stop, keeping the delivery for when its owner enables
            // the webhook again.
            ReceiverAnswer::Status { code: 410, .. } => {
                (NextStep::RetryAt(Utc::now()), Some(DisabledReason::Gone))
            }
            answer => match self.settings.schedule.delay_after(failed) {
                Some(delay) => {
                    let wait = match answer {
                        ReceiverAnswer::Status {
                            code: 429 | 502 | 504,
                            retry_after: Some(asked),
                        } => delay.max(asked.min(MAX_RETRY_AFTER)),
                        _ => delay,
                    };
                    let at = chrono::Duration::from_std(wait)
                        .ok()
                        .and_then(|wait| Utc::now().checked_add_signed(wait))
                        .unwrap_or_else(Utc::now);
                    (NextStep::RetryAt(at), None)
                }
                None => (NextStep::Failed, Some(DisabledReason::Failing)),
            },
        };
        Settlement {
            body: Some(body),
            attempt,
            next,
            disable,
        }
    }
}

/// Signs `body` for `target` under the delivery's `webhook-id` and sends it once: the attempt as
/// stored, and the receiver's answer.
pub(super) async fn transmit(
    sender: &dyn WebhookSender,
    target: &SigningTarget,
    id: DeliveryId,
    body: &[u8],
) -> (Attempt, ReceiverAnswer) {
    let message_id = id.message_id();
    let at = Utc::now();
    let timestamp = at.timestamp();
    let secrets: Vec<_> = target.secrets.iter().collect();
    let signature = signature_header(&secrets, &message_id, timestamp, body);
    let started = Instant::now();
    let answer = sender
        .send(Transmission {
            url: &target.url,
            headers: vec![
                ("content-type", "application/json".to_owned()),
                ("webhook-id", message_id),
                ("webhook-timestamp", timestamp.to_string()),
                ("webhook-signature", signature),
            ],
            body,
        })
        .await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let attempt = match &answer {
        ReceiverAnswer::Status { code, .. } => Attempt {
            at,
            status_code: Some(*code),
            error: None,
            duration_ms,
        },
        ReceiverAnswer::Failed(error) => Attempt {
            at,
            status_code: None,
            error: Some(error.clone()),
            duration_ms,
        },
    };
    (attempt, answer)
}
