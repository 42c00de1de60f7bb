//! Webhooks over the in-memory fakes: which targets may be saved, the outbox a capture writes,
//! and the dispatcher's sending (order, signatures, retries, switching a webhook off), with a
//! receiver that records what it is sent and answers as scripted.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ports::PageRequest;
use domain::survey::{Survey, SurveyService};
use domain::survey_response::{CapturedEvent, SurveyResponseService};
use domain::tenancy::{ProjectId, UserId};
use domain::testing::InMemoryStore;
use domain::webhook::{
    CreatedWebhook, Delivery, DeliveryKind, DeliveryQueue, DeliveryState, DisabledReason,
    DispatchCounts, DispatchSettings, HostResolver, QueueBounds, ReceiverAnswer, RetrySchedule,
    TargetPolicy, Transmission, Webhook, WebhookChanges, WebhookDispatcher, WebhookEvent,
    WebhookFormat, WebhookId, WebhookSecret, WebhookSender, WebhookService, WebhookSettings,
};
use domain::{DomainError, ValidationError};
use serde_json::{Value, json};
use uuid::Uuid;

#[path = "support/capture_batch.rs"]
mod capture_batch;
#[path = "support/survey_setup.rs"]
mod survey_setup;

use capture_batch::capture_batch;
use survey_setup::{captured_event, popover_survey, survey_service};

const PROJECT: ProjectId = ProjectId(1);
const OTHER_PROJECT: ProjectId = ProjectId(2);
const USER: UserId = UserId(1);

/// A public name every webhook below sends to (at a path of its own).
const HOOKS: &str = "hooks.example.com";

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    url: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers
            .iter()
            .find(|(header, _)| *header == name)
            .map_or_else(|| panic!("no {name} header"), |(_, value)| value.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    fn event_type(&self) -> String {
        self.json()["type"].as_str().unwrap_or_default().to_owned()
    }

    /// The `webhook-signature` entries, checked against what each of `secrets` signs for the
    /// received id, timestamp and body (as a receiver verifies).
    fn assert_signed_by(&self, secrets: &[&WebhookSecret]) {
        let id = self.header("webhook-id");
        let timestamp: i64 = self.header("webhook-timestamp").parse().unwrap();
        let entries: Vec<&str> = self.header("webhook-signature").split(' ').collect();
        let expected: Vec<String> = secrets
            .iter()
            .map(|secret| secret.sign(id, timestamp, &self.body))
            .collect();
        assert_eq!(entries, expected, "signatures of {id}");
    }
}

/// Receivers at every URL: answers each URL's scripted statuses in turn, then 200.
#[derive(Default)]
struct Receivers {
    scripts: Mutex<HashMap<String, VecDeque<u16>>>,
    received: Mutex<Vec<Received>>,
}

impl Receivers {
    fn answer(&self, url: &str, statuses: &[u16]) {
        self.scripts
            .lock()
            .unwrap()
            .entry(url.to_owned())
            .or_default()
            .extend(statuses);
    }

    fn received(&self, url: &str) -> Vec<Received> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.url == url)
            .cloned()
            .collect()
    }
}

#[async_trait]
impl WebhookSender for Receivers {
    async fn send(&self, transmission: Transmission<'_>) -> ReceiverAnswer {
        self.received.lock().unwrap().push(Received {
            url: transmission.url.to_owned(),
            headers: transmission.headers,
            body: transmission.body.to_vec(),
        });
        let code = self
            .scripts
            .lock()
            .unwrap()
            .get_mut(transmission.url)
            .and_then(VecDeque::pop_front)
            .unwrap_or(200);
        ReceiverAnswer::Status {
            code,
            retry_after: None,
        }
    }
}

/// DNS: the receivers' public name, and a name that points into a private network.
struct Dns;

#[async_trait]
impl HostResolver for Dns {
    async fn resolve(&self, host: &str, _port: u16) -> Result<Vec<IpAddr>, String> {
        match host {
            HOOKS => Ok(vec!["93.184.216.34".parse().unwrap()]),
            "internal.example.com" => Ok(vec!["10.0.0.5".parse().unwrap()]),
            _ => Err("no such host".into()),
        }
    }
}

