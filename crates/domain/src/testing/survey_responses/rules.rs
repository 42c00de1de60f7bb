//! The fake's spelling of the answer rules `SurveyResponseRepository` states (which answer a
//! question has, which are given, what a search finds, what a tally counts and how it ranks);
//! the SQL spells the same rules, and the contract tests hold the two to them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::survey_response::{
    AnswerFilter, AnswerKeys, MAX_ANSWER_BYTES, MAX_TALLIED_VALUES, SearchText,
};

/// The question's answer among a response's stored answers: under its id, else its index.
pub(super) fn answer<'a>(keys: &AnswerKeys, answers: &'a Map<String, Value>) -> Option<&'a Value> {
    answers
        .get(&keys.id)
        .or_else(|| keys.index.as_ref().and_then(|index| answers.get(index)))
}

/// Whether an answer was given: anything but `null`, `""` and `[]`.
pub(super) fn is_answered(answer: &Value) -> bool {
    match answer {
        Value::Null => false,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => true,
    }
}

/// The texts a search looks in: a string answer, or a list's strings.
fn answer_texts(answer: &Value) -> Vec<&str> {
    match answer {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `text` holds `search`, ignoring case.
fn found_in(search: &SearchText, text: &str) -> bool {
    text.to_lowercase()
        .contains(&search.as_str().to_lowercase())
}

/// Whether a response with these stored answers is kept by `filter`.
pub(super) fn keeps(filter: &AnswerFilter, answers: &Map<String, Value>) -> bool {
    let searched = |answer: &Value| {
        filter.search.as_ref().is_none_or(|search| {
            answer_texts(answer)
                .into_iter()
                .any(|text| found_in(search, text))
        })
    };
    match &filter.question {
        Some(keys) => answer(keys, answers).is_some_and(|a| is_answered(a) && searched(a)),
        None => filter.search.is_none() || answers.values().any(searched),
    }
}

/// The values an answer gives a tally: a string (cut to [`MAX_ANSWER_BYTES`] characters) or a
/// number (its JSON text) is one, a list gives each of its strings and numbers.
pub(super) fn tallied_values(answer: &Value) -> Vec<String> {
    let value = |item: &Value| match item {
        Value::String(text) => Some(text.chars().take(MAX_ANSWER_BYTES).collect()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    };
    match answer {
        Value::Array(items) => items.iter().filter_map(value).collect(),
        other => value(other).into_iter().collect(),
    }
}

/// Counts in a tally's order (most given first, ties by value), cut at [`MAX_TALLIED_VALUES`]:
/// the listed values and how many answers the rest add up to.
pub(super) fn ranked(counts: BTreeMap<String, u64>) -> (Vec<(String, u64)>, u64) {
    let mut values: Vec<(String, u64)> = counts.into_iter().collect();
    values.sort_by(|(a, a_count), (b, b_count)| b_count.cmp(a_count).then_with(|| a.cmp(b)));
    let rest = values.split_off(values.len().min(MAX_TALLIED_VALUES));
    (values, rest.iter().map(|(_, count)| count).sum())
}
