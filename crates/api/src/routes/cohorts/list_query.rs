//! The cohorts list's query parameters, PostHog's `CohortViewSet` ones: `type`,
//! `created_by_id`, `search` and `hide_behavioral_cohorts` narrow the list (the domain's
//! [`CohortListFilter`]), `basic` slims what each cohort shows. Where PostHog ignores a value
//! it cannot use, Burrow refuses it, so no filter a client sends is silently dropped.

use domain::ValidationError;
use domain::cohort::{CohortListFilter, CohortSearch};
use domain::tenancy::UserId;
use serde_json::{Map, Value};

use crate::fields::Fields;

/// What a list request asks for.
#[derive(Debug, PartialEq)]
pub(super) struct ListQuery {
    pub filter: CohortListFilter,
    /// PostHog's `basic=true`: each cohort without `filters`, `query` and `groups`.
    pub basic: bool,
}

/// Reads the query as DRF reads a form: each parameter's last value, with DRF's messages for a
/// value of the wrong type. A blank parameter (`?search=`) narrows nothing, as Django's filters
/// skip blank values.
///
/// # Errors
/// `type` other than `static`/`dynamic`, `created_by_id` not an integer (or beyond the ids
/// PostgreSQL's `integer` holds), `search` over 200 characters, `hide_behavioral_cohorts` or
/// `basic` not a boolean: each `invalid_input` (or DRF's `min_value`/`max_value`) naming it.
pub(super) fn list_query(query: &str) -> Result<ListQuery, ValidationError> {
    let params: Map<String, Value> = url::form_urlencoded::parse(query.as_bytes())
        .filter(|(_, value)| !value.is_empty())
        .map(|(key, value)| (key.into_owned(), Value::String(value.into_owned())))
        .collect();
    let fields = Fields(&params);
    let is_static = match fields.string("type")?.value().as_deref() {
        None => None,
        Some("static") => Some(true),
        Some("dynamic") => Some(false),
        Some(other) => {
            return Err(ValidationError::invalid(
                "type",
                format!("\"{other}\" is not a valid choice: use \"static\" or \"dynamic\"."),
            ));
        }
    };
    let created_by = fields
        .bounded_integer("created_by_id", i32::MIN.into(), i32::MAX.into())?
        .value()
        .map(UserId);
    let search = match fields.string("search")?.value() {
        Some(text) => CohortSearch::parse(&text)?,
        None => None,
    };
    // Checked, and otherwise without effect: Burrow refuses behavioral filters, so it stores no
    // behavioral cohort to hide.
    fields.boolean("hide_behavioral_cohorts")?;
    let basic = fields.boolean("basic")?.value().unwrap_or(false);
    Ok(ListQuery {
        filter: CohortListFilter {
            is_static,
            created_by,
            search,
        },
        basic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(query: &str) -> (Option<String>, String) {
        let error = list_query(query).unwrap_err();
        (error.attr, error.detail)
    }

    #[test]
    fn no_parameter_keeps_every_cohort_in_full() {
        let everything = ListQuery {
            filter: CohortListFilter::default(),
            basic: false,
        };
        assert_eq!(list_query("").unwrap(), everything);
        // Blank values, and parameters the list does not read, narrow nothing.
        assert_eq!(
            list_query("type=&search=&created_by_id=&basic=&limit=5&order=name").unwrap(),
            everything
        );
    }

    #[test]
    fn each_parameter_is_read_into_the_filter_the_last_value_winning() {
        let query = list_query(
            "type=dynamic&type=static&created_by_id=7&search=50%25+off&hide_behavioral_cohorts=true&basic=1",
        )
        .unwrap();
        assert_eq!(
            query,
            ListQuery {
                filter: CohortListFilter {
                    is_static: Some(true),
                    created_by: Some(UserId(7)),
                    search: CohortSearch::parse("50% off").unwrap(),
                },
                basic: true,
            }
        );
        assert_eq!(
            list_query("type=dynamic&basic=false")
                .unwrap()
                .filter
                .is_static,
            Some(false)
        );
    }

    #[test]
    fn values_of_the_wrong_kind_are_refused_naming_the_parameter() {
        let refused = |attr: &str, detail: &str| (Some(attr.to_owned()), detail.to_owned());
        assert_eq!(
            refusal("type=behavioral"),
            refused(
                "type",
                "\"behavioral\" is not a valid choice: use \"static\" or \"dynamic\"."
            )
        );
        assert_eq!(
            refusal("created_by_id=ada"),
            refused("created_by_id", "A valid integer is required.")
        );
        assert_eq!(
            refusal("created_by_id=2147483648"),
            refused(
                "created_by_id",
                "Ensure this value is less than or equal to 2147483647."
            )
        );
        assert_eq!(
            refusal(&format!("search={}", "a".repeat(201))),
            refused("search", "Search query must be 200 characters or fewer.")
        );
        for parameter in ["hide_behavioral_cohorts", "basic"] {
            assert_eq!(
                refusal(&format!("{parameter}=maybe")),
                refused(parameter, "Must be a valid boolean.")
            );
        }
    }
}