struct World {
    surveys: Arc<SurveyService>,
    responses: SurveyResponseService,
    webhooks: WebhookService,
    receivers: Arc<Receivers>,
    dispatcher: WebhookDispatcher,
    queue: InMemoryStore,
    counts: Arc<DispatchCounts>,
}

/// Retries at once, three times: four attempts in all.
fn world() -> World {
    world_retrying(RetrySchedule::new(vec![Duration::ZERO; 3]))
}

fn world_retrying(schedule: RetrySchedule) -> World {
    world_with(schedule, QueueBounds::default())
}

fn world_with(schedule: RetrySchedule, bounds: QueueBounds) -> World {
    let store = InMemoryStore::new();
    let surveys = survey_service(&store);
    let receivers = Arc::new(Receivers::default());
    let counts = Arc::new(DispatchCounts::default());
    World {
        responses: SurveyResponseService::new(Arc::new(store.clone()), surveys.clone()),
        surveys,
        webhooks: webhook_service(&store, receivers.clone(), TargetPolicy::default()),
        dispatcher: WebhookDispatcher::new(
            Arc::new(store.clone()),
            receivers.clone(),
            DispatchSettings {
                batch: 10,
                bounds,
                lease: Duration::from_secs(60),
                schedule,
                retention: Duration::from_secs(3600),
            },
            counts.clone(),
        ),
        receivers,
        queue: store,
        counts,
    }
}

fn webhook_service(
    store: &InMemoryStore,
    receivers: Arc<Receivers>,
    policy: TargetPolicy,
) -> WebhookService {
    WebhookService::new(Arc::new(store.clone()), Arc::new(Dns), receivers, policy)
}

fn all() -> PageRequest {
    PageRequest {
        limit: 100,
        offset: 0,
    }
}

fn url(path: &str) -> String {
    format!("https://{HOOKS}/{path}")
}

/// A survey with one question, `why`.
async fn survey(world: &World, project: ProjectId, name: &str) -> Survey {
    let questions = json!([{"id": "why", "type": "open", "question": "Why?"}]);
    popover_survey(&world.surveys, project, USER, name, questions, None).await
}

/// Every event, every survey, to `url(path)`.
fn settings(path: &str) -> WebhookSettings {
    WebhookSettings {
        url: url(path),
        events: WebhookEvent::ALL.to_vec(),
        survey_ids: None,
        format: WebhookFormat::Standard,
        enabled: true,
        description: String::new(),
    }
}

async fn create(world: &World, settings: WebhookSettings) -> CreatedWebhook {
    world
        .webhooks
        .create(PROJECT, USER, settings)
        .await
        .unwrap()
}

/// A `survey sent` of `submission`, answering `why`; `completed` is `$survey_completed`.
fn sent(survey: &Survey, submission: &str, completed: bool, at: DateTime<Utc>) -> CapturedEvent {
    let properties = json!({
        "distinct_id": "ada",
        "$survey_id": survey.id.0.to_string(),
        "$survey_submission_id": submission,
        "$survey_response_why": format!("answered at {at}"),
        "$survey_completed": completed,
    });
    captured_event("survey sent", properties, at)
}

/// Captures `events`, then fans them out into deliveries as the dispatcher's next round would
/// (so they can be listed before anything is sent).
async fn capture(world: &World, events: Vec<CapturedEvent>) {
    capture_batch(&world.responses, PROJECT, events).await;
    world.queue.fan_out(&QueueBounds::default()).await.unwrap();
}

/// `n` seconds after a minute ago: distinct, increasing event times.
fn at(n: i64) -> DateTime<Utc> {
    Utc::now() - chrono::Duration::minutes(1) + chrono::Duration::seconds(n)
}

/// Dispatches until nothing is due; how many attempts were made.
async fn drain(world: &World) -> usize {
    let mut attempts = 0;
    for _ in 0..100 {
        let prepared = world.dispatcher.fan_out().await.unwrap();
        let sent = world.dispatcher.send_due().await.unwrap();
        if prepared == 0 && sent == 0 {
            return attempts;
        }
        attempts += sent;
    }
    panic!("the queue never drained");
}

