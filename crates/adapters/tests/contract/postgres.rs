//! What only PostgreSQL can show: row locks ordering concurrent writes (without deadlocks), a
//! unique constraint settling a race, a failed statement leaving nothing behind, rows no port
//! could have written, and captured text its `text` and `jsonb` cannot hold (U+0000). The fake runs every call under one mutex and stores any string, so these
//! tests could not fail on it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::survey_writes as writes;
use adapters::testing::TestDatabase;
use diesel::sql_types;
use diesel_async::{
    AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _, SimpleAsyncConnection as _,
};
use domain::DomainError;
use domain::feature_flag::{FeatureFlag, FlagChanges};
use domain::person::{PersonSet, ProfileSets};
use domain::ports::Readiness as _;
use domain::survey::{
    FlagReferences, ReferencedFlags, Survey, SurveyFilter, SurveyId, SurveyLock, SurveyState,
    SurveyType, SurveyWrite, TargetingFlag, TargetingPlan,
};
use domain::survey_response::{
    AnswerFilter, CountFilter, ResponseFilter, SurveyEvent, SurveyEventKind,
};
use domain::testing::person_properties;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::stores::{Stores, all, at, person_sets};

/// How long a planner holds its transaction open, long enough for a racing write to arrive.
const HOLD: Duration = Duration::from_millis(300);

/// Holds the (sync) planner, and so its transaction, for `HOLD`. `block_in_place` hands this
/// worker's queued tasks to another thread first: a plain sleep would also hold back the racing
/// task when it was woken onto this worker, and the race would never happen.
fn hold_transaction_open() {
    tokio::task::block_in_place(|| std::thread::sleep(HOLD));
}

/// Creates a plain survey of the main project.
async fn survey(stores: &Stores, state: SurveyState) -> Survey {
    let planner = move |_: &ReferencedFlags| {
        Ok(SurveyWrite {
            state: state.clone(),
            targeting: TargetingPlan::default(),
            activity: None,
        })
    };
    writes::create(
        &*stores.surveys,
        stores.project,
        SurveyId::generate(),
        &stores.user,
        FlagReferences::default(),
        &planner,
    )
    .await
    .unwrap()
}

/// Creates a survey of the main project launched on 2026-01-01 (so its answers are counted);
/// returns its id as captures name it.
async fn launched_survey_id(stores: &Stores) -> String {
    let launched = SurveyState {
        start_date: Some(at("2026-01-01T00:00:00Z")),
        ..SurveyState::draft("NPS".into(), SurveyType::Api)
    };
    survey(stores, launched).await.id.0.to_string()
}

/// A draft survey of the main project with a targeting flag it owns; returns both.
async fn targeted_survey(stores: &Stores) -> (Survey, FeatureFlag) {
    let flag = stores.flag("targeting").await;
    let id = flag.id;
    let planner = move |_: &ReferencedFlags| {
        Ok(SurveyWrite {
            state: SurveyState::draft("NPS".into(), SurveyType::Popover),
            targeting: TargetingPlan {
                delete: None,
                flag: Some(TargetingFlag::Existing {
                    id,
                    owned: true,
                    changes: FlagChanges::default(),
                }),
            },
            activity: None,
        })
    };
    let references = FlagReferences {
        linked: None,
        targeting: Some(id),
    };
    let survey = writes::create(
        &*stores.surveys,
        stores.project,
        SurveyId::generate(),
        &stores.user,
        references,
        &planner,
    )
    .await
    .unwrap();
    (survey, flag)
}

/// Opens two pooled connections before a race, so neither writer is held up connecting.
async fn warm_up(stores: &Stores) {
    let filter = SurveyFilter::default();
    let (a, b) = tokio::join!(
        stores.surveys.list(stores.project, &filter, all()),
        stores.surveys.list(stores.project, &filter, all()),
    );
    a.unwrap();
    b.unwrap();
}

