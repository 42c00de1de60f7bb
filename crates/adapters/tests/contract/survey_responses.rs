//! The survey response port: a capture's events stored once per uuid with what they `$set` on
//! persons, one response per submission (the latest send wins), counts since the project's first
//! launch (exact under concurrent captures), archiving, and stats.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use domain::patch::Patch;
use domain::person::{PersonSet, ProfileSets};
use domain::ports::PageRequest;
use domain::survey::{NewSurvey, Survey, SurveyChanges, SurveyName, SurveyType};
use domain::survey_response::{
    AnswerFilter, AnswerKeys, CountFilter, DateWindow, EventAggregate, MAX_TALLIED_VALUES,
    ResponseFilter, SearchText, StatsAggregates, SurveyEvent, SurveyEventKind, Tally, TallyRequest,
};
use domain::tenancy::ProjectId;
use domain::testing::person_properties;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::stores::{Stores, all, at, person_sets};

contract!(
    a_retried_event_is_stored_once,
    a_capture_stores_its_events_and_merges_what_they_set_together,
    concurrent_answers_to_one_survey_are_all_counted,
    each_submission_is_one_response_and_the_latest_send_wins,
    nothing_is_counted_until_a_survey_is_launched,
    responses_older_than_the_first_launch_are_not_counted,
    counts_can_be_narrowed_to_survey_ids_and_leave_out_archived_responses,
    archiving_names_any_send_of_the_response_and_is_undone_by_unarchiving,
    responses_are_listed_newest_first_within_the_window,
    aggregates_add_up_each_kind_of_event,
    responses_can_be_narrowed_to_one_questions_answers_and_a_text,
    archived_responses_can_be_left_out_of_lists_and_tallies,
    tallies_count_each_questions_answers_and_values,
    tallies_list_the_most_given_values_and_add_up_the_rest,
    a_questions_answer_is_under_its_id_before_its_index_and_only_strings_and_numbers_are_values,
    projects_never_see_each_others_events,
);

pub(crate) const LAUNCH: &str = "2026-06-01T00:00:00Z";

/// A survey of the main project launched at `start`.
pub(crate) async fn launched(stores: &Stores, name: &str, start: &str) -> Survey {
    launched_in(stores, stores.project, name, start).await
}

async fn launched_in(stores: &Stores, project: ProjectId, name: &str, start: &str) -> Survey {
    stores
        .survey_service()
        .create(
            project,
            &stores.user,
            NewSurvey::new(SurveyChanges {
                name: Patch::Value(SurveyName::parse(name).unwrap()),
                survey_type: Patch::Value(SurveyType::Popover),
                start_date: Patch::Value(at(start)),
                ..SurveyChanges::default()
            })
            .unwrap(),
        )
        .await
        .unwrap()
}

pub(crate) fn survey_id(survey: &Survey) -> String {
    survey.id.0.to_string()
}

/// A `kind` event of `person` in submission `submission` at `when`, with these properties.
pub(crate) fn event(
    kind: SurveyEventKind,
    survey: &str,
    person: &str,
    submission: Option<&str>,
    when: DateTime<Utc>,
    properties: Value,
) -> SurveyEvent {
    let mut properties: Map<String, Value> = properties.as_object().cloned().unwrap_or_default();
    properties.insert("$survey_id".into(), survey.into());
    SurveyEvent {
        uuid: Uuid::now_v7(),
        kind,
        survey_id: survey.into(),
        distinct_id: person.into(),
        timestamp: when,
        submission_id: submission.map(str::to_owned),
        properties,
    }
}

fn sent(survey: &str, person: &str, submission: Option<&str>, when: DateTime<Utc>) -> SurveyEvent {
    event(
        SurveyEventKind::Sent,
        survey,
        person,
        submission,
        when,
        json!({"$survey_response_q": person}),
    )
}

