//! A static cohort's members: the persons a write names (by distinct id or by person UUID), how
//! many one request, one cohort and one project may list, and a member as listed back.
//!
//! Burrow lists members by distinct id, one person per distinct id (`person_properties`), so a
//! distinct id not captured yet may be listed: it is a member from the first capture on.

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::{ValidationCode, ValidationError};

/// Most person UUIDs one `add_persons_to_static_cohort` (or `_create_static_person_ids`) may
/// name: PostHog's `DEFAULT_COHORT_INSERT_BATCH_SIZE`, past which it answers `List size exceeds
/// limit`.
pub const MAX_PERSONS_PER_REQUEST: usize = 1_000;
/// Most ids one CSV upload may name (the API's 1 MiB body holds about that many UUIDs).
pub const MAX_CSV_PERSONS: usize = 10_000;
/// Most distinct ids one static cohort may list.
pub const MAX_COHORT_MEMBERS: u64 = 50_000;
/// Most distinct ids a project's static cohorts may list together: what one tenant may store.
pub const MAX_PROJECT_MEMBERS: u64 = 100_000;
/// The properties (as JSON text) one page of a cohort's persons holds at most, its last person
/// passing it: capture merges `$set`s into a person without bound, so a page of them is bounded
/// by their size too, and ends early past it.
pub const PAGE_PERSON_BYTES: usize = 2 * 1024 * 1024;

/// The persons a write names, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamedPersons {
    /// Distinct ids as stored (`person::stored_distinct_id`), listed whether captured yet or not.
    DistinctIds(Vec<String>),
    /// Person UUIDs; those the project has no person with are skipped, as PostHog skips them.
    Uuids(Vec<Uuid>),
}

/// How many distinct ids are listed: by one cohort, and by all the project's cohorts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemberCounts {
    pub cohort: u64,
    pub project: u64,
}

/// The cohort's count once `added` more are listed, checked against [`MAX_COHORT_MEMBERS`] and
/// [`MAX_PROJECT_MEMBERS`] (`before`: the counts before them).
///
/// # Errors
/// `invalid_input` naming the bound passed.
pub(super) fn check_bounds(before: MemberCounts, added: u64) -> Result<u64, ValidationError> {
    let cohort = before.cohort.saturating_add(added);
    if cohort > MAX_COHORT_MEMBERS {
        return Err(ValidationError::invalid_input(format!(
            "A static cohort may list at most {MAX_COHORT_MEMBERS} persons; with these it would \
             list {cohort}."
        )));
    }
    let project = before.project.saturating_add(added);
    if project > MAX_PROJECT_MEMBERS {
        return Err(ValidationError::invalid_input(format!(
            "A project's static cohorts may list at most {MAX_PROJECT_MEMBERS} persons \
             together; with these they would list {project}."
        )));
    }
    Ok(cohort)
}

/// A member who has been captured: PostHog's person, who has one distinct id in Burrow.
#[derive(Debug, Clone, PartialEq)]
pub struct CohortPerson {
    pub uuid: Uuid,
    pub distinct_id: String,
    pub properties: Map<String, Value>,
}

/// The properties PostHog names a person by, in its order (`PERSON_DEFAULT_DISPLAY_NAME_PROPERTIES`).
const DISPLAY_NAME_PROPERTIES: [&str; 8] = [
    "email", "Email", "$email", "name", "Name", "username", "Username", "UserName",
];

impl CohortPerson {
    /// PostHog's `name`: the first of its display name properties that is set (not empty,
    /// zero or false), as text; else the distinct id.
    pub fn display_name(&self) -> String {
        DISPLAY_NAME_PROPERTIES
            .iter()
            .filter_map(|key| self.properties.get(*key))
            .find_map(|value| match value {
                Value::Null | Value::Bool(false) => None,
                Value::String(text) if text.is_empty() => None,
                Value::String(text) => Some(text.clone()),
                Value::Number(number) if number.as_f64() == Some(0.0) => None,
                Value::Array(items) if items.is_empty() => None,
                Value::Object(fields) if fields.is_empty() => None,
                other => Some(other.to_string()),
            })
            .unwrap_or_else(|| self.distinct_id.clone())
    }
}