/// Appends `mark` to the stored description after holding the transaction open: without the
/// survey's row lock, two of these running at once both read the old description and one
/// mark is lost. (Remove `.for_update()` from `PgSurveyRepository::update` to see it fail.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_of_one_survey_apply_one_after_the_other() {
    let stores = Stores::postgres().await;
    let created = survey(&stores, SurveyState::draft("NPS".into(), SurveyType::Api)).await;
    warm_up(&stores).await;

    let append = |mark: char| {
        let surveys = stores.surveys.clone();
        let project = stores.project;
        tokio::spawn(async move {
            let planner = move |current: &Survey, _: &ReferencedFlags| {
                let mut state = current.state.clone();
                hold_transaction_open();
                state.description.push(mark);
                Ok(SurveyWrite {
                    state,
                    targeting: TargetingPlan::default(),
                    activity: None,
                })
            };
            writes::update(
                &*surveys,
                project,
                created.id,
                FlagReferences::default(),
                &planner,
            )
            .await
        })
    };
    let (a, b) = tokio::join!(append('a'), append('b'));
    a.unwrap().unwrap();
    b.unwrap().unwrap();

    let stored = stores
        .surveys
        .get(stores.project, created.id)
        .await
        .unwrap();
    let mut marks: Vec<char> = stored.unwrap().state.description.chars().collect();
    marks.sort_unstable();
    assert_eq!(
        marks,
        ['a', 'b'],
        "both updates applied, one after the other"
    );
}

/// A running survey adopts flag F and switches it on; the flags API deletes F meanwhile. The
/// survey's transaction holds F's row lock, so the deletion waits for it and applies last: F
/// ends deleted and off, never revived by the survey's write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_deleted_while_a_survey_adopts_it_waits_and_ends_deleted_and_inactive() {
    let stores = Stores::postgres().await;
    let flag = stores
        .flags
        .update(
            stores.project,
            stores.flag("shared").await.id,
            FlagChanges {
                active: Some(false),
                ..FlagChanges::default()
            },
        )
        .await
        .unwrap();
    let running = SurveyState {
        start_date: Some(at("2026-01-01T00:00:00Z")),
        ..SurveyState::draft("NPS".into(), SurveyType::Api)
    };
    let created = survey(&stores, running).await;
    warm_up(&stores).await;

    let (planning, planned) = oneshot::channel();
    let adopting = {
        let surveys = stores.surveys.clone();
        let project = stores.project;
        let planning = Mutex::new(Some(planning));
        tokio::spawn(async move {
            let planner = move |current: &Survey, flags: &ReferencedFlags| {
                assert_eq!(flags.targeting.as_ref().map(|f| f.id), Some(flag.id));
                if let Some(planning) = planning.lock().unwrap().take() {
                    planning.send(()).unwrap();
                }
                hold_transaction_open();
                Ok(SurveyWrite {
                    state: current.state.clone(),
                    targeting: TargetingPlan {
                        delete: None,
                        flag: Some(TargetingFlag::Existing {
                            id: flag.id,
                            owned: false,
                            changes: FlagChanges {
                                active: Some(current.state.is_running()),
                                ..FlagChanges::default()
                            },
                        }),
                    },
                    activity: None,
                })
            };
            let references = FlagReferences {
                linked: None,
                targeting: Some(flag.id),
            };
            writes::update(&*surveys, project, created.id, references, &planner).await
        })
    };
    let deleting = {
        let flags = stores.flags.clone();
        let project = stores.project;
        tokio::spawn(async move {
            planned.await.unwrap();
            flags
                .update(project, flag.id, FlagChanges::deletion())
                .await
        })
    };
    let (adopted, deleted) = tokio::join!(adopting, deleting);

    let adopted = adopted.unwrap().unwrap();
    let shown = adopted.targeting_flag.unwrap();
    assert_eq!(shown.id, flag.id);
    assert!(
        shown.active && !shown.deleted,
        "the survey's write ran first"
    );
    let deleted = deleted.unwrap().unwrap();
    assert!(deleted.deleted && !deleted.active, "the deletion ran last");
    let stored = stores
        .surveys
        .get(stores.project, created.id)
        .await
        .unwrap();
    let stored = stored.unwrap().targeting_flag.unwrap();
    assert_eq!(
        (stored.id, stored.deleted, stored.active),
        (flag.id, true, false)
    );
    assert_eq!(
        stores.flags.get(stores.project, flag.id).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn two_concurrent_creates_with_one_name_yield_one_survey_and_one_conflict() {
    let stores = Stores::postgres().await;
    let create = |key: &str| {
        let plan = TargetingPlan {
            delete: None,
            flag: Some(TargetingFlag::New {
                flag: stores.new_flag(key),
                created_by: stores.user.id,
            }),
        };
        let planner = move |_: &ReferencedFlags| {
            Ok(SurveyWrite {
                state: SurveyState::draft("Race".into(), SurveyType::Api),
                targeting: plan.clone(),
                activity: None,
            })
        };
        let surveys = stores.surveys.clone();
        let (project, user) = (stores.project, stores.user.clone());
        async move {
            let references = FlagReferences::default();
            writes::create(
                &*surveys,
                project,
                SurveyId::generate(),
                &user,
                references,
                &planner,
            )
            .await
        }
    };
    let (a, b) = tokio::join!(create("flag-a"), create("flag-b"));
    let (winner, loser) = match (a, b) {
        (Ok(survey), Err(error)) | (Err(error), Ok(survey)) => (survey, error),
        other => panic!("expected one success and one failure, got {other:?}"),
    };
    assert!(matches!(loser, DomainError::Conflict), "{loser:?}");
    assert_eq!(winner.state.name, "Race");
    assert_eq!(stores.survey_count().await, 1);
    let flags = stores.all_flags().await;
    assert_eq!(
        flags.len(),
        1,
        "the loser's flag was rolled back: {flags:?}"
    );
    assert_eq!(Some(flags[0].id), winner.targeting_flag.map(|f| f.id));
}

#[tokio::test]
async fn a_stored_flag_whose_filters_are_not_an_object_is_unexpected_not_a_panic() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let flag = stores.flag("broken").await;
    let mut conn = AsyncPgConnection::establish(&db.url).await.unwrap();
    diesel::sql_query("UPDATE feature_flags SET filters = '[]' WHERE id = $1")
        .bind::<sql_types::Integer, _>(flag.id.0)
        .execute(&mut conn)
        .await
        .unwrap();

    assert!(stores.flags.get(stores.project, flag.id).await.is_err());
    assert!(stores.flags.list(stores.project, all()).await.is_err());
    let renamed = stores
        .flags
        .update(
            stores.project,
            flag.id,
            FlagChanges {
                name: Some("Renamed".into()),
                ..FlagChanges::default()
            },
        )
        .await;
    assert!(
        matches!(renamed, Err(DomainError::Unexpected(_))),
        "{renamed:?}"
    );
}

