//! How large what a survey's respondents send may be, and how much of it one read holds: an
//! answer and an event are refused past their limits at capture; a list page and an export
//! chunk end once the answers read pass a byte budget, so a read over large answers holds a
//! bounded amount of them whatever the number of rows asked for.

/// Largest captured event, as sent (its JSON text less whitespace, after the transport's
/// encodings are undone): PostHog's capture refuses an event past its Kafka producer's
/// `message.max.bytes`, 1,000,000 bytes by default.
pub const MAX_EVENT_BYTES: usize = 1_000_000;

/// Largest `$survey_response*` answer, as sent (its JSON text). Answers are human text or a
/// few choices; 64 KiB is a long essay. Answers stored before this limit that pass it are read
/// back cut to this many characters (see [`SurveyResponseRepository`](super::SurveyResponseRepository)).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The most one response's answers and where-answered values may weigh together, counted as
/// their JSON text: what one event may carry ([`MAX_EVENT_BYTES`]). A submission's sends merge
/// into one response, and a send may name any `$survey_response_<key>`, so without it a client
/// holding the public token could grow one row without end by sending again; a send that would
/// carry its response past it leaves the response's answers and context as they were (its event
/// is still stored, its time and completion still count).
pub const MAX_RESPONSE_BYTES: usize = MAX_EVENT_BYTES;

/// The answers one page of a responses list holds at most (its last row may pass it): a page
/// ends early past it, and its `next` link continues from there.
pub const PAGE_ANSWER_BYTES: usize = 2 * 1024 * 1024;

/// The answers one chunk of an export holds at most (its last row may pass it).
pub const EXPORT_CHUNK_ANSWER_BYTES: usize = 1024 * 1024;

/// How many of the rows, of these answer sizes in order, one read keeps under `budget`: every
/// row that starts before the budget is spent, so always at least one (a row larger than the
/// budget is read alone, never skipped).
pub fn rows_within(sizes: impl IntoIterator<Item = usize>, budget: usize) -> usize {
    let mut spent = 0usize;
    let mut kept = 0;
    for size in sizes {
        if kept > 0 && spent >= budget {
            break;
        }
        spent = spent.saturating_add(size);
        kept += 1;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_kept_until_the_budget_is_spent_the_last_one_passing_it() {
        assert_eq!(rows_within([40, 40, 40, 40], 100), 3);
        assert_eq!(rows_within([50, 50, 50], 100), 2);
        assert_eq!(rows_within([10, 10], 100), 2);
    }

    #[test]
    fn a_row_larger_than_the_budget_is_read_alone() {
        assert_eq!(rows_within([500, 1, 1], 100), 1);
        assert_eq!(rows_within(std::iter::empty(), 100), 0);
    }
}
