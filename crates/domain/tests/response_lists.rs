//! PostHog's JSON responses list and a survey's stats as the service answers them, over the
//! fakes: submissions merged from their sends and partially completed closures, the window
//! taken from the survey's run, `question_id` and score filters, paging by offset with
//! `has_more`, the page bound, and each question's stats.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use domain::DomainError;
use domain::ValidationError;
use domain::survey::{QuestionType, Survey, SurveyId, SurveyService};
use domain::survey_response::{
    AnswerText, CapturedEvent, DateWindow, PAGE_ANSWER_BYTES, ResponseList, ResponsesQuery,
    ScoreRange, StatsOptions, SurveyResponseService, SurveyStatsReport,
};
use domain::tenancy::{ProjectId, UserId};
use domain::testing::InMemoryStore;
use serde_json::{Map, Value, json};
use uuid::Uuid;

#[path = "support/capture_batch.rs"]
mod capture_batch;
#[path = "support/survey_setup.rs"]
mod survey_setup;

use capture_batch::capture_batch;
use survey_setup::{captured_event, popover_survey, survey_service};

const PROJECT: ProjectId = ProjectId(1);
const OTHER_PROJECT: ProjectId = ProjectId(2);

struct World {
    surveys: Arc<SurveyService>,
    responses: SurveyResponseService,
}

fn world() -> World {
    let store = InMemoryStore::new();
    let surveys = survey_service(&store);
    World {
        responses: SurveyResponseService::new(Arc::new(store), surveys.clone()),
        surveys,
    }
}

/// A survey of a rating (`nps`), an open question (`why`) and a choice (`pick`, translated),
/// launched `days_ago` days ago.
async fn launched(world: &World, project: ProjectId, days_ago: i64) -> Survey {
    let questions = json!([
        {"id": "nps", "type": "rating", "question": "How likely?", "scale": 10},
        {"id": "why", "type": "open", "question": "Why?"},
        {"id": "pick", "type": "single_choice", "question": "Which?", "choices": ["yes", "no"],
         "translations": {"zh": {"choices": ["是", "否"]}}},
    ]);
    let start = Utc::now() - Duration::days(days_ago);
    popover_survey(
        &world.surveys,
        project,
        UserId(1),
        "NPS",
        questions,
        Some(start),
    )
    .await
}

fn event(
    name: &str,
    survey: &Survey,
    person: &str,
    at: DateTime<Utc>,
    more: Value,
) -> CapturedEvent {
    let mut properties: Map<String, Value> = more.as_object().cloned().unwrap_or_default();
    properties.insert("distinct_id".into(), person.into());
    properties.insert("$survey_id".into(), survey.id.0.to_string().into());
    captured_event(name, Value::Object(properties), at)
}

async fn list(world: &World, survey: &Survey, query: ResponsesQuery) -> ResponseList {
    world
        .responses
        .list(PROJECT, survey.id, Ok(query))
        .await
        .unwrap()
}

/// A `survey sent` by `person` at `at`, answering each question of `answers` (by its id).
fn answered(survey: &Survey, person: &str, at: DateTime<Utc>, answers: Value) -> CapturedEvent {
    let properties: Map<String, Value> = answers
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (format!("$survey_response_{k}"), v.clone()))
        .collect();
    event("survey sent", survey, person, at, Value::Object(properties))
}

/// The survey's stats, asked with `options`.
async fn survey_stats(world: &World, survey: &Survey, options: StatsOptions) -> SurveyStatsReport {
    world
        .responses
        .survey_stats(PROJECT, survey.id, options)
        .await
        .unwrap()
}

/// The survey's `survey sent` and `survey dismissed` totals.
async fn sent_and_dismissed(world: &World, survey: &Survey) -> (u64, u64) {
    let stats = survey_stats(world, survey, StatsOptions::default())
        .await
        .stats
        .unwrap();
    (stats.sent.total_count, stats.dismissed.total_count)
}

fn minutes_ago(minutes: i64) -> DateTime<Utc> {
    Utc::now() - Duration::minutes(minutes)
}

