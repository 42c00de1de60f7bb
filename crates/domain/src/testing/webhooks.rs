//! The webhook and delivery queue ports, faked: webhooks with their current and rotated-out
//! secrets, the outbox of captured answers (written by the fake's
//! `SurveyResponseRepository::record` through `State::write_outbox`) fanned out within the
//! queue's bounds, and deliveries kept in the order they were made (a sequence number), drained
//! one webhook head at a time, projects in turn.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::transaction::Draft;
use crate::activity::{ActivityEntry, ActivityPage, NewActivity};
use crate::error::Unexpected;
use crate::ports::{Page, PageRequest};
use crate::survey::SurveyId;
use crate::survey_response::{SurveyEvent, SurveyEventKind};
use crate::tenancy::{ProjectId, UserId};
use crate::webhook::{
    ACTIVITY_SCOPE, Attempt, Delivery, DeliveryId, DeliveryKind, DeliveryQueue, DeliveryState,
    Dropped, DueDelivery, FanOut, NextStep, PayloadSurvey, QueueBounds, ResponseEventSources,
    Settlement, SigningTarget, Webhook, WebhookEvent, WebhookId, WebhookRepository, WebhookSecret,
    WebhookSettings, WebhookTransaction, completes,
};

use super::{InMemoryStore, State, page_of};

/// A webhook with its secrets, as the adapter's row keeps them.
#[derive(Debug, Clone)]
pub(super) struct StoredWebhook {
    webhook: Webhook,
    secret: WebhookSecret,
    /// The secret a rotation replaced, and until when it still signs.
    previous: Option<(WebhookSecret, DateTime<Utc>)>,
}

/// A delivery with what the queue keeps beside what its owner sees.
#[derive(Debug, Clone)]
pub(super) struct StoredDelivery {
    id: DeliveryId,
    webhook: WebhookId,
    project: ProjectId,
    kind: DeliveryKind,
    event_uuid: Option<Uuid>,
    survey_id: Option<String>,
    state: DeliveryState,
    /// Attempts since it was made or retried by hand (what the schedule counts).
    attempts_made: u32,
    /// When it is due; a claim moves it past its lease.
    next_attempt_at: Option<DateTime<Utc>>,
    /// The bytes of its first attempt, resent by every later one.
    body: Option<Vec<u8>>,
    /// Oldest first.
    attempts: Vec<Attempt>,
    /// The order deliveries were made in, which a webhook's are sent in.
    sequence: u64,
    created_at: DateTime<Utc>,
}

impl StoredDelivery {
    fn view(&self) -> Delivery {
        Delivery {
            id: self.id,
            webhook_id: self.webhook,
            kind: self.kind,
            event_uuid: self.event_uuid,
            survey_id: self.survey_id.clone(),
            state: self.state,
            next_attempt_at: self.next_attempt_at,
            attempts: self.attempts.iter().rev().cloned().collect(),
            created_at: self.created_at,
        }
    }
}

/// A captured answer waiting to be fanned out: one per new `survey sent`, whatever the number of
/// webhooks.
#[derive(Debug, Clone)]
pub(super) struct OutboxEntry {
    project: ProjectId,
    event_uuid: Uuid,
    survey_id: String,
    /// The send created its submission's response (else it updated it).
    created: bool,
    completes: bool,
}

impl OutboxEntry {
    /// The delivery kinds it makes, in the order a webhook gets them.
    fn kinds(&self) -> Vec<WebhookEvent> {
        let first = if self.created {
            WebhookEvent::ResponseCreated
        } else {
            WebhookEvent::ResponseUpdated
        };
        let mut kinds = vec![first];
        if self.completes {
            kinds.push(WebhookEvent::ResponseCompleted);
        }
        kinds
    }
}

/// A fresh delivery: what differs between a fanned-out answer's and a test's.
struct NewDelivery {
    id: DeliveryId,
    webhook: WebhookId,
    project: ProjectId,
    kind: DeliveryKind,
    event_uuid: Option<Uuid>,
    survey_id: Option<String>,
    state: DeliveryState,
    next_attempt_at: Option<DateTime<Utc>>,
    body: Option<Vec<u8>>,
    attempts: Vec<Attempt>,
}

impl State {
    fn webhook(&self, project: ProjectId, id: WebhookId) -> Option<&StoredWebhook> {
        self.webhooks
            .iter()
            .find(|w| w.webhook.project_id == project && w.webhook.id == id)
    }