#[tokio::test]
async fn a_stored_survey_with_an_unknown_type_or_schedule_is_unexpected_not_a_panic() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let draft = |name: &str| SurveyState::draft(name.into(), SurveyType::Api);
    let broken_type = survey(&stores, draft("Broken type")).await;
    let broken_schedule = survey(&stores, draft("Broken schedule")).await;
    let mut conn = AsyncPgConnection::establish(&db.url).await.unwrap();
    for (sql, id) in [
        (
            "UPDATE surveys SET type = 'hologram' WHERE id = $1",
            broken_type.id,
        ),
        (
            "UPDATE surveys SET schedule = 'sometimes' WHERE id = $1",
            broken_schedule.id,
        ),
    ] {
        diesel::sql_query(sql)
            .bind::<sql_types::Uuid, _>(id.0)
            .execute(&mut conn)
            .await
            .unwrap();
    }

    for id in [broken_type.id, broken_schedule.id] {
        let result = stores.surveys.get(stores.project, id).await;
        assert!(result.is_err(), "{result:?}");
    }
    let listed = stores
        .surveys
        .list(stores.project, &SurveyFilter::default(), all())
        .await;
    assert!(listed.is_err());
}

#[tokio::test]
async fn captured_nul_characters_are_stored_as_the_replacement_character() {
    let stores = Stores::postgres().await;
    let properties = json!({"$survey_id": "s\0", "$survey_response_q": {"a\0": ["b\0"]}});
    let event = SurveyEvent {
        uuid: Uuid::now_v7(),
        kind: SurveyEventKind::Sent,
        survey_id: "s\0".into(),
        distinct_id: "p\0".into(),
        timestamp: at("2026-01-01T00:00:00Z"),
        submission_id: Some("x\0".into()),
        properties: properties.as_object().unwrap().clone(),
    };
    // Two ids that are stored alike are one person, merged in turn.
    let sets = [
        person_set("p\0", json!({"k\0": "v\0", "n": 1})),
        person_set("p\u{FFFD}", json!({"n": 2})),
    ];
    let recorded = stores
        .survey_responses
        .record(stores.project, vec![event], person_sets(sets.to_vec()))
        .await;
    assert_eq!(recorded.unwrap(), 1);
    let page = stores
        .survey_responses
        .responses(
            stores.project,
            "s\u{FFFD}",
            &ResponseFilter::default(),
            &AnswerFilter::default(),
            all(),
            usize::MAX,
        )
        .await
        .unwrap();
    let response = &page.items[0];
    assert_eq!(response.distinct_id, "p\u{FFFD}");
    assert_eq!(response.submission_id.as_deref(), Some("x\u{FFFD}"));
    assert_eq!(
        Value::Object(response.answers.clone()),
        json!({"q": {"a\u{FFFD}": ["b\u{FFFD}"]}})
    );

    // A person is written and looked up under the id as captured, so both find the same row.
    for lookup in ["p\0", "p\u{FFFD}"] {
        let found = person_properties(&*stores.persons, stores.project, lookup).await;
        assert_eq!(
            Value::Object(found.unwrap()),
            json!({"k\u{FFFD}": "v\u{FFFD}", "n": 2}),
            "{lookup:?}"
        );
    }
}

