//! A CSV of persons for a static cohort, read as PostHog's cohort upload reads one
//! (`CohortSerializer._calculate_static_by_csv`), with its messages (`attr: csv`):
//!
//! - one column (at most one cell of the first row filled): distinct ids, the first row
//!   included, unless it is a header naming person ids (`person_id`, `person-id`, `Person .id`:
//!   the rest are UUIDs);
//! - several columns: the first row is a header, and the column read is the first naming person
//!   ids, else the first naming distinct ids (`distinct_id`, `distinct-id`); rows too short for
//!   it are skipped.
//!
//! Cells are trimmed and empty ones skipped. Where Burrow differs: email columns are refused
//! (Burrow finds persons by distinct id or UUID only); a one-column header naming distinct ids is
//! skipped (PostHog keeps it as an id no person has, but Burrow lists distinct ids not captured
//! yet, so it would become a member); a UTF-8 byte order mark is skipped; and a file may name at
//! most [`MAX_CSV_PERSONS`] ids.

use super::members::{MAX_CSV_PERSONS, NamedPersons, uuids};
use crate::error::ValidationError;
use crate::person::stored_distinct_id;

/// PostHog's messages (`CSVConfig.ErrorMessages`).
const EMPTY_FILE: &str =
    "CSV file is empty. Please upload a CSV file with at least one row of data.";
const NO_VALID_IDS: &str = "CSV file contains no valid person IDs, distinct IDs, or email \
                            addresses. Please ensure your file has data rows with person IDs, \
                            distinct IDs, or email addresses.";
const ENCODING_ERROR: &str =
    "CSV file encoding is not supported. Please save your file as UTF-8 and try again.";
const FORMAT_ERROR: &str =
    "CSV file format is invalid. Please check your file format and try again.";

const PERSON_ID_HEADERS: [&str; 3] = ["person_id", "person-id", "person .id"];
const DISTINCT_ID_HEADERS: [&str; 2] = ["distinct_id", "distinct-id"];
const EMAIL_HEADERS: [&str; 2] = ["email", "e-mail"];

/// What a column's header says its cells are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    PersonIds,
    DistinctIds,
    Emails,
}

impl Column {
    fn of(header: &str) -> Option<Self> {
        let header = header.trim().to_lowercase();
        let named = |names: &[&str]| names.contains(&header.as_str());
        if named(&PERSON_ID_HEADERS) {
            Some(Self::PersonIds)
        } else if named(&DISTINCT_ID_HEADERS) {
            Some(Self::DistinctIds)
        } else if named(&EMAIL_HEADERS) {
            Some(Self::Emails)
        } else {
            None
        }
    }
}

/// Reads an uploaded CSV into the persons it names, each once.
///
/// # Errors
/// PostHog's messages for an empty file, one that is not UTF-8 or not CSV, a header without
/// an id column, and no ids; Burrow's for email columns and past [`MAX_CSV_PERSONS`] ids.
pub fn read_csv(file: &[u8]) -> Result<NamedPersons, ValidationError> {
    let text = std::str::from_utf8(file).map_err(|_| invalid(ENCODING_ERROR))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rows = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .into_records()
        .map(|row| row.map_err(|_| invalid(FORMAT_ERROR)))
        // An empty line is no row, as Python's reader has it.
        .filter(|row| !matches!(row, Ok(cells) if cells.len() == 1 && cells[0].is_empty()));
    let first = rows.next().ok_or_else(|| invalid(EMPTY_FILE))??;
    let filled = first.iter().filter(|cell| !cell.trim().is_empty()).count();
    let (column, index, header) = if filled <= 1 {
        let header = first.get(0).and_then(Column::of);
        (header.unwrap_or(Column::DistinctIds), 0, header.is_some())
    } else {
        let (index, column) = [Column::PersonIds, Column::DistinctIds, Column::Emails]
            .into_iter()
            .find_map(|wanted| {
                let index = first
                    .iter()
                    .position(|cell| Column::of(cell) == Some(wanted))?;
                Some((index, wanted))
            })
            .ok_or_else(|| missing_id_column(&first))?;
        (column, index, true)
    };
    if column == Column::Emails {
        return Err(invalid(
            "Burrow finds persons by distinct id or person id (UUID) only: a CSV of email \
             addresses is not supported. Upload a column of distinct ids or person ids.",
        ));
    }
    let mut ids = Vec::new();
    let first = (!header).then_some(Ok(first));
    for row in first.into_iter().chain(rows) {
        let row = row?;
        let Some(cell) = row
            .get(index)
            .map(str::trim)
            .filter(|cell| !cell.is_empty())
        else {
            continue;
        };
        if ids.len() == MAX_CSV_PERSONS {
            return Err(invalid(format!(
                "A CSV may name at most {MAX_CSV_PERSONS} persons; upload the rest in another \
                 file."
            )));
        }
        ids.push(cell.to_owned());
    }
    if ids.is_empty() {
        return Err(invalid(NO_VALID_IDS));
    }
    Ok(match column {
        Column::PersonIds => NamedPersons::Uuids(uuids(ids.iter().map(String::as_str))),
        Column::DistinctIds | Column::Emails => NamedPersons::DistinctIds(distinct_ids(ids)),
    })
}