/// `person_ids` of `add_persons_to_static_cohort`, with PostHog's checks and messages: a list,
/// not empty, of at most [`MAX_PERSONS_PER_REQUEST`]. Entries that are not UUIDs name no person
/// and are left out (so are repeats).
///
/// # Errors
/// `person_ids must be a list`, `person_ids cannot be empty`, `List size exceeds limit`.
pub fn person_ids(value: Option<&Value>) -> Result<Vec<Uuid>, ValidationError> {
    let Some(Value::Array(items)) = value else {
        return Err(ValidationError::invalid_input("person_ids must be a list"));
    };
    if items.is_empty() {
        return Err(ValidationError::invalid_input("person_ids cannot be empty"));
    }
    if items.len() > MAX_PERSONS_PER_REQUEST {
        return Err(ValidationError::invalid_input("List size exceeds limit"));
    }
    Ok(uuids(items.iter().filter_map(Value::as_str)))
}

/// `_create_static_person_ids` of a create: PostHog's `ListField` of strings (numbers are taken
/// as their text), person UUIDs, at most [`MAX_PERSONS_PER_REQUEST`]. Absent, it is PostHog's
/// default, `[]`: a static cohort created without a CSV or ids starts empty.
///
/// # Errors
/// DRF's messages for a field that is not a list of strings; Burrow's past the bound.
pub fn create_person_ids(value: &Value) -> Result<Vec<Uuid>, ValidationError> {
    const FIELD: &str = "_create_static_person_ids";
    let items = match value {
        Value::Array(items) => items,
        Value::Null => {
            return Err(ValidationError::field(
                FIELD,
                ValidationCode::Null,
                "This field may not be null.",
            ));
        }
        other => {
            let sent = match other {
                Value::Object(_) => "dict",
                Value::String(_) => "str",
                Value::Bool(_) => "bool",
                _ => "int",
            };
            return Err(ValidationError::invalid(
                FIELD,
                format!("Expected a list of items but got type \"{sent}\"."),
            ));
        }
    };
    if items.len() > MAX_PERSONS_PER_REQUEST {
        return Err(ValidationError::invalid(
            FIELD,
            format!(
                "A static cohort may be created with at most {MAX_PERSONS_PER_REQUEST} person ids."
            ),
        ));
    }
    if items
        .iter()
        .any(|item| !matches!(item, Value::String(_) | Value::Number(_)))
    {
        return Err(ValidationError::invalid(FIELD, "Not a valid string."));
    }
    Ok(uuids(items.iter().filter_map(Value::as_str)))
}

/// `person_id` of `remove_person_from_static_cohort`, with PostHog's checks and messages.
///
/// # Errors
/// `person_id is required` (absent or falsy), `person_id must be a string`, `person_id must be
/// a valid UUID`.
pub fn person_id(value: Option<&Value>) -> Result<Uuid, ValidationError> {
    let falsy = match value {
        None | Some(Value::Null | Value::Bool(false)) => true,
        Some(Value::String(text)) => text.is_empty(),
        Some(Value::Number(number)) => number.as_f64() == Some(0.0),
        Some(Value::Array(items)) => items.is_empty(),
        Some(Value::Object(fields)) => fields.is_empty(),
        Some(Value::Bool(true)) => false,
    };
    if falsy {
        return Err(ValidationError::invalid_input("person_id is required"));
    }
    let Some(Value::String(text)) = value else {
        return Err(ValidationError::invalid_input("person_id must be a string"));
    };
    Uuid::parse_str(text)
        .map_err(|_| ValidationError::invalid_input("person_id must be a valid UUID"))
}