/// The webhook's deliveries, oldest first.
async fn deliveries(world: &World, webhook: WebhookId) -> Vec<Delivery> {
    let mut page = world
        .webhooks
        .deliveries(PROJECT, webhook, all())
        .await
        .unwrap()
        .items;
    page.reverse();
    page
}

async fn webhook(world: &World, id: WebhookId) -> Webhook {
    world.webhooks.get(PROJECT, id).await.unwrap()
}

fn kinds(deliveries: &[Delivery]) -> Vec<DeliveryKind> {
    deliveries.iter().map(|d| d.kind).collect()
}

fn invalid<T: std::fmt::Debug>(result: Result<T, DomainError>) -> ValidationError {
    match result {
        Err(DomainError::Invalid(error)) => error,
        other => panic!("expected a validation error, got {other:?}"),
    }
}

const CREATED: DeliveryKind = DeliveryKind::Response(WebhookEvent::ResponseCreated);
const UPDATED: DeliveryKind = DeliveryKind::Response(WebhookEvent::ResponseUpdated);
const COMPLETED: DeliveryKind = DeliveryKind::Response(WebhookEvent::ResponseCompleted);

#[tokio::test]
async fn create_refuses_targets_inside_the_network_and_answers_a_secret() {
    let world = world();
    let refused = |result, attr: &str, detail: &str| {
        let error = invalid(result);
        assert_eq!(error.attr.as_deref(), Some(attr), "{error:?}");
        assert!(error.detail.contains(detail), "{}", error.detail);
    };
    let with = |change: fn(&mut WebhookSettings)| {
        let mut settings = settings("a");
        change(&mut settings);
        settings
    };
    refused(
        world
            .webhooks
            .create(PROJECT, USER, with(|s| s.url = format!("http://{HOOKS}/a")))
            .await,
        "url",
        "https",
    );
    refused(
        world
            .webhooks
            .create(PROJECT, USER, with(|s| s.url = "https://10.0.0.1/a".into()))
            .await,
        "url",
        "private",
    );
    refused(
        world
            .webhooks
            .create(
                PROJECT,
                USER,
                with(|s| s.url = "https://internal.example.com/a".into()),
            )
            .await,
        "url",
        "resolves to 10.0.0.5",
    );
    refused(
        world
            .webhooks
            .create(PROJECT, USER, with(|s| s.events = Vec::new()))
            .await,
        "events",
        "at least one",
    );
    let theirs = survey(&world, OTHER_PROJECT, "Theirs").await;
    let mut others = settings("a");
    others.survey_ids = Some(vec![theirs.id]);
    refused(
        world.webhooks.create(PROJECT, USER, others).await,
        "survey_ids",
        &theirs.id.0.to_string(),
    );
    assert_eq!(
        world.webhooks.list(PROJECT, all()).await.unwrap().count,
        0,
        "nothing refused was stored"
    );

    let mine = survey(&world, PROJECT, "Mine").await;
    let mut wanted = settings("a");
    wanted.events = vec![
        WebhookEvent::ResponseCompleted,
        WebhookEvent::ResponseCreated,
        WebhookEvent::ResponseCompleted,
    ];
    wanted.survey_ids = Some(vec![mine.id, mine.id]);
    let created = create(&world, wanted).await;
    assert!(created.secret.expose().starts_with("whsec_"));
    let stored = webhook(&world, created.webhook.id).await;
    assert_eq!(stored, created.webhook);
    assert_eq!(
        stored.settings.events,
        [
            WebhookEvent::ResponseCreated,
            WebhookEvent::ResponseCompleted
        ]
    );
    assert_eq!(stored.settings.survey_ids, Some(vec![mine.id]));
    assert_eq!(
        (stored.disabled_reason, stored.consecutive_failures),
        (None, 0)
    );

    // An operator who allows private targets allows plain http to them too.
    let store = InMemoryStore::new();
    let inside = webhook_service(
        &store,
        world.receivers.clone(),
        TargetPolicy {
            allow_private: true,
            ..TargetPolicy::default()
        },
    );
    for url in [
        "http://127.0.0.1:9000/hook",
        "http://internal.example.com/hook",
    ] {
        let settings = WebhookSettings {
            url: url.into(),
            ..settings("a")
        };
        inside.create(PROJECT, USER, settings).await.unwrap();
    }
}

