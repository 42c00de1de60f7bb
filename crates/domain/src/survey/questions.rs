//! Survey questions: HTML sanitizing, then shape and type checks (stricter than PostHog: types,
//! choices, rating scales and branching targets are checked), and ids for new questions. The
//! checks run on the JSON as sent with its texts sanitized, so each problem gets PostHog's
//! message and the rules judge what will be stored; what passes is read into typed
//! [`Question`]s.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::html::sanitize;
use super::question::{BRANCHING_TYPES, Question, QuestionType};
use crate::error::{ValidationCode, ValidationError};

/// The optional texts of a question, sanitized and checked to be strings.
const TEXT_FIELDS: [&str; 4] = [
    "description",
    "buttonText",
    "lowerBoundLabel",
    "upperBoundLabel",
];

/// A survey's checked list of questions: sanitized, with an `id` each. Stored lists were
/// checked when written, so reading one back (`Deserialize`) does not check it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Questions(Vec<Question>);

impl Questions {
    /// # Errors
    /// The first broken question rule, with `attr: questions`.
    pub fn parse(value: &Value) -> Result<Self, ValidationError> {
        parse_questions(value).map(Self)
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
    ValidationError::field("questions", ValidationCode::Invalid, detail)
}

/// Validates a `questions` value and reads it normalized: texts sanitized, and every question
/// without an `id` given a UUID string (given ids are kept).
///
/// # Errors
/// The first problem found, with PostHog's message where PostHog has one (`attr: questions`).
fn parse_questions(value: &Value) -> Result<Vec<Question>, ValidationError> {
    let Value::Array(items) = value else {
        return Err(invalid("Questions must be a list of objects"));
    };
    let mut questions = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Value::Object(question) = item else {
            return Err(invalid("Questions must be a list of objects"));
        };
        questions.push(parse_question(index + 1, question.clone())?);
    }
    for (index, question) in questions.iter().enumerate() {
        if let Some(branching) = question.get("branching").filter(|b| !b.is_null()) {
            check_branching(index, questions.len(), branching)?;
        }
    }
    // What the checks let through always reads; a failure here is a check missing above.
    questions
        .into_iter()
        .map(|question| Question::try_from(question).map_err(invalid))
        .collect()
}

fn parse_question(
    number: usize,
    mut question: Map<String, Value>,
) -> Result<Map<String, Value>, ValidationError> {
    sanitize_texts(&mut question);
    match question.get("question") {
        Some(Value::String(text)) if !text.is_empty() => {}
        Some(value) if is_truthy(value) => return Err(invalid("Question text must be a string")),
        _ => return Err(invalid("Question text is required")),
    }
    let Some(kind) = question
        .get("type")
        .and_then(Value::as_str)
        .and_then(QuestionType::parse)
    else {
        return Err(invalid(format!(
            "Question type must be one of: {}",
            QuestionType::ALL.map(QuestionType::as_str).join(", ")
        )));
    };
    for field in TEXT_FIELDS {
        match question.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::String(_)) => {}
            Some(_) => return Err(invalid(format!("Question {field} must be a string"))),
        }
    }
    match question.get("descriptionContentType") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "text" || t == "html" => {}
        Some(_) => {
            return Err(invalid(
                "Question descriptionContentType must be one of ['text', 'html']",
            ));
        }
    }
    check_choices(kind, &question)?;
    check_link(number, &question)?;
    if kind == QuestionType::Rating {
        check_rating(number, &question)?;
    }
    if question.get("id").is_none_or(Value::is_null) {
        question.insert("id".into(), Value::String(Uuid::new_v4().to_string()));
    }
    Ok(question)
}

/// Sanitizes, in place, every text of `question` an SDK may show as HTML (its text, the
/// optional texts and each string choice), before any rule judges it: the rules must see what
/// will be stored, since a choice that is only a `<script>` is empty once cleaned.
fn sanitize_texts(question: &mut Map<String, Value>) {
    for field in std::iter::once("question").chain(TEXT_FIELDS) {
        if let Some(Value::String(text)) = question.get_mut(field) {
            *text = sanitize(text);
        }
    }
    if let Some(Value::Array(choices)) = question.get_mut("choices") {
        for choice in choices {
            if let Value::String(text) = choice {
                *text = sanitize(text);
            }
        }
    }
}

fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn check_choices(kind: QuestionType, question: &Map<String, Value>) -> Result<(), ValidationError> {
    let needs_choices = matches!(
        kind,
        QuestionType::SingleChoice | QuestionType::MultipleChoice
    );
    let choices = match question.get("choices") {
        Some(Value::Array(choices)) if !choices.is_empty() => choices,
        Some(value) if is_truthy(value) => {
            return Err(invalid("Question choices must be a list of strings"));
        }
        _ if needs_choices => {
            return Err(invalid(format!(
                "Question choices must be a non-empty list for {} questions",
                kind.as_str()
            )));
        }
        _ => return Ok(()),
    };
    for choice in choices {
        let Value::String(text) = choice else {
            return Err(invalid("Question choices must be strings"));
        };
        if text.trim().is_empty() {
            return Err(invalid("Question choices cannot be empty"));
        }
    }
    Ok(())
}