/// The UUIDs among `texts`, each once, in the order first named.
pub(super) fn uuids<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<Uuid> {
    let mut seen = std::collections::HashSet::new();
    texts
        .filter_map(|text| Uuid::parse_str(text.trim()).ok())
        .filter(|uuid| seen.insert(*uuid))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn detail(error: ValidationError) -> (Option<String>, String) {
        (error.attr, error.detail)
    }

    #[test]
    fn person_ids_are_refused_with_posthogs_messages() {
        let too_many: Vec<Value> = (0..=MAX_PERSONS_PER_REQUEST)
            .map(|i| json!(Uuid::from_u128(i as u128).to_string()))
            .collect();
        for (sent, message) in [
            (None, "person_ids must be a list"),
            (Some(json!("x")), "person_ids must be a list"),
            (Some(json!([])), "person_ids cannot be empty"),
            (Some(Value::Array(too_many)), "List size exceeds limit"),
        ] {
            let error = person_ids(sent.as_ref()).expect_err(message);
            assert_eq!(detail(error), (None, message.to_owned()));
        }
    }

    #[test]
    fn person_ids_keep_each_uuid_once_and_leave_out_what_is_not_one() {
        let a = Uuid::from_u128(1);
        let b = Uuid::from_u128(2);
        let sent = json!([
            a.to_string(),
            "nope",
            7,
            b.simple().to_string(),
            a.to_string()
        ]);
        assert_eq!(person_ids(Some(&sent)).unwrap(), [a, b]);
        assert_eq!(
            person_ids(Some(&json!(["nope"]))).unwrap(),
            Vec::<Uuid>::new()
        );
    }

    #[test]
    fn a_person_id_is_required_a_string_and_a_uuid() {
        for (sent, message) in [
            (None, "person_id is required"),
            (Some(json!(null)), "person_id is required"),
            (Some(json!("")), "person_id is required"),
            (Some(json!(0)), "person_id is required"),
            (Some(json!(12)), "person_id must be a string"),
            (Some(json!(["x"])), "person_id must be a string"),
            (Some(json!("not-a-uuid")), "person_id must be a valid UUID"),
        ] {
            let error = person_id(sent.as_ref()).expect_err(message);
            assert_eq!(detail(error), (None, message.to_owned()), "{sent:?}");
        }
        let uuid = Uuid::from_u128(7);
        assert_eq!(person_id(Some(&json!(uuid.to_string()))).unwrap(), uuid);
    }

    #[test]
    fn create_person_ids_take_a_bounded_list_of_strings() {
        assert_eq!(create_person_ids(&json!([])).unwrap(), Vec::<Uuid>::new());
        let error = create_person_ids(&json!("x")).unwrap_err();
        assert_eq!(
            detail(error),
            (
                Some("_create_static_person_ids".into()),
                "Expected a list of items but got type \"str\".".into()
            )
        );
        let error = create_person_ids(&json!([true])).unwrap_err();
        assert_eq!(error.detail, "Not a valid string.");
        assert_eq!(create_person_ids(&json!([1])).unwrap(), Vec::<Uuid>::new());
        let error = create_person_ids(&json!(null)).unwrap_err();
        assert_eq!(error.code, ValidationCode::Null);
        let too_many = Value::Array(vec![json!("x"); MAX_PERSONS_PER_REQUEST + 1]);
        assert!(create_person_ids(&too_many).is_err());
    }

    #[test]
    fn members_are_bounded_per_cohort_then_per_project() {
        let before = MemberCounts {
            cohort: MAX_COHORT_MEMBERS - 2,
            project: MAX_COHORT_MEMBERS - 2,
        };
        assert_eq!(check_bounds(before, 2), Ok(MAX_COHORT_MEMBERS));
        let error = check_bounds(before, 3).unwrap_err();
        assert!(
            error
                .detail
                .starts_with("A static cohort may list at most 50000"),
            "{error}"
        );
        let crowded = MemberCounts {
            cohort: 0,
            project: MAX_PROJECT_MEMBERS,
        };
        let error = check_bounds(crowded, 1).unwrap_err();
        assert!(error.detail.contains("would list 100001"), "{error}");
        assert_eq!(check_bounds(crowded, 0), Ok(0));
    }

    #[test]
    fn a_person_is_named_by_the_first_display_property_set_else_the_distinct_id() {
        let person = |properties: Value| CohortPerson {
            uuid: Uuid::nil(),
            distinct_id: "d-1".into(),
            properties: properties.as_object().unwrap().clone(),
        };
        assert_eq!(person(json!({})).display_name(), "d-1");
        assert_eq!(
            person(json!({"email": "", "name": "Ada", "username": "ada"})).display_name(),
            "Ada"
        );
        assert_eq!(person(json!({"Email": "a@b.c"})).display_name(), "a@b.c");
        assert_eq!(person(json!({"name": 42})).display_name(), "42");
        assert_eq!(person(json!({"name": false})).display_name(), "d-1");
    }
}