    fn webhook_mut(&mut self, project: ProjectId, id: WebhookId) -> Option<&mut StoredWebhook> {
        self.webhooks
            .iter_mut()
            .find(|w| w.webhook.project_id == project && w.webhook.id == id)
    }

    fn push_delivery(&mut self, new: NewDelivery) -> &StoredDelivery {
        self.delivery_sequence += 1;
        let attempts_made = u32::try_from(new.attempts.len()).unwrap_or(u32::MAX);
        self.deliveries.push(StoredDelivery {
            id: new.id,
            webhook: new.webhook,
            project: new.project,
            kind: new.kind,
            event_uuid: new.event_uuid,
            survey_id: new.survey_id,
            state: new.state,
            attempts_made,
            next_attempt_at: new.next_attempt_at,
            body: new.body,
            attempts: new.attempts,
            sequence: self.delivery_sequence,
            created_at: Utc::now(),
        });
        self.deliveries.last().expect("just pushed")
    }

    /// The outbox: an entry for each of `sends` (the new `survey sent` events of one `record`)
    /// when the project has an enabled webhook. `created` holds the `(survey id, submission
    /// key)` of the responses that call created; the earliest send of each is `created`, every
    /// other `updated`.
    pub(super) fn write_outbox(
        &mut self,
        project: ProjectId,
        mut sends: Vec<SurveyEvent>,
        created: &BTreeSet<(String, String)>,
    ) {
        if !self
            .webhooks
            .iter()
            .any(|w| w.webhook.project_id == project && w.webhook.settings.enabled)
        {
            return;
        }
        sends.sort_by_key(|event| (event.timestamp, event.uuid));
        let mut announced = BTreeSet::new();
        for event in sends {
            let submission = (event.survey_id.clone(), event.submission_key());
            self.webhook_outbox.push(OutboxEntry {
                project,
                event_uuid: event.uuid,
                created: created.contains(&submission) && announced.insert(submission),
                completes: completes(&event),
                survey_id: event.survey_id,
            });
        }
    }

    /// The deliveries of one outbox entry, for every enabled webhook of its project subscribed
    /// to each of its kinds and to its survey; nothing when its event is gone. Returns the
    /// webhooks that got one.
    fn fan_out_entry(&mut self, entry: &OutboxEntry) -> BTreeSet<WebhookId> {
        let project = entry.project;
        let mut touched = BTreeSet::new();
        if !self
            .survey_events
            .iter()
            .any(|(p, e)| *p == project && e.uuid == entry.event_uuid)
        {
            return touched;
        }
        let survey = entry.survey_id.to_ascii_lowercase();
        let subscribed: Vec<(WebhookId, Vec<WebhookEvent>)> = self
            .webhooks
            .iter()
            .map(|w| &w.webhook)
            .filter(|w| {
                w.project_id == project
                    && w.settings.enabled
                    && w.settings
                        .survey_ids
                        .as_ref()
                        .is_none_or(|ids| ids.iter().any(|id| id.0.to_string() == survey))
            })
            .map(|w| (w.id, w.settings.events.clone()))
            .collect();
        let now = Utc::now();
        for kind in entry.kinds() {
            for (webhook, events) in &subscribed {
                if events.contains(&kind) {
                    touched.insert(*webhook);
                    self.push_delivery(NewDelivery {
                        id: DeliveryId(Uuid::now_v7()),
                        webhook: *webhook,
                        project,
                        kind: DeliveryKind::Response(kind),
                        event_uuid: Some(entry.event_uuid),
                        survey_id: Some(entry.survey_id.clone()),
                        state: DeliveryState::Pending,
                        next_attempt_at: Some(now),
                        body: None,
                        attempts: Vec::new(),
                    });
                }
            }
        }
        touched
    }