#[tokio::test]
async fn a_submission_is_announced_created_updated_then_completed_and_sent_in_that_order() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let hook = create(&world, settings("a")).await;
    let sends = [
        sent(&survey, "sub", false, at(1)),
        sent(&survey, "sub", false, at(2)),
        sent(&survey, "sub", true, at(3)),
    ];
    for send in &sends {
        capture(&world, vec![send.clone()]).await;
    }
    let made = deliveries(&world, hook.webhook.id).await;
    assert_eq!(kinds(&made), [CREATED, UPDATED, UPDATED, COMPLETED]);
    let uuids: Vec<Option<Uuid>> = made.iter().map(|d| d.event_uuid).collect();
    let [first, second, last] = sends.map(|send| send.uuid);
    assert_eq!(uuids, [first, second, last, last]);
    assert!(made.iter().all(|d| d.state == DeliveryState::Pending));

    // The first attempt fails: the retry goes out before anything after it.
    world.receivers.answer(&url("a"), &[500]);
    assert_eq!(drain(&world).await, 5);
    let received = world.receivers.received(&url("a"));
    let types: Vec<String> = received.iter().map(Received::event_type).collect();
    assert_eq!(
        types,
        [
            "survey_response.created",
            "survey_response.created",
            "survey_response.updated",
            "survey_response.updated",
            "survey_response.completed",
        ]
    );
    for request in &received {
        request.assert_signed_by(&[&hook.secret]);
    }
    let (failed, retried) = (&received[0], &received[1]);
    assert_eq!(failed.header("webhook-id"), retried.header("webhook-id"));
    assert_eq!(failed.body, retried.body);
    let ids: Vec<&str> = received[1..]
        .iter()
        .map(|r| r.header("webhook-id"))
        .collect();
    let expected: Vec<String> = made.iter().map(|d| d.id.message_id()).collect();
    assert_eq!(ids, expected);

    let completed = received[4].json();
    assert_eq!(completed["data"]["response"]["completed"], true);
    assert_eq!(
        completed["data"]["response"]["event_uuids"],
        json!([first, second, last].map(Option::unwrap))
    );
    assert_eq!(completed["data"]["survey"]["name"], "NPS");
    assert_eq!(completed["data"]["answers"][0]["question"], "Why?");
    let delivered = deliveries(&world, hook.webhook.id).await;
    assert!(
        delivered
            .iter()
            .all(|d| d.state == DeliveryState::Delivered)
    );
}

#[tokio::test]
async fn sends_captured_together_are_announced_in_the_order_they_happened() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let hook = create(&world, settings("a")).await;
    let (partial, complete) = (
        sent(&survey, "sub", false, at(1)),
        sent(&survey, "sub", true, at(2)),
    );
    capture(&world, vec![complete.clone(), partial.clone()]).await;
    let made = deliveries(&world, hook.webhook.id).await;
    assert_eq!(kinds(&made), [CREATED, UPDATED, COMPLETED]);
    assert_eq!(
        made.iter().map(|d| d.event_uuid).collect::<Vec<_>>(),
        [partial.uuid, complete.uuid, complete.uuid]
    );

    // A submission whose response exists already is only updated, whatever its sends' times.
    capture(&world, vec![sent(&survey, "sub", false, at(0))]).await;
    let made = deliveries(&world, hook.webhook.id).await;
    assert_eq!(made.last().map(|d| d.kind), Some(UPDATED));
    // A retried batch makes nothing twice.
    capture(&world, vec![complete]).await;
    assert_eq!(deliveries(&world, hook.webhook.id).await.len(), 4);
}

