//! PostHog's `per_question_stats` of a survey's stats: per question, how many responses
//! answered it and, for ratings and choices, how often each answer was given (choices read
//! through their translations, other text under `"<other>"`), and a rating's average. Laid out
//! from the store's [`Tally`] of each question.

use std::collections::HashMap;

use serde_json::Value;

use super::{Tally, numeric_answer};
use crate::survey::{ChoiceQuestion, Question, QuestionType};

/// Where a choice question's answers that are none of its choices (in any language) are
/// counted.
pub const OTHER: &str = "<other>";

/// What PostHog's translation tooling leaves in a choice not translated yet.
const TRANSLATION_NEEDED: &str = "[Translation needed]";

/// One question's stats.
#[derive(Debug, Clone, PartialEq)]
pub struct PerQuestionStats {
    pub question_id: String,
    pub question_index: usize,
    pub question_text: String,
    pub question_type: QuestionType,
    /// Responses whose answer was given (see the port's `tallies`).
    pub response_count: u64,
    /// Answers and how often each was given, the most given first (`"<other>"` last); empty for
    /// open and link questions.
    pub distribution: Vec<(String, u64)>,
    /// A rating's average over the listed answers that are numbers; `None` otherwise.
    pub average: Option<f64>,
}

impl PerQuestionStats {
    /// The question's stats from its tally (with values for ratings and choices).
    pub fn new(question_index: usize, question: &Question, tally: Tally) -> Self {
        let distribution = match question {
            Question::Open(_) | Question::Link(_) => Vec::new(),
            Question::Rating(_) => tally.values,
            Question::SingleChoice(choice) | Question::MultipleChoice(choice) => {
                by_choice(&choice_translations(choice), tally.values, tally.others)
            }
        };
        let average = matches!(question, Question::Rating(_))
            .then(|| average(&distribution))
            .flatten();
        Self {
            question_id: question.base().id.clone().unwrap_or_default(),
            question_index,
            question_text: question.base().question.clone(),
            question_type: question.question_type(),
            response_count: tally.answered,
            distribution,
            average,
        }
    }
}

/// Every text that stands for one of the question's choices, mapped to that choice: each
/// language's translated choices by position (a language whose list is not as long as the
/// choices is skipped, and so are blank entries and `[Translation needed]`), then the choices
/// themselves, which win over a translation spelled like another choice.
pub fn choice_translations(question: &ChoiceQuestion) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let languages = question.base.translations.iter().flat_map(|t| t.iter());
    for (_, translation) in languages {
        let Some(choices) = &translation.choices else {
            continue;
        };
        if choices.len() != question.choices.len() {
            continue;
        }
        for (translated, base) in choices.iter().zip(&question.choices) {
            if translated.trim().is_empty() || translated == TRANSLATION_NEEDED {
                continue;
            }
            map.insert(translated.clone(), base.clone());
        }
    }
    for choice in &question.choices {
        map.insert(choice.clone(), choice.clone());
    }
    map
}

/// The tally's values counted under the choice each stands for, the most given first (ties in
/// the order the tally met them), then the rest and the values beyond the tally's list under
/// [`OTHER`].
fn by_choice(
    translations: &HashMap<String, String>,
    values: Vec<(String, u64)>,
    beyond: u64,
) -> Vec<(String, u64)> {
    let mut counted: Vec<(String, u64)> = Vec::new();
    let mut other = beyond;
    for (value, count) in values {
        match translations.get(&value) {
            Some(choice) => match counted.iter_mut().find(|(c, _)| c == choice) {
                Some((_, total)) => *total += count,
                None => counted.push((choice.clone(), count)),
            },
            None => other += count,
        }
    }
    counted.sort_by(|(_, a), (_, b)| b.cmp(a));
    if other > 0 {
        counted.push((OTHER.to_owned(), other));
    }
    counted
}

/// The mean of the values that are numbers, weighted by how often each was given.
fn average(distribution: &[(String, u64)]) -> Option<f64> {
    let (sum, count) = distribution
        .iter()
        .filter_map(|(value, n)| {
            numeric_answer(&Value::String(value.clone())).map(|number| (number, *n))
        })
        .fold((0.0, 0u64), |(sum, count), (number, n)| {
            (sum + number * n as f64, count + n)
        });
    (count > 0).then(|| sum / count as f64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::survey::Questions;

    fn question(definition: Value) -> Question {
        Questions::parse(json!([definition]))
            .unwrap()
            .iter()
            .next()
            .unwrap()
            .clone()
    }

    fn tally(answered: u64, values: &[(&str, u64)], others: u64) -> Tally {
        Tally {
            answered,
            values: values.iter().map(|(v, n)| ((*v).to_owned(), *n)).collect(),
            others,
        }
    }

    #[test]
    fn a_ratings_distribution_and_average() {
        let rating =
            question(json!({"type": "rating", "question": "1-10?", "id": "r", "scale": 10}));
        let stats = PerQuestionStats::new(0, &rating, tally(5, &[("9", 2), ("3", 2), ("x", 1)], 0));
        assert_eq!(stats.response_count, 5);
        assert_eq!(stats.distribution.len(), 3);
        assert_eq!(stats.average, Some(6.0));
        assert_eq!(stats.question_type, QuestionType::Rating);
    }

    #[test]
    fn choices_are_read_through_their_translations_and_the_rest_is_other() {
        // As stored (a sent survey could not hold a translation of another length).
        let stored: Questions = serde_json::from_value(json!([{
            "type": "single_choice", "question": "Like it?", "id": "c", "choices": ["yes", "no"],
            "translations": {
                "zh": {"choices": ["是", "否"]},
                "fr": {"choices": ["oui"]},
                "de": {"choices": ["no", "[Translation needed]"]},
            }
        }]))
        .unwrap();
        let choice = stored.iter().next().unwrap();
        let stats = PerQuestionStats::new(
            1,
            choice,
            tally(
                6,
                &[("yes", 2), ("是", 1), ("no", 1), ("oui", 1), ("maybe", 1)],
                1,
            ),
        );
        assert_eq!(
            stats.distribution,
            [
                ("yes".to_owned(), 3),
                ("no".to_owned(), 1),
                (OTHER.to_owned(), 3)
            ]
        );
        assert_eq!(stats.average, None);
        assert_eq!(stats.question_index, 1);
    }

    #[test]
    fn open_questions_count_answers_only() {
        let open = question(json!({"type": "open", "question": "Why?", "id": "o"}));
        let stats = PerQuestionStats::new(0, &open, tally(4, &[], 0));
        assert_eq!((stats.response_count, stats.distribution.len()), (4, 0));
        assert_eq!(stats.average, None);
    }
}