    /// Drops the webhook's oldest pending deliveries past what its bound keeps.
    fn bound_webhook(&mut self, webhook: WebhookId, bounds: &QueueBounds) -> Option<Dropped> {
        let project = self
            .webhooks
            .iter()
            .find(|w| w.webhook.id == webhook)?
            .webhook
            .project_id;
        let enabled = self
            .webhooks
            .iter()
            .filter(|w| w.webhook.project_id == project && w.webhook.settings.enabled)
            .count();
        let shared =
            usize::try_from(bounds.pending_per_project).unwrap_or(usize::MAX) / enabled.max(1);
        let keep = shared.min(usize::try_from(bounds.pending_per_webhook).unwrap_or(usize::MAX));
        let mut pending: Vec<u64> = self
            .deliveries
            .iter()
            .filter(|d| d.webhook == webhook && d.state == DeliveryState::Pending)
            .map(|d| d.sequence)
            .collect();
        let excess = pending.len().checked_sub(keep).filter(|&n| n > 0)?;
        pending.sort_unstable();
        let cutoff = pending[excess - 1];
        self.deliveries.retain(|d| {
            !(d.webhook == webhook && d.state == DeliveryState::Pending && d.sequence <= cutoff)
        });
        Some(Dropped {
            project,
            webhook: Some(webhook),
            count: u64::try_from(excess).unwrap_or(u64::MAX),
        })
    }

    /// Drops the project's oldest outbox entries past `keep`.
    fn bound_outbox(&mut self, project: ProjectId, keep: u32) -> Option<Dropped> {
        let waiting = self
            .webhook_outbox
            .iter()
            .filter(|e| e.project == project)
            .count();
        let mut excess = waiting
            .checked_sub(usize::try_from(keep).unwrap_or(usize::MAX))
            .filter(|&n| n > 0)?;
        let count = u64::try_from(excess).unwrap_or(u64::MAX);
        self.webhook_outbox.retain(|e| {
            let drop = e.project == project && excess > 0;
            if drop {
                excess -= 1;
            }
            !drop
        });
        Some(Dropped {
            project,
            webhook: None,
            count,
        })
    }

    /// What a response delivery's body is built from; `None` for a test, or when its event is
    /// gone.
    fn sources(&self, delivery: &StoredDelivery) -> Option<ResponseEventSources> {
        let DeliveryKind::Response(event_type) = delivery.kind else {
            return None;
        };
        let project = delivery.project;
        let uuid = delivery.event_uuid?;
        let event = self
            .survey_events
            .iter()
            .find(|(p, e)| *p == project && e.uuid == uuid)
            .map(|(_, e)| e.clone())?;
        let survey = self
            .surveys
            .iter()
            .find(|s| s.project_id == project && s.id.0.to_string() == event.survey_id)
            .map(|s| PayloadSurvey {
                name: s.state.name.clone(),
                questions: s.state.questions.clone(),
            });
        let key = event.submission_key();
        let mut submission: Vec<&SurveyEvent> = self
            .survey_events
            .iter()
            .filter(|(p, e)| {
                *p == project
                    && e.kind == SurveyEventKind::Sent
                    && e.survey_id == event.survey_id
                    && e.submission_key() == key
                    && (e.timestamp, e.uuid) <= (event.timestamp, event.uuid)
            })
            .map(|(_, e)| e)
            .collect();
        submission.sort_by_key(|e| (e.timestamp, e.uuid));
        let submission_events = submission.into_iter().map(|e| e.uuid).collect();
        Some(ResponseEventSources {
            event_type,
            project,
            event,
            survey,
            submission_events,
        })
    }
}

impl State {
    /// Drops the pending deliveries about these events, as deleting the events does.
    pub(super) fn drop_pending_deliveries(&mut self, project: ProjectId, events: &[Uuid]) {
        self.deliveries.retain(|d| {
            !(d.project == project
                && d.state == DeliveryState::Pending
                && d.event_uuid.is_some_and(|uuid| events.contains(&uuid)))
        });
    }
}

impl StoredWebhook {
    fn signing(&self, now: DateTime<Utc>) -> SigningTarget {
        let previous = self
            .previous
            .iter()
            .filter(|(_, until)| *until > now)
            .map(|(secret, _)| secret.clone());
        SigningTarget {
            url: self.webhook.settings.url.clone(),
            format: self.webhook.settings.format,
            secrets: std::iter::once(self.secret.clone())
                .chain(previous)
                .collect(),
        }
    }
}

#[async_trait]
impl WebhookRepository for InMemoryStore {
    async fn list(
        &self,
        project: ProjectId,
        page: PageRequest,
    ) -> Result<Page<Webhook>, Unexpected> {
        let state = self.lock();
        let mut webhooks: Vec<&Webhook> = state
            .webhooks
            .iter()
            .map(|w| &w.webhook)
            .filter(|w| w.project_id == project)
            .collect();
        webhooks.sort_by_key(|w| std::cmp::Reverse((w.created_at, w.id)));
        Ok(page_of(webhooks, page).map(Clone::clone))
    }

