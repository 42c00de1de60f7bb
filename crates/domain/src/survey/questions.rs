//! A survey's list of questions: each read by the one question parser (`question_parser`),
//! sanitized and held to PostHog's rules, then the rules across questions (branching targets
//! point at another question) and ids for new questions.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::question::{BranchTarget, BranchingRule, Question};
use super::translations::LanguageCode;
use crate::error::ValidationError;

/// A survey's checked list of questions: sanitized, with an `id` each. Stored lists were
/// checked when written, so reading one back (`Deserialize`) does not check it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Questions(Vec<Question>);

impl Questions {
    /// Reads a `questions` value as sent: texts sanitized, and every question without an `id`
    /// given a UUID string (given ids are kept).
    ///
    /// # Errors
    /// The first broken question rule, with PostHog's message where PostHog has one
    /// (`attr: questions`).
    pub fn parse(value: Value) -> Result<Self, ValidationError> {
        let Value::Array(items) = value else {
            return Err(invalid("Questions must be a list of objects"));
        };
        let count = items.len();
        let questions = items
            .into_iter()
            .enumerate()
            .map(|(index, item)| {
                let Value::Object(object) = item else {
                    return Err(invalid("Questions must be a list of objects"));
                };
                let mut question = Question::parse_sent(object, index + 1).map_err(invalid)?;
                if question.base().id.is_none() {
                    question.set_id(Uuid::new_v4().to_string());
                }
                Ok(question)
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (index, question) in questions.iter().enumerate() {
            check_targets(index, count, question)?;
        }
        Ok(Self(questions))
    }

    /// The questions with their translations' keys checked against the survey's `base`
    /// language (`raw_base` as sent, which the messages name), each question's stored keys
    /// (the `stored` question at the same index) kept as they are.
    ///
    /// # Errors
    /// The first bad key or choice count (`attr: questions`).
    pub(crate) fn with_checked_translations(
        mut self,
        base: &LanguageCode,
        raw_base: Option<&str>,
        stored: Option<&Self>,
    ) -> Result<Self, ValidationError> {
        for (index, question) in self.0.iter_mut().enumerate() {
            let choice_count = match &*question {
                Question::SingleChoice(choice) | Question::MultipleChoice(choice) => {
                    Some(choice.choices.len())
                }
                _ => None,
            };
            let stored = stored
                .and_then(|stored| stored.0.get(index))
                .and_then(|stored| stored.base().translations.as_ref());
            let base_fields = question.base_mut();
            if let Some(translations) = base_fields.translations.take() {
                base_fields.translations = Some(
                    translations
                        .with_checked_keys(index + 1, base, raw_base, stored, choice_count)
                        .map_err(invalid)?,
                );
            }
        }
        Ok(self)
    }

    /// The questions as the public feed carries them: each one's translations under the keys
    /// PostHog keeps for a survey in `base` language, normalised, and left out when none is.
    pub fn for_feed(&self, base: &LanguageCode) -> Self {
        let mut questions = self.clone();
        for question in &mut questions.0 {
            let fields = question.base_mut();
            fields.translations = fields
                .translations
                .take()
                .and_then(|translations| translations.for_feed(base));
        }
        questions
    }

    /// Changes each question in place.
    pub(crate) fn each_mut(&mut self, change: impl FnMut(&mut Question)) {
        self.0.iter_mut().for_each(change);
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Question> {
        self.0.iter()
    }

    /// The same questions with new ids, as PostHog drops the ids of a copy's questions and
    /// lets them be generated again.
    pub(crate) fn with_fresh_ids(mut self) -> Self {
        for question in &mut self.0 {
            question.set_id(Uuid::new_v4().to_string());
        }
        self
    }
}

fn invalid(detail: impl Into<String>) -> ValidationError {
    ValidationError::invalid("questions", detail)
}

/// A branching of the question at `index` leads only to another of the `count` questions.
fn check_targets(index: usize, count: usize, question: &Question) -> Result<(), ValidationError> {
    let leads_elsewhere = |target: usize| target < count && target != index;
    let off = |target: usize| {
        invalid(format!(
            "Question {}: branching target {target} does not point at another question",
            index + 1
        ))
    };
    match question
        .base()
        .branching
        .as_ref()
        .map(|branching| &branching.rule)
    {
        Some(BranchingRule::SpecificQuestion { index: target }) if !leads_elsewhere(*target) => {
            Err(off(*target))
        }
        Some(BranchingRule::ResponseBased { response_values }) => response_values
            .values()
            .find_map(|target| match target {
                BranchTarget::Question(target) if !leads_elsewhere(*target) => Some(off(*target)),
                _ => None,
            })
            .map_or(Ok(()), Err),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error_of(value: Value) -> String {
        Questions::parse(value).unwrap_err().detail
    }

    /// The questions `value` is read into, as the API shows them.
    fn parsed(value: Value) -> Value {
        serde_json::to_value(Questions::parse(value).unwrap()).unwrap()
    }

    #[test]
    fn questions_must_be_a_list_of_objects() {
        assert_eq!(
            error_of(json!("text")),
            "Questions must be a list of objects"
        );
        assert_eq!(
            error_of(json!(["text"])),
            "Questions must be a list of objects"
        );
        assert_eq!(parsed(json!([])), json!([]));
    }

    #[test]
    fn text_and_type_are_required() {
        assert_eq!(
            error_of(json!([{"type": "open"}])),
            "Question text is required"
        );
        assert_eq!(
            error_of(json!([{"type": "open", "question": ""}])),
            "Question text is required"
        );
        assert_eq!(
            error_of(json!([{"type": "open", "question": 5}])),
            "Question text must be a string"
        );
        assert_eq!(
            error_of(json!([{"type": "essay", "question": "Q"}])),
            "Question type must be one of: open, link, rating, single_choice, multiple_choice"
        );
    }

    #[test]
    fn what_passes_the_checks_comes_back_as_sent_with_its_unknown_keys_and_nulls() {
        let sent = json!([
            {"type": "rating", "id": "r", "question": "How likely?", "scale": 10,
             "display": "number", "isNpsQuestion": true, "description": null,
             "branching": {"type": "response_based", "responseValues": {"detractors": 1, "promoters": "end"}, "note": [1]}},
            {"type": "multiple_choice", "id": "m", "question": "Which?", "choices": ["a", "b"],
             "hasOpenChoice": true, "optional": null, "meta": {"nested": [1, 2.5]}},
            {"type": "open", "id": "o", "question": "Why?", "choices": ["kept"], "link": "",
             "lowerBoundLabel": "low", "display": "any", "scale": "any"}
        ]);
        assert_eq!(parsed(sent.clone()), sent);
    }

    #[test]
    fn a_known_key_of_the_wrong_shape_is_refused_with_its_message() {
        let open = |key: &str, value: Value| {
            let mut question = json!({"type": "open", "question": "Q"});
            question[key] = value;
            json!([question])
        };
        for (sent, message) in [
            (
                open("optional", json!("yes")),
                "Question optional must be a boolean",
            ),
            (open("id", json!(5)), "Question id must be a string"),
            (
                open("description", json!(1)),
                "Question description must be a string",
            ),
            (open("question", json!(false)), "Question text is required"),
            (
                open("choices", json!({"a": 1})),
                "Question choices must be a list of strings",
            ),
            (
                open("branching", json!("end")),
                "Question 1: branching type must be one of: next_question, end, specific_question, response_based",
            ),
            (
                open(
                    "branching",
                    json!({"type": "response_based", "responseValues": []}),
                ),
                "Question 1: response_based branching needs a responseValues object",
            ),
            (
                json!([{"type": "single_choice", "question": "Q", "choices": ["a"], "shuffleOptions": 1}]),
                "Question shuffleOptions must be a boolean",
            ),
            (
                json!([{"type": "rating", "question": "Q", "display": "emoji", "scale": "5"}]),
                "Question 1: an emoji rating scale must be 3 or 5",
            ),
        ] {
            let error = Questions::parse(sent.clone()).unwrap_err();
            assert_eq!(
                (error.attr.as_deref(), error.detail.as_str()),
                (Some("questions"), message),
                "{sent}"
            );
        }
    }

    #[test]
    fn a_stored_question_with_a_known_key_of_the_wrong_shape_still_reads_and_keeps_it() {
        let stored = json!([{"type": "open", "id": 5, "question": "Q", "optional": "yes"}]);
        let read: Questions = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(serde_json::to_value(read).unwrap(), stored);
    }

    #[test]
    fn ids_are_assigned_only_where_missing() {
        let parsed = parsed(json!([
            {"type": "open", "question": "A"},
            {"type": "open", "question": "B", "id": "custom-id-1"}
        ]));
        let generated = parsed[0]["id"].as_str().unwrap();
        assert!(Uuid::parse_str(generated).is_ok());
        assert_eq!(parsed[1]["id"], "custom-id-1");
    }

    #[test]
    fn texts_and_choices_are_sanitized() {
        let parsed = parsed(json!([{
            "type": "single_choice",
            "question": "<script>alert(0)</script>check?",
            "description": "<b>hi</b><script>x</script>",
            "choices": ["<img src=x onerror=alert(1)>Yes", "No"]
        }]));
        assert_eq!(parsed[0]["question"], "check?");
        assert_eq!(parsed[0]["description"], "<b>hi</b>");
        assert_eq!(parsed[0]["choices"][0], "<img src=\"x\">Yes");
    }

    #[test]
    fn a_question_text_that_sanitizes_to_nothing_is_required() {
        assert_eq!(
            error_of(json!([{"type": "open", "question": "<script>alert(6)</script>"}])),
            "Question text is required"
        );
    }

    #[test]
    fn choices_that_sanitize_to_nothing_are_empty() {
        assert_eq!(
            error_of(json!([{
                "type": "multiple_choice",
                "question": "Q",
                "choices": ["</script><script>alert(6)</script>", "<!--<script>"]
            }])),
            "Question choices cannot be empty"
        );
        assert_eq!(
            error_of(
                json!([{"type": "open", "question": "Q", "choices": ["ok", "<script></script>  "]}])
            ),
            "Question choices cannot be empty"
        );
    }

    #[test]
    fn optional_texts_are_checked_and_stored_as_sanitized() {
        let parsed = parsed(json!([{
            "type": "rating", "question": "Q", "scale": 5,
            "description": "<script>x</script>", "buttonText": "<i>Go</i><iframe></iframe>",
            "lowerBoundLabel": "<!--<script>", "upperBoundLabel": "<u>High</u>"
        }]));
        assert_eq!(parsed[0]["description"], "");
        assert_eq!(parsed[0]["buttonText"], "<i>Go</i>");
        assert_eq!(parsed[0]["lowerBoundLabel"], "");
        assert_eq!(parsed[0]["upperBoundLabel"], "<u>High</u>");
        assert_eq!(
            error_of(json!([{"type": "open", "question": "Q", "buttonText": ["<b>"]}])),
            "Question buttonText must be a string"
        );
    }

    #[test]
    fn choice_questions_need_non_blank_string_choices() {
        let q = |choices: Value| json!([{"type": "multiple_choice", "question": "Q", "choices": choices}]);
        assert_eq!(
            error_of(q(json!("a,b"))),
            "Question choices must be a list of strings"
        );
        assert_eq!(
            error_of(q(json!(["a", 1]))),
            "Question choices must be strings"
        );
        assert_eq!(
            error_of(q(json!(["a", "  "]))),
            "Question choices cannot be empty"
        );
        assert_eq!(
            error_of(q(json!([]))),
            "Question choices must be a non-empty list for multiple_choice questions"
        );
    }

    #[test]
    fn links_must_be_https_or_a_valid_mailto() {
        let q = |link: Value| json!([{"type": "link", "question": "Q", "link": link}]);
        assert!(Questions::parse(q(json!("https://posthog.com/docs"))).is_ok());
        assert!(Questions::parse(q(json!("mailto:ada@example.com"))).is_ok());
        assert_eq!(
            error_of(q(json!("http://example.com"))),
            "Link must be a URL with one of these schemes: [https, mailto]"
        );
        assert_eq!(
            error_of(q(json!("javascript:alert(1)"))),
            "Link must be a URL with one of these schemes: [https, mailto]"
        );
        assert_eq!(
            error_of(q(json!("https://"))),
            "Invalid HTTPS URL. Please enter a valid HTTPS link."
        );
        assert_eq!(
            error_of(q(json!("https://#.com"))),
            "Invalid HTTPS URL. Please enter a valid HTTPS link."
        );
        assert_eq!(
            error_of(q(json!("mailto:not-an-address"))),
            "Invalid mailto link. Please enter a valid mailto link (e.g., mailto:example@domain.com)."
        );
        assert_eq!(error_of(q(json!(5))), "Question 1: link must be a string");
    }

    #[test]
    fn content_types_and_labels_are_checked() {
        assert_eq!(
            error_of(
                json!([{"type": "open", "question": "Q", "descriptionContentType": "markdown"}])
            ),
            "Question descriptionContentType must be one of ['text', 'html']"
        );
        assert_eq!(
            error_of(json!([{"type": "rating", "question": "Q", "lowerBoundLabel": 1}])),
            "Question lowerBoundLabel must be a string"
        );
    }

    #[test]
    fn rating_scales_and_displays_are_sane() {
        let q = |display: &str, scale: Value| json!([{"type": "rating", "question": "Q", "display": display, "scale": scale}]);
        assert!(Questions::parse(q("number", json!(10))).is_ok());
        assert!(Questions::parse(q("emoji", json!(5))).is_ok());
        assert!(Questions::parse(q("emoji", json!(10))).is_err());
        assert!(Questions::parse(q("number", json!(11))).is_err());
        assert!(Questions::parse(q("stars", json!(5))).is_err());
    }

    #[test]
    fn skip_submit_button_is_a_boolean_set_only_where_posthog_js_honours_it() {
        let with = |question: Value| json!([question]);
        for honoured in [
            json!({"type": "rating", "id": "r", "question": "Q", "skipSubmitButton": true}),
            json!({"type": "single_choice", "id": "s", "question": "Q", "choices": ["a", "b"],
                   "hasOpenChoice": false, "skipSubmitButton": true}),
            json!({"type": "open", "id": "o", "question": "Q", "skipSubmitButton": false}),
            json!({"type": "multiple_choice", "id": "m", "question": "Q", "choices": ["a"],
                   "skipSubmitButton": null}),
        ] {
            assert_eq!(parsed(with(honoured.clone())), with(honoured));
        }
        for (question, message) in [
            (
                json!({"type": "rating", "question": "Q", "skipSubmitButton": "yes"}),
                "Question skipSubmitButton must be a boolean",
            ),
            (
                json!({"type": "open", "question": "Q", "skipSubmitButton": true}),
                "Question 1: skipSubmitButton is only available for rating and single_choice questions",
            ),
            (
                json!({"type": "multiple_choice", "question": "Q", "choices": ["a"], "skipSubmitButton": true}),
                "Question 1: skipSubmitButton is only available for rating and single_choice questions",
            ),
            (
                json!({"type": "link", "question": "Q", "skipSubmitButton": true}),
                "Question 1: skipSubmitButton is only available for rating and single_choice questions",
            ),
            (
                json!({"type": "single_choice", "question": "Q", "choices": ["a", "Other"],
                       "hasOpenChoice": true, "skipSubmitButton": true}),
                "Question 1: skipSubmitButton cannot be used with hasOpenChoice",
            ),
        ] {
            let error = Questions::parse(with(question.clone())).unwrap_err();
            assert_eq!(
                (error.attr.as_deref(), error.detail.as_str()),
                (Some("questions"), message),
                "{question}"
            );
        }
    }

    #[test]
    fn a_stored_skip_submit_button_where_it_is_not_honoured_still_reads_as_stored() {
        let stored =
            json!([{"type": "open", "id": "o", "question": "Q", "skipSubmitButton": true}]);
        let read: Questions = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(serde_json::to_value(read).unwrap(), stored);
    }

    #[test]
    fn branching_must_point_at_existing_questions() {
        let with = |branching: Value| {
            json!([
                {"type": "single_choice", "question": "A", "choices": ["x", "y"], "branching": branching},
                {"type": "open", "question": "B"}
            ])
        };
        assert!(Questions::parse(with(json!({"type": "specific_question", "index": 1}))).is_ok());
        assert!(
            Questions::parse(with(
                json!({"type": "response_based", "responseValues": {"0": 1, "1": "end"}})
            ))
            .is_ok()
        );
        assert!(Questions::parse(with(json!({"type": "end"}))).is_ok());
        assert_eq!(
            error_of(with(json!({"type": "specific_question", "index": 5}))),
            "Question 1: branching target 5 does not point at another question"
        );
        assert!(
            Questions::parse(with(
                json!({"type": "response_based", "responseValues": {"0": 7}})
            ))
            .is_err()
        );
        assert!(Questions::parse(with(json!({"type": "jump"}))).is_err());
    }
}