/// Every response, archived or not, whenever sent.
fn every() -> ResponseFilter {
    ResponseFilter::default()
}

/// A send of `answers` (`$survey_response_<key>` properties) by `person`, `minute`s after launch.
pub(crate) fn answered(survey: &str, person: &str, minute: i64, answers: Value) -> SurveyEvent {
    let properties: Map<String, Value> = answers
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, value)| (format!("$survey_response_{key}"), value.clone()))
        .collect();
    event(
        SurveyEventKind::Sent,
        survey,
        person,
        None,
        after_launch(minute),
        Value::Object(properties),
    )
}

fn keys(id: &str, index: Option<&str>) -> AnswerKeys {
    AnswerKeys {
        id: id.into(),
        index: index.map(str::to_owned),
    }
}

/// `minutes` after `LAUNCH`.
pub(crate) fn after_launch(minutes: i64) -> DateTime<Utc> {
    at(LAUNCH) + Duration::minutes(minutes)
}

async fn counts(stores: &Stores, filter: CountFilter) -> Vec<(String, u64)> {
    stores
        .survey_responses
        .counts(stores.project, &filter)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

async fn a_retried_event_is_stored_once(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let batch = [
        sent(&id, "ada", None, after_launch(1)),
        event(
            SurveyEventKind::Shown,
            &id,
            "ada",
            None,
            after_launch(0),
            json!({}),
        ),
    ];
    let repository = &stores.survey_responses;
    assert_eq!(
        repository
            .record(stores.project, batch.to_vec(), ProfileSets::default())
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        repository
            .record(stores.project, batch.to_vec(), ProfileSets::default())
            .await
            .unwrap(),
        0
    );
    // The same uuid twice inside one batch is one event too.
    let twice = [batch[0].clone(), batch[0].clone()];
    assert_eq!(
        repository
            .record(stores.project, twice.to_vec(), ProfileSets::default())
            .await
            .unwrap(),
        0
    );
    assert_eq!(counts(&stores, CountFilter::default()).await, [(id, 1)]);
}

async fn a_capture_stores_its_events_and_merges_what_they_set_together(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let events = [
        sent(&id, "ada", None, after_launch(1)),
        event(
            SurveyEventKind::Dismissed,
            &id,
            "bob",
            None,
            after_launch(2),
            json!({}),
        ),
    ];
    let set = |person: &str, properties: Value| PersonSet {
        distinct_id: person.into(),
        properties: properties.as_object().cloned().unwrap(),
    };
    let sets = [
        set("ada", json!({format!("$survey_responded/{id}"): true})),
        set("bob", json!({format!("$survey_dismissed/{id}"): true})),
    ];
    let repository = &stores.survey_responses;
    assert_eq!(
        repository
            .record(stores.project, events.to_vec(), person_sets(sets.to_vec()))
            .await
            .unwrap(),
        2
    );
    // A retry stores no event twice, and merging the same sets again changes nothing.
    assert_eq!(
        repository
            .record(stores.project, events.to_vec(), person_sets(sets.to_vec()))
            .await
            .unwrap(),
        0
    );

    assert_eq!(
        counts(&stores, CountFilter::default()).await,
        [(id.clone(), 1)]
    );
    for expected in &sets {
        let stored = person_properties(&*stores.persons, stores.project, &expected.distinct_id)
            .await
            .unwrap();
        assert_eq!(stored, expected.properties, "{}", expected.distinct_id);
    }
    let page = repository
        .responses(
            stores.project,
            &id,
            &every(),
            &AnswerFilter::default(),
            all(),
            usize::MAX,
        )
        .await
        .unwrap();
    assert_eq!(page.count, 1);
}

/// Many captures answering one survey at once: none is lost, whichever counter each adds to.
async fn concurrent_answers_to_one_survey_are_all_counted(stores: Stores) {
    const ANSWERS: usize = 20;
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let answers: Vec<SurveyEvent> = (0..ANSWERS)
        .map(|n| sent(&id, &format!("person-{n}"), None, after_launch(1)))
        .collect();
    let mut captures = tokio::task::JoinSet::new();
    for answer in answers.clone() {
        let repository = Arc::clone(&stores.survey_responses);
        let project = stores.project;
        captures.spawn(async move {
            repository
                .record(project, vec![answer], ProfileSets::default())
                .await
        });
    }
    while let Some(captured) = captures.join_next().await {
        assert_eq!(captured.unwrap().unwrap(), 1);
    }

    assert_eq!(
        counts(&stores, CountFilter::default()).await,
        [(id.clone(), ANSWERS as u64)]
    );
    let repository = &stores.survey_responses;
    let archived = answers[0].uuid;
    assert!(
        repository
            .set_archived(stores.project, &id, archived, true)
            .await
            .unwrap()
    );
    let without_archived = CountFilter {
        survey_ids: None,
        exclude_archived: true,
    };
    assert_eq!(
        counts(&stores, without_archived.clone()).await,
        [(id.clone(), ANSWERS as u64 - 1)]
    );
    assert_eq!(
        counts(&stores, CountFilter::default()).await,
        [(id.clone(), ANSWERS as u64)]
    );
    repository
        .set_archived(stores.project, &id, archived, false)
        .await
        .unwrap();
    assert_eq!(
        counts(&stores, without_archived).await,
        [(id, ANSWERS as u64)]
    );
}

async fn each_submission_is_one_response_and_the_latest_send_wins(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let mut first = sent(&id, "ada", Some("sub-1"), after_launch(1));
    first
        .properties
        .insert("$survey_response_q".into(), json!("first"));
    let mut second = sent(&id, "ada", Some("sub-1"), after_launch(2));
    second
        .properties
        .insert("$survey_response_q".into(), json!("second"));
    second
        .properties
        .insert("$survey_completed".into(), json!(true));
    let loose = [
        sent(&id, "bob", None, after_launch(3)),
        sent(&id, "bob", None, after_launch(4)),
    ];
    let repository = &stores.survey_responses;
    // The later send arrives first; the earlier one, arriving later, must not win.
    repository
        .record(stores.project, vec![second.clone()], ProfileSets::default())
        .await
        .unwrap();
    repository
        .record(stores.project, vec![first], ProfileSets::default())
        .await
        .unwrap();
    repository
        .record(stores.project, loose.to_vec(), ProfileSets::default())
        .await
        .unwrap();

    assert_eq!(
        counts(&stores, CountFilter::default()).await,
        [(id.clone(), 3)]
    );
    let page = repository
        .responses(
            stores.project,
            &id,
            &every(),
            &AnswerFilter::default(),
            all(),
            usize::MAX,
        )
        .await
        .unwrap();
    let ada = page.items.iter().find(|r| r.distinct_id == "ada").unwrap();
    assert_eq!(ada.uuid, second.uuid);
    assert_eq!(ada.submission_id.as_deref(), Some("sub-1"));
    assert_eq!(Value::Object(ada.answers.clone()), json!({"q": "second"}));
    assert_eq!(ada.completed, Some(true));
}

async fn nothing_is_counted_until_a_survey_is_launched(stores: Stores) {
    let draft = stores
        .survey_service()
        .create(
            stores.project,
            &stores.user,
            NewSurvey::new(SurveyChanges {
                name: Patch::Value(SurveyName::parse("Draft").unwrap()),
                survey_type: Patch::Value(SurveyType::Popover),
                ..SurveyChanges::default()
            })
            .unwrap(),
        )
        .await
        .unwrap();
    let id = survey_id(&draft);
    stores
        .survey_responses
        .record(
            stores.project,
            vec![sent(&id, "ada", None, after_launch(1))],
            ProfileSets::default(),
        )
        .await
        .unwrap();
    assert_eq!(counts(&stores, CountFilter::default()).await, []);
}

async fn responses_older_than_the_first_launch_are_not_counted(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    // Unknown survey ids are counted too, as PostHog does.
    let unknown = Uuid::now_v7().to_string();
    let events = [
        sent(&id, "early", None, after_launch(-60)),
        sent(&id, "late", None, after_launch(60)),
        sent(&unknown, "ada", None, after_launch(1)),
        sent(&unknown, "early", None, after_launch(-1)),
        // A submission counts from its latest send.
        sent(&id, "both", Some("s"), after_launch(-5)),
        sent(&id, "both", Some("s"), after_launch(5)),
    ];
    stores
        .survey_responses
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    let mut expected = vec![(id, 2), (unknown, 1)];
    expected.sort();
    assert_eq!(counts(&stores, CountFilter::default()).await, expected);
}

async fn counts_can_be_narrowed_to_survey_ids_and_leave_out_archived_responses(stores: Stores) {
    let one = survey_id(&launched(&stores, "One", LAUNCH).await);
    let two = survey_id(&launched(&stores, "Two", LAUNCH).await);
    let archived = sent(&one, "ada", None, after_launch(1));
    let early_archived = sent(&one, "early", None, after_launch(-1));
    let events = [
        archived.clone(),
        early_archived.clone(),
        sent(&one, "bob", None, after_launch(2)),
        sent(&two, "ada", None, after_launch(3)),
    ];
    let repository = &stores.survey_responses;
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    for event in [&archived, &early_archived] {
        assert!(
            repository
                .set_archived(stores.project, &one, event.uuid, true)
                .await
                .unwrap()
        );
    }

    let only_one = CountFilter {
        survey_ids: Some(vec![one.clone()]),
        exclude_archived: false,
    };
    assert_eq!(counts(&stores, only_one).await, [(one.clone(), 2)]);
    let without_archived = CountFilter {
        survey_ids: None,
        exclude_archived: true,
    };
    let mut expected = vec![(one.clone(), 1), (two.clone(), 1)];
    expected.sort();
    assert_eq!(counts(&stores, without_archived.clone()).await, expected);
    // With every response of a survey archived, the survey is absent, not 0.
    let bob = events[2].uuid;
    repository
        .set_archived(stores.project, &one, bob, true)
        .await
        .unwrap();
    assert_eq!(counts(&stores, without_archived).await, [(two, 1)]);
}

async fn archiving_names_any_send_of_the_response_and_is_undone_by_unarchiving(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let partial = sent(&id, "ada", Some("sub"), after_launch(1));
    let last = sent(&id, "ada", Some("sub"), after_launch(2));
    let shown = event(
        SurveyEventKind::Shown,
        &id,
        "ada",
        None,
        after_launch(0),
        json!({}),
    );
    let repository = &stores.survey_responses;
    repository
        .record(
            stores.project,
            vec![partial.clone(), last.clone(), shown.clone()],
            ProfileSets::default(),
        )
        .await
        .unwrap();

    assert!(
        repository
            .set_archived(stores.project, &id, partial.uuid, true)
            .await
            .unwrap()
    );
    // Archiving twice is no second change.
    assert!(
        repository
            .set_archived(stores.project, &id, last.uuid, true)
            .await
            .unwrap()
    );
    assert_eq!(
        repository
            .archived_uuids(stores.project, &id)
            .await
            .unwrap(),
        [last.uuid]
    );
    let excluded = CountFilter {
        survey_ids: None,
        exclude_archived: true,
    };
    assert_eq!(counts(&stores, excluded.clone()).await, []);
    assert!(
        repository
            .set_archived(stores.project, &id, last.uuid, false)
            .await
            .unwrap()
    );
    assert_eq!(
        repository
            .archived_uuids(stores.project, &id)
            .await
            .unwrap(),
        Vec::<Uuid>::new()
    );
    assert_eq!(counts(&stores, excluded).await, [(id.clone(), 1)]);

    // Only a survey's own `survey sent` events name its responses.
    for (survey, event) in [
        (id.as_str(), shown.uuid),
        (id.as_str(), Uuid::now_v7()),
        ("other", last.uuid),
    ] {
        assert!(
            !repository
                .set_archived(stores.project, survey, event, true)
                .await
                .unwrap()
        );
    }
    assert!(
        !repository
            .set_archived(stores.other_project, &id, last.uuid, true)
            .await
            .unwrap()
    );
}

async fn responses_are_listed_newest_first_within_the_window(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let events: Vec<SurveyEvent> = (0..5)
        .map(|minute| sent(&id, &format!("p{minute}"), None, after_launch(minute)))
        .collect();
    let repository = &stores.survey_responses;
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();

    let page = repository
        .responses(
            stores.project,
            &id,
            &every(),
            &AnswerFilter::default(),
            PageRequest {
                limit: 2,
                offset: 1,
            },
            usize::MAX,
        )
        .await
        .unwrap();
    assert_eq!(page.count, 5);
    let people: Vec<&str> = page.items.iter().map(|r| r.distinct_id.as_str()).collect();
    assert_eq!(people, ["p3", "p2"]);

    let window = DateWindow::new(Some(after_launch(1)), Some(after_launch(3))).unwrap();
    let page = repository
        .responses(
            stores.project,
            &id,
            &ResponseFilter {
                window,
                exclude_archived: false,
            },
            &AnswerFilter::default(),
            all(),
            usize::MAX,
        )
        .await
        .unwrap();
    let people: Vec<&str> = page.items.iter().map(|r| r.distinct_id.as_str()).collect();
    assert_eq!((page.count, people), (3, vec!["p3", "p2", "p1"]));
}

async fn aggregates_add_up_each_kind_of_event(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let shown = |person: &str, minute| {
        event(
            SurveyEventKind::Shown,
            &id,
            person,
            None,
            after_launch(minute),
            json!({}),
        )
    };
    let dismissed = |person: &str, minute, partial: Value| {
        event(
            SurveyEventKind::Dismissed,
            &id,
            person,
            None,
            after_launch(minute),
            json!({"$survey_partially_completed": partial}),
        )
    };
    let archived = sent(&id, "dan", None, after_launch(9));
    let events = [
        shown("ada", 1),
        shown("ada", 2),
        shown("bob", 3),
        shown("cy", 4),
        dismissed("bob", 5, json!(false)),
        // A partially completed submission's dismissal is a response (each of these its own
        // submission), never a dismissal.
        dismissed("cy", 6, json!(true)),
        dismissed("cy", 6, json!("true")),
        sent(&id, "ada", Some("s"), after_launch(7)),
        sent(&id, "ada", Some("s"), after_launch(8)),
        sent(&id, "bob", None, after_launch(8)),
        archived.clone(),
        // Outside the window.
        shown("eve", 100),
    ];
    let repository = &stores.survey_responses;
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    repository
        .set_archived(stores.project, &id, archived.uuid, true)
        .await
        .unwrap();

    let window = DateWindow::new(None, Some(after_launch(50))).unwrap();
    let aggregates = repository
        .aggregates(
            stores.project,
            &[id.clone(), "unrelated".into()],
            window,
            true,
        )
        .await
        .unwrap();
    assert_eq!(
        aggregates,
        StatsAggregates {
            shown: EventAggregate {
                total_count: 4,
                unique_persons: 3,
                first_seen: Some(after_launch(1)),
                last_seen: Some(after_launch(4)),
            },
            dismissed: EventAggregate {
                total_count: 1,
                unique_persons: 1,
                first_seen: Some(after_launch(5)),
                last_seen: Some(after_launch(5)),
            },
            sent: EventAggregate {
                total_count: 4,
                unique_persons: 3,
                first_seen: Some(after_launch(6)),
                last_seen: Some(after_launch(8)),
            },
            dismissed_and_sent_persons: 1,
        }
    );
    // Archived responses are counted unless left out, as PostHog counts them.
    let with_archived = repository
        .aggregates(stores.project, std::slice::from_ref(&id), window, false)
        .await
        .unwrap();
    assert_eq!(
        (
            with_archived.sent.total_count,
            with_archived.sent.unique_persons,
            with_archived.sent.last_seen
        ),
        (5, 4, Some(after_launch(9)))
    );
    let nothing = repository
        .aggregates(
            stores.project,
            &["unrelated".into()],
            DateWindow::default(),
            false,
        )
        .await
        .unwrap();
    assert_eq!(nothing, StatsAggregates::default());
}

async fn projects_never_see_each_others_events(stores: Stores) {
    let mine = launched(&stores, "NPS", LAUNCH).await;
    let theirs = launched_in(&stores, stores.other_project, "NPS", LAUNCH).await;
    let id = survey_id(&mine);
    let event = sent(&id, "ada", None, after_launch(1));
    let repository = &stores.survey_responses;
    repository
        .record(
            stores.other_project,
            vec![event.clone()],
            ProfileSets::default(),
        )
        .await
        .unwrap();
    assert_eq!(counts(&stores, CountFilter::default()).await, []);
    // The same uuid is a different event in another project.
    assert_eq!(
        repository
            .record(stores.project, vec![event], ProfileSets::default())
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        counts(&stores, CountFilter::default()).await,
        [(id.clone(), 1)]
    );
    let page = repository
        .responses(
            stores.other_project,
            &survey_id(&theirs),
            &every(),
            &AnswerFilter::default(),
            all(),
            usize::MAX,
        )
        .await
        .unwrap();
    assert_eq!(page.count, 0);
}

async fn responses_can_be_narrowed_to_one_questions_answers_and_a_text(stores: Stores) {
    let survey = launched(&stores, "Feedback", LAUNCH).await;
    let id = survey_id(&survey);
    let repository = &stores.survey_responses;
    let events = [
        answered(&id, "ada", 1, json!({"why": "Too SLOW", "pick": ["fast"]})),
        // Question `why` at index 0, keyed by an older SDK.
        answered(&id, "bob", 2, json!({"0": "slow and 100%_sure"})),
        answered(&id, "cy", 3, json!({"why": "", "pick": ["Slowest"]})),
        answered(&id, "dee", 4, json!({"why": 5})),
    ];
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    let listed = async |answers: AnswerFilter| {
        let page = repository
            .responses(stores.project, &id, &every(), &answers, all(), usize::MAX)
            .await
            .unwrap();
        let people: Vec<String> = page.items.into_iter().map(|r| r.distinct_id).collect();
        assert_eq!(page.count, people.len() as u64);
        people
    };
    let why = || Some(keys("why", Some("0")));
    let search = |text: &str| SearchText::parse(text).unwrap();
    assert_eq!(
        listed(AnswerFilter {
            question: why(),
            search: None
        })
        .await,
        ["dee", "bob", "ada"],
        "an empty answer is no answer"
    );
    assert_eq!(
        listed(AnswerFilter {
            question: why(),
            search: search("slow")
        })
        .await,
        ["bob", "ada"]
    );
    assert_eq!(
        listed(AnswerFilter {
            question: None,
            search: search("SLOW")
        })
        .await,
        ["cy", "bob", "ada"],
        "any question's text, lists included"
    );
    // `%` and `_` are themselves, not patterns.
    assert_eq!(
        listed(AnswerFilter {
            question: None,
            search: search("0%_s")
        })
        .await,
        ["bob"]
    );
    assert!(
        listed(AnswerFilter {
            question: None,
            search: search("o%s")
        })
        .await
        .is_empty()
    );
    assert!(
        listed(AnswerFilter {
            question: why(),
            search: search("5")
        })
        .await
        .is_empty(),
        "numbers are not searched"
    );
}

async fn archived_responses_can_be_left_out_of_lists_and_tallies(stores: Stores) {
    let survey = launched(&stores, "Feedback", LAUNCH).await;
    let id = survey_id(&survey);
    let repository = &stores.survey_responses;
    let events = [
        answered(&id, "ada", 1, json!({"q": "a"})),
        answered(&id, "bob", 2, json!({"q": "b"})),
    ];
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    assert!(
        repository
            .set_archived(stores.project, &id, events[0].uuid, true)
            .await
            .unwrap()
    );
    let unarchived = ResponseFilter {
        window: DateWindow::default(),
        exclude_archived: true,
    };
    let page = repository
        .responses(
            stores.project,
            &id,
            &unarchived,
            &AnswerFilter::default(),
            all(),
            usize::MAX,
        )
        .await
        .unwrap();
    assert_eq!(page.count, 1);
    assert_eq!(page.items[0].distinct_id, "bob");
    let request = [TallyRequest {
        keys: keys("q", None),
        values: true,
    }];
    let tallies = repository
        .tallies(stores.project, &id, &unarchived, &request)
        .await
        .unwrap();
    assert_eq!(tallies.responses, 1);
    assert_eq!(tallies.questions[0].values, [("b".to_owned(), 1)]);
    let all_of_them = repository
        .tallies(stores.project, &id, &every(), &request)
        .await
        .unwrap();
    assert_eq!(all_of_them.responses, 2);
}

async fn tallies_count_each_questions_answers_and_values(stores: Stores) {
    let survey = launched(&stores, "NPS", LAUNCH).await;
    let id = survey_id(&survey);
    let repository = &stores.survey_responses;
    let events = [
        answered(
            &id,
            "ada",
            1,
            json!({"nps": 9, "pick": ["a", "b"], "why": "x"}),
        ),
        // The rating keyed by its index (0) by an older SDK; a rating sent as text.
        answered(
            &id,
            "bob",
            2,
            json!({"0": "9", "pick": ["a", "mine"], "why": ""}),
        ),
        answered(&id, "cy", 3, json!({"nps": 10, "pick": [], "why": null})),
        answered(&id, "dee", 4, json!({"nps": 0, "pick": "a"})),
        // Outside the window below.
        answered(&id, "eve", 60, json!({"nps": 1})),
    ];
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    let requests = [
        TallyRequest {
            keys: keys("nps", Some("0")),
            values: true,
        },
        TallyRequest {
            keys: keys("pick", Some("1")),
            values: true,
        },
        TallyRequest {
            keys: keys("why", None),
            values: false,
        },
        TallyRequest {
            keys: keys("nobody answered", None),
            values: true,
        },
    ];
    let window = ResponseFilter {
        window: DateWindow::new(None, Some(after_launch(30))).unwrap(),
        exclude_archived: false,
    };
    let tallies = repository
        .tallies(stores.project, &id, &window, &requests)
        .await
        .unwrap();
    let values = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
        pairs.iter().map(|(v, n)| ((*v).to_owned(), *n)).collect()
    };
    assert_eq!(tallies.responses, 4);
    assert_eq!(
        tallies.questions,
        [
            Tally {
                answered: 4,
                values: values(&[("9", 2), ("0", 1), ("10", 1)]),
                others: 0,
            },
            Tally {
                answered: 3,
                values: values(&[("a", 3), ("b", 1), ("mine", 1)]),
                others: 0,
            },
            Tally {
                answered: 1,
                values: Vec::new(),
                others: 0,
            },
            Tally::default(),
        ]
    );
}

