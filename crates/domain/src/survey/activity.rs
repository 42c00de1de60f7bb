//! What a survey write records in the activity log, decided here so both stores record the same
//! thing: `created` (no changes; a copy names its source), `updated` with the fields that really
//! changed, before and after, and `deleted`. PostHog's rules: an update that changes nothing is
//! not recorded, and a change's action is `created`/`deleted` when one side is null.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::{SurveyId, SurveyState};
use crate::activity::{FieldChange, NewActivity};
use crate::tenancy::UserId;

/// The scope survey entries are logged under.
pub const SCOPE: &str = "Survey";

/// A new survey.
pub(crate) fn created(name: &str, user: UserId) -> NewActivity {
    entry("created", name, Value::Null, user)
}

/// A survey copied from `source` (`duplicate_to_projects`): PostHog records where it came from.
pub(crate) fn copied(name: &str, source: SurveyId, user: UserId) -> NewActivity {
    let change = FieldChange {
        field: "source_survey_id",
        before: Value::Null,
        after: Value::String(source.0.to_string()),
    };
    entry("created", name, json!([change.to_json(SCOPE)]), user)
}

/// A deleted survey, by the name it had.
pub(crate) fn deleted(name: &str, user: UserId) -> NewActivity {
    entry("deleted", name, Value::Null, user)
}

/// One response deleted (`DELETE …/responses/{uuid}/`): which, by the uuid it was named by.
pub(crate) fn response_deleted(name: &str, response: Uuid, user: UserId) -> NewActivity {
    let change = FieldChange {
        field: "response",
        before: Value::String(response.to_string()),
        after: Value::Null,
    };
    entry(
        "response_deleted",
        name,
        json!([change.to_json(SCOPE)]),
        user,
    )
}

/// Every response of the survey deleted (`responses/reset/`).
pub(crate) fn responses_reset(name: &str, user: UserId) -> NewActivity {
    entry("responses_reset", name, Value::Null, user)
}

/// A launch or a stop through PostHog's dedicated endpoints (`activity` `launched` or
/// `stopped`): the one date it set, recorded as `changed` even from null, as PostHog records it.
pub(crate) fn switched(
    activity: &'static str,
    name: &str,
    field: &'static str,
    before: Option<DateTime<Utc>>,
    after: DateTime<Utc>,
    user: UserId,
) -> NewActivity {
    let change = json!({
        "type": SCOPE,
        "action": "changed",
        "field": field,
        "before": before,
        "after": after,
    });
    entry(activity, name, json!([change]), user)
}

/// An update from `before` to `after`, `None` when no field changed.
pub(crate) fn updated(
    before: (&SurveyState, Option<&Map<String, Value>>),
    after: (&SurveyState, Option<&Map<String, Value>>),
    user: UserId,
) -> Option<NewActivity> {
    let changes = changes(before, after);
    (!changes.is_empty()).then(|| {
        let changes = changes.iter().map(|c| c.to_json(SCOPE)).collect();
        entry("updated", &after.0.name, Value::Array(changes), user)
    })
}

