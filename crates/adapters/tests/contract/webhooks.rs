//! The webhook outbox and its queue: a capture's answers fan out into each subscribed webhook's
//! deliveries in order and only for new sends, within the bounds (oldest dropped and reported);
//! claims hand out each webhook's oldest pending delivery, projects in turn, never the same one
//! twice at once, and again once a claim's lease ends (a node that died mid-send); a deleted
//! webhook is sent nothing more and its deliveries are purged in batches.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use domain::DomainError;
use domain::person::ProfileSets;
use domain::survey::SurveyId;
use domain::survey_response::{SurveyEvent, SurveyEventKind};
use domain::tenancy::ProjectId;
use domain::webhook::{
    Attempt, DeliveryKind, Dropped, DueDelivery, FanOut, NextStep, QueueBounds, Settlement,
    Webhook, WebhookEvent, WebhookFormat, WebhookSecret, WebhookSettings,
};
use serde_json::json;
use uuid::Uuid;

use crate::stores::Stores;

contract!(
    a_capture_makes_each_subscribed_webhooks_deliveries_in_order,
    concurrent_claims_never_hand_out_a_delivery_twice,
    a_claim_is_taken_again_once_its_lease_ends,
    finished_deliveries_are_forgotten_in_batches_and_pending_ones_kept,
    claims_serve_every_project_with_due_work_before_a_second_turn_of_any,
    fan_out_keeps_each_webhooks_newest_deliveries_within_its_share_and_reports_the_rest,
    fan_out_takes_a_bounded_share_of_a_projects_outbox_and_drops_its_oldest_past_the_bound,
    a_deleted_webhook_is_sent_nothing_more_and_its_deliveries_are_purged_in_batches,
);

const LONG_LEASE: Duration = Duration::from_secs(60);

fn at(second: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + second, 0).unwrap()
}

pub(crate) async fn webhook(
    stores: &Stores,
    project: ProjectId,
    events: &[WebhookEvent],
    surveys: Option<Vec<SurveyId>>,
) -> Webhook {
    let settings = WebhookSettings {
        url: "https://hooks.example.com/".into(),
        events: events.to_vec(),
        survey_ids: surveys,
        format: WebhookFormat::Standard,
        enabled: true,
        description: String::new(),
    };
    domain::in_transaction!(stores.webhooks.begin(), |transaction| {
        Ok::<_, DomainError>(
            transaction
                .insert(project, &settings, &WebhookSecret::generate())
                .await?,
        )
    })
    .unwrap()
}

fn sent(survey: &str, submission: &str, completed: bool, second: i64) -> SurveyEvent {
    let properties =
        json!({"$survey_id": survey, "$survey_completed": completed, "$survey_response_q": "a"});
    SurveyEvent {
        uuid: Uuid::now_v7(),
        kind: SurveyEventKind::Sent,
        survey_id: survey.into(),
        distinct_id: "ada".into(),
        timestamp: at(second),
        submission_id: Some(submission.into()),
        properties: properties.as_object().unwrap().clone(),
    }
}

