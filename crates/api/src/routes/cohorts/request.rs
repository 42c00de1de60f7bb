//! A cohort request body — a JSON object, or a `multipart/form-data` form carrying a CSV of
//! persons — read into [`CohortWrite`] (also its schema in the OpenAPI document) and from there
//! into the domain's command and the persons a static cohort lists. What Burrow does not
//! evaluate (queries, the legacy `groups`) is refused here rather than stored and ignored.

use domain::ValidationError;
use domain::cohort::{
    CohortChanges, CohortFilters, NamedPersons, NewCohort, create_person_ids, read_csv,
};
use domain::error::ValidationCode;
use domain::patch::Patch;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use uuid::Uuid;

use crate::extract::{Form, JsonOrForm};
use crate::fields::{Fields, non_null};

/// Longest cohort name, as PostHog's column.
const MAX_NAME_CHARS: usize = 400;
/// Longest description Burrow keeps.
const MAX_DESCRIPTION_CHARS: usize = 1_000;
/// The form fields DRF reads as JSON (its `JSONField`s parse a form's text).
const JSON_FIELDS: [&str; 3] = ["filters", "groups", "query"];

/// A cohort to create (`filters` required unless static) or change (any subset; `deleted: true`
/// deletes).
#[derive(ToSchema)]
pub(crate) struct CohortWrite {
    #[schema(nullable = false, max_length = 400)]
    name: Option<String>,
    #[schema(nullable = false, max_length = 1000)]
    description: Option<String>,
    /// `{"properties": {"type": "AND"|"OR", "values": [person filters, cohort filters, groups]}}`;
    /// a static cohort's holds no filter.
    #[schema(value_type = Object, required = false)]
    filters: Option<CohortFilters>,
    /// `true` makes a static cohort, a list of persons; fixed once created (a PATCH may only
    /// repeat it).
    #[schema(nullable = false)]
    is_static: Option<bool>,
    /// Create only: the UUIDs of the persons a static cohort starts with (at most 1,000).
    #[serde(rename = "_create_static_person_ids")]
    #[schema(nullable = false)]
    create_static_person_ids: Option<Vec<Uuid>>,
    /// PATCH only: `true` deletes the cohort (soft).
    #[schema(nullable = false)]
    deleted: Option<bool>,
}

/// The persons a static cohort is to list (none for a dynamic one, whose CSV PostHog ignores).
type Listed = Vec<NamedPersons>;

impl CohortWrite {
    fn read(body: &Map<String, Value>, patch: bool) -> Result<Self, ValidationError> {
        refuse_unevaluated(body)?;
        let fields = Fields(body);
        let name = non_null(fields.bounded_string("name", MAX_NAME_CHARS)?, "name")?;
        let description = non_null(
            fields.bounded_string("description", MAX_DESCRIPTION_CHARS)?,
            "description",
        )?;
        let is_static = non_null(fields.boolean("is_static")?, "is_static")?;
        let filters = match fields.raw("filters") {
            Patch::Value(filters) => Some(CohortFilters::parse(filters)?),
            Patch::Null if patch => return Err(crate::fields::not_null("filters")),
            Patch::Absent if !patch && is_static != Some(true) => {
                return Err(ValidationError::required("filters"));
            }
            Patch::Null | Patch::Absent => None,
        };
        let create_static_person_ids = match body.get("_create_static_person_ids") {
            Some(ids) if !patch => Some(create_person_ids(ids)?),
            _ => None,
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
            is_static,
            create_static_person_ids,
            deleted,
        })
    }
}