/// The fields a client writes that differ between two states of a survey, each with its
/// targeting flag's filters (`None`: no live targeting flag), in the order the API lists them.
pub fn changes(
    (before, before_targeting): (&SurveyState, Option<&Map<String, Value>>),
    (after, after_targeting): (&SurveyState, Option<&Map<String, Value>>),
) -> Vec<FieldChange> {
    fn value(field: impl Serialize) -> Value {
        serde_json::to_value(field).unwrap_or(Value::Null)
    }
    let pairs = [
        ("name", value(&before.name), value(&after.name)),
        (
            "description",
            value(&before.description),
            value(&after.description),
        ),
        (
            "type",
            value(before.survey_type.as_str()),
            value(after.survey_type.as_str()),
        ),
        (
            "schedule",
            value(before.schedule.as_str()),
            value(after.schedule.as_str()),
        ),
        (
            "linked_flag_id",
            value(before.linked_flag_id.map(|id| id.0)),
            value(after.linked_flag_id.map(|id| id.0)),
        ),
        (
            "targeting_flag_filters",
            value(before_targeting),
            value(after_targeting),
        ),
        (
            "questions",
            value(&before.questions),
            value(&after.questions),
        ),
        (
            "conditions",
            value(&before.conditions),
            value(&after.conditions),
        ),
        (
            "appearance",
            value(&before.appearance),
            value(&after.appearance),
        ),
        (
            "start_date",
            value(before.start_date),
            value(after.start_date),
        ),
        ("end_date", value(before.end_date), value(after.end_date)),
        ("archived", value(before.archived), value(after.archived)),
        (
            "responses_limit",
            value(before.responses_limit),
            value(after.responses_limit),
        ),
        (
            "iteration_count",
            value(before.iteration_count),
            value(after.iteration_count),
        ),
        (
            "iteration_frequency_days",
            value(before.iteration_frequency_days),
            value(after.iteration_frequency_days),
        ),
        (
            "response_sampling_start_date",
            value(before.response_sampling.start_date),
            value(after.response_sampling.start_date),
        ),
        (
            "response_sampling_interval_type",
            value(
                before
                    .response_sampling
                    .interval_type
                    .map(|unit| unit.as_str()),
            ),
            value(
                after
                    .response_sampling
                    .interval_type
                    .map(|unit| unit.as_str()),
            ),
        ),
        (
            "response_sampling_interval",
            value(before.response_sampling.interval),
            value(after.response_sampling.interval),
        ),
        (
            "response_sampling_limit",
            value(before.response_sampling.limit),
            value(after.response_sampling.limit),
        ),
        (
            "enable_partial_responses",
            value(before.enable_partial_responses),
            value(after.enable_partial_responses),
        ),
        (
            "enable_iframe_embedding",
            value(before.enable_iframe_embedding),
            value(after.enable_iframe_embedding),
        ),
        (
            "base_language",
            value(&before.base_language),
            value(&after.base_language),
        ),
        (
            "translations",
            value(&before.translations),
            value(&after.translations),
        ),
        (
            "form_content",
            value(&before.form_content),
            value(&after.form_content),
        ),
    ];
    pairs
        .into_iter()
        .filter_map(|(field, before, after)| FieldChange::between(field, before, after))
        .collect()
}

