//! The SQL spelling of which events are response events (`SurveyEvent::is_response`): every
//! `survey sent`, and a `survey dismissed` or `survey abandoned` whose
//! `$survey_partially_completed` is `true` (or the text `"true"`: `->>` reads both so). Never
//! `NULL`, so `NOT` of it keeps every other event. `record_capture.sql` spells it too, on the
//! rows it inserted.

/// Whether the `survey_events` row named `e` is a response event.
macro_rules! is_response_event {
    ($e:literal) => {
        concat!(
            "(",
            $e,
            ".event = 'survey sent' OR (",
            $e,
            ".event IN ('survey dismissed', 'survey abandoned') AND coalesce(",
            $e,
            ".properties ->> '$survey_partially_completed', '') = 'true'))"
        )
    };
}

pub(super) use is_response_event;
