//! The activity log, as PostHog keeps one per audited resource (plugins, surveys): what a write
//! records about itself, and what a read of the log returns. One shape for every resource, so
//! every `/activity/` endpoint answers alike.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::tenancy::UserId;

/// One entry to write in the same transaction as the change it describes.
#[derive(Debug, Clone, PartialEq)]
pub struct NewActivity {
    pub user: UserId,
    /// What happened: `created`, `updated`, `deleted`, `installed`, …
    pub activity: &'static str,
    /// PostHog's `Detail`: `name`, `changes`, and whatever else the resource records; the keys
    /// it leaves out are shown as `null`.
    pub detail: Value,
}

/// A stored entry, with who made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityEntry {
    pub id: Uuid,
    /// `(first_name, email)` of the user, `None` once the user is gone.
    pub user: Option<(String, String)>,
    /// The kind of object (`Plugin`, `Survey`).
    pub scope: String,
    pub activity: String,
    /// The object's id as text, whatever its type (PostHog stores every `item_id` as a string).
    pub item_id: String,
    pub detail: Value,
    pub created_at: DateTime<Utc>,
}

/// One page of a log, newest first, and the log's size.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityPage {
    pub entries: Vec<ActivityEntry>,
    pub total: u64,
}

/// One field's change in an `updated` entry, PostHog's `Change`: `created` when it was null
/// before, `deleted` when it is null after, `changed` otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    pub field: &'static str,
    pub before: Value,
    pub after: Value,
}

impl FieldChange {
    /// The change of `field`, or `None` when the value is the same: an update records only the
    /// fields it really changed.
    pub fn between(field: &'static str, before: Value, after: Value) -> Option<Self> {
        (before != after).then_some(Self {
            field,
            before,
            after,
        })
    }

    /// PostHog's wire form: `{type, action, field, before, after}`.
    pub fn to_json(&self, scope: &str) -> Value {
        change_json(scope, self.field, &self.before, &self.after)
    }
}

/// One change in PostHog's wire form, for a field named at run time (a key of a JSON setting):
/// its action is `created` when it was null before, `deleted` when it is null after, `changed`
/// otherwise.
pub fn change_json(scope: &str, field: &str, before: &Value, after: &Value) -> Value {
    let action = match (before, after) {
        (Value::Null, _) => "created",
        (_, Value::Null) => "deleted",
        _ => "changed",
    };
    json!({
        "type": scope,
        "action": action,
        "field": field,
        "before": before,
        "after": after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_created_deleted_or_changed_by_which_side_is_null() {
        assert_eq!(FieldChange::between("name", json!("a"), json!("a")), None);
        let action = |before: Value, after: Value| {
            FieldChange::between("name", before, after)
                .unwrap()
                .to_json("Survey")["action"]
                .clone()
        };
        assert_eq!(action(Value::Null, json!("a")), "created");
        assert_eq!(action(json!("a"), Value::Null), "deleted");
        assert_eq!(action(json!("a"), json!("b")), "changed");
        assert_eq!(
            FieldChange::between("name", json!("a"), json!("b"))
                .unwrap()
                .to_json("Survey"),
            json!({"type": "Survey", "action": "changed", "field": "name", "before": "a", "after": "b"})
        );
    }
}