    async fn get(&self, project: ProjectId, id: WebhookId) -> Result<Option<Webhook>, Unexpected> {
        Ok(self.lock().webhook(project, id).map(|w| w.webhook.clone()))
    }

    async fn begin(&self) -> Result<Box<dyn WebhookTransaction>, Unexpected> {
        Ok(Box::new(Draft::begin(self).await))
    }

    async fn activity(
        &self,
        project: ProjectId,
        webhook: Option<WebhookId>,
        page: PageRequest,
    ) -> Result<ActivityPage, Unexpected> {
        let state = self.lock();
        let logged = state
            .webhook_activity
            .iter()
            .filter(|a| a.project == project && webhook.is_none_or(|id| a.webhook == id))
            .map(|a| (a.user, &a.entry));
        Ok(state.activity_page(logged, page))
    }

    async fn missing_surveys(
        &self,
        project: ProjectId,
        surveys: &[SurveyId],
    ) -> Result<Vec<SurveyId>, Unexpected> {
        let state = self.lock();
        Ok(surveys
            .iter()
            .filter(|id| {
                !state
                    .surveys
                    .iter()
                    .any(|s| s.project_id == project && s.id == **id)
            })
            .copied()
            .collect())
    }

    async fn deliveries(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        page: PageRequest,
    ) -> Result<Page<Delivery>, Unexpected> {
        let state = self.lock();
        let mut deliveries: Vec<&StoredDelivery> = state
            .deliveries
            .iter()
            .filter(|d| d.project == project && d.webhook == webhook)
            .collect();
        deliveries.sort_by_key(|d| std::cmp::Reverse(d.sequence));
        Ok(page_of(deliveries, page).map(StoredDelivery::view))
    }

    async fn retry(
        &self,
        project: ProjectId,
        webhook: WebhookId,
        delivery: DeliveryId,
    ) -> Result<Option<Delivery>, Unexpected> {
        let mut state = self.lock();
        let Some(stored) = state
            .deliveries
            .iter_mut()
            .find(|d| d.project == project && d.webhook == webhook && d.id == delivery)
        else {
            return Ok(None);
        };
        stored.state = DeliveryState::Pending;
        stored.next_attempt_at = Some(Utc::now());
        stored.attempts_made = 0;
        Ok(Some(stored.view()))
    }

    async fn signing(
        &self,
        project: ProjectId,
        id: WebhookId,
    ) -> Result<Option<SigningTarget>, Unexpected> {
        Ok(self
            .lock()
            .webhook(project, id)
            .map(|w| w.signing(Utc::now())))
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
        let mut state = self.lock();
        if state.webhook(project, webhook).is_none() {
            return Err(Unexpected::new(format!(
                "webhook {} vanished during its test",
                webhook.0
            )));
        }
        let stored = state.push_delivery(NewDelivery {
            id,
            webhook,
            project,
            kind: DeliveryKind::Test,
            event_uuid: None,
            survey_id: None,
            state: if delivered {
                DeliveryState::Delivered
            } else {
                DeliveryState::Failed
            },
            next_attempt_at: None,
            body: Some(body.to_vec()),
            attempts: vec![attempt.clone()],
        });
        Ok(stored.view())
    }
}

#[async_trait]
impl WebhookTransaction for Draft {
    async fn lock(
        &mut self,
        project: ProjectId,
        id: WebhookId,
    ) -> Result<Option<Webhook>, Unexpected> {
        Ok(self.state.webhook(project, id).map(|w| w.webhook.clone()))
    }

    async fn insert(
        &mut self,
        project: ProjectId,
        settings: &WebhookSettings,
        secret: &WebhookSecret,
    ) -> Result<Webhook, Unexpected> {
        let now = Utc::now();
        let webhook = Webhook {
            id: WebhookId(Uuid::now_v7()),
            project_id: project,
            settings: settings.clone(),
            disabled_reason: None,
            consecutive_failures: 0,
            created_at: now,
            updated_at: now,
        };
        self.state.webhooks.push(StoredWebhook {
            webhook: webhook.clone(),
            secret: secret.clone(),
            previous: None,
        });
        Ok(webhook)
    }

