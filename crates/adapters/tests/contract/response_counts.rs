//! `responses_count` must not grow with the number of events: with 100,000 survey events stored,
//! PostgreSQL's plan for the count reads no event and scans no response table whole.

use adapters::PgSurveyResponseRepository;
use adapters::testing::TestDatabase;
use chrono::Duration;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use domain::person::ProfileSets;
use domain::survey_response::{
    CountFilter, SurveyEvent, SurveyEventKind, SurveyResponseRepository,
};
use serde_json::Map;
use uuid::Uuid;

use crate::stores::{Stores, at};

const EVENTS: usize = 100_000;
const SURVEYS: usize = 50;
/// The most events one capture request may carry by default (the API's
/// `DEFAULT_CAPTURE_MAX_EVENTS`): one statement with array parameters, where a row of
/// parameters per event would pass PostgreSQL's 65,535.
const BATCH: usize = 10_000;

#[tokio::test]
async fn counting_reads_no_events_at_a_hundred_thousand_of_them() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let repository = PgSurveyResponseRepository::new(db.database.clone());
    // Launch one survey so the count has its lower bound.
    diesel::sql_query(
        "INSERT INTO surveys (id, project_id, name, type, start_date) \
         VALUES (gen_random_uuid(), $1, 'Launched', 'popover', '2026-01-01T00:00:00Z')",
    )
    .bind::<diesel::sql_types::Int4, _>(stores.project.0)
    .execute(&mut connect(&db).await)
    .await
    .unwrap();

    let survey_ids: Vec<String> = (0..SURVEYS).map(|_| Uuid::now_v7().to_string()).collect();
    let start = at("2026-01-02T00:00:00Z");
    for batch in 0..EVENTS / BATCH {
        let events: Vec<SurveyEvent> = (0..BATCH)
            .map(|i| {
                let n = batch * BATCH + i;
                SurveyEvent {
                    uuid: Uuid::now_v7(),
                    kind: if (n / SURVEYS).is_multiple_of(2) {
                        SurveyEventKind::Sent
                    } else {
                        SurveyEventKind::Shown
                    },
                    survey_id: survey_ids[n % SURVEYS].clone(),
                    distinct_id: format!("person-{n}"),
                    timestamp: start + Duration::seconds(i64::try_from(n).unwrap()),
                    submission_id: None,
                    properties: Map::new(),
                }
            })
            .collect();
        assert_eq!(
            repository
                .record(stores.project, events.to_vec(), ProfileSets::default())
                .await
                .unwrap(),
            BATCH
        );
    }
    // What autovacuum would have done by now on a live database.
    diesel::sql_query("ANALYZE")
        .execute(&mut connect(&db).await)
        .await
        .unwrap();

    let counts = repository
        .counts(stores.project, &CountFilter::default())
        .await
        .unwrap();
    assert_eq!(counts.len(), SURVEYS);
    assert_eq!(
        counts.values().sum::<u64>(),
        u64::try_from(EVENTS / 2).unwrap()
    );

    let plan = repository.counts_plan(stores.project).await.unwrap();
    assert!(
        !plan.contains("survey_events"),
        "the count reads events:\n{plan}"
    );
    assert!(
        !plan.contains("Seq Scan on survey_responses"),
        "the count scans every response:\n{plan}"
    );
}

async fn connect(db: &TestDatabase) -> AsyncPgConnection {
    AsyncPgConnection::establish(&db.url).await.unwrap()
}
