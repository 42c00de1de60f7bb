//! Survey response use cases over the in-memory fakes: capture, counts, responses keyed by
//! question, archiving, stats and results narrowed to a survey's run, listings filtered by
//! question and text.

use std::sync::Arc;

use chrono::{Duration, Utc};
use domain::DomainError;
use domain::ports::PageRequest;
use domain::survey::{Survey, SurveyService};
use domain::survey_response::{
    CaptureBatch, CapturedEvent, CountFilter, DateWindow, EXPORT_CHUNK_ANSWER_BYTES, ExportFormat,
    ResponseFilter, ResponseListing, SearchText, StatsOptions, SurveyResponseService,
};
use domain::tenancy::{ProjectId, UserId};
use domain::testing::{InMemoryStore, person_properties};
use serde_json::{Value, json};
use uuid::Uuid;

#[path = "support/survey_setup.rs"]
mod survey_setup;

use survey_setup::{captured_event, popover_survey, survey_service};

const PROJECT: ProjectId = ProjectId(1);
const OTHER_PROJECT: ProjectId = ProjectId(2);
const USER: UserId = UserId(1);

struct World {
    surveys: Arc<SurveyService>,
    responses: SurveyResponseService,
    /// What captures `$set` on persons, read back.
    persons: InMemoryStore,
}

fn world() -> World {
    let store = InMemoryStore::new();
    let surveys = survey_service(&store);
    World {
        responses: SurveyResponseService::new(Arc::new(store.clone()), surveys.clone()),
        surveys,
        persons: store,
    }
}

fn all() -> PageRequest {
    PageRequest {
        limit: 100,
        offset: 0,
    }
}

/// A survey with two questions (`first`, `second`), launched `days_ago` days ago.
async fn launched(world: &World, project: ProjectId, days_ago: i64) -> Survey {
    let questions = json!([
        {"id": "first", "type": "open", "question": "Why?"},
        {"id": "second", "type": "open", "question": "What else?"},
    ]);
    let start = Utc::now() - Duration::days(days_ago);
    popover_survey(&world.surveys, project, USER, "NPS", questions, Some(start)).await
}

fn batch(events: Vec<CapturedEvent>) -> CaptureBatch {
    CaptureBatch {
        events,
        sent_at: None,
    }
}

