//! Rows of group types and groups, read into the domain's entities.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::Unexpected;
use domain::group::{Group, GroupType, GroupTypeIndex, GroupTypeNames};
use serde_json::{Map, Value};

use super::TypedJson;
use crate::postgres::schema::{group_types, groups};

#[derive(Queryable, Selectable)]
#[diesel(table_name = group_types, check_for_backend(diesel::pg::Pg))]
pub(crate) struct GroupTypeRow {
    pub group_type_index: i16,
    pub group_type: String,
    pub name_singular: Option<String>,
    pub name_plural: Option<String>,
    pub default_columns: Option<TypedJson<Vec<String>>>,
    pub created_at: DateTime<Utc>,
}

impl GroupTypeRow {
    pub fn into_group_type(self) -> Result<GroupType, Unexpected> {
        Ok(GroupType {
            index: index(self.group_type_index)?,
            group_type: self.group_type,
            name_singular: self.name_singular,
            name_plural: self.name_plural,
            default_columns: self.default_columns.map(|TypedJson(columns)| columns),
            created_at: self.created_at,
        })
    }
}

/// New display names of a type: `None` leaves a name as it is, `Some(None)` clears it.
#[derive(AsChangeset)]
#[diesel(table_name = group_types, check_for_backend(diesel::pg::Pg))]
pub(crate) struct GroupTypeChangeset<'a> {
    pub name_singular: Option<Option<&'a str>>,
    pub name_plural: Option<Option<&'a str>>,
}

impl<'a> GroupTypeChangeset<'a> {
    pub fn new(names: &'a GroupTypeNames) -> Self {
        Self {
            name_singular: names.name_singular.as_ref().map(Option::as_deref),
            name_plural: names.name_plural.as_ref().map(Option::as_deref),
        }
    }

    /// Whether it changes nothing (diesel refuses an `UPDATE` without columns).
    pub fn is_empty(&self) -> bool {
        self.name_singular.is_none() && self.name_plural.is_none()
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = groups, check_for_backend(diesel::pg::Pg))]
pub(crate) struct GroupRow {
    pub group_key: String,
    pub properties: TypedJson<Map<String, Value>>,
    pub created_at: DateTime<Utc>,
}

impl GroupRow {
    /// The group, of the type at `index` (what the caller looked it up by).
    pub fn into_group(self, index: GroupTypeIndex) -> Group {
        Group {
            index,
            group_key: self.group_key,
            properties: self.properties.0,
            created_at: self.created_at,
        }
    }
}

/// A stored index as the domain's; the column's `CHECK` keeps it within 0–4.
fn index(stored: i16) -> Result<GroupTypeIndex, Unexpected> {
    u64::try_from(stored)
        .ok()
        .and_then(GroupTypeIndex::new)
        .ok_or_else(|| Unexpected::new(format!("a group type has the index {stored}")))
}