#[tokio::test]
async fn a_capture_that_fails_stores_neither_its_events_nor_its_person_sets() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let fits = SurveyEvent {
        uuid: Uuid::now_v7(),
        kind: SurveyEventKind::Sent,
        survey_id: "s".into(),
        distinct_id: "p".into(),
        timestamp: at("2026-01-01T00:00:00Z"),
        submission_id: None,
        properties: serde_json::Map::new(),
    };
    // Longer than the column holds (the capture endpoint refuses it before storage).
    let too_long = SurveyEvent {
        uuid: Uuid::now_v7(),
        survey_id: "s".repeat(201),
        ..fits.clone()
    };
    let recorded = stores
        .survey_responses
        .record(
            stores.project,
            vec![fits, too_long],
            person_sets(vec![person_set("p", json!({"answered": true}))]),
        )
        .await;

    assert!(recorded.is_err(), "{recorded:?}");
    for table in ["survey_events", "survey_responses"] {
        assert_eq!(db.count_rows(table).await, 0, "{table}");
    }
    let person = person_properties(&*stores.persons, stores.project, "p").await;
    assert_eq!(person.unwrap(), serde_json::Map::new());
}

/// Captures answering one survey for the same persons wait on each other's rows but never
/// deadlock: each statement locks table by table, and rows in key order, whatever order its
/// batch lists them in. Every answer is counted and every person keeps every capture's merge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_captures_for_the_same_persons_never_deadlock() {
    const CAPTURES: usize = 8;
    const PERSONS: usize = 200;
    let stores = Stores::postgres().await;
    let survey_id = launched_survey_id(&stores).await;
    let mut captures = tokio::task::JoinSet::new();
    for capture in 0..CAPTURES {
        // Each capture lists the persons starting at another one.
        let persons: Vec<String> = (0..PERSONS)
            .map(|n| format!("person-{}", (n + capture * PERSONS / CAPTURES) % PERSONS))
            .collect();
        let answers: Vec<SurveyEvent> = persons
            .iter()
            .map(|person| SurveyEvent {
                uuid: Uuid::now_v7(),
                kind: SurveyEventKind::Sent,
                survey_id: survey_id.clone(),
                distinct_id: person.clone(),
                timestamp: at("2026-01-02T00:00:00Z"),
                submission_id: None,
                properties: serde_json::Map::new(),
            })
            .collect();
        let sets: Vec<PersonSet> = persons
            .iter()
            .map(|person| person_set(person, json!({format!("capture-{capture}"): true})))
            .collect();
        let repository = Arc::clone(&stores.survey_responses);
        let project = stores.project;
        captures.spawn(async move { repository.record(project, answers, person_sets(sets)).await });
    }
    while let Some(recorded) = captures.join_next().await {
        assert_eq!(recorded.unwrap().unwrap(), PERSONS);
    }

    let counts = stores
        .survey_responses
        .counts(stores.project, &CountFilter::default())
        .await
        .unwrap();
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        [(survey_id, (CAPTURES * PERSONS) as u64)]
    );
    for n in 0..PERSONS {
        let person = format!("person-{n}");
        let properties = person_properties(&*stores.persons, stores.project, &person).await;
        assert_eq!(properties.unwrap().len(), CAPTURES, "{person}");
    }
}