/// PostHog's `Detail`: the survey's name and the changes (`trigger`, `short_id` and `type` are
/// always null for surveys and are filled in when the entry is shown).
fn entry(activity: &'static str, name: &str, changes: Value, user: UserId) -> NewActivity {
    NewActivity {
        user,
        activity,
        detail: json!({"name": name, "changes": changes}),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone as _, Utc};

    use super::*;
    use crate::feature_flag::FlagId;
    use crate::survey::SurveyType;

    const USER: UserId = UserId(3);

    fn draft() -> SurveyState {
        SurveyState::draft("Onboarding".into(), SurveyType::Popover)
    }

    fn filters(rollout: u32) -> Map<String, Value> {
        json!({"groups": [{"properties": [], "rollout_percentage": rollout}]})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn fields(changes: &[FieldChange]) -> Vec<&'static str> {
        changes.iter().map(|c| c.field).collect()
    }

    #[test]
    fn only_the_fields_that_differ_are_changes_with_their_values_before_and_after() {
        let before = draft();
        let mut after = before.clone();
        after.name = "Renamed".into();
        after.archived = true;
        after.start_date = Some(Utc.with_ymd_and_hms(2024, 5, 22, 14, 40, 9).unwrap());
        let changes = changes((&before, None), (&after, None));
        assert_eq!(fields(&changes), ["name", "start_date", "archived"]);
        assert_eq!(
            changes[0].to_json(SCOPE),
            json!({"type": "Survey", "action": "changed", "field": "name", "before": "Onboarding", "after": "Renamed"})
        );
        assert_eq!(
            changes[1].to_json(SCOPE),
            json!({"type": "Survey", "action": "created", "field": "start_date", "before": null, "after": "2024-05-22T14:40:09Z"})
        );
        assert_eq!(
            (&changes[2].before, &changes[2].after),
            (&json!(false), &json!(true))
        );
    }

    #[test]
    fn the_same_state_changes_nothing_and_an_update_of_nothing_is_not_recorded() {
        let state = draft();
        let targeting = filters(50);
        assert!(changes((&state, Some(&targeting)), (&state, Some(&targeting))).is_empty());
        assert_eq!(
            updated((&state, Some(&targeting)), (&state, Some(&targeting)), USER),
            None
        );
    }

    #[test]
    fn targeting_filters_are_a_change_when_added_changed_or_removed() {
        let state = draft();
        let (fifty, ten) = (filters(50), filters(10));
        let added = changes((&state, None), (&state, Some(&fifty)));
        assert_eq!(fields(&added), ["targeting_flag_filters"]);
        assert_eq!(added[0].to_json(SCOPE)["action"], "created");
        let changed = changes((&state, Some(&fifty)), (&state, Some(&ten)));
        assert_eq!(
            changed[0].to_json(SCOPE),
            json!({"type": "Survey", "action": "changed", "field": "targeting_flag_filters", "before": fifty, "after": ten})
        );
        let removed = changes((&state, Some(&ten)), (&state, None));
        assert_eq!(removed[0].to_json(SCOPE)["action"], "deleted");
    }

    #[test]
    fn every_field_a_client_writes_is_compared() {
        let before = draft();
        let after = SurveyState {
            name: "B".into(),
            description: "d".into(),
            survey_type: SurveyType::Widget,
            linked_flag_id: Some(FlagId(4)),
            questions: serde_json::from_value(
                json!([{"id": "q", "type": "open", "question": "?"}]),
            )
            .unwrap(),
            conditions: serde_json::from_value(json!({"url": "x"})).unwrap(),
            appearance: serde_json::from_value(json!({"position": "left"})).unwrap(),
            start_date: Some(Utc::now()),
            end_date: Some(Utc::now()),
            archived: true,
            responses_limit: Some(5),
            schedule: crate::survey::Schedule::Recurring,
            iteration_count: Some(2),
            iteration_frequency_days: Some(7),
            enable_partial_responses: true,
            base_language: crate::survey::LanguageCode::parse_base("fr").unwrap(),
            translations: serde_json::from_value(json!({"de": {"name": "N"}})).unwrap(),
            enable_iframe_embedding: true,
            response_sampling: crate::survey::ResponseSampling {
                start_date: Some(Utc::now()),
                interval_type: Some(crate::survey::SamplingIntervalType::Day),
                interval: Some(3),
                limit: Some(30),
                ..before.response_sampling.clone()
            },
            form_content: Some(crate::survey::FormContent::parse(json!({"type": "doc"})).unwrap()),
            iterations: before.iterations.clone(),
        };
        assert_eq!(
            fields(&changes((&before, None), (&after, Some(&filters(5))))),
            [
                "name",
                "description",
                "type",
                "schedule",
                "linked_flag_id",
                "targeting_flag_filters",
                "questions",
                "conditions",
                "appearance",
                "start_date",
                "end_date",
                "archived",
                "responses_limit",
                "iteration_count",
                "iteration_frequency_days",
                "response_sampling_start_date",
                "response_sampling_interval_type",
                "response_sampling_interval",
                "response_sampling_limit",
                "enable_partial_responses",
                "enable_iframe_embedding",
                "base_language",
                "translations",
                "form_content",
            ]
        );
    }

    #[test]
    fn a_launch_or_stop_records_its_date_as_changed_even_from_null() {
        let at = Utc.with_ymd_and_hms(2026, 11, 29, 4, 0, 0).unwrap();
        let launched = switched("launched", "NPS", "start_date", None, at, USER);
        assert_eq!((launched.user, launched.activity), (USER, "launched"));
        assert_eq!(
            launched.detail,
            json!({"name": "NPS", "changes": [{"type": "Survey", "action": "changed", "field": "start_date", "before": null, "after": "2026-11-29T04:00:00Z"}]})
        );
        let later = at + chrono::Duration::days(1);
        let stopped = switched("stopped", "NPS", "end_date", Some(later), at, USER);
        assert_eq!(
            stopped.detail["changes"][0],
            json!({"type": "Survey", "action": "changed", "field": "end_date", "before": "2026-11-30T04:00:00Z", "after": "2026-11-29T04:00:00Z"})
        );
    }

    #[test]
    fn entries_carry_the_user_the_name_and_the_changes() {
        let created = created("Onboarding", USER);
        assert_eq!(
            (created.user, created.activity, created.detail),
            (
                USER,
                "created",
                json!({"name": "Onboarding", "changes": null})
            )
        );
        let deleted = deleted("Onboarding", USER);
        assert_eq!(deleted.activity, "deleted");
        assert_eq!(deleted.detail["changes"], Value::Null);
        let before = draft();
        let mut after = before.clone();
        after.description = "new".into();
        let updated = updated((&before, None), (&after, None), USER).unwrap();
        assert_eq!(updated.activity, "updated");
        assert_eq!(updated.detail["name"], "Onboarding");
        assert_eq!(updated.detail["changes"][0]["field"], "description");
        let source = SurveyId::generate();
        let copied = copied("Copy", source, USER);
        assert_eq!(
            copied.detail["changes"],
            json!([{"type": "Survey", "action": "created", "field": "source_survey_id", "before": null, "after": source.0.to_string()}])
        );
    }
}