    async fn update(&mut self, webhook: &Webhook) -> Result<Webhook, Unexpected> {
        let stored = self
            .state
            .webhook_mut(webhook.project_id, webhook.id)
            .ok_or_else(|| Unexpected::new("updating a webhook that is not locked"))?;
        stored.webhook = Webhook {
            updated_at: Utc::now(),
            ..webhook.clone()
        };
        Ok(stored.webhook.clone())
    }

    async fn set_secret(
        &mut self,
        project: ProjectId,
        id: WebhookId,
        secret: &WebhookSecret,
        previous_until: DateTime<Utc>,
    ) -> Result<(), Unexpected> {
        let stored = self
            .state
            .webhook_mut(project, id)
            .ok_or_else(|| Unexpected::new("rotating a webhook that is not locked"))?;
        let replaced = std::mem::replace(&mut stored.secret, secret.clone());
        stored.previous = Some((replaced, previous_until));
        stored.webhook.updated_at = Utc::now();
        Ok(())
    }

    async fn delete(&mut self, project: ProjectId, id: WebhookId) -> Result<(), Unexpected> {
        let before = self.state.webhooks.len();
        self.state
            .webhooks
            .retain(|w| !(w.webhook.project_id == project && w.webhook.id == id));
        if self.state.webhooks.len() < before {
            self.state.deleted_webhooks.push(id);
        }
        Ok(())
    }

    async fn log_activity(
        &mut self,
        project: ProjectId,
        id: WebhookId,
        activity: &NewActivity,
    ) -> Result<(), Unexpected> {
        self.state.webhook_activity.push(StoredActivity {
            project,
            webhook: id,
            user: activity.user,
            entry: ActivityEntry {
                id: Uuid::now_v7(),
                user: None,
                scope: ACTIVITY_SCOPE.into(),
                activity: activity.activity.into(),
                item_id: id.0.to_string(),
                detail: activity.detail.clone(),
                created_at: Utc::now(),
            },
        });
        Ok(())
    }
}

/// A webhook activity entry and what it belongs to.
#[derive(Debug, Clone)]
pub(super) struct StoredActivity {
    project: ProjectId,
    webhook: WebhookId,
    user: UserId,
    entry: ActivityEntry,
}

#[async_trait]
impl DeliveryQueue for InMemoryStore {
    async fn forget_finished(&self, before: DateTime<Utc>, limit: u32) -> Result<u64, Unexpected> {
        let mut state = self.lock();
        let mut left = limit;
        state.deliveries.retain(|d| {
            let forget = left > 0 && d.state != DeliveryState::Pending && d.created_at < before;
            if forget {
                left -= 1;
            }
            !forget
        });
        Ok(u64::from(limit - left))
    }

    async fn fan_out(&self, bounds: &QueueBounds) -> Result<FanOut, Unexpected> {
        let mut state = self.lock();
        let mut taken: BTreeMap<ProjectId, u32> = BTreeMap::new();
        let (entries, waiting): (Vec<OutboxEntry>, Vec<OutboxEntry>) =
            std::mem::take(&mut state.webhook_outbox)
                .into_iter()
                .partition(|entry| {
                    let count = taken.entry(entry.project).or_default();
                    *count += 1;
                    *count <= bounds.fan_out_per_project
                });
        state.webhook_outbox = waiting;
        let made_before = state.delivery_sequence;
        let mut touched = BTreeSet::new();
        for entry in &entries {
            touched.extend(state.fan_out_entry(entry));
        }
        let mut dropped: Vec<Dropped> = touched
            .into_iter()
            .filter_map(|webhook| state.bound_webhook(webhook, bounds))
            .collect();
        for (project, count) in taken {
            if count >= bounds.fan_out_per_project
                && let Some(outbox) = state.bound_outbox(project, bounds.outbox_per_project)
            {
                dropped.push(outbox);
            }
        }
        dropped.sort_by_key(|d| (d.project, d.webhook));
        Ok(FanOut {
            entries: u64::try_from(entries.len()).unwrap_or(u64::MAX),
            deliveries: state.delivery_sequence - made_before,
            dropped,
        })
    }

    async fn purge_deleted(&self, limit: u32) -> Result<u64, Unexpected> {
        let mut state = self.lock();
        let Some(&webhook) = state.deleted_webhooks.first() else {
            return Ok(0);
        };
        let mut left = limit;
        state.deliveries.retain(|d| {
            let purge = left > 0 && d.webhook == webhook;
            if purge {
                left -= 1;
            }
            !purge
        });
        if left > 0 {
            state.deleted_webhooks.remove(0);
        }
        Ok(u64::from(limit - left))
    }

