//! The query parameters the response reads share: the date window and `exclude_archived`.

use actix_web::HttpRequest;
use domain::ValidationError;
use domain::survey_response::{DateWindow, ResponseFilter};

use crate::error::ApiError;
use crate::fields::parse_datetime;

/// `date_from`/`date_to` and `exclude_archived`, as the list, the export and the results read
/// them.
pub(super) fn response_filter(request: &HttpRequest) -> Result<ResponseFilter, ApiError> {
    Ok(ResponseFilter {
        window: date_window(request)?,
        exclude_archived: query_pairs(request)
            .iter()
            .any(|(key, value)| key == "exclude_archived" && is_true(value)),
    })
}

pub(super) fn query_pairs(request: &HttpRequest) -> Vec<(String, String)> {
    url::form_urlencoded::parse(request.query_string().as_bytes())
        .into_owned()
        .collect()
}

pub(super) fn is_true(value: &str) -> bool {
    matches!(value.to_ascii_lowercase().as_str(), "true" | "1")
}

/// `date_from`/`date_to` (ISO 8601), with PostHog's messages.
pub(super) fn date_window(request: &HttpRequest) -> Result<DateWindow, ApiError> {
    let mut from = None;
    let mut to = None;
    for (key, value) in query_pairs(request) {
        let slot = match key.as_str() {
            "date_from" => &mut from,
            "date_to" => &mut to,
            _ => continue,
        };
        if value.is_empty() {
            continue;
        }
        *slot = Some(parse_datetime(&value).ok_or_else(|| {
            ValidationError::invalid_input(
                "Invalid date format. Please use ISO 8601 format with timezone info \
                 (e.g. 2024-01-01T00:00:00Z or 2024-01-01T00:00:00+00:00)",
            )
        })?);
    }
    Ok(DateWindow::new(from, to)?)
}
