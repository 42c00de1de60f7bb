//! The survey list's filters and search on both stores: each filter keeps what
//! `SurveyRepository::list` states, before paging; a search keeps its tier's surveys, the exact
//! tier by text, the similar one by pg_trgm's word similarity (the fake's own implementation
//! checked here against PostgreSQL's), most relevant first; whole lists and revisions agree.

use crate::survey_writes as writes;
use domain::ports::PageRequest;
use domain::survey::{
    SearchMatch, SearchTerm, SurveyFilter, SurveyId, SurveySearch, SurveyState, SurveyStatus,
    SurveyType,
};
use domain::tenancy::UserBasic;
use domain::testing::someone;

use crate::stores::{Stores, all, at};

contract! {
    each_filter_keeps_what_it_names_before_paging,
    the_exact_tier_keeps_the_term_in_the_name_or_the_description_most_relevant_first,
    search_wildcards_and_backslashes_match_literally,
    the_similar_tier_keeps_words_like_the_term_above_pg_trgms_thresholds,
    equally_relevant_surveys_are_listed_by_name,
    whether_a_term_is_held_is_decided_among_the_filtered_surveys,
    a_searched_pages_revisions_come_in_its_order,
}

/// Creates a survey of the main project, as `creator`.
async fn create_by(stores: &Stores, creator: &UserBasic, state: SurveyState) -> SurveyId {
    writes::create_as_is(&*stores.surveys, stores.project, creator, state).await
}

async fn create(stores: &Stores, name: &str, description: &str) -> SurveyId {
    let state = SurveyState {
        description: description.into(),
        ..SurveyState::draft(name.into(), SurveyType::Popover)
    };
    create_by(stores, &stores.user, state).await
}

async fn names(stores: &Stores, filter: &SurveyFilter) -> Vec<String> {
    let page = stores.surveys.list(stores.project, filter, all()).await;
    let page = page.unwrap();
    assert_eq!(
        page.count,
        page.items.len() as u64,
        "one page holds them all"
    );
    page.items.into_iter().map(|s| s.state.name).collect()
}

fn searching(term: &str, tier: SearchMatch) -> SurveyFilter {
    SurveyFilter {
        search: Some(SurveySearch {
            term: SearchTerm::parse(term).unwrap().unwrap(),
            tier,
        }),
        ..SurveyFilter::default()
    }
}

async fn holds(stores: &Stores, filter: &SurveyFilter, term: &str) -> bool {
    let term = SearchTerm::parse(term).unwrap().unwrap();
    stores
        .surveys
        .holds_term(stores.project, filter, &term)
        .await
        .unwrap()
}

/// Surveys whose pg_trgm similarities to the terms searched below are known (PostgreSQL 15),
/// created in this order (so newest first is the reverse).
async fn searchable(stores: &Stores) {
    for (name, description) in [
        ("Onboarding feedback", ""),
        ("Pricing page", "Asked on the pricing page"),
        ("Churn interview", "Why customers leave"),
        ("Net promoter score", "How likely are you to recommend us"),
        ("Landing", "Shown on the landing page"),
        ("Zebra", "Landing"),
        ("Customer pulse", ""),
    ] {
        create(stores, name, description).await;
    }
    let archived = SurveyState {
        archived: true,
        ..SurveyState::draft("Legacy NPS".into(), SurveyType::Api)
    };
    create_by(stores, &stores.user, archived).await;
}