    async fn claim_due(
        &self,
        limit: u32,
        per_project: u32,
        lease: Duration,
    ) -> Result<Vec<DueDelivery>, Unexpected> {
        let mut state = self.lock();
        let now = Utc::now();
        let leased_until = now
            + chrono::Duration::from_std(lease)
                .map_err(|_| Unexpected::new("a lease too long to add to now"))?;
        let enabled: BTreeSet<WebhookId> = state
            .webhooks
            .iter()
            .filter(|w| w.webhook.settings.enabled)
            .map(|w| w.webhook.id)
            .collect();
        // Each enabled webhook's head: its oldest pending delivery, due or not.
        let mut heads: BTreeMap<WebhookId, usize> = BTreeMap::new();
        for (index, delivery) in state.deliveries.iter().enumerate() {
            if delivery.state == DeliveryState::Pending && enabled.contains(&delivery.webhook) {
                let head = heads.entry(delivery.webhook).or_insert(index);
                if state.deliveries[*head].sequence > delivery.sequence {
                    *head = index;
                }
            }
        }
        let mut due: Vec<(DateTime<Utc>, u64, ProjectId, usize)> = heads
            .into_values()
            .filter_map(|head| {
                let delivery = &state.deliveries[head];
                let at = delivery.next_attempt_at.filter(|at| *at <= now)?;
                Some((at, delivery.sequence, delivery.project, head))
            })
            .collect();
        // Each project's heads take turns by due time; every project's first turn comes first.
        due.sort_unstable();
        let mut turns: BTreeMap<ProjectId, u32> = BTreeMap::new();
        let mut heads: Vec<(u32, DateTime<Utc>, u64, usize)> = due
            .into_iter()
            .filter_map(|(at, sequence, project, head)| {
                let turn = turns.entry(project).or_default();
                *turn += 1;
                (*turn <= per_project).then_some((*turn, at, sequence, head))
            })
            .collect();
        heads.sort_unstable();
        let heads: Vec<usize> = heads
            .into_iter()
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .map(|(.., head)| head)
            .collect();
        let mut claimed = Vec::with_capacity(heads.len());
        for head in heads {
            let delivery = &state.deliveries[head];
            let target = state
                .webhooks
                .iter()
                .find(|w| w.webhook.id == delivery.webhook)
                .map(|w| w.signing(now))
                .ok_or_else(|| Unexpected::new("a delivery outlived its webhook"))?;
            claimed.push(DueDelivery {
                id: delivery.id,
                webhook: delivery.webhook,
                target,
                body: delivery.body.clone(),
                sources: state.sources(delivery),
                attempts_made: delivery.attempts_made,
            });
            state.deliveries[head].next_attempt_at = Some(leased_until);
        }
        Ok(claimed)
    }

    async fn settle(&self, id: DeliveryId, settlement: &Settlement) -> Result<(), Unexpected> {
        let mut state = self.lock();
        // A delivery deleted with its webhook mid-send has nothing left to settle.
        let Some(delivery) = state.deliveries.iter_mut().find(|d| d.id == id) else {
            return Ok(());
        };
        delivery.attempts.push(settlement.attempt.clone());
        if delivery.body.is_none() {
            delivery.body.clone_from(&settlement.body);
        }
        delivery.attempts_made = delivery.attempts_made.saturating_add(1);
        (delivery.state, delivery.next_attempt_at) = match settlement.next {
            NextStep::Delivered => (DeliveryState::Delivered, None),
            NextStep::RetryAt(at) => (DeliveryState::Pending, Some(at)),
            NextStep::Failed => (DeliveryState::Failed, None),
        };
        let webhook = delivery.webhook;
        let Some(stored) = state.webhooks.iter_mut().find(|w| w.webhook.id == webhook) else {
            return Ok(());
        };
        let webhook = &mut stored.webhook;
        webhook.consecutive_failures = match settlement.next {
            NextStep::Delivered => 0,
            NextStep::RetryAt(_) | NextStep::Failed => {
                webhook.consecutive_failures.saturating_add(1)
            }
        };
        if let Some(reason) = settlement.disable {
            webhook.settings.enabled = false;
            webhook.disabled_reason = Some(reason);
            webhook.updated_at = Utc::now();
        }
        Ok(())
    }
}