#[tokio::test]
async fn captured_answers_are_counted_and_listed_by_question() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let id = survey.id.0.to_string();
    let now = Utc::now();
    let stored = world
        .responses
        .capture(
            PROJECT,
            batch(vec![
                captured_event("$pageview", json!({"distinct_id": "ada"}), now),
                captured_event(
                    "survey sent",
                    json!({"distinct_id": "ada", "$survey_id": id, "$survey_response": "legacy",
                           "$survey_response_second": "modern"}),
                    now,
                ),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(stored, 1, "the pageview is dropped");

    let counts = world
        .responses
        .counts(PROJECT, &CountFilter::default())
        .await
        .unwrap();
    assert_eq!(counts.into_iter().collect::<Vec<_>>(), [(id, 1)]);
    let page = world
        .responses
        .responses(PROJECT, survey.id, &ResponseListing::default(), all())
        .await
        .unwrap();
    assert_eq!(
        Value::Object(page.items[0].answers.clone()),
        json!({"first": "legacy", "second": "modern"})
    );
}

#[tokio::test]
async fn a_batch_with_one_bad_event_stores_nothing() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let id = survey.id.0.to_string();
    let now = Utc::now();
    let refused = world
        .responses
        .capture(
            PROJECT,
            batch(vec![
                captured_event(
                    "survey sent",
                    json!({"distinct_id": "ada", "$survey_id": id, "$set": {"answered": true}}),
                    now,
                ),
                captured_event("survey sent", json!({"$survey_id": id}), now),
            ]),
        )
        .await;
    assert!(
        matches!(refused, Err(DomainError::Invalid(_))),
        "{refused:?}"
    );
    let counts = world
        .responses
        .counts(PROJECT, &CountFilter::default())
        .await
        .unwrap();
    assert!(counts.is_empty());
    let ada = person_properties(&world.persons, PROJECT, "ada")
        .await
        .unwrap();
    assert!(ada.is_empty(), "{ada:?}");
}

#[tokio::test]
async fn another_projects_survey_is_not_found() {
    let world = world();
    let theirs = launched(&world, OTHER_PROJECT, 1).await;
    let missing = |result: Result<(), DomainError>| {
        assert!(matches!(result, Err(DomainError::NotFound)), "{result:?}");
    };
    missing(
        world
            .responses
            .responses(PROJECT, theirs.id, &ResponseListing::default(), all())
            .await
            .map(|_| ()),
    );
    missing(
        world
            .responses
            .set_archived(PROJECT, theirs.id, Uuid::now_v7(), true)
            .await,
    );
    missing(
        world
            .responses
            .survey_stats(PROJECT, theirs.id, StatsOptions::default())
            .await
            .map(|_| ()),
    );
}

#[tokio::test]
async fn survey_stats_only_count_events_of_the_surveys_run() {
    let world = world();
    let survey = launched(&world, PROJECT, 2).await;
    let id = survey.id.0.to_string();
    let shown = |days_ago: i64| {
        captured_event(
            "survey shown",
            json!({"distinct_id": format!("p{days_ago}"), "$survey_id": id}),
            Utc::now() - Duration::days(days_ago),
        )
    };
    world
        .responses
        .capture(PROJECT, batch(vec![shown(5), shown(1), shown(0)]))
        .await
        .unwrap();
    let report = world
        .responses
        .survey_stats(PROJECT, survey.id, StatsOptions::default())
        .await
        .unwrap();
    assert_eq!(report.stats.unwrap().shown.total_count, 2);

    let project = world
        .responses
        .project_stats(PROJECT, DateWindow::default())
        .await
        .unwrap();
    assert_eq!(project.stats.unwrap().shown.total_count, 3);
    let empty = world
        .responses
        .project_stats(OTHER_PROJECT, DateWindow::default())
        .await
        .unwrap();
    assert_eq!(empty.stats, None);
}

#[tokio::test]
async fn results_count_each_questions_answers_within_the_surveys_run() {
    let world = world();
    let questions = json!([
        {"id": "nps", "type": "rating", "question": "How likely?", "scale": 10},
        {"id": "pick", "type": "multiple_choice", "question": "Which?", "choices": ["a", "b"]},
        {"id": "why", "type": "open", "question": "Why?"},
    ]);
    let start = Utc::now() - Duration::days(2);
    let survey = popover_survey(
        &world.surveys,
        PROJECT,
        USER,
        "Results",
        questions,
        Some(start),
    )
    .await;
    let id = survey.id.0.to_string();
    let sent = |person: &str, days_ago: i64, answers: Value| {
        let mut properties = answers.as_object().unwrap().clone();
        properties.insert("distinct_id".into(), person.into());
        properties.insert("$survey_id".into(), id.clone().into());
        captured_event(
            "survey sent",
            Value::Object(properties),
            Utc::now() - Duration::days(days_ago),
        )
    };
    world
        .responses
        .capture(
            PROJECT,
            batch(vec![
                // The legacy key of question 0 is the rating's.
                sent(
                    "ada",
                    1,
                    json!({"$survey_response": 9, "$survey_response_pick": ["a", "mine"],
                                      "$survey_response_why": "Too slow"}),
                ),
                sent(
                    "bob",
                    0,
                    json!({"$survey_response_nps": 9, "$survey_response_pick": ["a"],
                                      "$survey_response_why": ""}),
                ),
                // Before the run: left out, as stats leave it out.
                sent("cy", 5, json!({"$survey_response_nps": 0})),
            ]),
        )
        .await
        .unwrap();
    let results = world
        .responses
        .results(PROJECT, survey.id, ResponseFilter::default())
        .await
        .unwrap();
    assert_eq!(results.responses, 2);
    assert_eq!(results.window.from, survey.state.start_date);
    let counts = |index: usize| -> Vec<(String, u64)> {
        results.questions[index]
            .counts
            .iter()
            .filter(|c| c.count > 0)
            .map(|c| (c.value.clone(), c.count))
            .collect()
    };
    assert_eq!(results.questions[0].counts.len(), 11, "0 to 10");
    assert_eq!(counts(0), [("9".to_owned(), 2)]);
    assert_eq!(counts(1), [("a".to_owned(), 2), ("mine".to_owned(), 1)]);
    assert_eq!(results.questions[1].counts[1].value, "b");
    assert_eq!(
        results.questions[2].answered, 1,
        "an empty answer is no answer"
    );
    assert!(results.questions[2].counts.is_empty());

    let listing = ResponseListing {
        question: Some("why".into()),
        search: SearchText::parse("SLOW").unwrap(),
        ..ResponseListing::default()
    };
    let page = world
        .responses
        .responses(PROJECT, survey.id, &listing, all())
        .await
        .unwrap();
    assert_eq!(page.count, 1);
    assert_eq!(page.items[0].distinct_id, "ada");
    let unknown = ResponseListing {
        question: Some("nope".into()),
        ..ResponseListing::default()
    };
    let error = world
        .responses
        .responses(PROJECT, survey.id, &unknown, all())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, DomainError::Invalid(v) if v.attr.as_deref() == Some("question")),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_export_of_large_answers_comes_in_chunks_of_about_a_mebibyte_holding_each_response_once()
{
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let id = survey.id.0.to_string();
    let now = Utc::now();
    let sends = (0..40)
        .map(|n| {
            let answer = "x".repeat(60_000);
            captured_event(
                "survey sent",
                json!({"distinct_id": format!("p{n}"), "$survey_id": id, "$survey_response_first": answer}),
                now - Duration::seconds(n),
            )
        })
        .collect();
    world
        .responses
        .capture(PROJECT, batch(sends))
        .await
        .unwrap();
    let mut export = world
        .responses
        .export(
            PROJECT,
            survey.id,
            ExportFormat::Jsonl,
            ResponseFilter::default(),
        )
        .await
        .unwrap();
    let (mut chunks, mut people) = (0, Vec::new());
    while let Some(chunk) = export.next_chunk().await.unwrap() {
        chunks += 1;
        // A chunk stops at the first row past its budget: at most the budget and one row.
        assert!(
            chunk.len() < EXPORT_CHUNK_ANSWER_BYTES + 61_000 * 2,
            "{}",
            chunk.len()
        );
        for line in String::from_utf8(chunk).unwrap().lines() {
            let row: Value = serde_json::from_str(line).unwrap();
            people.push(row["distinct_id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(chunks, 3, "18, 18 and 4 responses of 60 KB");
    let newest_first: Vec<String> = (0..40).map(|n| format!("p{n}")).collect();
    assert_eq!(people, newest_first);
}