/// A capture of more events than the queue puts in one statement leaves no connection behind
/// (its buffers grew as large as the statement), and the connections opened after it still add
/// to the writer's counter row: a survey's count stays one row per writer, however often its
/// connection is replaced.
#[tokio::test]
async fn a_large_capture_closes_its_connection_and_counting_stays_in_the_writers_slot() {
    const LARGE: usize = 1_001;
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let survey_id = launched_survey_id(&stores).await;
    let answers = |capture: &str, count: usize| -> Vec<SurveyEvent> {
        (0..count)
            .map(|n| SurveyEvent {
                uuid: Uuid::now_v7(),
                kind: SurveyEventKind::Sent,
                survey_id: survey_id.clone(),
                distinct_id: format!("{capture}-{n}"),
                timestamp: at("2026-01-02T00:00:00Z"),
                submission_id: None,
                properties: serde_json::Map::new(),
            })
            .collect()
    };
    let record = |events: Vec<SurveyEvent>| {
        stores
            .survey_responses
            .record(stores.project, events, ProfileSets::default())
    };
    let open = || db.database.connections().open;

    for capture in ["first", "second", "third"] {
        let before = open();
        assert_eq!(record(answers(capture, LARGE)).await.unwrap(), LARGE);
        assert_eq!(open(), before, "the large capture's connection was closed");
    }
    let before = open();
    assert_eq!(record(answers("small", 1)).await.unwrap(), 1);
    assert_eq!(
        open(),
        before + 1,
        "a small capture's connection stays pooled"
    );

    // The test pool has one writer.
    assert_eq!(db.count_rows("survey_response_counts").await, 1);
    let counts = stores
        .survey_responses
        .counts(stores.project, &CountFilter::default())
        .await
        .unwrap();
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        [(survey_id.clone(), (3 * LARGE + 1) as u64)]
    );
}

fn person_set(distinct_id: &str, properties: Value) -> PersonSet {
    PersonSet {
        distinct_id: distinct_id.into(),
        properties: properties.as_object().unwrap().clone(),
    }
}

/// Holds a person row of `project` in an open transaction (an insert not yet committed), so
/// every capture that merges into that person waits until the returned connection commits.
async fn hold_person(db: &TestDatabase, project: i32, distinct_id: &str) -> AsyncPgConnection {
    let mut holder = AsyncPgConnection::establish(&db.url).await.unwrap();
    holder
        .batch_execute(&format!(
            "BEGIN; INSERT INTO person_properties (project_id, distinct_id, properties) \
             VALUES ({project}, '{distinct_id}', '{{}}')"
        ))
        .await
        .unwrap();
    holder
}

