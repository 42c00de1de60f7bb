//! The JSON responses list's query parameters, PostHog's `SurveyResponsesQuerySerializer`:
//! `since`, `until`, `question_id`, `score_lte`, `score_gte`, `exclude_archived`, `limit`,
//! `offset`, each refused with DRF's message naming it when it is not what it should be.

use domain::ValidationError;
use domain::error::ValidationCode;
use domain::patch::Patch;
use domain::survey_response::{MAX_LIST_LIMIT, ResponsesQuery, ScoreRange};
use serde_json::{Map, Value};

use crate::fields::Fields;

/// Reads the query as DRF reads a form: each parameter's last value, a blank one as absent (an
/// optional field's `""` is "not sent" in DRF), in the serializer's field order, so the first
/// bad parameter is the one answered. Whether the parameters go together (a score needs a
/// question) is the domain's to say ([`ResponsesQuery::checked`]).
///
/// # Errors
/// `invalid_input` naming the parameter for a date, number, boolean or integer that is not one;
/// `min_value`/`max_value` for `limit` outside 1–500 and `offset` below 0.
pub(super) fn list_query(query: &str) -> Result<ResponsesQuery, ValidationError> {
    let params: Map<String, Value> = url::form_urlencoded::parse(query.as_bytes())
        .filter(|(_, value)| !value.is_empty())
        .map(|(key, value)| (key.into_owned(), Value::String(value.into_owned())))
        .collect();
    let fields = Fields(&params);
    let since = fields.datetime("since")?.value();
    let until = fields.datetime("until")?.value();
    let question_id = fields.string("question_id")?.value();
    let lte = number(&fields, "score_lte")?;
    let gte = number(&fields, "score_gte")?;
    let exclude_archived = fields.boolean("exclude_archived")?.value().unwrap_or(false);
    let limit = fields
        .bounded_integer("limit", 1, MAX_LIST_LIMIT.into())?
        .value()
        .map_or(ResponsesQuery::default().limit, |limit| {
            limit.unsigned_abs()
        });
    let offset = match fields.integer("offset")? {
        Patch::Value(offset) => u64::try_from(offset).map_err(|_| {
            ValidationError::field(
                "offset",
                ValidationCode::MinValue,
                "Ensure this value is greater than or equal to 0.",
            )
        })?,
        Patch::Absent | Patch::Null => 0,
    };
    Ok(ResponsesQuery {
        since,
        until,
        question_id,
        score: ScoreRange { gte, lte },
        exclude_archived,
        limit,
        offset,
    })
}

/// A float parameter (DRF's `FloatField`): a finite number as Rust reads one, around spaces.
fn number(fields: &Fields<'_>, name: &str) -> Result<Option<f64>, ValidationError> {
    match fields.string(name)?.value() {
        None => Ok(None),
        Some(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|number| number.is_finite())
            .map(Some)
            .ok_or_else(|| ValidationError::invalid(name, "A valid number is required.")),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn refusal(query: &str) -> (Option<String>, String, &'static str) {
        let error = list_query(query).unwrap_err();
        (error.attr, error.detail, error.code.as_str())
    }

    #[test]
    fn no_parameter_asks_for_the_first_hundred() {
        assert_eq!(list_query("").unwrap(), ResponsesQuery::default());
        assert_eq!(
            list_query("since=&limit=&offset=&exclude_archived=&question_id=&format=x").unwrap(),
            ResponsesQuery::default()
        );
    }

    #[test]
    fn each_parameter_is_read_the_last_value_winning() {
        let query = list_query(
            "since=2024-06-01T00:00:00Z&until=2024-06-30&question_id=q1&score_gte=7&score_lte=9.5\
             &exclude_archived=true&limit=20&limit=50&offset=100",
        )
        .unwrap();
        assert_eq!(
            query,
            ResponsesQuery {
                since: Some(Utc.with_ymd_and_hms(2024, 6, 1, 0, 0, 0).unwrap()),
                until: Some(Utc.with_ymd_and_hms(2024, 6, 30, 0, 0, 0).unwrap()),
                question_id: Some("q1".into()),
                score: ScoreRange {
                    gte: Some(7.0),
                    lte: Some(9.5)
                },
                exclude_archived: true,
                limit: 50,
                offset: 100,
            }
        );
    }

    #[test]
    fn values_of_the_wrong_kind_are_refused_with_drfs_messages_naming_the_parameter() {
        let datetime = "Datetime has wrong format. Use one of these formats instead: \
                        YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].";
        for (query, attr, detail, code) in [
            ("since=bad", "since", datetime, "invalid_input"),
            ("until=2024-13-01", "until", datetime, "invalid_input"),
            (
                "score_lte=x",
                "score_lte",
                "A valid number is required.",
                "invalid_input",
            ),
            (
                "score_gte=nan",
                "score_gte",
                "A valid number is required.",
                "invalid_input",
            ),
            (
                "exclude_archived=maybe",
                "exclude_archived",
                "Must be a valid boolean.",
                "invalid_input",
            ),
            (
                "limit=x",
                "limit",
                "A valid integer is required.",
                "invalid_input",
            ),
            (
                "limit=0",
                "limit",
                "Ensure this value is greater than or equal to 1.",
                "min_value",
            ),
            (
                "limit=501",
                "limit",
                "Ensure this value is less than or equal to 500.",
                "max_value",
            ),
            (
                "offset=-1",
                "offset",
                "Ensure this value is greater than or equal to 0.",
                "min_value",
            ),
            (
                "offset=1.5",
                "offset",
                "A valid integer is required.",
                "invalid_input",
            ),
            // The serializer's first bad field is answered.
            (
                "offset=-1&limit=0&since=bad",
                "since",
                datetime,
                "invalid_input",
            ),
        ] {
            assert_eq!(
                refusal(query),
                (Some(attr.to_owned()), detail.to_owned(), code),
                "{query}"
            );
        }
    }
}
