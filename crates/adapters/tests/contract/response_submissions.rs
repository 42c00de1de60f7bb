//! Responses as PostHog reads them, on both stores: a submission's sends and partially
//! completed closures merged into one response (each answer key's latest given answer, the
//! context of where it was answered), PostHog's list's slices (window, archived, question,
//! score, offset, limit, `has_more`, the byte budget), and stats counting partial closures as
//! sent.

use chrono::{DateTime, Utc};
use domain::activity::NewActivity;
use domain::person::ProfileSets;
use domain::survey_response::{
    AnswerKeys, CountFilter, DateWindow, MAX_RESPONSE_BYTES, ResponseContext, ResponseSlice,
    ScoreRange, SliceRequest, StatsAggregates, SurveyEvent, SurveyEventKind, SurveyResponse,
};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::stores::Stores;
use crate::survey_responses::{
    LAUNCH, after_launch, answered, event as event_at, launched, survey_id,
};

contract!(
    a_submissions_sends_and_partial_closures_merge_into_one_response,
    an_event_arriving_after_a_later_one_only_fills_in_what_the_response_lacks,
    sends_never_grow_a_response_past_its_bound,
    closures_of_surveys_never_answered_are_no_responses,
    a_slice_keeps_the_window_archived_question_and_score_asked,
    slices_page_by_offset_and_say_whether_more_follow,
    a_slice_ends_early_past_its_byte_budget,
    a_partial_closure_names_its_response_to_archive_and_delete,
);

/// A `kind` event of `person` in submission `submission`, `minute`s after launch, with these
/// properties.
fn event(
    kind: SurveyEventKind,
    survey: &str,
    person: &str,
    submission: Option<&str>,
    minute: i64,
    properties: Value,
) -> SurveyEvent {
    event_at(
        kind,
        survey,
        person,
        submission,
        after_launch(minute),
        properties,
    )
}

async fn record(stores: &Stores, events: Vec<SurveyEvent>) {
    stores
        .survey_responses
        .record(stores.project, events, ProfileSets::default())
        .await
        .unwrap();
}

/// Every response of the survey (launch ± a day), newest first.
fn everything() -> SliceRequest {
    SliceRequest {
        window: DateWindow {
            from: Some(after_launch(-24 * 60)),
            to: Some(after_launch(24 * 60)),
        },
        exclude_archived: false,
        question: None,
        score: ScoreRange::default(),
        offset: 0,
        limit: 100,
    }
}

async fn slice(stores: &Stores, survey: &str, request: &SliceRequest) -> ResponseSlice {
    slice_within(stores, survey, request, usize::MAX).await
}

/// The slice `request` asks of the survey, within `budget` bytes of answers and contexts.
async fn slice_within(
    stores: &Stores,
    survey: &str,
    request: &SliceRequest,
    budget: usize,
) -> ResponseSlice {
    stores
        .survey_responses
        .slice(stores.project, survey, request, budget)
        .await
        .unwrap()
}

fn people(slice: &ResponseSlice) -> Vec<&str> {
    slice
        .responses
        .iter()
        .map(|r| r.distinct_id.as_str())
        .collect()
}

/// What a response is named after: the uuid, person and time of the event it takes them from.
fn named_after(response: &SurveyResponse) -> (Uuid, &str, DateTime<Utc>) {
    (
        response.uuid,
        response.distinct_id.as_str(),
        response.timestamp,
    )
}

/// The survey's events added up, whenever sent, archived responses included.
async fn aggregates(stores: &Stores, survey: &str) -> StatsAggregates {
    stores
        .survey_responses
        .aggregates(
            stores.project,
            &[survey.to_owned()],
            DateWindow::default(),
            false,
        )
        .await
        .unwrap()
}

