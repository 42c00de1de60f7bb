//! The shape of a flag's `filters` (and a survey's `targeting_flag_filters`) in the OpenAPI
//! document, built from the constants the domain's parser (`FlagFilters::read`) checks against:
//! condition sets with property filters, variants, payloads. Keys it does not name are allowed,
//! as the parser keeps them as sent.

use std::borrow::Cow;

use domain::feature_flag::{MAX_CONDITION_SETS, MAX_PROPERTIES_PER_SET, MAX_VARIANTS, Operator};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    AnyOfBuilder, ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type,
};
use utoipa::{PartialSchema, ToSchema};

use super::schemas::{any, string};

/// A flag's `filters`.
pub(crate) struct FlagFiltersShape;

impl PartialSchema for FlagFiltersShape {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "Who the flag serves: whoever one condition set of `groups` matches.",
            ))
            .property("groups", condition_sets(false))
            .property("super_groups", condition_sets(true))
            .property(
                "multivariate",
                ObjectBuilder::new()
                    .schema_type(nullable(Type::Object))
                    .property(
                        "variants",
                        ArrayBuilder::new().max_items(Some(MAX_VARIANTS)).items(
                            ObjectBuilder::new()
                                .property("key", string().min_length(Some(1)))
                                .property("rollout_percentage", percentage(false))
                                .required("key")
                                .required("rollout_percentage"),
                        ),
                    )
                    .required("variants")
                    .description(Some(
                        "Variants whose rollout percentages sum to 100, in the order their \
                         slices of the hash range follow.",
                    )),
            )
            .property(
                "payloads",
                ObjectBuilder::new()
                    .schema_type(nullable(Type::Object))
                    .additional_properties(Some(any()))
                    .description(Some(
                        "Payloads by variant key (`true` for a boolean flag), returned as stored.",
                    )),
            )
            .property("aggregation_group_type_index", group_type_index())
            .into()
    }
}

impl ToSchema for FlagFiltersShape {
    fn name() -> Cow<'static, str> {
        "FlagFilters".into()
    }
}

/// `groups` (a list) or `super_groups` (a list or `null`).
fn condition_sets(nullable_list: bool) -> ArrayBuilder {
    let list = if nullable_list {
        nullable(Type::Array)
    } else {
        Type::Array.into()
    };
    ArrayBuilder::new()
        .schema_type(list)
        .max_items(Some(MAX_CONDITION_SETS))
        .items(
            ObjectBuilder::new()
                .property(
                    "properties",
                    ArrayBuilder::new()
                        .schema_type(nullable(Type::Array))
                        .max_items(Some(MAX_PROPERTIES_PER_SET))
                        .items(property_filter())
                        .description(Some("Property filters, all of which must match.")),
                )
                .property("rollout_percentage", percentage(true))
                .property(
                    "variant",
                    ObjectBuilder::new()
                        .schema_type(nullable(Type::String))
                        .description(Some("Serves this variant instead of the hashed one.")),
                )
                .property("aggregation_group_type_index", group_type_index()),
        )
}

fn property_filter() -> ObjectBuilder {
    ObjectBuilder::new()
        .property(
            "key",
            ObjectBuilder::new().schema_type(nullable(Type::String)),
        )
        .property("value", any())
        .property("operator", operator())
        .property(
            "type",
            ObjectBuilder::new()
                .schema_type(nullable(Type::String))
                .description(Some(
                    "`person` (or none) is evaluated; cohort and flag filters match no one.",
                )),
        )
}

/// `operator`: one of the operators evaluation applies, or `null` (`exact`); an answer may hold
/// another string, stored before operators were checked, which matches no one.
fn operator() -> AnyOfBuilder {
    AnyOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(nullable(Type::String))
                .enum_values(Some(
                    Operator::NAMED
                        .iter()
                        .map(|(name, _)| Some(*name))
                        .chain([None]),
                )),
        )
        .item(string())
        .description(Some(
            "How the filter compares: `exact` when `null` or absent. A client sends one of \
             the listed names (`min` and `max` are stored as `gte` and `lte`); an answer may \
             show another, stored before operators were checked, which matches no one.",
        ))
}

/// A percentage, 0–100 (`null` allowed when `nullable`: everyone the set matches).
fn percentage(nullable_number: bool) -> ObjectBuilder {
    let number = if nullable_number {
        nullable(Type::Number)
    } else {
        Type::Number.into()
    };
    ObjectBuilder::new()
        .schema_type(number)
        .minimum(Some(0))
        .maximum(Some(100))
}

/// A group type's index: a flag or set aggregated by it serves no person.
fn group_type_index() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(nullable(Type::Integer))
        .minimum(Some(0))
}

fn nullable(kind: Type) -> SchemaType {
    SchemaType::from_iter([kind, Type::Null])
}