#[tokio::test]
async fn a_failed_attempt_is_retried_on_the_schedule_and_delivered_once() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let mut only_completed = settings("a");
    only_completed.events = vec![WebhookEvent::ResponseCompleted];
    let hook = create(&world, only_completed).await;
    capture(&world, vec![sent(&survey, "sub", true, at(1))]).await;
    world.receivers.answer(&url("a"), &[500, 200]);

    assert_eq!(world.dispatcher.send_due().await.unwrap(), 1);
    let [pending] = deliveries(&world, hook.webhook.id)
        .await
        .try_into()
        .unwrap();
    assert_eq!(pending.state, DeliveryState::Pending);
    assert!(pending.next_attempt_at.is_some());
    assert_eq!(
        webhook(&world, hook.webhook.id).await.consecutive_failures,
        1
    );

    assert_eq!(drain(&world).await, 1);
    let [delivered] = deliveries(&world, hook.webhook.id)
        .await
        .try_into()
        .unwrap();
    assert_eq!(delivered.state, DeliveryState::Delivered);
    assert_eq!(delivered.next_attempt_at, None);
    let statuses: Vec<Option<u16>> = delivered.attempts.iter().map(|a| a.status_code).collect();
    assert_eq!(statuses, [Some(200), Some(500)], "newest first");
    assert_eq!(
        webhook(&world, hook.webhook.id).await.consecutive_failures,
        0
    );
    assert_eq!(world.receivers.received(&url("a")).len(), 2);
}

#[tokio::test]
async fn a_receiver_answering_gone_switches_the_webhook_off_keeping_the_delivery() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let hook = create(&world, settings("a")).await;
    capture(&world, vec![sent(&survey, "sub", false, at(1))]).await;
    world.receivers.answer(&url("a"), &[410]);

    assert_eq!(drain(&world).await, 1);
    let off = webhook(&world, hook.webhook.id).await;
    assert!(!off.settings.enabled);
    assert_eq!(off.disabled_reason, Some(DisabledReason::Gone));
    let [kept] = deliveries(&world, hook.webhook.id)
        .await
        .try_into()
        .unwrap();
    assert_eq!(kept.state, DeliveryState::Pending);

    // Enabled again by its owner, it picks up where it stopped.
    let on = world
        .webhooks
        .update(
            PROJECT,
            USER,
            hook.webhook.id,
            WebhookChanges {
                enabled: Some(true),
                ..WebhookChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((on.disabled_reason, on.consecutive_failures), (None, 0));
    assert_eq!(drain(&world).await, 1);
    let [delivered] = deliveries(&world, hook.webhook.id)
        .await
        .try_into()
        .unwrap();
    assert_eq!(delivered.state, DeliveryState::Delivered);
}

#[tokio::test]
async fn exhausting_the_schedule_fails_the_delivery_and_switches_the_webhook_off() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let hook = create(&world, settings("a")).await;
    capture(&world, vec![sent(&survey, "sub", false, at(1))]).await;
    world.receivers.answer(&url("a"), &[500; 4]);

    assert_eq!(
        drain(&world).await,
        4,
        "the first attempt and three retries"
    );
    let [failed] = deliveries(&world, hook.webhook.id)
        .await
        .try_into()
        .unwrap();
    assert_eq!(failed.state, DeliveryState::Failed);
    assert_eq!(failed.attempts.len(), 4);
    let off = webhook(&world, hook.webhook.id).await;
    assert!(!off.settings.enabled);
    assert_eq!(off.disabled_reason, Some(DisabledReason::Failing));
    assert_eq!(off.consecutive_failures, 4);
}

#[tokio::test]
async fn a_failing_delivery_holds_back_only_its_own_webhooks_later_ones() {
    let world = world_retrying(RetrySchedule::new(vec![Duration::from_secs(3600)]));
    let survey = survey(&world, PROJECT, "NPS").await;
    let mut failing = settings("failing");
    failing.events = vec![WebhookEvent::ResponseCompleted];
    let failing = create(&world, failing).await;
    let mut healthy = settings("healthy");
    healthy.events = vec![WebhookEvent::ResponseCompleted];
    create(&world, healthy).await;
    capture(&world, vec![sent(&survey, "first", true, at(1))]).await;
    capture(&world, vec![sent(&survey, "second", true, at(2))]).await;
    world.receivers.answer(&url("failing"), &[500]);

    assert_eq!(drain(&world).await, 3);
    assert_eq!(world.receivers.received(&url("healthy")).len(), 2);
    let [head, held] = deliveries(&world, failing.webhook.id)
        .await
        .try_into()
        .unwrap();
    let [sent] = world
        .receivers
        .received(&url("failing"))
        .try_into()
        .unwrap();
    assert_eq!(sent.header("webhook-id"), head.id.message_id());
    assert_eq!(
        (head.state, head.attempts.len()),
        (DeliveryState::Pending, 1)
    );
    assert_eq!(
        (held.state, held.attempts.len()),
        (DeliveryState::Pending, 0)
    );
    assert!(
        held.next_attempt_at.is_some_and(|at| at <= Utc::now()),
        "due, yet held"
    );
}