async fn each_filter_keeps_what_it_names_before_paging(stores: Stores) {
    let draft = create(&stores, "draft", "").await;
    let running = SurveyState {
        start_date: Some(at("2026-01-01T00:00:00Z")),
        survey_type: SurveyType::Widget,
        ..SurveyState::draft("running".into(), SurveyType::Popover)
    };
    let running = create_by(&stores, &stores.user, running).await;
    // A start still to come is running, an end still to come complete, archived or not.
    let scheduled = SurveyState {
        start_date: Some(at("2999-01-01T00:00:00Z")),
        archived: true,
        ..SurveyState::draft("scheduled".into(), SurveyType::Popover)
    };
    create_by(&stores, &stores.user, scheduled).await;
    let complete = SurveyState {
        start_date: Some(at("2026-01-01T00:00:00Z")),
        end_date: Some(at("2999-01-01T00:00:00Z")),
        survey_type: SurveyType::Widget,
        ..SurveyState::draft("complete".into(), SurveyType::Popover)
    };
    let other_user = someone(stores.other_user);
    create_by(&stores, &other_user, complete).await;

    let status = |status| SurveyFilter {
        status: Some(status),
        ..SurveyFilter::default()
    };
    assert_eq!(
        names(&stores, &status(SurveyStatus::Draft)).await,
        ["draft"]
    );
    assert_eq!(
        names(&stores, &status(SurveyStatus::Running)).await,
        ["scheduled", "running"]
    );
    assert_eq!(
        names(&stores, &status(SurveyStatus::Complete)).await,
        ["complete"]
    );
    let widgets = SurveyFilter {
        survey_type: Some(SurveyType::Widget),
        ..SurveyFilter::default()
    };
    assert_eq!(names(&stores, &widgets).await, ["complete", "running"]);
    let by_other = SurveyFilter {
        created_by: Some(stores.other_user),
        ..SurveyFilter::default()
    };
    assert_eq!(names(&stores, &by_other).await, ["complete"]);
    let unknown = SurveyId::generate();
    let some = SurveyFilter {
        ids: Some(vec![draft, running, unknown]),
        ..SurveyFilter::default()
    };
    assert_eq!(names(&stores, &some).await, ["running", "draft"]);
    let none = SurveyFilter {
        ids: Some(Vec::new()),
        ..SurveyFilter::default()
    };
    assert!(names(&stores, &none).await.is_empty());
    let combined = SurveyFilter {
        archived: Some(false),
        status: Some(SurveyStatus::Running),
        ..some.clone()
    };
    assert_eq!(names(&stores, &combined).await, ["running"]);

    // Filtered, then paged: the count is of what the filter keeps.
    let second = PageRequest {
        limit: 1,
        offset: 1,
    };
    let page = stores
        .surveys
        .list(stores.project, &status(SurveyStatus::Running), second)
        .await
        .unwrap();
    let names: Vec<_> = page.items.iter().map(|s| s.state.name.as_str()).collect();
    assert_eq!((page.count, names), (2, vec!["running"]));
    // Another project's surveys are never kept, even by id.
    let elsewhere = stores
        .surveys
        .list(stores.other_project, &some, all())
        .await
        .unwrap();
    assert_eq!(elsewhere.count, 0);
}

async fn the_exact_tier_keeps_the_term_in_the_name_or_the_description_most_relevant_first(
    stores: Stores,
) {
    searchable(&stores).await;
    // By name and description, then by description alone: newest first would list Landing first.
    assert_eq!(
        names(&stores, &searching("PAGE", SearchMatch::Exact)).await,
        ["Pricing page", "Landing"]
    );
    // "Pricing" is similar to "ding" (0.4) but holds no "ding": only exact matches are kept.
    assert_eq!(
        names(&stores, &searching("ding", SearchMatch::Exact)).await,
        ["Landing", "Onboarding feedback", "Zebra"]
    );
    assert_eq!(
        names(&stores, &searching("nps", SearchMatch::Exact)).await,
        ["Legacy NPS"]
    );
    let unarchived = SurveyFilter {
        archived: Some(false),
        ..searching("nps", SearchMatch::Exact)
    };
    assert!(names(&stores, &unarchived).await.is_empty());
}

async fn search_wildcards_and_backslashes_match_literally(stores: Stores) {
    for name in [
        "100% satisfied",
        "1000 satisfied",
        "a_b test",
        "axb test",
        r"back\slash",
        "backslash",
    ] {
        create(&stores, name, "").await;
    }
    let exact = |term: &str| searching(term, SearchMatch::Exact);
    let everything = SurveyFilter::default();
    assert_eq!(names(&stores, &exact("100%")).await, ["100% satisfied"]);
    assert!(!holds(&stores, &everything, "0%s").await);
    assert_eq!(names(&stores, &exact("a_b")).await, ["a_b test"]);
    assert!(!holds(&stores, &everything, "a%b").await);
    assert_eq!(names(&stores, &exact(r"k\s")).await, [r"back\slash"]);
}

