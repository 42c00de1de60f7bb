//! Groups: the companies, teams or workspaces a project's persons belong to, which a flag may
//! aggregate by instead of persons (PostHog's group analytics). A project names at most five
//! group types, each given an index (0–4) the first time a `$groupidentify` capture names it;
//! flags name types by index, events and SDKs by name. A group's properties are what its
//! `$groupidentify` captures `$group_set`.

mod port;
mod service;

pub use port::GroupRepository;
pub use service::{GroupService, MAX_DEFAULT_COLUMNS};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// Most group types one project may have (PostHog's `MAX_GROUP_TYPES_PER_TEAM`): a
/// `$groupidentify` naming a sixth type is dropped, as PostHog's ingestion drops it.
pub const MAX_GROUP_TYPES: u8 = 5;

/// Longest group type name, group key and type display name kept, in characters (their
/// columns'); a `$groupidentify` naming a longer type or key is dropped.
pub const MAX_GROUP_NAME_CHARS: usize = 400;

/// A group type's index, 0–4: what flags (`aggregation_group_type_index`) and group property
/// filters (`group_type_index`) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupTypeIndex(u8);

impl GroupTypeIndex {
    /// The index `index`, if it is one a project can have.
    pub fn new(index: u64) -> Option<Self> {
        u8::try_from(index)
            .ok()
            .filter(|index| *index < MAX_GROUP_TYPES)
            .map(Self)
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

/// One of a project's group types (PostHog's `GroupTypeMapping`).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupType {
    pub index: GroupTypeIndex,
    /// The name events and SDKs use (`company`).
    pub group_type: String,
    pub name_singular: Option<String>,
    pub name_plural: Option<String>,
    /// The console's columns for the type's groups.
    pub default_columns: Option<Vec<String>>,
    pub created_at: DateTime<Utc>,
}

/// One group: its key within its type and its properties.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub index: GroupTypeIndex,
    pub group_key: String,
    pub properties: Map<String, Value>,
    pub created_at: DateTime<Utc>,
}

/// What one `$groupidentify` capture sets: the group (`$group_type`, `$group_key`) and the
/// properties of `$group_set`, merged into the stored ones as `$set` is into a person's (each key
/// given replaces the stored value). Its type is given the next free index when new.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSet {
    pub group_type: String,
    pub group_key: String,
    pub properties: Map<String, Value>,
}

/// A group named by its type's name and its key, as `/flags` bodies name them
/// (`"groups": {"company": "acme"}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupKey {
    pub group_type: String,
    pub group_key: String,
}

/// New display names of one group type (`update_metadata`); `None` leaves a name as it is,
/// `Some(None)` clears it.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTypeNames {
    pub index: GroupTypeIndex,
    pub name_singular: Option<Option<String>>,
    pub name_plural: Option<Option<String>>,
}