#[tokio::test]
async fn a_submission_is_one_row_its_answers_merged_across_sends_and_partial_closures() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    // Partial sends of one submission, a partially completed abandon after them, and a
    // dismissal of a survey never answered (no response).
    capture_batch(
        &world.responses,
        PROJECT,
        vec![
            event(
                "survey sent",
                &survey,
                "ada",
                minutes_ago(30),
                json!({"$survey_submission_id": "s1", "$survey_response_nps": 9,
                         "$survey_iteration": 2, "$session_id": "session-1",
                         "$current_url": "https://site.example/"}),
            ),
            event(
                "survey sent",
                &survey,
                "ada",
                minutes_ago(20),
                json!({"$survey_submission_id": "s1", "$survey_response_why": "Loved the UX",
                         "$survey_response_nps": ""}),
            ),
            event(
                "survey dismissed",
                &survey,
                "bob",
                minutes_ago(15),
                json!({}),
            ),
        ],
    )
    .await;
    let abandon = event(
        "survey abandoned",
        &survey,
        "ada-2",
        minutes_ago(10),
        json!({"$survey_submission_id": "s1", "$survey_partially_completed": true,
               "$survey_response_pick": ["是"], "$browser": "Firefox"}),
    );
    let abandon_uuid = abandon.uuid.unwrap();
    capture_batch(&world.responses, PROJECT, vec![abandon]).await;

    let page = list(&world, &survey, ResponsesQuery::default()).await;
    assert_eq!((page.results.len(), page.has_more), (1, false), "{page:?}");
    let row = &page.results[0];
    // The latest event's uuid and person; each question's latest given answer.
    assert_eq!(
        (row.uuid, row.distinct_id.as_str()),
        (abandon_uuid, "ada-2")
    );
    let answers: Vec<(&str, usize, QuestionType, AnswerText)> = row
        .answers
        .iter()
        .map(|a| {
            (
                a.question_id.as_str(),
                a.question_index,
                a.question_type,
                a.answer.clone(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        [
            ("nps", 0, QuestionType::Rating, AnswerText::Text("9".into())),
            (
                "why",
                1,
                QuestionType::Open,
                AnswerText::Text("Loved the UX".into())
            ),
            (
                "pick",
                2,
                QuestionType::SingleChoice,
                AnswerText::Choices(vec!["是".into()])
            ),
        ]
    );
    assert_eq!(row.context.iteration.as_deref(), Some("2"));
    assert_eq!(row.context.session_id.as_deref(), Some("session-1"));
    assert_eq!(row.context.browser.as_deref(), Some("Firefox"));
    assert_eq!(
        row.context.current_url.as_deref(),
        Some("https://site.example/")
    );

    // Counted as one response, and as sent (not dismissed) in the stats.
    let counts = world
        .responses
        .counts(PROJECT, &Default::default())
        .await
        .unwrap();
    assert_eq!(counts.values().copied().collect::<Vec<_>>(), [1]);
    assert_eq!(sent_and_dismissed(&world, &survey).await, (1, 1));
}

#[tokio::test]
async fn a_non_partial_abandon_is_stored_but_is_no_response() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    capture_batch(
        &world.responses,
        PROJECT,
        vec![event(
            "survey abandoned",
            &survey,
            "ada",
            minutes_ago(1),
            json!({"$survey_partially_completed": false}),
        )],
    )
    .await;
    assert!(
        list(&world, &survey, ResponsesQuery::default())
            .await
            .results
            .is_empty()
    );
    assert_eq!(sent_and_dismissed(&world, &survey).await, (0, 0));
}

#[tokio::test]
async fn the_window_defaults_to_the_surveys_run_and_since_and_until_replace_it() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let before_launch = event(
        "survey sent",
        &survey,
        "early",
        Utc::now() - Duration::days(2),
        json!({"$survey_response_why": "early"}),
    );
    let during = event(
        "survey sent",
        &survey,
        "during",
        minutes_ago(5),
        json!({"$survey_response_why": "during"}),
    );
    capture_batch(&world.responses, PROJECT, vec![before_launch, during]).await;
    let people = |page: ResponseList| -> Vec<String> {
        page.results.into_iter().map(|r| r.distinct_id).collect()
    };
    assert_eq!(
        people(list(&world, &survey, ResponsesQuery::default()).await),
        ["during"]
    );
    let since = ResponsesQuery {
        since: Some(Utc::now() - Duration::days(3)),
        ..ResponsesQuery::default()
    };
    assert_eq!(
        people(list(&world, &survey, since).await),
        ["during", "early"]
    );
    let until = ResponsesQuery {
        since: Some(Utc::now() - Duration::days(3)),
        until: Some(minutes_ago(60)),
        ..ResponsesQuery::default()
    };
    assert_eq!(people(list(&world, &survey, until).await), ["early"]);
}

