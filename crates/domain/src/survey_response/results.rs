//! A survey's results per question, as the console charts them: how many responses answered
//! each question and, for ratings and choices, how often each value was given. The store adds
//! them up in one pass ([`Tallies`]), so a survey of any size is charted from a few hundred
//! numbers; the service lays them out along the survey's scales and choices.

use super::{AnswerKeys, DateWindow};
use crate::survey::{Question, QuestionType};

/// Most distinct values a tally lists per question, the most given first; answers with the
/// other values are added up in [`Tally::others`]. Bounds the answer whatever the responses
/// hold (open "other" choices are free text).
pub const MAX_TALLIED_VALUES: usize = 100;

/// What the store adds up for one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TallyRequest {
    pub keys: AnswerKeys,
    /// Count each value given (ratings and choices); otherwise only how many answered.
    pub values: bool,
}

/// One question's tally.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Responses that answered (see [`SurveyResponseRepository::tallies`](super::SurveyResponseRepository::tallies)).
    pub answered: u64,
    /// Values and how often each was given, the most given first, ties by value (bytewise);
    /// at most [`MAX_TALLIED_VALUES`].
    pub values: Vec<(String, u64)>,
    /// Values given beyond those listed.
    pub others: u64,
}

/// What the store read: the responses kept, and a tally per requested question, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tallies {
    pub responses: u64,
    pub questions: Vec<Tally>,
}

/// How often one value was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueCount {
    pub value: String,
    pub count: u64,
}

/// One question's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionResults {
    pub id: String,
    pub kind: QuestionType,
    pub question: String,
    pub answered: u64,
    /// Ratings: every value of the scale in order (0–10 for a scale of 10, 1–n otherwise), then
    /// any other value given; choices: every choice in order, then the other values given (open
    /// choices), the most given first. Empty for open and link questions.
    pub counts: Vec<ValueCount>,
    /// Values given beyond those in `counts` (see [`MAX_TALLIED_VALUES`]).
    pub others: u64,
}

impl QuestionResults {
    /// The question's tally laid out along its scale or choices.
    pub fn new(id: String, question: &Question, tally: Tally) -> Self {
        let expected: Vec<String> = match question {
            Question::Rating(rating) => match rating.scale {
                Some(10) => (0..=10).map(|v: u8| v.to_string()).collect(),
                Some(scale) => (1..=scale).map(|v| v.to_string()).collect(),
                None => Vec::new(),
            },
            Question::SingleChoice(choice) | Question::MultipleChoice(choice) => {
                choice.choices.clone()
            }
            Question::Open(_) | Question::Link(_) => Vec::new(),
        };
        let mut given: Vec<(String, u64)> = tally.values;
        let mut counts: Vec<ValueCount> = expected
            .into_iter()
            .map(|value| {
                let count = given
                    .iter()
                    .position(|(v, _)| *v == value)
                    .map_or(0, |at| given.remove(at).1);
                ValueCount { value, count }
            })
            .collect();
        counts.extend(
            given
                .into_iter()
                .map(|(value, count)| ValueCount { value, count }),
        );
        Self {
            id,
            kind: question.question_type(),
            question: question.base().question.clone(),
            answered: tally.answered,
            counts,
            others: tally.others,
        }
    }
}

/// A survey's results: the window read (the one asked, narrowed to the survey's run as stats
/// are), the responses in it, and each question's results in the survey's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurveyResults {
    pub window: DateWindow,
    pub responses: u64,
    pub questions: Vec<QuestionResults>,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::survey::Questions;

    fn question(value: Value) -> Question {
        Questions::parse(json!([value]))
            .unwrap()
            .iter()
            .next()
            .unwrap()
            .clone()
    }

    fn counts(results: &QuestionResults) -> Vec<(&str, u64)> {
        results
            .counts
            .iter()
            .map(|c| (c.value.as_str(), c.count))
            .collect()
    }

    #[test]
    fn a_ten_point_rating_lists_zero_to_ten_and_what_else_was_given() {
        let rating = question(json!({"type": "rating", "id": "r", "question": "Q", "scale": 10}));
        let tally = Tally {
            answered: 4,
            values: vec![("9".into(), 2), ("11".into(), 1), ("0".into(), 1)],
            others: 0,
        };
        let results = QuestionResults::new("r".into(), &rating, tally);
        let mut expected: Vec<(String, u64)> = (0..=10).map(|v| (v.to_string(), 0)).collect();
        expected[0].1 = 1;
        expected[9].1 = 2;
        expected.push(("11".into(), 1));
        let got: Vec<(String, u64)> = counts(&results)
            .into_iter()
            .map(|(v, c)| (v.to_owned(), c))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(results.kind, QuestionType::Rating);
    }

    #[test]
    fn choices_keep_their_order_and_zeros_with_open_answers_after() {
        let choice = question(json!({
            "type": "multiple_choice", "id": "c", "question": "Q", "choices": ["b", "a"]
        }));
        let tally = Tally {
            answered: 3,
            values: vec![("a".into(), 3), ("mine".into(), 1)],
            others: 2,
        };
        let results = QuestionResults::new("c".into(), &choice, tally);
        assert_eq!(counts(&results), [("b", 0), ("a", 3), ("mine", 1)]);
        assert_eq!(results.others, 2);
    }
}