/// Records `events` as the project's capture and fans them out with the default bounds.
async fn capture(stores: &Stores, project: ProjectId, events: &[SurveyEvent]) -> FanOut {
    stores
        .survey_responses
        .record(project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    fan_out(stores, &QueueBounds::default()).await
}

async fn fan_out(stores: &Stores, bounds: &QueueBounds) -> FanOut {
    stores.deliveries.fan_out(bounds).await.unwrap()
}

/// Claims with no per-project limit to speak of.
async fn claim(stores: &Stores, limit: u32, lease: Duration) -> Vec<DueDelivery> {
    stores
        .deliveries
        .claim_due(limit, 100, lease)
        .await
        .unwrap()
}

/// The answer each delivery is about, in order.
fn answers(claimed: &[DueDelivery]) -> Vec<Uuid> {
    claimed
        .iter()
        .map(|d| d.sources.as_ref().expect("a response delivery").event.uuid)
        .collect()
}

fn delivered() -> Settlement {
    Settlement {
        body: Some(b"{}".to_vec()),
        attempt: Attempt {
            at: Utc::now(),
            status_code: Some(200),
            error: None,
            duration_ms: 1,
        },
        next: NextStep::Delivered,
        disable: None,
    }
}

/// Claims and delivers until nothing is due: every claimed delivery, in claim order.
async fn drain(stores: &Stores) -> Vec<DueDelivery> {
    let mut claimed = Vec::new();
    loop {
        let due = claim(stores, 10, LONG_LEASE).await;
        if due.is_empty() {
            return claimed;
        }
        for delivery in &due {
            stores
                .deliveries
                .settle(delivery.id, &delivered())
                .await
                .unwrap();
        }
        claimed.extend(due);
    }
}

async fn a_capture_makes_each_subscribed_webhooks_deliveries_in_order(stores: Stores) {
    let survey = Uuid::now_v7().to_string();
    let every = webhook(&stores, stores.project, &WebhookEvent::ALL, None).await;
    let other_survey = webhook(
        &stores,
        stores.project,
        &WebhookEvent::ALL,
        Some(vec![SurveyId(Uuid::now_v7())]),
    )
    .await;
    let completed_only = webhook(
        &stores,
        stores.project,
        &[WebhookEvent::ResponseCompleted],
        None,
    )
    .await;
    let _other_project = webhook(&stores, stores.other_project, &WebhookEvent::ALL, None).await;
    // One batch: a submission's partial send, its final send, and a second submission whole,
    // out of order.
    let batch = [
        sent(&survey, "two", true, 3),
        sent(&survey, "one", true, 2),
        sent(&survey, "one", false, 1),
    ];
    let fanned = capture(&stores, stores.project, &batch).await;
    assert_eq!((fanned.entries, fanned.deliveries), (3, 7));
    // A retried batch makes nothing new.
    assert_eq!(
        capture(&stores, stores.project, &batch).await,
        FanOut::default()
    );

    let claimed = drain(&stores).await;
    let of = |webhook: &Webhook| -> Vec<(DeliveryKind, Uuid)> {
        claimed
            .iter()
            .filter(|d| d.webhook == webhook.id)
            .map(|d| {
                let sources = d.sources.as_ref().expect("a response delivery has sources");
                (
                    DeliveryKind::Response(sources.event_type),
                    sources.event.uuid,
                )
            })
            .collect()
    };
    let created = DeliveryKind::Response(WebhookEvent::ResponseCreated);
    let updated = DeliveryKind::Response(WebhookEvent::ResponseUpdated);
    let completed = DeliveryKind::Response(WebhookEvent::ResponseCompleted);
    assert_eq!(
        of(&every),
        [
            (created, batch[2].uuid),
            (updated, batch[1].uuid),
            (completed, batch[1].uuid),
            (created, batch[0].uuid),
            (completed, batch[0].uuid),
        ]
    );
    assert_eq!(
        of(&completed_only),
        [(completed, batch[1].uuid), (completed, batch[0].uuid)]
    );
    assert!(of(&other_survey).is_empty());
    // Only the project's webhooks got any.
    assert_eq!(claimed.len(), 7);
    // The final send's payload knows the submission's sends up to it.
    let final_send = claimed
        .iter()
        .find(|d| {
            d.sources
                .as_ref()
                .is_some_and(|s| s.event.uuid == batch[1].uuid)
        })
        .unwrap();
    assert_eq!(
        final_send.sources.as_ref().unwrap().submission_events,
        [batch[2].uuid, batch[1].uuid]
    );
}

async fn concurrent_claims_never_hand_out_a_delivery_twice(stores: Stores) {
    let survey = Uuid::now_v7().to_string();
    for _ in 0..8 {
        webhook(
            &stores,
            stores.project,
            &[WebhookEvent::ResponseCompleted],
            None,
        )
        .await;
    }
    let batch: Vec<SurveyEvent> = (0..3)
        .map(|n| sent(&survey, &format!("s{n}"), true, n))
        .collect();
    capture(&stores, stores.project, &batch).await;
    let mut claims = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let queue = stores.deliveries.clone();
        claims.spawn(async move { queue.claim_due(3, 100, LONG_LEASE).await.unwrap() });
    }
    let mut seen = BTreeSet::new();
    let mut webhooks = BTreeSet::new();
    while let Some(claimed) = claims.join_next().await {
        for delivery in claimed.unwrap() {
            assert!(
                seen.insert(delivery.id),
                "{:?} was claimed twice",
                delivery.id
            );
            // Each webhook's head only: one of its three deliveries at a time.
            assert!(
                webhooks.insert(delivery.webhook),
                "two of one webhook's deliveries at once"
            );
        }
    }
    assert_eq!(seen.len(), 8);
}

