//! Webhooks: a project's subscriptions to its survey responses. Each new answer is written to an
//! outbox in the statement that stores it; the dispatcher that runs in every node fans it out
//! into a delivery for each webhook subscribed to it, then signs each per Standard Webhooks and
//! sends it, with retries, serving the projects with work in turn within [`QueueBounds`].

mod activity;
mod bounds;
mod dispatch;
mod payload;
mod port;
mod schedule;
mod secret;
mod service;
mod target;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::survey::SurveyId;
use crate::tenancy::ProjectId;

pub use activity::SCOPE as ACTIVITY_SCOPE;
pub use bounds::QueueBounds;
pub use dispatch::{
    DispatchCounts, DispatchSettings, ReceiverAnswer, Transmission, WebhookDispatcher,
    WebhookSender,
};
pub use payload::{PayloadSurvey, ResponseEventSources, completes, response_body, test_body};
pub use port::{
    DeliveryQueue, Dropped, DueDelivery, FanOut, NextStep, Settlement, SigningTarget,
    WebhookRepository, WebhookTransaction,
};
pub use schedule::RetrySchedule;
pub use secret::{WebhookSecret, signature_header};
pub use service::{CreatedWebhook, WebhookService};
pub use target::{AllowedPorts, HostResolver, TargetPolicy};

/// A webhook's UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WebhookId(pub Uuid);

/// A delivery's UUID; its `webhook-id` header is derived from it, so it is the same on every
/// attempt and receivers deduplicate by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeliveryId(pub Uuid);

impl DeliveryId {
    /// The `webhook-id` header: `msg_` and the UUID's 32 hex digits.
    pub fn message_id(self) -> String {
        format!("msg_{}", self.0.simple())
    }
}

wire_enum! {
    /// What a webhook can subscribe to, by its Standard Webhooks `type`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum WebhookEvent {
        /// The first `survey sent` of a submission.
        ResponseCreated = "survey_response.created",
        /// Every later `survey sent` of a submission (a partial answer extended, or finished).
        ResponseUpdated = "survey_response.updated",
        /// The `survey sent` that finishes a submission (`$survey_completed`, or a send that does
        /// not say, as older SDKs send a whole response at once).
        ResponseCompleted = "survey_response.completed",
    }
}

wire_enum! {
    /// How a delivery's body is shaped.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum WebhookFormat {
        /// Standard Webhooks' `{type, timestamp, data}`.
        #[default]
        Standard = "standard",
        /// A Slack incoming-webhook message, `{text}`.
        Slack = "slack",
    }
}

wire_enum! {
    /// Why Burrow switched a webhook off by itself.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum DisabledReason {
        /// The receiver answered 410 Gone: it wants no more deliveries.
        Gone = "gone",
        /// A delivery failed every attempt of the retry schedule (about a day of failures).
        Failing = "failing",
    }
}

/// What a webhook's owner sets.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookSettings {
    /// Checked against the operator's [`TargetPolicy`] when set.
    pub url: String,
    /// At least one; sorted, without repeats.
    pub events: Vec<WebhookEvent>,
    /// Only responses to these surveys of the project; `None`: every survey.
    pub survey_ids: Option<Vec<SurveyId>>,
    pub format: WebhookFormat,
    pub enabled: bool,
    pub description: String,
}

impl WebhookSettings {
    /// These settings with `changes` applied.
    pub fn changed(&self, changes: WebhookChanges) -> Self {
        Self {
            url: changes.url.unwrap_or_else(|| self.url.clone()),
            events: changes.events.unwrap_or_else(|| self.events.clone()),
            survey_ids: changes
                .survey_ids
                .unwrap_or_else(|| self.survey_ids.clone()),
            format: changes.format.unwrap_or(self.format),
            enabled: changes.enabled.unwrap_or(self.enabled),
            description: changes
                .description
                .unwrap_or_else(|| self.description.clone()),
        }
    }
}

/// A stored webhook. Its secret is not part of it: only create and rotation show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub id: WebhookId,
    pub project_id: ProjectId,
    pub settings: WebhookSettings,
    /// Set when Burrow disabled the webhook itself; cleared when its owner enables it again.
    pub disabled_reason: Option<DisabledReason>,
    /// Failed attempts since the last delivered one.
    pub consecutive_failures: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A PATCH: only the fields given change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WebhookChanges {
    pub url: Option<String>,
    pub events: Option<Vec<WebhookEvent>>,
    /// `Some(None)`: every survey again.
    pub survey_ids: Option<Option<Vec<SurveyId>>>,
    pub format: Option<WebhookFormat>,
    pub enabled: Option<bool>,
    pub description: Option<String>,
}

/// What a delivery carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryKind {
    Response(WebhookEvent),
    /// A sample sent by `POST …/test/`.
    Test,
}

impl DeliveryKind {
    /// The payload's `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Response(event) => event.as_str(),
            Self::Test => "webhook.test",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "webhook.test" => Some(Self::Test),
            other => WebhookEvent::parse(other).map(Self::Response),
        }
    }
}

wire_enum! {
    /// Where a delivery is in its life.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum DeliveryState {
        /// Waiting for its next attempt (or for its webhook to be enabled again).
        Pending = "pending",
        /// A receiver answered 2xx.
        Delivered = "delivered",
        /// Every attempt failed; `retry` makes it pending again.
        Failed = "failed",
    }
}

/// One try at sending a delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub at: DateTime<Utc>,
    /// The receiver's status, when it answered.
    pub status_code: Option<u16>,
    /// Why the attempt failed without an answer (timeout, refused connection, refused address).
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// A delivery as its owner sees it: what it carries, where it is, and each attempt, newest
/// first.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub id: DeliveryId,
    pub webhook_id: WebhookId,
    pub kind: DeliveryKind,
    /// The `survey sent` event it is about (none for a test).
    pub event_uuid: Option<Uuid>,
    pub survey_id: Option<String>,
    pub state: DeliveryState,
    /// When it is tried next, while pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub attempts: Vec<Attempt>,
    pub created_at: DateTime<Utc>,
}