/// Cohorts from a query and PostHog's legacy `groups` are not what Burrow evaluates: refused,
/// each naming its field.
fn refuse_unevaluated(body: &Map<String, Value>) -> Result<(), ValidationError> {
    if body.get("query").is_some_and(|value| !value.is_null()) {
        return Err(ValidationError::invalid(
            "query",
            "Burrow evaluates cohorts of person properties and static lists only: define the \
             cohort with filters, or upload its persons.",
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

/// The body's fields as a JSON object, and the persons its `csv` file names: a form's text
/// fields as strings (DRF's `JSONField`s parsed), a JSON body as it is (it carries no file).
fn fields_and_csv(
    body: JsonOrForm,
) -> Result<(Map<String, Value>, Option<NamedPersons>), ValidationError> {
    match body {
        JsonOrForm::Json(object) => Ok((object, None)),
        JsonOrForm::Form(form) => {
            let csv = form.file("csv").map(|file| read_csv(file)).transpose()?;
            Ok((form_object(&form)?, csv))
        }
    }
}

/// A form's text fields as a JSON object (the last of a name wins, as in DRF's `QueryDict`).
fn form_object(form: &Form) -> Result<Map<String, Value>, ValidationError> {
    let mut object = Map::new();
    for (name, text) in &form.fields {
        if text.contains('\0') {
            return Err(ValidationError::field(
                name.as_str(),
                ValidationCode::NullCharactersNotAllowed,
                "Null characters are not allowed.",
            ));
        }
        let value = if JSON_FIELDS.contains(&name.as_str()) {
            serde_json::from_str(text)
                .map_err(|_| ValidationError::invalid(name.as_str(), "Value must be valid JSON."))?
        } else {
            Value::String(text.clone())
        };
        object.insert(name.clone(), value);
    }
    Ok(object)
}

/// Reads a create body: `filters` required for a dynamic cohort, none for a static one.
///
/// # Errors
/// The first invalid field, or the CSV's refusal.
pub(super) fn new_cohort(body: JsonOrForm) -> Result<(NewCohort, Listed), ValidationError> {
    let (object, csv) = fields_and_csv(body)?;
    let write = CohortWrite::read(&object, false)?;
    let is_static = write.is_static.unwrap_or(false);
    let filters = match write.filters {
        Some(filters) => filters,
        None if is_static => CohortFilters::empty(),
        None => return Err(ValidationError::required("filters")),
    };
    let cohort = NewCohort {
        name: write.name.unwrap_or_default(),
        description: write.description.unwrap_or_default(),
        filters,
        is_static,
    };
    let ids = write.create_static_person_ids.map(NamedPersons::Uuids);
    Ok((cohort, ids.into_iter().chain(csv).collect()))
}

/// Reads a PATCH body; no field may be `null`. A form's `csv` adds to a static cohort.
///
/// # Errors
/// The first invalid field, or the CSV's refusal.
pub(super) fn cohort_changes(body: JsonOrForm) -> Result<(CohortChanges, Listed), ValidationError> {
    let (object, csv) = fields_and_csv(body)?;
    let write = CohortWrite::read(&object, true)?;
    let changes = CohortChanges {
        name: write.name,
        description: write.description,
        filters: write.filters,
        deleted: write.deleted,
        is_static: write.is_static,
    };
    Ok((changes, csv.into_iter().collect()))
}

/// The `multipart/form-data` form a create or PATCH also takes, as the OpenAPI document shows it.
pub(crate) fn form_schema() -> ObjectBuilder {
    let text = |description: &str| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(description))
    };
    ObjectBuilder::new()
        .property("name", text("The cohort's name."))
        .property("description", text("The cohort's description."))
        .property(
            "is_static",
            text("`true` makes a static cohort (create only); `false`, or absent, a dynamic one."),
        )
        .property("filters", text("A dynamic cohort's filters, as JSON text."))
        .property(
            "csv",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                    utoipa::openapi::KnownFormat::Binary,
                )))
                .description(Some(
                    "A CSV file of persons a static cohort lists besides those it lists: one \
                     column of distinct ids (with or without a header), or a header naming a \
                     `person_id` or `distinct_id` column.",
                )),
        )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonOrForm {
        JsonOrForm::Json(value.as_object().unwrap().clone())
    }

    #[test]
    fn a_static_cohort_needs_no_filters_and_starts_with_the_persons_named() {
        let uuid = Uuid::from_u128(9);
        let (cohort, persons) = new_cohort(object(json!({
            "name": "Beta", "is_static": true, "_create_static_person_ids": [uuid.to_string()]
        })))
        .unwrap();
        assert!(cohort.is_static);
        assert_eq!(cohort.filters, CohortFilters::empty());
        assert_eq!(persons, [NamedPersons::Uuids(vec![uuid])]);

        let error = new_cohort(object(json!({"name": "Dynamic"}))).unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("filters"));
        let error = new_cohort(object(json!({"is_static": "maybe"}))).unwrap_err();
        assert_eq!(error.detail, "Must be a valid boolean.");
    }

    #[test]
    fn a_patch_keeps_is_static_for_the_service_to_check_and_ignores_creation_ids() {
        let (changes, persons) = cohort_changes(object(json!({
            "is_static": false, "_create_static_person_ids": ["x"]
        })))
        .unwrap();
        assert_eq!(changes.is_static, Some(false));
        assert!(persons.is_empty());
    }
}