async fn a_claim_is_taken_again_once_its_lease_ends(stores: Stores) {
    let survey = Uuid::now_v7().to_string();
    webhook(
        &stores,
        stores.project,
        &[WebhookEvent::ResponseCompleted],
        None,
    )
    .await;
    capture(&stores, stores.project, &[sent(&survey, "s", true, 1)]).await;
    let lease = Duration::from_millis(300);
    let first = claim(&stores, 10, lease).await;
    assert_eq!(first.len(), 1);
    assert!(claim(&stores, 10, lease).await.is_empty());
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let again = claim(&stores, 10, lease).await;
    assert_eq!(
        again.iter().map(|d| d.id).collect::<Vec<_>>(),
        [first[0].id]
    );
}

async fn finished_deliveries_are_forgotten_in_batches_and_pending_ones_kept(stores: Stores) {
    let survey = Uuid::now_v7().to_string();
    webhook(
        &stores,
        stores.project,
        &[WebhookEvent::ResponseCompleted],
        None,
    )
    .await;
    let done: Vec<SurveyEvent> = (0..2)
        .map(|n| sent(&survey, &format!("s{n}"), true, n))
        .collect();
    capture(&stores, stores.project, &done).await;
    assert_eq!(drain(&stores).await.len(), 2);
    let waiting = sent(&survey, "later", true, 5);
    capture(&stores, stores.project, std::slice::from_ref(&waiting)).await;
    let queue = &stores.deliveries;
    assert_eq!(
        queue
            .forget_finished(Utc::now() - chrono::Duration::hours(1), 10)
            .await
            .unwrap(),
        0
    );
    let soon = Utc::now() + chrono::Duration::seconds(1);
    assert_eq!(queue.forget_finished(soon, 1).await.unwrap(), 1);
    assert_eq!(queue.forget_finished(soon, 10).await.unwrap(), 1);
    assert_eq!(queue.forget_finished(soon, 10).await.unwrap(), 0);
    let due = claim(&stores, 10, LONG_LEASE).await;
    assert_eq!(answers(&due), [waiting.uuid]);
}

/// A webhook of `project` on completed responses only.
async fn on_completed(stores: &Stores, project: ProjectId) -> Webhook {
    webhook(stores, project, &[WebhookEvent::ResponseCompleted], None).await
}

/// `n` completed submissions of `survey`, a second apart from `from`.
fn completed(survey: &str, n: i64, from: i64) -> Vec<SurveyEvent> {
    (from..from + n)
        .map(|second| sent(survey, &format!("s{second}"), true, second))
        .collect()
}

async fn claims_serve_every_project_with_due_work_before_a_second_turn_of_any(stores: Stores) {
    let survey = Uuid::now_v7().to_string();
    for _ in 0..3 {
        on_completed(&stores, stores.project).await;
    }
    let other = on_completed(&stores, stores.other_project).await;
    // The first project's backlog is older than the other's only answer.
    capture(&stores, stores.project, &completed(&survey, 5, 0)).await;
    let late = completed(&survey, 1, 100);
    capture(&stores, stores.other_project, &late).await;

    let first = stores.deliveries.claim_due(2, 2, LONG_LEASE).await.unwrap();
    assert_eq!(first.len(), 2);
    assert!(
        first.iter().any(|d| d.webhook == other.id),
        "the other project waited behind the first one's backlog"
    );
    // At most two of a project per round, however many of its webhooks are due.
    let second = stores
        .deliveries
        .claim_due(10, 2, LONG_LEASE)
        .await
        .unwrap();
    assert_eq!(second.len(), 2);
    assert!(second.iter().all(|d| d.webhook != other.id));
}

