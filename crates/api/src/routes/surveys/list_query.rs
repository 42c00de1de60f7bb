//! The surveys list's query parameters, PostHog's `SurveyFilterSet` ones and its `search`:
//! `ids`, `type`, `archived`, `created_by`, `status` narrow the list (the domain's
//! [`SurveyFilter`]), `search` searches it. django-filter's messages where PostHog refuses a
//! value; where PostHog ignores one it cannot use (`archived=maybe`), Burrow refuses it, so no
//! filter a client sends is silently dropped. Other parameters (`limit`, `offset`, anything
//! else) are not the filters' to read.

use domain::ValidationError;
use domain::error::ValidationCode;
use domain::survey::{
    MAX_FILTERED_IDS, SearchTerm, SurveyFilter, SurveyId, SurveyStatus, SurveyType,
};
use domain::tenancy::UserId;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::fields::Fields;

/// What a list request asks for.
#[derive(Debug, PartialEq)]
pub(super) struct ListQuery {
    /// The filters; its `search` is left for the domain to put in a tier.
    pub filter: SurveyFilter,
    pub search: Option<SearchTerm>,
}

/// Reads the query as Django reads a form: each parameter's last value; a blank one (`?type=`)
/// narrows nothing, as django-filter skips blank values.
///
/// # Errors
/// Naming the parameter: `ids` not comma-separated UUIDs (`Enter a valid UUID.`) or more than
/// [`MAX_FILTERED_IDS`] of them; `type` or `status` not one of the choices; `archived` not a
/// boolean; `created_by` not an integer (`Enter a number.`) or beyond PostgreSQL's `integer`;
/// `search` over 200 characters.
pub(super) fn list_query(query: &str) -> Result<ListQuery, ValidationError> {
    let params: Map<String, Value> = url::form_urlencoded::parse(query.as_bytes())
        .filter(|(_, value)| !value.is_empty())
        .map(|(key, value)| (key.into_owned(), Value::String(value.into_owned())))
        .collect();
    let fields = Fields(&params);
    let text = |name: &str| fields.string(name).map(|patch| patch.value());
    let ids = text("ids")?.as_deref().map(survey_ids).transpose()?;
    let survey_type = text("type")?
        .map(|sent| SurveyType::parse(&sent).ok_or_else(|| not_a_choice("type", &sent)))
        .transpose()?;
    let archived = fields.boolean("archived")?.value();
    let created_by = text("created_by")?.as_deref().map(user_id).transpose()?;
    let status = text("status")?
        .map(|sent| SurveyStatus::parse(&sent).ok_or_else(|| not_a_choice("status", &sent)))
        .transpose()?;
    let search = match text("search")? {
        Some(sent) => SearchTerm::parse(&sent)?,
        None => None,
    };
    Ok(ListQuery {
        filter: SurveyFilter {
            ids,
            survey_type,
            archived,
            created_by,
            status,
            search: None,
        },
        search,
    })
}

/// django-filter's refusal of a value that is not one of a `ChoiceFilter`'s choices.
fn not_a_choice(attr: &str, sent: &str) -> ValidationError {
    ValidationError::field(
        attr,
        ValidationCode::InvalidChoice,
        format!("Select a valid choice. {sent} is not one of the available choices."),
    )
}

/// `ids`: comma-separated UUIDs, blanks between commas skipped, as PostHog's `UUIDInFilter`
/// reads them.
fn survey_ids(sent: &str) -> Result<Vec<SurveyId>, ValidationError> {
    let ids: Vec<&str> = sent
        .split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .collect();
    if ids.len() > MAX_FILTERED_IDS {
        return Err(ValidationError::field(
            "ids",
            ValidationCode::MaxLength,
            format!("Ensure this field has no more than {MAX_FILTERED_IDS} elements."),
        ));
    }
    ids.into_iter()
        .map(|id| {
            Uuid::parse_str(id)
                .map(SurveyId)
                .map_err(|_| ValidationError::invalid("ids", "Enter a valid UUID."))
        })
        .collect()
}

