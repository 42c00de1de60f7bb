//! Schemas with no type of their own to derive from: the choice lists (read from the domain's
//! enums), the error body, the two page shapes, the query parameters several routes share, and
//! the small bodies routes describe in place.
//! A hand-written schema is named as its type (`ToSchema`'s default `name`).

use domain::plugin::PluginType as DomainPluginType;
use domain::survey::{Schedule, SearchMatch, SurveyType as DomainSurveyType};
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{KnownFormat, RefOr, Required, SchemaFormat};
use utoipa::{PartialSchema, ToSchema};

use crate::extract::{DEFAULT_LIMIT, MAX_LIMIT, PageNumber};

/// A string schema allowing exactly `choices`.
fn choice(description: &str, choices: impl IntoIterator<Item = &'static str>) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .enum_values(Some(choices))
        .into()
}

/// A survey's `type`, as the domain names its kinds.
pub(crate) struct SurveyType;

impl PartialSchema for SurveyType {
    fn schema() -> RefOr<Schema> {
        choice(
            "How the survey is shown.",
            DomainSurveyType::ALL.map(DomainSurveyType::as_str),
        )
    }
}

impl ToSchema for SurveyType {}

/// A survey's `schedule`.
pub(crate) struct SurveySchedule;

impl PartialSchema for SurveySchedule {
    fn schema() -> RefOr<Schema> {
        choice(
            "How often a person may answer.",
            Schedule::ALL.map(Schedule::as_str),
        )
    }
}

impl ToSchema for SurveySchedule {}

/// A survey's `search_match_type`.
pub(crate) struct SurveySearchMatch;

impl PartialSchema for SurveySearchMatch {
    fn schema() -> RefOr<Schema> {
        choice(
            "How the survey matched a searched list's `search`.",
            SearchMatch::ALL.map(SearchMatch::as_str),
        )
    }
}

impl ToSchema for SurveySearchMatch {}

/// A plugin's `plugin_type`.
pub(crate) struct PluginType;

impl PartialSchema for PluginType {
    fn schema() -> RefOr<Schema> {
        choice(
            "Where the plugin's code comes from.",
            DomainPluginType::ALL.map(DomainPluginType::as_str),
        )
    }
}

impl ToSchema for PluginType {}

/// Every 4xx and 5xx body (`crate::ErrorBody`), as drf-exceptions-hog renders it.
#[derive(ToSchema)]
#[schema(as = Error)]
#[expect(
    dead_code,
    reason = "describes `ErrorBody` for the OpenAPI document; never built"
)]
pub(crate) struct ErrorSchema {
    /// `invalid_request`, `validation_error`, `authentication_error` or `server_error`.
    #[schema(rename = "type")]
    kind: String,
    /// What went wrong, e.g. `required`, `not_found`, `permission_denied`.
    code: String,
    /// A sentence for people.
    detail: String,
    /// The field the error is about (`__`-joined for nested ones), when there is one.
    attr: Option<String>,
}

/// `{"count","next","previous","results"}` of `item` (limit/offset pagination).
pub(crate) fn paginated(item: RefOr<Schema>) -> RefOr<Schema> {
    ObjectBuilder::new()
        .property("count", integer("How many there are in all."))
        .property("next", link())
        .property("previous", link())
        .property("results", array_of(item))
        .required("count")
        .required("next")
        .required("previous")
        .required("results")
        .into()
}

/// `{"results","next","previous","total_count"}` of `item` (page-number pagination).
pub(crate) fn numbered(item: RefOr<Schema>) -> RefOr<Schema> {
    ObjectBuilder::new()
        .property("results", array_of(item))
        .property("next", link())
        .property("previous", link())
        .property("total_count", integer("How many there are in all."))
        .required("results")
        .required("next")
        .required("previous")
        .required("total_count")
        .into()
}

fn integer(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
        .description(Some(description))
}

/// An absolute URL to a neighbouring page, or `null`.
fn link() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .description(Some("An absolute URL, or `null`."))
}

fn array_of(item: RefOr<Schema>) -> ArrayBuilder {
    ArrayBuilder::new().items(item)
}

/// Any JSON value.
pub(crate) fn any() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::AnyValue)
}

pub(crate) fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

pub(crate) fn uuid() -> ObjectBuilder {
    string().format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
}

/// `{"status": "ok"}`.
pub(crate) fn status_ok() -> ObjectBuilder {
    ObjectBuilder::new()
        .property("status", string().enum_values(Some(["ok"])))
        .required("status")
}

/// `{"success": true}`.
pub(crate) fn success() -> ObjectBuilder {
    ObjectBuilder::new()
        .property("success", ObjectBuilder::new().schema_type(Type::Boolean))
        .required("success")
}

/// `{filename: content}`; with `deleting`, a `null` content deletes the file.
pub(crate) fn source_files(deleting: bool) -> ObjectBuilder {
    let content = if deleting {
        ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::String, Type::Null]))
    } else {
        string()
    };
    ObjectBuilder::new().additional_properties(Some(content))
}

/// A string of at most `max_chars` characters (`null` allowed when `nullable`): a body field
/// whose limit is a domain constant, which derive attributes cannot name.
pub(crate) fn text(max_chars: usize, nullable: bool) -> ObjectBuilder {
    let string = if nullable {
        SchemaType::from_iter([Type::String, Type::Null])
    } else {
        Type::String.into()
    };
    ObjectBuilder::new()
        .schema_type(string)
        .max_length(Some(max_chars))
}

/// An integer in `min..=max` (`null` allowed when `nullable`), read as DRF reads one: a body
/// field whose bounds are domain constants, which derive attributes cannot name.
pub(crate) fn integer_within(min: i64, max: i64, nullable: bool) -> ObjectBuilder {
    let integer = if nullable {
        SchemaType::from_iter([Type::Integer, Type::Null])
    } else {
        Type::Integer.into()
    };
    ObjectBuilder::new()
        .schema_type(integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(min))
        .maximum(Some(max))
}

/// An optional query parameter.
pub(crate) fn query(name: &str, description: &str, schema: impl Into<RefOr<Schema>>) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

pub(crate) fn limit_offset() -> [Parameter; 2] {
    [
        query(
            "limit",
            &format!(
                "Page size (default {DEFAULT_LIMIT}, at most {MAX_LIMIT}); unusable values fall \
                 back to the default."
            ),
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
        query(
            "offset",
            "How many to skip (default 0).",
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
    ]
}

pub(crate) fn page_limit() -> [Parameter; 2] {
    [
        query(
            "page",
            "Page number, from 1.",
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
        query(
            "limit",
            &format!("Page size (default {}).", PageNumber::DEFAULT_LIMIT),
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
    ]
}

pub(crate) fn date_window() -> [Parameter; 2] {
    let date = || string().format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)));
    [
        query("date_from", "ISO 8601 with a timezone.", date()),
        query("date_to", "ISO 8601 with a timezone.", date()),
    ]
}
