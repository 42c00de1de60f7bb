//! Schemas with no response type of their own to derive from: the choice lists (read from the
//! domain's enums), the error body, the two page shapes, and the request bodies (handlers read
//! bodies field by field through `fields::Fields`, so these structs only describe them).

use std::borrow::Cow;

use domain::plugin::PluginType as DomainPluginType;
use domain::survey::{Schedule, SurveyType as DomainSurveyType};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};

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

impl ToSchema for SurveyType {
    fn name() -> Cow<'static, str> {
        "SurveyType".into()
    }
}

/// A survey's `schedule`.
pub(crate) struct SurveySchedule;

impl PartialSchema for SurveySchedule {
    fn schema() -> RefOr<Schema> {
        let every = [Schedule::Once, Schedule::Recurring, Schedule::Always];
        choice(
            "How often a person may answer.",
            every.map(Schedule::as_str),
        )
    }
}

impl ToSchema for SurveySchedule {
    fn name() -> Cow<'static, str> {
        "SurveySchedule".into()
    }
}

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

impl ToSchema for PluginType {
    fn name() -> Cow<'static, str> {
        "PluginType".into()
    }
}

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
pub(crate) fn paginated(item: &str) -> RefOr<Schema> {
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
pub(crate) fn numbered(item: &str) -> RefOr<Schema> {
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

fn array_of(item: &str) -> ArrayBuilder {
    ArrayBuilder::new().items(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(item)))
}