#[tokio::test]
async fn question_id_and_scores_narrow_the_rows_and_the_answers_shown() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let answer = |person: &str, minutes: i64, answers: Value| {
        answered(&survey, person, minutes_ago(minutes), answers)
    };
    capture_batch(
        &world.responses,
        PROJECT,
        vec![
            answer("promoter", 4, json!({"nps": "10", "why": "great"})),
            answer("passive", 3, json!({"nps": 7})),
            answer("text", 2, json!({"nps": "n/a"})),
            answer("silent", 1, json!({"why": "no score"})),
        ],
    )
    .await;
    let people = |page: &ResponseList| -> Vec<String> {
        page.results.iter().map(|r| r.distinct_id.clone()).collect()
    };
    let nps = ResponsesQuery {
        question_id: Some("nps".into()),
        ..ResponsesQuery::default()
    };
    let answered = list(&world, &survey, nps.clone()).await;
    assert_eq!(people(&answered), ["text", "passive", "promoter"]);
    // Only the asked question's answer is shown.
    assert!(
        answered
            .results
            .iter()
            .all(|r| r.answers.len() == 1 && r.answers[0].question_id == "nps")
    );
    let scored = ResponsesQuery {
        score: ScoreRange {
            gte: Some(7.0),
            lte: Some(9.0),
        },
        ..nps.clone()
    };
    assert_eq!(people(&list(&world, &survey, scored).await), ["passive"]);
    let promoters = ResponsesQuery {
        score: ScoreRange {
            gte: Some(9.0),
            lte: None,
        },
        ..nps
    };
    assert_eq!(
        people(&list(&world, &survey, promoters).await),
        ["promoter"]
    );

    // A question the survey does not have lists nothing, as PostHog answers it.
    let unknown = ResponsesQuery {
        question_id: Some("nope".into()),
        ..ResponsesQuery::default()
    };
    let none = list(&world, &survey, unknown).await;
    assert_eq!((none.results.len(), none.has_more), (0, false));
}

#[tokio::test]
async fn pages_follow_offset_and_limit_and_say_whether_more_follow() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let events = (0..5)
        .map(|n| {
            event(
                "survey sent",
                &survey,
                &format!("p{n}"),
                minutes_ago(10 - n),
                json!({"$survey_response_why": "x"}),
            )
        })
        .collect();
    capture_batch(&world.responses, PROJECT, events).await;
    let page = |offset, limit| ResponsesQuery {
        offset,
        limit,
        ..ResponsesQuery::default()
    };
    let first = list(&world, &survey, page(0, 2)).await;
    let people: Vec<&str> = first
        .results
        .iter()
        .map(|r| r.distinct_id.as_str())
        .collect();
    assert_eq!(
        (people, first.has_more, first.limit),
        (vec!["p4", "p3"], true, 2)
    );
    let last = list(&world, &survey, page(4, 2)).await;
    assert_eq!(
        (last.results.len(), last.has_more, last.offset),
        (1, false, 4)
    );
    let exact = list(&world, &survey, page(3, 2)).await;
    assert_eq!((exact.results.len(), exact.has_more), (2, false));
    assert!(list(&world, &survey, page(9, 2)).await.results.is_empty());
}

#[tokio::test]
async fn a_page_ends_early_past_its_byte_budget_and_says_how_many_it_holds() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let large = "x".repeat(60 * 1024);
    let rows = PAGE_ANSWER_BYTES / large.len() + 3;
    let events = (0..rows)
        .map(|n| {
            event(
                "survey sent",
                &survey,
                &format!("p{n}"),
                minutes_ago(100 - n as i64),
                json!({"$survey_response_why": large}),
            )
        })
        .collect();
    capture_batch(&world.responses, PROJECT, events).await;
    let page = list(&world, &survey, ResponsesQuery::default()).await;
    let held = page.results.len();
    assert!(held < rows, "{held} of {rows}");
    assert!(page.has_more);
    assert_eq!(page.limit as usize, held);
    let next = list(
        &world,
        &survey,
        ResponsesQuery {
            offset: u64::from(page.limit),
            ..ResponsesQuery::default()
        },
    )
    .await;
    assert_eq!(held + next.results.len(), rows);
    assert!(!next.has_more);
}