/// Waits until a statement of the database waits on a row lock, then a little longer, so
/// that whatever was spawned meanwhile has queued behind it.
async fn until_a_statement_waits(db: &TestDatabase) {
    #[derive(diesel::QueryableByName)]
    struct Waiting {
        #[diesel(sql_type = sql_types::BigInt)]
        waiting: i64,
    }
    let mut watcher = AsyncPgConnection::establish(&db.url).await.unwrap();
    for _ in 0..500 {
        let found: Waiting = diesel::sql_query(
            "SELECT count(*) AS waiting FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .get_result(&mut watcher)
        .await
        .unwrap();
        if found.waiting > 0 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no capture waited on the held person");
}

/// A capture of one answer to the survey whose person set also merges into `held`.
fn answer_merging_into_held(
    person: &str,
    survey_id: &str,
    mark: usize,
) -> (Vec<SurveyEvent>, Vec<PersonSet>) {
    let answer = SurveyEvent {
        uuid: Uuid::now_v7(),
        kind: SurveyEventKind::Sent,
        survey_id: survey_id.into(),
        distinct_id: person.into(),
        timestamp: at("2026-01-02T00:00:00Z"),
        submission_id: None,
        properties: serde_json::Map::new(),
    };
    let sets = vec![
        person_set(person, json!({"answered": true})),
        person_set("held", json!({format!("capture-{mark}"): true})),
    ];
    (vec![answer], sets)
}

/// Captures that arrive while every capture writer is busy wait, and are then written
/// together: far fewer statements than captures, each capture told how many of its own events
/// were new (an event two captures carry is new for one of them), everything stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captures_that_wait_for_a_writer_are_written_together() {
    const CAPTURES: usize = 40;
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let project = stores.project;
    let survey_id = launched_survey_id(&stores).await;
    let mut holder = hold_person(&db, project.0, "held").await;

    let (stored, statements) = adapters::testing::statements_of(&db.database, async {
        let mut captures = tokio::task::JoinSet::new();
        let mut previous: Option<SurveyEvent> = None;
        for n in 0..CAPTURES {
            let (mut events, sets) =
                answer_merging_into_held(&format!("person-{n}"), &survey_id, n);
            // Each capture also carries its predecessor's event, as a retry would.
            events.extend(previous.replace(events[0].clone()));
            let repository = Arc::clone(&stores.survey_responses);
            captures
                .spawn(async move { repository.record(project, events, person_sets(sets)).await });
        }
        until_a_statement_waits(&db).await;
        holder.batch_execute("COMMIT").await.unwrap();
        let mut stored = 0;
        while let Some(recorded) = captures.join_next().await {
            stored += recorded.unwrap().unwrap();
        }
        stored
    })
    .await;

    assert_eq!(
        stored, CAPTURES,
        "every event is new for exactly one capture"
    );
    assert!(
        statements.len() <= CAPTURES / 4,
        "{} statements for {CAPTURES} captures:\n{}",
        statements.len(),
        statements.join("\n")
    );
    assert_eq!(db.count_rows("survey_events").await, CAPTURES as i64);
    let counts = stores
        .survey_responses
        .counts(project, &CountFilter::default())
        .await
        .unwrap();
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        [(survey_id, CAPTURES as u64)]
    );
    let held = person_properties(&*stores.persons, project, "held")
        .await
        .unwrap();
    assert_eq!(held.len(), CAPTURES, "every capture's merge is kept");
}

/// A capture that PostgreSQL refuses, written together with others that waited beside it,
/// fails alone: the others are written again one by one and stored, nothing of it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_that_fails_among_waiting_captures_fails_alone() {
    const CAPTURES: usize = 10;
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let project = stores.project;
    let mut holder = hold_person(&db, project.0, "held").await;

    let mut captures = tokio::task::JoinSet::new();
    let mut record = |(events, sets): (Vec<SurveyEvent>, Vec<PersonSet>)| {
        let repository = Arc::clone(&stores.survey_responses);
        captures.spawn(async move { repository.record(project, events, person_sets(sets)).await })
    };
    for n in 0..CAPTURES {
        record(answer_merging_into_held(&format!("person-{n}"), "s", n));
    }
    until_a_statement_waits(&db).await;
    // Queued behind the busy writers, with the last of the good ones: longer than the column
    // holds (the capture endpoint refuses it before storage).
    let failing = record(answer_merging_into_held(
        "person-x",
        &"s".repeat(201),
        CAPTURES,
    ))
    .id();
    tokio::time::sleep(Duration::from_millis(100)).await;
    holder.batch_execute("COMMIT").await.unwrap();

    while let Some(recorded) = captures.join_next_with_id().await {
        let (id, recorded) = recorded.unwrap();
        if id == failing {
            assert!(recorded.is_err(), "{recorded:?}");
        } else {
            assert_eq!(recorded.unwrap(), 1);
        }
    }
    assert_eq!(db.count_rows("survey_events").await, CAPTURES as i64);
    let held = person_properties(&*stores.persons, project, "held")
        .await
        .unwrap();
    assert_eq!(held.len(), CAPTURES);
    assert!(!held.contains_key(&format!("capture-{CAPTURES}")));
    let failed = person_properties(&*stores.persons, project, "person-x").await;
    assert_eq!(failed.unwrap(), serde_json::Map::new());
}

