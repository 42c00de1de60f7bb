//! A survey's responses as a file: CSV (RFC 4180, one column per question, headed by its text)
//! or JSON Lines. Rendered a batch at a time, so an export of any size takes the memory of one
//! batch.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::SurveyResponse;
use crate::survey::Questions;

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Csv,
    /// One JSON object a line.
    Jsonl,
}

impl ExportFormat {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "csv" => Some(Self::Csv),
            "jsonl" => Some(Self::Jsonl),
            _ => None,
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            Self::Csv => "text/csv; charset=utf-8",
            Self::Jsonl => "application/jsonl; charset=utf-8",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Jsonl => "jsonl",
        }
    }
}

/// Where a batch of an export ends: the next batch holds the responses sorted after it (newest
/// first, then by uuid descending, as the responses API lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportCursor {
    pub timestamp: DateTime<Utc>,
    pub uuid: Uuid,
}

impl From<&SurveyResponse> for ExportCursor {
    fn from(response: &SurveyResponse) -> Self {
        Self {
            timestamp: response.timestamp,
            uuid: response.uuid,
        }
    }
}

/// The fixed columns before the questions'.
const FIXED_COLUMNS: [&str; 9] = [
    "uuid",
    "submission_id",
    "distinct_id",
    "timestamp",
    "completed",
    "archived",
    "partially_completed",
    "iteration",
    "language",
];

/// Renders responses of one survey in one format.
#[derive(Debug, Clone)]
pub struct ExportRenderer {
    format: ExportFormat,
    /// The survey's questions, in order: id and text.
    questions: Vec<(String, String)>,
}

impl ExportRenderer {
    pub fn new(format: ExportFormat, questions: Option<&Questions>) -> Self {
        let questions = questions
            .into_iter()
            .flat_map(Questions::iter)
            .map(|question| {
                let base = question.base();
                (base.id.clone().unwrap_or_default(), base.question.clone())
            })
            .collect();
        Self { format, questions }
    }

    /// What the file starts with: the CSV header row (nothing for JSON Lines).
    pub fn header(&self) -> Vec<u8> {
        match self.format {
            ExportFormat::Csv => {
                let cells = FIXED_COLUMNS
                    .iter()
                    .map(|column| (*column).to_owned())
                    .chain(self.questions.iter().map(|(_, text)| text.clone()));
                csv_record(cells)
            }
            ExportFormat::Jsonl => Vec::new(),
        }
    }

    /// The rows of `responses` (answers keyed by question id).
    pub fn rows(&self, responses: &[SurveyResponse]) -> Vec<u8> {
        let mut out = Vec::new();
        for response in responses {
            match self.format {
                ExportFormat::Csv => out.extend(csv_record(self.cells(response))),
                ExportFormat::Jsonl => {
                    let line = json!({
                        "uuid": response.uuid,
                        "submission_id": response.submission_id,
                        "distinct_id": response.distinct_id,
                        "timestamp": time(response.timestamp),
                        "completed": response.completed,
                        "archived": response.archived,
                        "partially_completed": response.partially_completed,
                        "iteration": response.context.iteration,
                        "language": response.context.language,
                        "answers": Value::Object(response.answers.clone()),
                    });
                    serde_json::to_writer(&mut out, &line).expect("JSON serializes");
                    out.push(b'\n');
                }
            }
        }
        out
    }

    fn cells(&self, response: &SurveyResponse) -> Vec<String> {
        let fixed = [
            response.uuid.to_string(),
            response.submission_id.clone().unwrap_or_default(),
            response.distinct_id.clone(),
            time(response.timestamp),
            response
                .completed
                .map(|completed| completed.to_string())
                .unwrap_or_default(),
            response.archived.to_string(),
            response.partially_completed.to_string(),
            response.context.iteration.clone().unwrap_or_default(),
            response.context.language.clone().unwrap_or_default(),
        ];
        fixed
            .into_iter()
            .chain(
                self.questions
                    .iter()
                    .map(|(id, _)| answer_text(&response.answers, id)),
            )
            .collect()
    }
}

/// An answer as one cell: text as is, numbers and booleans as written, a multiple choice's
/// options joined with ", " (as PostHog's export joins them), nothing when unanswered.
fn answer_text(answers: &Map<String, Value>, question: &str) -> String {
    match answers.get(question) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

/// One CSV record (RFC 4180: CRLF, fields quoted when needed), each cell made safe from
/// spreadsheet formulas first.
fn csv_record(cells: impl IntoIterator<Item = String>) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    writer
        .write_record(cells.into_iter().map(|cell| formula_safe(&cell)))
        .expect("writing to memory");
    writer.into_inner().expect("flushing to memory")
}

/// A cell a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, or a tab or
/// carriage return) gets a leading `'`, which spreadsheets show as text (OWASP's advice).
fn formula_safe(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::survey_response::ResponseContext;

    fn response(answers: Value) -> SurveyResponse {
        SurveyResponse {
            uuid: Uuid::from_u128(7),
            distinct_id: "ada".into(),
            submission_id: Some("sub".into()),
            timestamp: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
            answers: answers.as_object().unwrap().clone(),
            completed: Some(true),
            partially_completed: false,
            context: ResponseContext {
                iteration: Some("2".into()),
                ..ResponseContext::default()
            },
            archived: false,
        }
    }

    fn questions() -> Questions {
        Questions::parse(json!([
            {"id": "q1", "type": "open", "question": "What, \"exactly\"?"},
            {"id": "q2", "type": "multiple_choice", "question": "Which?", "choices": ["a", "b"]},
        ]))
        .unwrap()
    }

    #[test]
    fn csv_has_a_header_of_question_texts_and_quotes_what_needs_quoting() {
        let export = ExportRenderer::new(ExportFormat::Csv, Some(&questions()));
        let text = String::from_utf8(export.header()).unwrap();
        assert_eq!(
            text,
            "uuid,submission_id,distinct_id,timestamp,completed,archived,partially_completed,iteration,language,\"What, \"\"exactly\"\"?\",Which?\r\n"
        );
        let rows = export.rows(&[response(
            json!({"q1": "line one\nline two", "q2": ["a", "b"]}),
        )]);
        assert_eq!(
            String::from_utf8(rows).unwrap(),
            "00000000-0000-0000-0000-000000000007,sub,ada,2027-01-15T08:00:00.000Z,true,false,false,2,,\"line one\nline two\",\"a, b\"\r\n"
        );
    }

    #[test]
    fn cells_that_spreadsheets_would_run_are_escaped() {
        let export = ExportRenderer::new(ExportFormat::Csv, Some(&questions()));
        for (answer, cell) in [
            ("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
            ("+1", "'+1"),
            ("-1", "'-1"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("plain", "plain"),
        ] {
            let row = String::from_utf8(export.rows(&[response(json!({"q1": answer}))])).unwrap();
            assert!(row.contains(&format!(",{cell},")), "{answer}: {row}");
        }
    }

    #[test]
    fn jsonl_is_one_object_a_line_with_answers_by_question_id() {
        let export = ExportRenderer::new(ExportFormat::Jsonl, Some(&questions()));
        assert!(export.header().is_empty());
        let rows = export.rows(&[response(json!({"q1": "x"})), response(json!({}))]);
        let lines: Vec<Value> = String::from_utf8(rows)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["answers"], json!({"q1": "x"}));
        assert_eq!(lines[0]["completed"], true);
        assert_eq!(
            (
                &lines[0]["partially_completed"],
                &lines[0]["iteration"],
                &lines[0]["language"]
            ),
            (&json!(false), &json!("2"), &Value::Null)
        );
    }
}
