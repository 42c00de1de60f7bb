//! What every activity log table shares once read: a row becomes the domain's entry when its
//! user's name and email are known, and a page is the log's size with its entries.

use domain::activity::{ActivityEntry, ActivityPage};

/// A row of an activity log table (`plugin_activity`, `survey_activity`).
pub(crate) trait ActivityRecord {
    /// The entry, with its user's `(first_name, email)` when the user still exists.
    fn into_entry(self, user: Option<(String, String)>) -> ActivityEntry;
}

/// One page of a log from its size and its rows left-joined with their users' first name and
/// email.
pub(crate) fn activity_page<R: ActivityRecord>(
    total: i64,
    rows: Vec<(R, Option<String>, Option<String>)>,
) -> ActivityPage {
    ActivityPage {
        entries: rows
            .into_iter()
            .map(|(row, first_name, email)| row.into_entry(first_name.zip(email)))
            .collect(),
        total: total.unsigned_abs(),
    }
}