async fn tallies_list_the_most_given_values_and_add_up_the_rest(stores: Stores) {
    let survey = launched(&stores, "Other", LAUNCH).await;
    let id = survey_id(&survey);
    let repository = &stores.survey_responses;
    let mut events: Vec<SurveyEvent> = (0..MAX_TALLIED_VALUES + 3)
        .map(|n| answered(&id, &format!("p{n}"), 1, json!({"q": format!("v{n:04}")})))
        .collect();
    events.push(answered(&id, "again", 2, json!({"q": "v0102"})));
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    let tallies = repository
        .tallies(
            stores.project,
            &id,
            &every(),
            &[TallyRequest {
                keys: keys("q", None),
                values: true,
            }],
        )
        .await
        .unwrap();
    let tally = &tallies.questions[0];
    assert_eq!(tally.answered, MAX_TALLIED_VALUES as u64 + 4);
    assert_eq!(tally.values.len(), MAX_TALLIED_VALUES);
    assert_eq!(tally.values[0], ("v0102".to_owned(), 2));
    assert_eq!(tally.values[1], ("v0000".to_owned(), 1));
    assert_eq!(
        tally.values[MAX_TALLIED_VALUES - 1],
        ("v0098".to_owned(), 1)
    );
    assert_eq!(tally.others, 3, "v0099, v0100 and v0101");
}