#[tokio::test]
async fn deliveries_are_made_only_for_enabled_webhooks_subscribed_to_the_event_and_survey() {
    let world = world();
    let nps = survey(&world, PROJECT, "NPS").await;
    let csat = survey(&world, PROJECT, "CSAT").await;
    let every = create(&world, settings("every")).await;
    let mut only_nps = settings("nps");
    only_nps.survey_ids = Some(vec![nps.id]);
    let only_nps = create(&world, only_nps).await;
    let mut only_completed = settings("completed");
    only_completed.events = vec![WebhookEvent::ResponseCompleted];
    let only_completed = create(&world, only_completed).await;
    let mut disabled = settings("disabled");
    disabled.enabled = false;
    let disabled = create(&world, disabled).await;

    capture(
        &world,
        vec![sent(&nps, "a", false, at(1)), sent(&csat, "b", true, at(2))],
    )
    .await;
    let surveys_of = |made: &[Delivery]| -> Vec<String> {
        made.iter()
            .map(|d| d.survey_id.clone().unwrap_or_default())
            .collect()
    };
    let (nps_id, csat_id) = (nps.id.0.to_string(), csat.id.0.to_string());
    let made = deliveries(&world, every.webhook.id).await;
    assert_eq!(kinds(&made), [CREATED, CREATED, COMPLETED]);
    assert_eq!(
        surveys_of(&made),
        [nps_id.clone(), csat_id.clone(), csat_id]
    );
    let made = deliveries(&world, only_nps.webhook.id).await;
    assert_eq!(kinds(&made), [CREATED]);
    assert_eq!(surveys_of(&made), [nps_id]);
    let made = deliveries(&world, only_completed.webhook.id).await;
    assert_eq!(kinds(&made), [COMPLETED]);
    assert!(deliveries(&world, disabled.webhook.id).await.is_empty());
    // Another project's capture concerns none of them.
    capture_batch(
        &world.responses,
        OTHER_PROJECT,
        vec![sent(&nps, "c", true, at(3))],
    )
    .await;
    world.queue.fan_out(&QueueBounds::default()).await.unwrap();
    assert_eq!(deliveries(&world, every.webhook.id).await.len(), 3);
}

#[tokio::test]
async fn a_failed_delivery_is_retried_by_hand_once_its_webhook_is_enabled() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let hook = create(&world, settings("a")).await;
    capture(&world, vec![sent(&survey, "sub", false, at(1))]).await;
    world.receivers.answer(&url("a"), &[500; 4]);
    drain(&world).await;
    let [failed] = deliveries(&world, hook.webhook.id)
        .await
        .try_into()
        .unwrap();
    assert_eq!(failed.state, DeliveryState::Failed);

    let refused = invalid(
        world
            .webhooks
            .retry(PROJECT, hook.webhook.id, failed.id)
            .await,
    );
    assert!(refused.detail.contains("disabled"), "{}", refused.detail);
    world
        .webhooks
        .update(
            PROJECT,
            USER,
            hook.webhook.id,
            WebhookChanges {
                enabled: Some(true),
                ..WebhookChanges::default()
            },
        )
        .await
        .unwrap();
    let retried = world
        .webhooks
        .retry(PROJECT, hook.webhook.id, failed.id)
        .await
        .unwrap();
    assert_eq!(retried.state, DeliveryState::Pending);
    assert!(retried.next_attempt_at.is_some_and(|at| at <= Utc::now()));
    assert_eq!(retried.attempts.len(), 4, "its past attempts stay listed");

    assert_eq!(drain(&world).await, 1);
    let [delivered] = deliveries(&world, hook.webhook.id)
        .await
        .try_into()
        .unwrap();
    assert_eq!(delivered.state, DeliveryState::Delivered);
    let received = world.receivers.received(&url("a"));
    let (first, last) = (&received[0], &received[received.len() - 1]);
    assert_eq!(first.header("webhook-id"), last.header("webhook-id"));
    assert_eq!(first.body, last.body);
    let missing = world
        .webhooks
        .retry(
            PROJECT,
            hook.webhook.id,
            domain::webhook::DeliveryId(Uuid::now_v7()),
        )
        .await;
    assert!(matches!(missing, Err(DomainError::NotFound)), "{missing:?}");
}

