//! Group type request bodies read into the domain's commands — each also its schema in the
//! OpenAPI document — and the query of `/groups/find/`. An index no type can have (outside
//! 0–4) is answered with the 404 of a type that does not exist, as PostHog answers it, not
//! with a 400.

use std::collections::BTreeMap;

use domain::ValidationError;
use domain::error::ValidationCode;
use domain::group::{GroupTypeIndex, GroupTypeNames, MAX_GROUP_NAME_CHARS};
use domain::patch::Patch;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::Required;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};

use crate::error::ApiError;
use crate::fields::{Fields, not_null};

/// New display names of one group type: a name absent is left as it is, `null` clears it.
#[derive(ToSchema)]
#[schema(as = GroupTypeMetadata)]
pub(crate) struct GroupTypeMetadataWrite {
    /// The type to rename, 0–4.
    #[schema(value_type = u8, minimum = 0, maximum = 4)]
    group_type_index: GroupTypeIndex,
    #[schema(value_type = Option<String>, max_length = 400, required = false)]
    name_singular: Patch<String>,
    #[schema(value_type = Option<String>, max_length = 400, required = false)]
    name_plural: Patch<String>,
}

/// `update_metadata`'s body: a list of the types to rename, each at most once (a type listed
/// twice takes the later entry's names).
#[derive(ToSchema)]
#[schema(as = GroupTypesMetadata)]
pub(crate) struct GroupTypesMetadataWrite(Vec<GroupTypeMetadataWrite>);

impl GroupTypesMetadataWrite {
    /// Reads every item.
    ///
    /// # Errors
    /// 400 for an item that is not an object or a field of the wrong type; 404 for an index no
    /// type can have.
    pub(super) fn read(items: Vec<Value>) -> Result<Self, ApiError> {
        items
            .iter()
            .map(|item| {
                let Value::Object(fields) = item else {
                    return Err(ValidationError::invalid_input(
                        "Each item must be an object naming a group_type_index.",
                    )
                    .into());
                };
                let fields = Fields(fields);
                Ok(GroupTypeMetadataWrite {
                    group_type_index: index(&fields)?.ok_or_else(ApiError::not_found)?,
                    name_singular: fields.string("name_singular")?,
                    name_plural: fields.string("name_plural")?,
                })
            })
            .collect::<Result<_, ApiError>>()
            .map(Self)
    }

    /// The renames, one per type in index order, later entries' names winning.
    pub(super) fn into_names(self) -> Vec<GroupTypeNames> {
        let mut names: BTreeMap<GroupTypeIndex, GroupTypeNames> = BTreeMap::new();
        for write in self.0 {
            let index = write.group_type_index;
            let named = names.entry(index).or_insert(GroupTypeNames {
                index,
                name_singular: None,
                name_plural: None,
            });
            if let Some(singular) = change(write.name_singular) {
                named.name_singular = Some(singular);
            }
            if let Some(plural) = change(write.name_plural) {
                named.name_plural = Some(plural);
            }
        }
        names.into_values().collect()
    }
}

/// A name's change: `None` when absent, `Some(None)` to clear it.
fn change(name: Patch<String>) -> Option<Option<String>> {
    match name {
        Patch::Absent => None,
        Patch::Null => Some(None),
        Patch::Value(name) => Some(Some(name)),
    }
}

/// `set_default_columns`' body.
#[derive(ToSchema)]
#[schema(as = GroupTypeDefaultColumns)]
pub(crate) struct DefaultColumnsWrite {
    /// The type, 0–4.
    #[schema(value_type = u8, minimum = 0, maximum = 4)]
    pub(super) group_type_index: Option<GroupTypeIndex>,
    /// The console's columns for the type's groups: at most 100, each at most 400 characters.
    #[schema(max_items = 100)]
    pub(super) default_columns: Vec<String>,
}

impl DefaultColumnsWrite {
    /// # Errors
    /// A field missing or of the wrong type.
    pub(super) fn read(body: &Map<String, Value>) -> Result<Self, ValidationError> {
        let fields = Fields(body);
        let group_type_index = index(&fields)?;
        let default_columns = match fields.raw("default_columns") {
            Patch::Absent => return Err(ValidationError::required("default_columns")),
            Patch::Null => return Err(not_null("default_columns")),
            Patch::Value(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str().map(str::to_owned).ok_or_else(|| {
                        ValidationError::invalid("default_columns", "Not a valid string.")
                    })
                })
                .collect::<Result<_, _>>()?,
            Patch::Value(_) => {
                return Err(ValidationError::invalid(
                    "default_columns",
                    "Expected a list of items.",
                ));
            }
        };
        Ok(Self {
            group_type_index,
            default_columns,
        })
    }
}

/// `group_type_index`, required: `None` for an integer no type can have.
fn index(fields: &Fields<'_>) -> Result<Option<GroupTypeIndex>, ValidationError> {
    match fields.integer("group_type_index")? {
        Patch::Absent => Err(ValidationError::required("group_type_index")),
        Patch::Null => Err(not_null("group_type_index")),
        Patch::Value(index) => Ok(u64::try_from(index).ok().and_then(GroupTypeIndex::new)),
    }
}

/// `/groups/find/`'s query: the type's index (`None` for one no type can have) and the key.
///
/// # Errors
/// 400 `This query parameter is required.` for a parameter missing or empty (PostHog's), and
/// for an index that is not an integer.
pub(super) fn find_query(query: &str) -> Result<(Option<GroupTypeIndex>, String), ValidationError> {
    let mut index = None;
    let mut key = None;
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match name.as_ref() {
            "group_type_index" => index = Some(value.into_owned()),
            "group_key" => key = Some(value.into_owned()),
            _ => {}
        }
    }
    let required = |attr: &str| {
        ValidationError::field(
            attr,
            ValidationCode::Required,
            "This query parameter is required.",
        )
    };
    let index = index
        .filter(|index| !index.is_empty())
        .ok_or_else(|| required("group_type_index"))?;
    let index = index.trim().parse::<i64>().map_err(|_| {
        ValidationError::invalid("group_type_index", "A valid integer is required.")
    })?;
    let key = key
        .filter(|key| !key.is_empty())
        .ok_or_else(|| required("group_key"))?;
    Ok((u64::try_from(index).ok().and_then(GroupTypeIndex::new), key))
}

/// `/groups/find/`'s query parameters, in the document.
pub(crate) fn find_parameters() -> [Parameter; 2] {
    let required = |name: &str, description: &str, kind: Type| {
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Query)
            .required(Required::True)
            .description(Some(description))
            .schema(Some(ObjectBuilder::new().schema_type(kind)))
            .build()
    };
    [
        required("group_type_index", "The group's type, 0–4.", Type::Integer),
        required(
            "group_key",
            &format!("The group's key (at most {MAX_GROUP_NAME_CHARS} characters are stored)."),
            Type::String,
        ),
    ]
}