/// Each distinct id as stored, once, in the order first named.
fn distinct_ids(ids: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .map(|id| stored_distinct_id(id))
        .filter(|id| seen.insert(id.clone()))
        .collect()
}

/// PostHog's message for a header naming no id column, listing the filled headers as sent.
fn missing_id_column(header: &::csv::StringRecord) -> ValidationError {
    let columns: Vec<&str> = header.iter().filter(|h| !h.trim().is_empty()).collect();
    invalid(format!(
        "Multi-column CSV must contain at least one column with a supported ID header: \
         'person_id', 'Person .id' (PostHog export format), 'distinct_id', 'distinct-id', or \
         'email'. Found columns: {}",
        if columns.is_empty() {
            "none".to_owned()
        } else {
            columns.join(", ")
        }
    ))
}

fn invalid(detail: impl Into<String>) -> ValidationError {
    ValidationError::invalid("csv", detail)
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    fn distinct(ids: &[&str]) -> NamedPersons {
        NamedPersons::DistinctIds(ids.iter().map(|id| (*id).to_owned()).collect())
    }

    fn refused(file: &[u8]) -> String {
        let error = read_csv(file).expect_err("a refused file");
        assert_eq!(error.attr.as_deref(), Some("csv"));
        error.detail
    }

    #[test]
    fn one_column_is_distinct_ids_with_or_without_a_header() {
        assert_eq!(
            read_csv(b"alice\nbob\n").unwrap(),
            distinct(&["alice", "bob"])
        );
        assert_eq!(
            read_csv(b"distinct_id\r\nalice\r\n\r\n  bob  \r\nalice\r\n").unwrap(),
            distinct(&["alice", "bob"])
        );
        assert_eq!(
            read_csv(b"Distinct-ID\nalice").unwrap(),
            distinct(&["alice"])
        );
        // One filled cell makes one column, wherever the others are.
        assert_eq!(
            read_csv(b"alice,\nbob,,\n").unwrap(),
            distinct(&["alice", "bob"])
        );
        assert_eq!(
            read_csv("\u{feff}alice\n\"b,ob\"\n".as_bytes()).unwrap(),
            distinct(&["alice", "b,ob"])
        );
    }

    #[test]
    fn a_person_id_header_makes_the_column_uuids_others_left_out() {
        let a = Uuid::from_u128(1);
        let b = Uuid::from_u128(2);
        let file = format!("Person-ID\n{a}\nnot-a-uuid\n{b}\n{a}\n");
        assert_eq!(
            read_csv(file.as_bytes()).unwrap(),
            NamedPersons::Uuids(vec![a, b])
        );
        assert_eq!(
            read_csv(b"person_id\nnope\n").unwrap(),
            NamedPersons::Uuids(vec![])
        );
    }

    #[test]
    fn several_columns_read_the_person_id_column_else_the_distinct_id_one() {
        let a = Uuid::from_u128(1);
        let file = format!("email,distinct_id,Person .id\nx@y.z,alice,{a}\n");
        assert_eq!(
            read_csv(file.as_bytes()).unwrap(),
            NamedPersons::Uuids(vec![a])
        );
        assert_eq!(
            read_csv(b"email,distinct-id,plan\nx@y.z,alice,pro\nshort\n,,\ny@z,bob\n").unwrap(),
            distinct(&["alice", "bob"])
        );
    }

    #[test]
    fn files_without_ids_are_refused_with_posthogs_messages() {
        assert_eq!(refused(b""), EMPTY_FILE);
        assert_eq!(refused(b"\n\n"), EMPTY_FILE);
        assert_eq!(refused(b"distinct_id\n"), NO_VALID_IDS);
        assert_eq!(refused(b"distinct_id,plan\n,pro\n"), NO_VALID_IDS);
        assert_eq!(refused(b"\xff\xfe"), ENCODING_ERROR);
        assert_eq!(
            refused(b"name,plan\nada,pro\n"),
            "Multi-column CSV must contain at least one column with a supported ID header: \
             'person_id', 'Person .id' (PostHog export format), 'distinct_id', 'distinct-id', \
             or 'email'. Found columns: name, plan"
        );
    }

    #[test]
    fn email_columns_are_refused() {
        assert!(refused(b"email\nx@y.z\n").contains("email addresses is not supported"));
        assert!(refused(b"E-mail,plan\nx@y.z,pro\n").contains("not supported"));
    }

    #[test]
    fn distinct_ids_are_cut_as_stored_and_files_are_bounded() {
        let long = "x".repeat(250);
        let NamedPersons::DistinctIds(ids) = read_csv(long.as_bytes()).unwrap() else {
            panic!("distinct ids");
        };
        assert_eq!(ids, ["x".repeat(200)]);

        let at_the_limit: String = (0..MAX_CSV_PERSONS).map(|i| format!("p{i}\n")).collect();
        assert!(read_csv(at_the_limit.as_bytes()).is_ok());
        let past_it = format!("{at_the_limit}one-more\n");
        assert!(refused(past_it.as_bytes()).contains("at most 10000 persons"));
    }
}
