//! Reads of survey responses bounded by their answers' size: a list page and an export batch end
//! once their answers pass the budget they are given (paging on from there loses and repeats
//! nothing), and answers stored before capture refused large ones are read cut to the limit.

use domain::person::ProfileSets;
use domain::ports::PageRequest;
use domain::survey_response::{
    AnswerFilter, AnswerKeys, ExportCursor, MAX_ANSWER_BYTES, ResponseFilter, SurveyEvent,
    TallyRequest,
};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::stores::Stores;
use crate::survey_responses::{LAUNCH, answered, launched, survey_id};

contract!(
    a_page_ends_once_its_answers_pass_the_budget_and_paging_on_reads_each_response_once,
    an_export_batch_ends_once_its_answers_pass_the_budget_and_the_next_one_follows_it,
    answers_stored_past_the_answer_limit_are_read_cut_to_it,
    values_stored_past_the_answer_limit_are_tallied_cut_to_it,
);

/// Ten responses, one a minute, each with an answer of a thousand characters.
async fn ten_thousand_byte_responses(stores: &Stores) -> String {
    let id = survey_id(&launched(stores, "Essays", LAUNCH).await);
    let events: Vec<SurveyEvent> = (0..10)
        .map(|minute| {
            let answer = format!("{minute}").repeat(1000);
            answered(&id, &format!("p{minute}"), minute, json!({"q": answer}))
        })
        .collect();
    stores
        .survey_responses
        .record(stores.project, events, ProfileSets::default())
        .await
        .unwrap();
    id
}

async fn a_page_ends_once_its_answers_pass_the_budget_and_paging_on_reads_each_response_once(
    stores: Stores,
) {
    let id = ten_thousand_byte_responses(&stores).await;
    let repository = &stores.survey_responses;
    let (every, all_answers) = (ResponseFilter::default(), AnswerFilter::default());
    let list = |offset, budget| {
        repository.responses(
            stores.project,
            &id,
            &every,
            &all_answers,
            PageRequest { limit: 100, offset },
            budget,
        )
    };
    let whole: Vec<Uuid> = list(0, usize::MAX)
        .await
        .unwrap()
        .items
        .iter()
        .map(|r| r.uuid)
        .collect();
    assert_eq!(whole.len(), 10);

    // About 1,010 bytes a row: three rows stay under 3,500 bytes, the fourth passes it.
    let (mut paged, mut sizes) = (Vec::new(), Vec::new());
    let mut offset = 0;
    while offset < 10 {
        let page = list(offset, 3_500).await.unwrap();
        assert_eq!(page.count, 10, "the count is the whole list's");
        sizes.push(page.items.len());
        offset += page.items.len() as u64;
        paged.extend(page.items.iter().map(|r| r.uuid));
    }
    assert_eq!(sizes, [4, 4, 2]);
    assert_eq!(paged, whole, "every response once, in list order");

    // A row larger than the budget is read alone rather than never.
    let page = list(0, 10).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].answers["q"], json!("9".repeat(1000)));
}

async fn an_export_batch_ends_once_its_answers_pass_the_budget_and_the_next_one_follows_it(
    stores: Stores,
) {
    let id = ten_thousand_byte_responses(&stores).await;
    let repository = &stores.survey_responses;
    let (mut read, mut sizes) = (Vec::new(), Vec::new());
    let mut after = None;
    loop {
        let batch = repository
            .responses_after(
                stores.project,
                &id,
                &ResponseFilter::default(),
                after,
                500,
                2_500,
            )
            .await
            .unwrap();
        let Some(last) = batch.last() else { break };
        after = Some(ExportCursor::from(last));
        sizes.push(batch.len());
        read.extend(batch.iter().map(|r| r.distinct_id.clone()));
    }
    assert_eq!(sizes, [3, 3, 3, 1]);
    let newest_first: Vec<String> = (0..10).rev().map(|n| format!("p{n}")).collect();
    assert_eq!(read, newest_first);
}

async fn answers_stored_past_the_answer_limit_are_read_cut_to_it(stores: Stores) {
    let id = survey_id(&launched(&stores, "Legacy", LAUNCH).await);
    // What capture refuses now, stored as older captures stored it.
    let huge = "é".repeat(2 * MAX_ANSWER_BYTES);
    let choices: Vec<String> = (0..MAX_ANSWER_BYTES / 4).map(|n| format!("c{n}")).collect();
    let near = "n".repeat(MAX_ANSWER_BYTES - 100);
    let events = vec![
        answered(&id, "legacy", 0, json!({"essay": huge, "short": "kept"})),
        answered(&id, "choices", 1, json!({"many": choices})),
        answered(&id, "within", 2, json!({"a": near, "b": near})),
    ];
    stores
        .survey_responses
        .record(stores.project, events, ProfileSets::default())
        .await
        .unwrap();
    let page = stores
        .survey_responses
        .responses(
            stores.project,
            &id,
            &ResponseFilter::default(),
            &AnswerFilter::default(),
            PageRequest {
                limit: 100,
                offset: 0,
            },
            usize::MAX,
        )
        .await
        .unwrap();
    let by_person = |person: &str| {
        &page
            .items
            .iter()
            .find(|r| r.distinct_id == person)
            .unwrap()
            .answers
    };
    let legacy = by_person("legacy");
    assert_eq!(
        legacy["essay"],
        json!(
            "é".repeat(MAX_ANSWER_BYTES)[..]
                .chars()
                .take(MAX_ANSWER_BYTES)
                .collect::<String>()
        )
    );
    assert_eq!(legacy["short"], json!("kept"));
    // A list past the limit is cut as its JSON text, to a string.
    let Value::String(cut) = &by_person("choices")["many"] else {
        panic!("a cut answer is a string");
    };
    assert!(cut.starts_with("[\"c0\","), "{}", &cut[..20]);
    assert_eq!(cut.chars().count(), MAX_ANSWER_BYTES);
    // Answers within the limit each are read whole, however large together.
    let within = by_person("within");
    assert_eq!((&within["a"], &within["b"]), (&json!(near), &json!(near)));
}

async fn values_stored_past_the_answer_limit_are_tallied_cut_to_it(stores: Stores) {
    let id = survey_id(&launched(&stores, "Legacy choices", LAUNCH).await);
    let huge = "é".repeat(2 * MAX_ANSWER_BYTES);
    let events = vec![
        answered(&id, "one", 0, json!({"pick": huge})),
        answered(&id, "two", 1, json!({"pick": [huge, "small"]})),
    ];
    stores
        .survey_responses
        .record(stores.project, events, ProfileSets::default())
        .await
        .unwrap();
    let tallies = stores
        .survey_responses
        .tallies(
            stores.project,
            &id,
            &ResponseFilter::default(),
            &[TallyRequest {
                keys: AnswerKeys {
                    id: "pick".into(),
                    index: None,
                },
                values: true,
            }],
        )
        .await
        .unwrap();
    assert_eq!(
        tallies.questions[0].values,
        [("é".repeat(MAX_ANSWER_BYTES), 2), ("small".to_owned(), 1)]
    );
}