fn check_link(number: usize, question: &Map<String, Value>) -> Result<(), ValidationError> {
    let link = match question.get("link") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::String(link)) if link.is_empty() => return Ok(()),
        Some(Value::String(link)) => link,
        Some(_) => return Err(invalid(format!("Question {number}: link must be a string"))),
    };
    let scheme = link
        .split_once(':')
        .map(|(scheme, _)| scheme.to_ascii_lowercase())
        .filter(|scheme| {
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
        });
    match scheme.as_deref() {
        Some("mailto") => {
            if !is_valid_mailto(link) {
                return Err(invalid(
                    "Invalid mailto link. Please enter a valid mailto link (e.g., mailto:example@domain.com).",
                ));
            }
        }
        Some("https") => {
            let rest = &link["https:".len()..];
            let host = rest
                .strip_prefix("//")
                .map(|after| after.split(['/', '?', '#']).next().unwrap_or(""))
                .unwrap_or("");
            if host.is_empty() {
                return Err(invalid(
                    "Invalid HTTPS URL. Please enter a valid HTTPS link.",
                ));
            }
        }
        _ => {
            return Err(invalid(
                "Link must be a URL with one of these schemes: [https, mailto]",
            ));
        }
    }
    Ok(())
}

/// `^mailto:[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$`, PostHog's rule.
fn is_valid_mailto(link: &str) -> bool {
    let Some(address) = link.strip_prefix("mailto:") else {
        return false;
    };
    let Some((local, domain)) = address.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._%+-".contains(c));
    let Some((host, tld)) = domain.rsplit_once('.') else {
        return false;
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c));
    let tld_ok = tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic());
    local_ok && host_ok && tld_ok
}

fn check_rating(number: usize, question: &Map<String, Value>) -> Result<(), ValidationError> {
    let display = match question.get("display") {
        None | Some(Value::Null) => "number",
        Some(Value::String(d)) if d == "number" || d == "emoji" => d.as_str(),
        Some(_) => {
            return Err(invalid(format!(
                "Question {number}: rating display must be one of: number, emoji"
            )));
        }
    };
    let scale = match question.get("scale") {
        None | Some(Value::Null) => return Ok(()),
        Some(scale) => scale.as_i64(),
    };
    match (display, scale) {
        ("emoji", Some(3 | 5)) => Ok(()),
        ("emoji", _) => Err(invalid(format!(
            "Question {number}: an emoji rating scale must be 3 or 5"
        ))),
        (_, Some(2..=10)) => Ok(()),
        _ => Err(invalid(format!(
            "Question {number}: a number rating scale must be a whole number from 2 to 10"
        ))),
    }
}

fn check_branching(index: usize, count: usize, branching: &Value) -> Result<(), ValidationError> {
    let number = index + 1;
    let kind = branching
        .get("type")
        .and_then(Value::as_str)
        .filter(|t| BRANCHING_TYPES.contains(t));
    let Some(kind) = kind else {
        return Err(invalid(format!(
            "Question {number}: branching type must be one of: {}",
            BRANCHING_TYPES.join(", ")
        )));
    };
    let target_exists = |target: &Value| {
        target
            .as_u64()
            .is_some_and(|t| (t as usize) < count && t as usize != index)
    };
    let missing = |target: &Value| {
        invalid(format!(
            "Question {number}: branching target {target} does not point at another question"
        ))
    };
    match kind {
        "specific_question" => {
            let target = branching.get("index").unwrap_or(&Value::Null);
            if !target_exists(target) {
                return Err(missing(target));
            }
        }
        "response_based" => {
            let Some(Value::Object(values)) = branching.get("responseValues") else {
                return Err(invalid(format!(
                    "Question {number}: response_based branching needs a responseValues object"
                )));
            };
            for target in values.values() {
                if target.as_str() != Some("end") && !target_exists(target) {
                    return Err(missing(target));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error_of(value: Value) -> String {
        parse_questions(&value).unwrap_err().detail
    }

    /// The questions `value` is read into, as the API shows them.
    fn parsed(value: Value) -> Value {
        serde_json::to_value(Questions::parse(&value).unwrap()).unwrap()
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
    fn what_passes_the_checks_comes_back_as_sent_with_its_unknown_keys() {
        let sent = json!([
            {"type": "rating", "id": "r", "question": "How likely?", "scale": 10,
             "display": "number", "isNpsQuestion": true,
             "branching": {"type": "response_based", "responseValues": {"detractors": 1, "promoters": "end"}}},
            {"type": "multiple_choice", "id": "m", "question": "Which?", "choices": ["a", "b"],
             "hasOpenChoice": true, "optional": "sometimes", "meta": {"nested": [1, 2.5]}}
        ]);
        assert_eq!(parsed(sent.clone()), sent);
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
        assert!(parse_questions(&q(json!("https://posthog.com/docs"))).is_ok());
        assert!(parse_questions(&q(json!("mailto:ada@example.com"))).is_ok());
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
        assert!(parse_questions(&q("number", json!(10))).is_ok());
        assert!(parse_questions(&q("emoji", json!(5))).is_ok());
        assert!(parse_questions(&q("emoji", json!(10))).is_err());
        assert!(parse_questions(&q("number", json!(11))).is_err());
        assert!(parse_questions(&q("stars", json!(5))).is_err());
    }

    #[test]
    fn branching_must_point_at_existing_questions() {
        let with = |branching: Value| {
            json!([
                {"type": "single_choice", "question": "A", "choices": ["x", "y"], "branching": branching},
                {"type": "open", "question": "B"}
            ])
        };
        assert!(parse_questions(&with(json!({"type": "specific_question", "index": 1}))).is_ok());
        assert!(
            parse_questions(&with(
                json!({"type": "response_based", "responseValues": {"0": 1, "1": "end"}})
            ))
            .is_ok()
        );
        assert!(parse_questions(&with(json!({"type": "end"}))).is_ok());
        assert_eq!(
            error_of(with(json!({"type": "specific_question", "index": 5}))),
            "Question 1: branching target 5 does not point at another question"
        );
        assert!(
            parse_questions(&with(
                json!({"type": "response_based", "responseValues": {"0": 7}})
            ))
            .is_err()
        );
        assert!(parse_questions(&with(json!({"type": "jump"}))).is_err());
    }
}
