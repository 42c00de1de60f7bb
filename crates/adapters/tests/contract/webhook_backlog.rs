//! What only PostgreSQL can show about a large webhook backlog: the claim reads each webhook's
//! head through an index and scans no backlog, and deleting a webhook leaves its backlog to the
//! dispatchers' batched purge instead of deleting it inside the owner's request.

use adapters::PgDeliveryQueue;
use adapters::testing::TestDatabase;
use domain::DomainError;
use domain::webhook::WebhookEvent;

use crate::stores::Stores;
use crate::webhooks::webhook;

/// Pending deliveries seeded for one webhook: enough that a plan scanning them would show.
const BACKLOG: i64 = 100_000;

#[tokio::test]
async fn a_claim_behind_a_large_backlog_reads_heads_by_index_and_a_deletion_leaves_the_backlog_to_the_purge()
 {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let events = [WebhookEvent::ResponseCompleted];
    let flooded = webhook(&stores, stores.project, &events, None).await;
    let quiet = webhook(&stores, stores.other_project, &events, None).await;
    let seed = |webhook: uuid::Uuid, project: i32, count: i64| {
        format!(
            "INSERT INTO webhook_deliveries
                 (id, webhook_id, project_id, kind, event_uuid, survey_id, submission_key)
             SELECT gen_random_uuid(), '{webhook}', {project}, 'survey_response.completed',
                    gen_random_uuid(), 's', n::text
             FROM generate_series(1, {count}) AS n"
        )
    };
    db.execute(&seed(flooded.id.0, stores.project.0, BACKLOG))
        .await;
    db.execute(&seed(quiet.id.0, stores.other_project.0, 1))
        .await;
    db.execute("ANALYZE webhook_deliveries").await;
    db.execute("ANALYZE webhooks").await;

    let plan = PgDeliveryQueue::new(db.database.clone())
        .claim_plan()
        .await
        .unwrap();
    assert!(
        !plan.contains("Seq Scan on webhook_deliveries"),
        "the claim scans the backlog:\n{plan}"
    );
    assert!(
        plan.contains("webhook_deliveries_head_idx"),
        "the claim does not read heads by index:\n{plan}"
    );
    // One delivery of each webhook: the flooded one's backlog waits behind its head.
    let claimed = stores
        .deliveries
        .claim_due(32, 8, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    let mut webhooks: Vec<_> = claimed.iter().map(|d| d.webhook).collect();
    webhooks.sort();
    let mut expected = vec![flooded.id, quiet.id];
    expected.sort();
    assert_eq!(webhooks, expected);

    domain::in_transaction!(stores.webhooks.begin(), |transaction| {
        Ok::<_, DomainError>(transaction.delete(stores.project, flooded.id).await?)
    })
    .unwrap();
    // The deletion removed the webhook only; its backlog is the purge's.
    assert_eq!(db.count_rows("webhook_deliveries").await, BACKLOG + 1);
    let mut purged = 0;
    loop {
        let batch = stores.deliveries.purge_deleted(10_000).await.unwrap();
        assert!(batch <= 10_000);
        if batch == 0 {
            break;
        }
        purged += batch;
    }
    assert_eq!(purged, u64::try_from(BACKLOG).unwrap());
    assert_eq!(db.count_rows("webhook_deliveries").await, 1);
}
