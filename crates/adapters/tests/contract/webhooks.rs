//! The webhook outbox and its queue: a capture makes each subscribed webhook's deliveries in
//! order and only for new sends; claims hand out each webhook's oldest pending delivery, never
//! the same one twice at once, and again once a claim's lease ends (a node that died mid-send).

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use domain::ports::conclude;
use domain::survey::SurveyId;
use domain::survey_response::{SurveyEvent, SurveyEventKind};
use domain::tenancy::ProjectId;
use domain::webhook::{
    Attempt, DeliveryKind, DueDelivery, NextStep, Settlement, Webhook, WebhookEvent, WebhookFormat,
    WebhookSecret, WebhookSettings,
};
use serde_json::json;
use uuid::Uuid;

use crate::stores::Stores;

contract!(
    a_capture_makes_each_subscribed_webhooks_deliveries_in_order,
    concurrent_claims_never_hand_out_a_delivery_twice,
    a_claim_is_taken_again_once_its_lease_ends,
    finished_deliveries_are_forgotten_in_batches_and_pending_ones_kept,
);

const LONG_LEASE: Duration = Duration::from_secs(60);

fn at(second: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + second, 0).unwrap()
}

async fn webhook(
    stores: &Stores,
    project: ProjectId,
    events: &[WebhookEvent],
    surveys: Option<Vec<SurveyId>>,
) -> Webhook {
    let mut transaction = stores.webhooks.begin().await.unwrap();
    let outcome = transaction
        .insert(
            project,
            &WebhookSettings {
                url: "https://hooks.example.com/".into(),
                events: events.to_vec(),
                survey_ids: surveys,
                format: WebhookFormat::Standard,
                enabled: true,
                description: String::new(),
            },
            &WebhookSecret::generate(),
        )
        .await
        .map_err(Into::into);
    conclude(transaction, outcome).await.unwrap()
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
        let due = stores.deliveries.claim_due(10, LONG_LEASE).await.unwrap();
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
    stores
        .survey_responses
        .record(stores.project, batch.to_vec(), vec![])
        .await
        .unwrap();
    // A retried batch makes nothing new.
    stores
        .survey_responses
        .record(stores.project, batch.to_vec(), vec![])
        .await
        .unwrap();

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
    stores
        .survey_responses
        .record(stores.project, batch.to_vec(), vec![])
        .await
        .unwrap();
    let mut claims = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let queue = stores.deliveries.clone();
        claims.spawn(async move { queue.claim_due(3, LONG_LEASE).await.unwrap() });
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
    stores
        .survey_responses
        .record(stores.project, vec![sent(&survey, "s", true, 1)], vec![])
        .await
        .unwrap();
    let lease = Duration::from_millis(300);
    let first = stores.deliveries.claim_due(10, lease).await.unwrap();
    assert_eq!(first.len(), 1);
    assert!(
        stores
            .deliveries
            .claim_due(10, lease)
            .await
            .unwrap()
            .is_empty()
    );
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let again = stores.deliveries.claim_due(10, lease).await.unwrap();
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
    stores
        .survey_responses
        .record(stores.project, done.to_vec(), vec![])
        .await
        .unwrap();
    assert_eq!(drain(&stores).await.len(), 2);
    let waiting = sent(&survey, "later", true, 5);
    stores
        .survey_responses
        .record(stores.project, vec![waiting.clone()], vec![])
        .await
        .unwrap();
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
    let due = queue.claim_due(10, LONG_LEASE).await.unwrap();
    assert_eq!(
        due.iter()
            .map(|d| d.sources.as_ref().unwrap().event.uuid)
            .collect::<Vec<_>>(),
        [waiting.uuid]
    );
}
