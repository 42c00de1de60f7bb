//! An entry of any activity log table as the one listing reads it (`postgres::activity`),
//! becoming the domain's entry.

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::activity::ActivityEntry;
use serde_json::Value;
use uuid::Uuid;

/// One entry, its item's id as text and its user's name and email when the user still exists.
#[derive(QueryableByName)]
pub(crate) struct ActivityEntryRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    item_id: String,
    /// `None` in a log of one scope, which the listing knows.
    #[diesel(sql_type = Nullable<Text>)]
    scope: Option<String>,
    #[diesel(sql_type = Text)]
    activity: String,
    #[diesel(sql_type = Jsonb)]
    detail: Value,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Text>)]
    first_name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    email: Option<String>,
}

impl ActivityEntryRow {
    /// The entry, in `scope` unless the row names its own.
    pub fn into_entry(self, scope: &str) -> ActivityEntry {
        ActivityEntry {
            id: self.id,
            user: self.first_name.zip(self.email),
            scope: self.scope.unwrap_or_else(|| scope.to_owned()),
            activity: self.activity,
            item_id: self.item_id,
            detail: self.detail,
            created_at: self.created_at,
        }
    }
}