/// A write that locks a survey with its targeting flag (in one statement) holds the flag too:
/// the flags API's change of it waits until the survey's transaction ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_survey_locked_with_its_targeting_flag_holds_the_flag_until_the_write_ends() {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let (survey, flag) = targeted_survey(&stores).await;

    let mut transaction = stores.surveys.begin().await.unwrap();
    let locked = transaction
        .lock_survey(stores.project, survey.id, SurveyLock::WithTargetingFlag)
        .await
        .unwrap()
        .expect("the survey");
    assert_eq!(locked.targeting_flag.map(|f| f.id), Some(flag.id));
    let (flags, project) = (Arc::clone(&stores.flags), stores.project);
    let rename = tokio::spawn(async move {
        let changes = FlagChanges {
            name: Some("renamed".into()),
            ..FlagChanges::default()
        };
        flags.update(project, flag.id, changes).await
    });
    until_a_statement_waits(&db).await;
    assert!(
        !rename.is_finished(),
        "the flag's change waits for the lock"
    );
    transaction.rollback().await.unwrap();

    assert_eq!(rename.await.unwrap().unwrap().name, "renamed");
}

/// A survey write that waited for another one sees the targeting flag the other gave the
/// survey, though that flag was created after the waiting read began (so that read cannot
/// see it, and is made again), however it locks. (Make `whole_surveys::lock_survey` try once
/// to see it fail.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_targeting_flag_given_while_the_lock_waited_is_read_as_given() {
    for lock in [SurveyLock::WithTargetingFlag, SurveyLock::SurveyOnly] {
        let given = targeting_flag_given_while_the_lock_waited(lock).await;
        assert_eq!(given.as_deref(), Some("replacement"), "{lock:?}");
    }
}

/// The name of the targeting flag a `lock` read shows, after waiting for a write that gave the
/// survey a new one.
async fn targeting_flag_given_while_the_lock_waited(lock: SurveyLock) -> Option<String> {
    let db = TestDatabase::create().await;
    let stores = Stores::on_postgres(&db).await;
    let (survey, _) = targeted_survey(&stores).await;
    let (project, id) = (stores.project, survey.id);
    let mut holder = AsyncPgConnection::establish(&db.url).await.unwrap();
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT FROM surveys WHERE id = '{}' FOR UPDATE",
            id.0
        ))
        .await
        .unwrap();

    let surveys = Arc::clone(&stores.surveys);
    let locking = tokio::spawn(async move {
        let mut transaction = surveys.begin().await.unwrap();
        let locked = transaction.lock_survey(project, id, lock).await;
        transaction.rollback().await.unwrap();
        locked
    });
    until_a_statement_waits(&db).await;
    holder
        .batch_execute(&format!(
            "INSERT INTO feature_flags (project_id, name, key) \
             VALUES ({}, 'replacement', 'replacement'); \
             UPDATE surveys SET targeting_flag_id = currval('feature_flags_id_seq') \
             WHERE id = '{}'; COMMIT",
            project.0, id.0
        ))
        .await
        .unwrap();

    let locked = locking.await.unwrap().unwrap().expect("the survey");
    locked.targeting_flag.map(|flag| flag.name)
}

/// A session the server ends (SQLSTATE 57P01 `admin_shutdown`, as a fast shutdown or a demotion
/// ends every session) fails as a closed connection, told by its code whatever language the
/// server's messages are in: the kind the adapters read as "unavailable, retry" (a 503), where
/// diesel-async as published says `Unknown` (a 500). See `vendor/diesel-async/PATCHED.md`.
#[tokio::test]
async fn a_session_the_server_ends_fails_as_a_closed_connection_told_by_its_sqlstate() {
    let db = TestDatabase::create().await;
    let mut conn = AsyncPgConnection::establish(&db.url).await.unwrap();
    let ended = diesel::sql_query("SELECT pg_terminate_backend(pg_backend_pid())")
        .execute(&mut conn)
        .await;
    assert!(
        matches!(
            ended,
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::ClosedConnection,
                _
            ))
        ),
        "{ended:?}"
    );
}