async fn the_similar_tier_keeps_words_like_the_term_above_pg_trgms_thresholds(stores: Stores) {
    searchable(&stores).await;
    // word_similarity("onbording", …): Onboarding feedback 0.615; Landing 0.3 as `real`, which
    // is above 0.3 as `double precision`; Zebra's description "Landing" 0.3, not above 0.4.
    assert_eq!(
        names(&stores, &searching("onbording", SearchMatch::Similar)).await,
        ["Onboarding feedback", "Landing"]
    );
    // A name match (Customer pulse, 0.44) ranks above a description match (Churn interview's
    // "Why customers leave", 0.58).
    assert_eq!(
        names(&stores, &searching("custmers", SearchMatch::Similar)).await,
        ["Customer pulse", "Churn interview"]
    );
    assert_eq!(
        names(&stores, &searching("recomend", SearchMatch::Similar)).await,
        ["Net promoter score"]
    );
    // The similar tier never keeps an exact match.
    assert_eq!(
        names(&stores, &searching("ding", SearchMatch::Similar)).await,
        ["Pricing page"]
    );
    let counted = stores
        .surveys
        .list(
            stores.project,
            &searching("custmers", SearchMatch::Similar),
            PageRequest {
                limit: 1,
                offset: 1,
            },
        )
        .await
        .unwrap();
    let names: Vec<_> = counted
        .items
        .iter()
        .map(|s| s.state.name.as_str())
        .collect();
    assert_eq!((counted.count, names), (2, vec!["Churn interview"]));
}

async fn equally_relevant_surveys_are_listed_by_name(stores: Stores) {
    for name in ["bb survey", "aa survey", "cc survey"] {
        create(&stores, name, "").await;
    }
    assert_eq!(
        names(&stores, &searching("survey", SearchMatch::Exact)).await,
        ["aa survey", "bb survey", "cc survey"]
    );
}

async fn whether_a_term_is_held_is_decided_among_the_filtered_surveys(stores: Stores) {
    searchable(&stores).await;
    let everything = SurveyFilter::default();
    assert!(holds(&stores, &everything, "NPS").await);
    assert!(holds(&stores, &everything, "customers LEAVE").await);
    assert!(!holds(&stores, &everything, "onbording").await);
    let unarchived = SurveyFilter {
        archived: Some(false),
        ..SurveyFilter::default()
    };
    assert!(!holds(&stores, &unarchived, "nps").await);
    // The filter's own search, whatever its tier, is not applied.
    let searched = SurveyFilter {
        archived: Some(true),
        ..searching("zzz", SearchMatch::Exact)
    };
    assert!(holds(&stores, &searched, "legacy").await);
    let elsewhere = stores
        .surveys
        .holds_term(
            stores.other_project,
            &everything,
            &SearchTerm::parse("NPS").unwrap().unwrap(),
        )
        .await
        .unwrap();
    assert!(!elsewhere);
}

async fn a_searched_pages_revisions_come_in_its_order(stores: Stores) {
    searchable(&stores).await;
    let filter = searching("ding", SearchMatch::Exact);
    let window = PageRequest {
        limit: 2,
        offset: 1,
    };
    let revisions = stores
        .surveys
        .revisions(stores.project, &filter, window)
        .await
        .unwrap();
    let listed = stores
        .surveys
        .list(stores.project, &filter, window)
        .await
        .unwrap();
    assert_eq!(revisions.count, 3);
    let ids: Vec<SurveyId> = listed.items.iter().map(|s| s.id).collect();
    assert_eq!(
        revisions
            .items
            .iter()
            .map(|(id, _)| *id)
            .collect::<Vec<_>>(),
        ids
    );
    let names: Vec<_> = listed.items.iter().map(|s| s.state.name.as_str()).collect();
    assert_eq!(names, ["Onboarding feedback", "Zebra"]);
}