async fn only_response(stores: &Stores, survey: &str) -> SurveyResponse {
    let mut all = slice(stores, survey, &everything()).await.responses;
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

async fn a_submissions_sends_and_partial_closures_merge_into_one_response(stores: Stores) {
    let id = survey_id(&launched(&stores, "NPS", LAUNCH).await);
    // One capture: two partial sends, the second blanking an answer and adding one.
    record(
        &stores,
        vec![
            event(
                SurveyEventKind::Sent,
                &id,
                "ada",
                Some("s"),
                1,
                json!({"$survey_response_a": "A", "$survey_response_b": "B",
                         "$survey_completed": false, "$survey_iteration": 3,
                         "$session_id": "session-1", "$current_url": "https://site.example/"}),
            ),
            event(
                SurveyEventKind::Sent,
                &id,
                "ada",
                Some("s"),
                2,
                json!({"$survey_response_a": "", "$survey_response_c": ["x", "y"]}),
            ),
        ],
    )
    .await;
    // A later capture: the submission's partially completed abandon, then its dismissal.
    let abandon = event(
        SurveyEventKind::Abandoned,
        &id,
        "ada-2",
        Some("s"),
        3,
        json!({"$survey_partially_completed": true, "$survey_response_b": "B2",
                               "$survey_language": "fr", "$browser": "Firefox"}),
    );
    record(&stores, vec![abandon.clone()]).await;
    let response = only_response(&stores, &id).await;
    assert_eq!(
        named_after(&response),
        (abandon.uuid, "ada-2", after_launch(3))
    );
    assert_eq!(
        Value::Object(response.answers.clone()),
        json!({"a": "A", "b": "B2", "c": ["x", "y"]})
    );
    assert_eq!(response.completed, Some(false));
    assert!(response.partially_completed);
    assert_eq!(
        response.context,
        ResponseContext {
            session_id: Some("session-1".into()),
            browser: Some("Firefox".into()),
            current_url: Some("https://site.example/".into()),
            iteration: Some("3".into()),
            language: Some("fr".into()),
            ..ResponseContext::default()
        }
    );

    // A final send completes it: no longer partial, its answers override.
    let last = event(
        SurveyEventKind::Sent,
        &id,
        "ada",
        Some("s"),
        4,
        json!({"$survey_response_a": "A3", "$survey_completed": true,
                            "$survey_partially_completed": "true"}),
    );
    record(&stores, vec![last.clone()]).await;
    let response = only_response(&stores, &id).await;
    assert_eq!(response.uuid, last.uuid);
    assert!(!response.partially_completed);
    assert_eq!(response.completed, Some(true));
    assert_eq!(
        Value::Object(response.answers),
        json!({"a": "A3", "b": "B2", "c": ["x", "y"]})
    );
    let counts = stores
        .survey_responses
        .counts(stores.project, &CountFilter::default())
        .await
        .unwrap();
    assert_eq!(counts.get(&id), Some(&1));
}

async fn an_event_arriving_after_a_later_one_only_fills_in_what_the_response_lacks(stores: Stores) {
    let id = survey_id(&launched(&stores, "NPS", LAUNCH).await);
    let later = event(
        SurveyEventKind::Sent,
        &id,
        "later",
        Some("s"),
        5,
        json!({"$survey_response_a": "late a", "$survey_iteration": 2}),
    );
    record(&stores, vec![later.clone()]).await;
    let earlier = event(
        SurveyEventKind::Dismissed,
        &id,
        "earlier",
        Some("s"),
        1,
        json!({"$survey_partially_completed": true, "$survey_response_a": "early a",
                               "$survey_response_b": "early b", "$survey_iteration": 1,
                               "$os": "Linux", "$survey_completed": false}),
    );
    record(&stores, vec![earlier]).await;
    let response = only_response(&stores, &id).await;
    assert_eq!(
        named_after(&response),
        (later.uuid, "later", after_launch(5))
    );
    assert_eq!(
        Value::Object(response.answers),
        json!({"a": "late a", "b": "early b"})
    );
    assert!(!response.partially_completed);
    assert_eq!(response.completed, Some(false));
    assert_eq!(response.context.iteration.as_deref(), Some("2"));
    assert_eq!(response.context.os.as_deref(), Some("Linux"));
    // A retry changes nothing.
    record(&stores, vec![later]).await;
    assert_eq!(only_response(&stores, &id).await.distinct_id, "later");
}

/// Sends of one submission, each answering a new key with 60,000 bytes: within a capture and
/// across captures, the response keeps the first answers that fit `MAX_RESPONSE_BYTES`, and
/// answering a kept key again still counts.
async fn sends_never_grow_a_response_past_its_bound(stores: Stores) {
    let id = survey_id(&launched(&stores, "NPS", LAUNCH).await);
    let text = "x".repeat(60_000);
    let send = |n: i64, key: &str, answer: &str| {
        event(
            SurveyEventKind::Sent,
            &id,
            "p",
            Some("s"),
            n,
            json!({ format!("$survey_response_{key}"): answer }),
        )
    };
    record(
        &stores,
        (0..10).map(|n| send(n, &format!("k{n}"), &text)).collect(),
    )
    .await;
    for n in 10..40 {
        record(&stores, vec![send(n, &format!("k{n}"), &text)]).await;
    }
    let response = only_response(&stores, &id).await;
    let weight = serde_json::to_vec(&response.answers).unwrap().len();
    let kept = response.answers.len();
    assert!(weight <= MAX_RESPONSE_BYTES, "{weight} bytes kept");
    assert!((15..=16).contains(&kept), "{kept} answers kept");
    assert!((0..kept).all(|n| response.answers.contains_key(&format!("k{n}"))));
    // Its time still moved with the last send.
    assert_eq!(response.timestamp, after_launch(39));
    record(&stores, vec![send(40, "k0", "again")]).await;
    assert_eq!(only_response(&stores, &id).await.answers["k0"], "again");
}

async fn closures_of_surveys_never_answered_are_no_responses(stores: Stores) {
    let id = survey_id(&launched(&stores, "NPS", LAUNCH).await);
    record(
        &stores,
        vec![
            event(SurveyEventKind::Shown, &id, "ada", None, 1, json!({})),
            event(
                SurveyEventKind::Dismissed,
                &id,
                "ada",
                None,
                2,
                json!({"$survey_partially_completed": false}),
            ),
            // Without the property: a dismissal too.
            event(SurveyEventKind::Dismissed, &id, "dan", None, 2, json!({})),
            event(SurveyEventKind::Abandoned, &id, "bob", None, 3, json!({})),
            event(
                SurveyEventKind::Abandoned,
                &id,
                "cy",
                None,
                4,
                json!({"$survey_partially_completed": "true", "$survey_response_a": "x"}),
            ),
        ],
    )
    .await;
    let all = slice(&stores, &id, &everything()).await;
    assert_eq!(people(&all), ["cy"]);
    let aggregates = aggregates(&stores, &id).await;
    // The abandons are neither shown nor dismissals; the partial one is sent.
    assert_eq!(
        (
            aggregates.shown.total_count,
            aggregates.dismissed.total_count,
            aggregates.sent.total_count
        ),
        (1, 2, 1)
    );
}

async fn a_slice_keeps_the_window_archived_question_and_score_asked(stores: Stores) {
    let id = survey_id(&launched(&stores, "NPS", LAUNCH).await);
    let answer = |person: &str, minute, answers: Value| answered(&id, person, minute, answers);
    let archived = answer("archived", 6, json!({"nps": "8"}));
    record(
        &stores,
        vec![
            answer("ten", 1, json!({"nps": "10"})),
            answer("seven", 2, json!({"nps": 7})),
            answer("legacy", 3, json!({"0": "7.5"})),
            answer("exponent", 4, json!({"nps": "9e0"})),
            answer("words", 5, json!({"nps": "great", "other": "x"})),
            archived.clone(),
            answer("blank", 7, json!({"nps": ""})),
            answer("late", 90, json!({"nps": "1"})),
        ],
    )
    .await;
    assert!(
        stores
            .survey_responses
            .set_archived(stores.project, &id, archived.uuid, true)
            .await
            .unwrap()
    );
    let nps = Some(AnswerKeys {
        id: "nps".into(),
        index: Some("0".into()),
    });
    let window = DateWindow {
        from: Some(after_launch(1)),
        to: Some(after_launch(60)),
    };
    let asked = |question: Option<AnswerKeys>, score: ScoreRange, exclude_archived| SliceRequest {
        window,
        exclude_archived,
        question,
        score,
        ..everything()
    };
    let open = ScoreRange::default();
    assert_eq!(
        people(&slice(&stores, &id, &asked(None, open, false)).await),
        [
            "blank", "archived", "words", "exponent", "legacy", "seven", "ten"
        ]
    );
    assert_eq!(
        people(&slice(&stores, &id, &asked(None, open, true)).await),
        ["blank", "words", "exponent", "legacy", "seven", "ten"]
    );
    assert_eq!(
        people(&slice(&stores, &id, &asked(nps.clone(), open, false)).await),
        ["archived", "words", "exponent", "legacy", "seven", "ten"]
    );
    let within = |gte, lte| ScoreRange { gte, lte };
    assert_eq!(
        people(
            &slice(
                &stores,
                &id,
                &asked(nps.clone(), within(Some(7.0), Some(9.0)), true)
            )
            .await
        ),
        ["exponent", "legacy", "seven"]
    );
    assert_eq!(
        people(
            &slice(
                &stores,
                &id,
                &asked(nps.clone(), within(Some(7.6), None), false)
            )
            .await
        ),
        ["archived", "exponent", "ten"]
    );
    assert_eq!(
        people(&slice(&stores, &id, &asked(nps, within(None, Some(7.0)), false)).await),
        ["seven"]
    );
}

async fn slices_page_by_offset_and_say_whether_more_follow(stores: Stores) {
    let id = survey_id(&launched(&stores, "NPS", LAUNCH).await);
    let events = (0..5)
        .map(|n| answered(&id, &format!("p{n}"), n, json!({"q": n})))
        .collect();
    record(&stores, events).await;
    let page = |offset, limit| SliceRequest {
        offset,
        limit,
        ..everything()
    };
    let first = slice(&stores, &id, &page(0, 2)).await;
    assert_eq!(
        (people(&first), first.has_more, first.cut_short),
        (vec!["p4", "p3"], true, false)
    );
    let middle = slice(&stores, &id, &page(2, 2)).await;
    assert_eq!((people(&middle), middle.has_more), (vec!["p2", "p1"], true));
    let exact = slice(&stores, &id, &page(3, 2)).await;
    assert_eq!((people(&exact), exact.has_more), (vec!["p1", "p0"], false));
    let last = slice(&stores, &id, &page(4, 10)).await;
    assert_eq!((people(&last), last.has_more), (vec!["p0"], false));
    let past = slice(&stores, &id, &page(5, 10)).await;
    assert_eq!((past.responses.len(), past.has_more), (0, false));
}

async fn a_slice_ends_early_past_its_byte_budget(stores: Stores) {
    let id = survey_id(&launched(&stores, "NPS", LAUNCH).await);
    let text = "x".repeat(1000);
    let events = (0..6)
        .map(|n| answered(&id, &format!("p{n}"), n, json!({"q": text})))
        .collect();
    record(&stores, events).await;
    // The rows that start under the budget, the last one passing it.
    let cut = budgeted(&stores, &id, 5, 2500).await;
    assert_eq!(
        (people(&cut), cut.has_more, cut.cut_short),
        (vec!["p5", "p4", "p3"], true, true)
    );
    let whole = budgeted(&stores, &id, 3, 2500).await;
    assert_eq!(
        (whole.responses.len(), whole.has_more, whole.cut_short),
        (3, true, false)
    );
    let tiny = budgeted(&stores, &id, 100, 1).await;
    assert_eq!((people(&tiny), tiny.cut_short), (vec!["p5"], true));
}

/// The survey's first `limit` responses within `budget` bytes of answers and contexts.
async fn budgeted(stores: &Stores, survey: &str, limit: u32, budget: usize) -> ResponseSlice {
    let request = SliceRequest {
        limit,
        ..everything()
    };
    slice_within(stores, survey, &request, budget).await
}

async fn a_partial_closure_names_its_response_to_archive_and_delete(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let send = event(
        SurveyEventKind::Sent,
        &id,
        "ada",
        Some("s"),
        1,
        json!({"$survey_response_q": "a"}),
    );
    let dismissal = event(
        SurveyEventKind::Dismissed,
        &id,
        "ada",
        Some("s"),
        2,
        json!({"$survey_partially_completed": true}),
    );
    let shown = event(SurveyEventKind::Shown, &id, "ada", Some("s"), 0, json!({}));
    record(&stores, vec![send, dismissal.clone(), shown.clone()]).await;
    let repository = &stores.survey_responses;
    assert!(
        repository
            .set_archived(stores.project, &id, dismissal.uuid, true)
            .await
            .unwrap()
    );
    assert!(only_response(&stores, &id).await.archived);
    // Not a response event: names nothing.
    assert!(
        !repository
            .set_archived(stores.project, &id, shown.uuid, false)
            .await
            .unwrap()
    );

    let activity = NewActivity {
        user: stores.user.id,
        activity: "response_deleted",
        detail: json!({"name": "NPS"}),
    };
    assert!(
        repository
            .delete_response(stores.project, survey.id, dismissal.uuid, &activity)
            .await
            .unwrap()
    );
    assert!(
        slice(&stores, &id, &everything())
            .await
            .responses
            .is_empty()
    );
    // The submission's response events went with it; its shown event stays.
    let aggregates = aggregates(&stores, &id).await;
    assert_eq!(
        (aggregates.shown.total_count, aggregates.sent.total_count),
        (1, 0)
    );
}