async fn a_questions_answer_is_under_its_id_before_its_index_and_only_strings_and_numbers_are_values(
    stores: Stores,
) {
    let survey = launched(&stores, "Shapes", LAUNCH).await;
    let id = survey_id(&survey);
    let repository = &stores.survey_responses;
    let events = [
        answered(&id, "ada", 1, json!({"q": "own", "0": "legacy"})),
        answered(&id, "bob", 2, json!({"0": "legacy"})),
        answered(&id, "cy", 3, json!({"q": false})),
        answered(&id, "dee", 4, json!({"q": {"x": 1}})),
        answered(&id, "eve", 5, json!({"q": ["a", 2, {"x": 1}, true]})),
        // A capture keeps given answers only: the id's `null` is none, so the index's is read,
        // as PostHog's coalesce reads it.
        answered(&id, "fay", 6, json!({"q": null, "0": "legacy too"})),
        answered(&id, "gus", 7, json!({"q": 2.5})),
    ];
    repository
        .record(stores.project, events.to_vec(), ProfileSets::default())
        .await
        .unwrap();
    let q = || Some(keys("q", Some("0")));
    let listed = async |answers: AnswerFilter| {
        let page = repository
            .responses(stores.project, &id, &every(), &answers, all(), usize::MAX)
            .await
            .unwrap();
        let people: Vec<String> = page.items.into_iter().map(|r| r.distinct_id).collect();
        assert_eq!(page.count, people.len() as u64);
        people
    };
    assert_eq!(
        listed(AnswerFilter {
            question: q(),
            search: None
        })
        .await,
        ["gus", "fay", "eve", "dee", "cy", "bob", "ada"],
        "false and objects are given answers"
    );
    assert_eq!(
        listed(AnswerFilter {
            question: q(),
            search: SearchText::parse("LEGACY").unwrap()
        })
        .await,
        ["fay", "bob"],
        "the index is read only without the id"
    );
    assert_eq!(
        listed(AnswerFilter {
            question: None,
            search: SearchText::parse("legacy").unwrap()
        })
        .await,
        ["fay", "bob", "ada"]
    );
    let tallies = repository
        .tallies(
            stores.project,
            &id,
            &every(),
            &[TallyRequest {
                keys: keys("q", Some("0")),
                values: true,
            }],
        )
        .await
        .unwrap();
    assert_eq!(tallies.responses, 7);
    let values = |pairs: &[&str]| -> Vec<(String, u64)> {
        pairs.iter().map(|v| ((*v).to_owned(), 1)).collect()
    };
    assert_eq!(
        tallies.questions,
        [Tally {
            answered: 7,
            values: values(&["2", "2.5", "a", "legacy", "legacy too", "own"]),
            others: 0,
        }]
    );
}