#[tokio::test]
async fn a_test_send_is_recorded_among_the_deliveries_and_not_retried() {
    let world = world();
    let hook = create(&world, settings("a")).await;
    world.receivers.answer(&url("a"), &[200, 503]);

    let delivered = world.webhooks.test(PROJECT, hook.webhook.id).await.unwrap();
    assert_eq!(delivered.kind, DeliveryKind::Test);
    assert_eq!(delivered.state, DeliveryState::Delivered);
    assert_eq!(delivered.event_uuid, None);
    let [attempt] = delivered.attempts.clone().try_into().unwrap();
    assert_eq!(attempt.status_code, Some(200));
    let failed = world.webhooks.test(PROJECT, hook.webhook.id).await.unwrap();
    assert_eq!(failed.state, DeliveryState::Failed);

    let received = world.receivers.received(&url("a"));
    assert_eq!(received[0].event_type(), "webhook.test");
    assert_eq!(received[0].header("webhook-id"), delivered.id.message_id());
    received[0].assert_signed_by(&[&hook.secret]);
    let listed = deliveries(&world, hook.webhook.id).await;
    assert_eq!(listed, [delivered, failed]);
    assert_eq!(drain(&world).await, 0);
}

#[tokio::test]
async fn a_rotated_out_secret_keeps_signing_beside_the_new_one() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let hook = create(&world, settings("a")).await;
    let rotated = world
        .webhooks
        .rotate_secret(PROJECT, USER, hook.webhook.id)
        .await
        .unwrap();
    assert_ne!(rotated.secret, hook.secret);

    capture(&world, vec![sent(&survey, "sub", true, at(1))]).await;
    assert_eq!(drain(&world).await, 2);
    world.webhooks.test(PROJECT, hook.webhook.id).await.unwrap();
    let received = world.receivers.received(&url("a"));
    assert_eq!(received.len(), 3);
    for request in &received {
        request.assert_signed_by(&[&rotated.secret, &hook.secret]);
    }
}

#[tokio::test]
async fn deleting_a_webhook_deletes_its_deliveries() {
    let world = world();
    let survey = survey(&world, PROJECT, "NPS").await;
    let hook = create(&world, settings("a")).await;
    capture(&world, vec![sent(&survey, "sub", true, at(1))]).await;
    assert_eq!(deliveries(&world, hook.webhook.id).await.len(), 2);

    world
        .webhooks
        .delete(PROJECT, USER, hook.webhook.id)
        .await
        .unwrap();
    assert_eq!(drain(&world).await, 0);
    assert!(world.receivers.received(&url("a")).is_empty());
    let gone = world.webhooks.delete(PROJECT, USER, hook.webhook.id).await;
    assert!(matches!(gone, Err(DomainError::NotFound)), "{gone:?}");
}