async fn fan_out_keeps_each_webhooks_newest_deliveries_within_its_share_and_reports_the_rest(
    stores: Stores,
) {
    let survey = Uuid::now_v7().to_string();
    let mut hooks = vec![
        on_completed(&stores, stores.project).await,
        on_completed(&stores, stores.project).await,
    ];
    hooks.sort_by_key(|w| w.id);
    let answers_made = completed(&survey, 4, 0);
    stores
        .survey_responses
        .record(stores.project, answers_made.clone(), ProfileSets::default())
        .await
        .unwrap();
    // Three a webhook, but the project's four shared by its two enabled webhooks: two each.
    let bounds = QueueBounds {
        pending_per_webhook: 3,
        pending_per_project: 4,
        ..QueueBounds::default()
    };
    let fanned = fan_out(&stores, &bounds).await;
    assert_eq!((fanned.entries, fanned.deliveries), (4, 8));
    assert_eq!(
        fanned.dropped,
        hooks
            .iter()
            .map(|hook| Dropped {
                project: stores.project,
                webhook: Some(hook.id),
                count: 2,
            })
            .collect::<Vec<_>>()
    );
    let claimed = drain(&stores).await;
    for hook in &hooks {
        let of_hook: Vec<DueDelivery> = claimed
            .iter()
            .filter(|d| d.webhook == hook.id)
            .cloned()
            .collect();
        assert_eq!(
            answers(&of_hook),
            [answers_made[2].uuid, answers_made[3].uuid]
        );
    }
}

async fn fan_out_takes_a_bounded_share_of_a_projects_outbox_and_drops_its_oldest_past_the_bound(
    stores: Stores,
) {
    let survey = Uuid::now_v7().to_string();
    on_completed(&stores, stores.project).await;
    on_completed(&stores, stores.other_project).await;
    let backlog = completed(&survey, 5, 0);
    stores
        .survey_responses
        .record(stores.project, backlog.clone(), ProfileSets::default())
        .await
        .unwrap();
    let other = completed(&survey, 1, 100);
    stores
        .survey_responses
        .record(stores.other_project, other.clone(), ProfileSets::default())
        .await
        .unwrap();
    let bounds = QueueBounds {
        fan_out_per_project: 2,
        outbox_per_project: 1,
        ..QueueBounds::default()
    };
    // Two of the first project's answers and the other's one; of the three left, the newest
    // is kept.
    let fanned = fan_out(&stores, &bounds).await;
    assert_eq!((fanned.entries, fanned.deliveries), (3, 3));
    assert_eq!(
        fanned.dropped,
        [Dropped {
            project: stores.project,
            webhook: None,
            count: 2,
        }]
    );
    let next = fan_out(&stores, &bounds).await;
    assert_eq!((next.entries, next.deliveries), (1, 1));
    assert_eq!(fan_out(&stores, &bounds).await, FanOut::default());
    let mut sent = answers(&drain(&stores).await);
    sent.sort();
    let mut expected = vec![
        backlog[0].uuid,
        backlog[1].uuid,
        backlog[4].uuid,
        other[0].uuid,
    ];
    expected.sort();
    assert_eq!(sent, expected);
}

async fn a_deleted_webhook_is_sent_nothing_more_and_its_deliveries_are_purged_in_batches(
    stores: Stores,
) {
    let survey = Uuid::now_v7().to_string();
    let hook = on_completed(&stores, stores.project).await;
    capture(&stores, stores.project, &completed(&survey, 5, 0)).await;
    domain::in_transaction!(stores.webhooks.begin(), |transaction| {
        Ok::<_, DomainError>(transaction.delete(stores.project, hook.id).await?)
    })
    .unwrap();

    assert!(claim(&stores, 10, LONG_LEASE).await.is_empty());
    let queue = &stores.deliveries;
    assert_eq!(queue.purge_deleted(2).await.unwrap(), 2);
    assert_eq!(queue.purge_deleted(2).await.unwrap(), 2);
    assert_eq!(queue.purge_deleted(2).await.unwrap(), 1);
    assert_eq!(queue.purge_deleted(2).await.unwrap(), 0);
}