/// `created_by`: a user id, as django-filter's `NumberFilter` reads it, within the ids
/// PostgreSQL's `integer` holds.
fn user_id(sent: &str) -> Result<UserId, ValidationError> {
    let id: i64 = sent
        .trim()
        .parse()
        .map_err(|_| ValidationError::invalid("created_by", "Enter a number."))?;
    i32::try_from(id).map(UserId).map_err(|_| {
        let (code, detail) = if id < 0 {
            (
                ValidationCode::MinValue,
                format!(
                    "Ensure this value is greater than or equal to {}.",
                    i32::MIN
                ),
            )
        } else {
            (
                ValidationCode::MaxValue,
                format!("Ensure this value is less than or equal to {}.", i32::MAX),
            )
        };
        ValidationError::field("created_by", code, detail)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(query: &str) -> (Option<String>, String, &'static str) {
        let error = list_query(query).unwrap_err();
        (error.attr, error.detail, error.code.as_str())
    }

    fn refused(
        attr: &str,
        detail: &str,
        code: &'static str,
    ) -> (Option<String>, String, &'static str) {
        (Some(attr.to_owned()), detail.to_owned(), code)
    }

    #[test]
    fn no_parameter_and_blank_ones_keep_every_survey() {
        let everything = ListQuery {
            filter: SurveyFilter::default(),
            search: None,
        };
        assert_eq!(list_query("").unwrap(), everything);
        assert_eq!(
            list_query("ids=&type=&archived=&created_by=&status=&search=&limit=5&offset=2&order=x")
                .unwrap(),
            everything
        );
        assert_eq!(list_query("search=%20%20").unwrap(), everything);
    }

    #[test]
    fn each_parameter_is_read_into_the_filter_the_last_value_winning() {
        let (first, second) = (Uuid::now_v7(), Uuid::now_v7());
        let query = list_query(&format!(
            "ids={first},%20{},,{second}&type=widget&type=api&archived=True&created_by=7\
             &status=running&search=+net+promoter+",
            second.simple()
        ))
        .unwrap();
        assert_eq!(
            query,
            ListQuery {
                filter: SurveyFilter {
                    ids: Some(vec![SurveyId(first), SurveyId(second), SurveyId(second)]),
                    survey_type: Some(SurveyType::Api),
                    archived: Some(true),
                    created_by: Some(UserId(7)),
                    status: Some(SurveyStatus::Running),
                    search: None,
                },
                search: SearchTerm::parse("net promoter").unwrap(),
            }
        );
        assert_eq!(
            list_query("archived=0").unwrap().filter.archived,
            Some(false)
        );
    }

    #[test]
    fn values_of_the_wrong_kind_are_refused_naming_the_parameter() {
        assert_eq!(
            refusal("ids=0192f5a4-0000-7000-8000-0000000000aa,nope"),
            refused("ids", "Enter a valid UUID.", "invalid_input")
        );
        assert_eq!(
            refusal("type=product_tour"),
            refused(
                "type",
                "Select a valid choice. product_tour is not one of the available choices.",
                "invalid_choice"
            )
        );
        assert_eq!(
            refusal("status=archived"),
            refused(
                "status",
                "Select a valid choice. archived is not one of the available choices.",
                "invalid_choice"
            )
        );
        assert_eq!(
            refusal("archived=maybe"),
            refused("archived", "Must be a valid boolean.", "invalid_input")
        );
        assert_eq!(
            refusal("created_by=ada"),
            refused("created_by", "Enter a number.", "invalid_input")
        );
        assert_eq!(
            refusal("created_by=2147483648"),
            refused(
                "created_by",
                "Ensure this value is less than or equal to 2147483647.",
                "max_value"
            )
        );
        assert_eq!(
            refusal(&format!("search={}", "a".repeat(201))),
            refused(
                "search",
                "Search query must be 200 characters or fewer.",
                "invalid_input"
            )
        );
    }

    #[test]
    fn ids_are_bounded_before_they_are_read() {
        let id = Uuid::nil().to_string();
        let most = vec![id.as_str(); MAX_FILTERED_IDS].join(",");
        assert_eq!(
            list_query(&format!("ids={most}"))
                .unwrap()
                .filter
                .ids
                .map(|ids| ids.len()),
            Some(MAX_FILTERED_IDS)
        );
        assert_eq!(
            refusal(&format!("ids={most},x")),
            refused(
                "ids",
                "Ensure this field has no more than 1000 elements.",
                "max_length"
            )
        );
    }
}