#[tokio::test]
async fn the_survey_is_found_before_the_query_is_checked() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let theirs = launched(&world, OTHER_PROJECT, 1).await;
    let bad = || {
        Err(ValidationError::invalid(
            "limit",
            "A valid integer is required.",
        ))
    };
    for missing in [theirs.id, SurveyId(Uuid::now_v7())] {
        assert!(matches!(
            world.responses.list(PROJECT, missing, bad()).await,
            Err(DomainError::NotFound)
        ));
    }
    match world.responses.list(PROJECT, survey.id, bad()).await {
        Err(DomainError::Invalid(error)) => assert_eq!(error.attr.as_deref(), Some("limit")),
        other => panic!("{other:?}"),
    }
    let scored = ResponsesQuery {
        score: ScoreRange {
            gte: None,
            lte: Some(3.0),
        },
        ..ResponsesQuery::default()
    };
    match world.responses.list(PROJECT, survey.id, Ok(scored)).await {
        Err(DomainError::Invalid(error)) => assert_eq!(
            (error.attr, error.detail.as_str()),
            (
                None,
                "score_lte and score_gte require question_id to be specified"
            )
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn per_question_stats_count_each_questions_answers_when_asked() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let answer = |person: &str, answers: Value| answered(&survey, person, minutes_ago(5), answers);
    capture_batch(
        &world.responses,
        PROJECT,
        vec![
            answer("a", json!({"nps": 9, "pick": "yes", "why": "fine"})),
            answer("b", json!({"nps": "7", "pick": "是"})),
            answer("c", json!({"nps": "3", "pick": "no"})),
            answer("d", json!({"nps": "5", "pick": "maybe"})),
        ],
    )
    .await;
    let plain = survey_stats(&world, &survey, StatsOptions::default()).await;
    assert_eq!(plain.per_question, None);
    let report = survey_stats(
        &world,
        &survey,
        StatsOptions {
            per_question: true,
            ..StatsOptions::default()
        },
    )
    .await;
    let stats = report.per_question.unwrap();
    assert_eq!(stats.len(), 3);
    assert_eq!(
        (stats[0].question_id.as_str(), stats[0].response_count),
        ("nps", 4)
    );
    assert_eq!(stats[0].average, Some(6.0));
    assert_eq!(stats[0].distribution.len(), 4);
    assert_eq!(
        (stats[1].response_count, stats[1].distribution.len()),
        (1, 0)
    );
    assert_eq!(
        stats[2].distribution,
        [
            ("yes".to_owned(), 2),
            ("no".to_owned(), 1),
            ("<other>".to_owned(), 1)
        ]
    );
    assert_eq!(stats[2].question_index, 2);
}

#[tokio::test]
async fn survey_stats_count_archived_responses_unless_left_out() {
    let world = world();
    let survey = launched(&world, PROJECT, 1).await;
    let sent = event(
        "survey sent",
        &survey,
        "ada",
        minutes_ago(5),
        json!({"$survey_response_why": "x"}),
    );
    let uuid = sent.uuid.unwrap();
    capture_batch(&world.responses, PROJECT, vec![sent]).await;
    world
        .responses
        .set_archived(PROJECT, survey.id, uuid, true)
        .await
        .unwrap();
    let sent_count = async |exclude_archived: bool| {
        let options = StatsOptions {
            exclude_archived,
            ..StatsOptions::default()
        };
        let report = survey_stats(&world, &survey, options).await;
        report.stats.unwrap().sent.total_count
    };
    assert_eq!(sent_count(false).await, 1);
    assert_eq!(sent_count(true).await, 0);
    let project = world
        .responses
        .project_stats(PROJECT, DateWindow::default())
        .await
        .unwrap();
    assert_eq!(project.stats.unwrap().sent.total_count, 1);
    let listed = list(
        &world,
        &survey,
        ResponsesQuery {
            exclude_archived: true,
            ..ResponsesQuery::default()
        },
    )
    .await;
    assert!(listed.results.is_empty());
}
