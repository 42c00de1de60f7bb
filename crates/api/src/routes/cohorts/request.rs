//! A cohort request body read into [`CohortWrite`] — also its schema in the OpenAPI document —
//! and from there into the domain's command. What Burrow does not evaluate (static lists,
//! queries, the legacy `groups`) is refused here rather than stored and ignored.

use domain::ValidationError;
use domain::cohort::{CohortChanges, CohortFilters, NewCohort};
use domain::patch::Patch;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::fields::{Fields, non_null};

/// Longest cohort name, as PostHog's column.
const MAX_NAME_CHARS: usize = 400;
/// Longest description Burrow keeps.
const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// A cohort to create (`filters` required) or change (any subset; `deleted: true` deletes).
#[derive(ToSchema)]
pub(crate) struct CohortWrite {
    #[schema(nullable = false, max_length = 400)]
    name: Option<String>,
    #[schema(nullable = false, max_length = 1000)]
    description: Option<String>,
    /// `{"properties": {"type": "AND"|"OR", "values": [person filters, cohort filters, groups]}}`.
    #[schema(value_type = Object, required = false)]
    filters: Option<CohortFilters>,
    /// PATCH only: `true` deletes the cohort (soft).
    #[schema(nullable = false)]
    deleted: Option<bool>,
}

impl CohortWrite {
    fn read(body: &Map<String, Value>, patch: bool) -> Result<Self, ValidationError> {
        refuse_unevaluated(body)?;
        let fields = Fields(body);
        let name = non_null(fields.bounded_string("name", MAX_NAME_CHARS)?, "name")?;
        let description = non_null(
            fields.bounded_string("description", MAX_DESCRIPTION_CHARS)?,
            "description",
        )?;
        let filters = match fields.raw("filters") {
            Patch::Value(filters) => Some(CohortFilters::parse(filters)?),
            Patch::Null if patch => return Err(crate::fields::not_null("filters")),
            Patch::Absent if !patch => return Err(ValidationError::required("filters")),
            Patch::Null | Patch::Absent => None,
        };
        let deleted = if patch {
            non_null(fields.boolean("deleted")?, "deleted")?
        } else {
            None
        };
        Ok(Self {
            name,
            description,
            filters,
            deleted,
        })
    }
}

/// Static cohorts (lists of persons), cohorts from a query, and PostHog's legacy `groups` are not
/// what Burrow evaluates: refused, each naming its field.
fn refuse_unevaluated(body: &Map<String, Value>) -> Result<(), ValidationError> {
    if body
        .get("is_static")
        .is_some_and(|value| value == &Value::Bool(true))
    {
        return Err(ValidationError::invalid(
            "is_static",
            "Burrow evaluates cohorts of person properties only: static cohorts (lists of \
             persons) are not supported.",
        ));
    }
    if body.get("query").is_some_and(|value| !value.is_null()) {
        return Err(ValidationError::invalid(
            "query",
            "Burrow evaluates cohorts of person properties only: define the cohort with filters.",
        ));
    }
    if body.get("groups").is_some_and(|groups| {
        !matches!(groups, Value::Null) && groups.as_array().is_none_or(|g| !g.is_empty())
    }) {
        return Err(ValidationError::invalid(
            "groups",
            "Define the cohort with filters (PostHog's legacy groups are not read).",
        ));
    }
    Ok(())
}

/// Reads a create body: `filters` required.
///
/// # Errors
/// The first invalid field.
pub(super) fn new_cohort(body: Map<String, Value>) -> Result<NewCohort, ValidationError> {
    let write = CohortWrite::read(&body, false)?;
    Ok(NewCohort {
        name: write.name.unwrap_or_default(),
        description: write.description.unwrap_or_default(),
        filters: write
            .filters
            .ok_or_else(|| ValidationError::required("filters"))?,
    })
}

/// Reads a PATCH body; no field may be `null`.
///
/// # Errors
/// The first invalid field.
pub(super) fn cohort_changes(body: Map<String, Value>) -> Result<CohortChanges, ValidationError> {
    let write = CohortWrite::read(&body, true)?;
    Ok(CohortChanges {
        name: write.name,
        description: write.description,
        filters: write.filters,
        deleted: write.deleted,
    })
}