#[tokio::test]
async fn a_backlog_past_its_bound_loses_its_oldest_deliveries_and_the_dispatcher_counts_them() {
    let world = world_with(
        RetrySchedule::new(vec![Duration::ZERO; 3]),
        QueueBounds {
            pending_per_webhook: 3,
            ..QueueBounds::default()
        },
    );
    let survey = survey(&world, PROJECT, "NPS").await;
    let mut only_completed = settings("a");
    only_completed.events = vec![WebhookEvent::ResponseCompleted];
    let hook = create(&world, only_completed).await;
    let sends: Vec<CapturedEvent> = (0..5)
        .map(|n| sent(&survey, &format!("s{n}"), true, at(n)))
        .collect();
    capture_batch(&world.responses, PROJECT, sends.clone()).await;

    assert_eq!(drain(&world).await, 3);
    let kept: Vec<Option<Uuid>> = deliveries(&world, hook.webhook.id)
        .await
        .iter()
        .map(|d| d.event_uuid)
        .collect();
    assert_eq!(kept, sends[2..].iter().map(|s| s.uuid).collect::<Vec<_>>());
    assert_eq!(world.counts.dropped(), [("delivery", 2), ("answer", 0)]);
}

#[tokio::test]
async fn a_projects_outbox_past_its_bound_loses_its_oldest_answers_and_the_dispatcher_counts_them()
{
    let world = world_with(
        RetrySchedule::new(vec![Duration::ZERO; 3]),
        QueueBounds {
            fan_out_per_project: 2,
            outbox_per_project: 1,
            ..QueueBounds::default()
        },
    );
    let survey = survey(&world, PROJECT, "NPS").await;
    let mut only_completed = settings("a");
    only_completed.events = vec![WebhookEvent::ResponseCompleted];
    let hook = create(&world, only_completed).await;
    let sends: Vec<CapturedEvent> = (0..5)
        .map(|n| sent(&survey, &format!("s{n}"), true, at(n)))
        .collect();
    capture_batch(&world.responses, PROJECT, sends.clone()).await;

    // The first round fans out two answers, and of the three left keeps the newest.
    assert_eq!(drain(&world).await, 3);
    let sent: Vec<Option<Uuid>> = deliveries(&world, hook.webhook.id)
        .await
        .iter()
        .map(|d| d.event_uuid)
        .collect();
    assert_eq!(sent, [sends[0].uuid, sends[1].uuid, sends[4].uuid]);
    assert_eq!(world.counts.dropped(), [("delivery", 0), ("answer", 2)]);
}

#[tokio::test]
async fn every_change_of_a_webhook_is_in_the_projects_activity_and_the_secret_never_is() {
    let world = world();
    let hook = create(&world, settings("a")).await;
    let id = hook.webhook.id;
    let change = |changes: WebhookChanges| world.webhooks.update(PROJECT, USER, id, changes);
    change(WebhookChanges {
        url: Some(url("b")),
        enabled: Some(false),
        ..WebhookChanges::default()
    })
    .await
    .unwrap();
    // Changing nothing records nothing.
    change(WebhookChanges {
        url: Some(url("b")),
        ..WebhookChanges::default()
    })
    .await
    .unwrap();
    world
        .webhooks
        .rotate_secret(PROJECT, USER, id)
        .await
        .unwrap();
    world.webhooks.delete(PROJECT, USER, id).await.unwrap();

    let log = world.webhooks.activity(PROJECT, None, all()).await.unwrap();
    let activities: Vec<&str> = log.entries.iter().map(|e| e.activity.as_str()).collect();
    assert_eq!(
        activities,
        ["deleted", "secret_rotated", "updated", "created"]
    );
    let updated = &log.entries[2];
    assert_eq!(updated.scope, "Webhook");
    assert_eq!(updated.item_id, id.0.to_string());
    assert_eq!(
        updated.detail["changes"],
        json!([
            {"type": "Webhook", "action": "changed", "field": "url", "before": url("a"), "after": url("b")},
            {"type": "Webhook", "action": "changed", "field": "enabled", "before": true, "after": false},
        ])
    );
    let text =
        serde_json::to_string(&log.entries.iter().map(|e| &e.detail).collect::<Vec<_>>()).unwrap();
    assert!(!text.contains("whsec_"), "a secret was logged: {text}");
    // The log outlives the webhook, but one webhook's log needs the webhook.
    let one = world.webhooks.activity(PROJECT, Some(id), all()).await;
    assert!(matches!(one, Err(DomainError::NotFound)), "{one:?}");
    let other = world
        .webhooks
        .activity(OTHER_PROJECT, None, all())
        .await
        .unwrap();
    assert_eq!(other.total, 0);
}
