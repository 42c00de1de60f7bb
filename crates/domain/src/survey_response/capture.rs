//! From events as the SDKs send them to the survey events Burrow stores: which events are kept,
//! where `distinct_id` and the answers sit, and what time an event happened.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{CONTEXT_PROPERTIES, SurveyEvent, SurveyEventKind};
use crate::error::{ValidationCode, ValidationError};
use crate::group::{GroupSet, MAX_GROUP_NAME_CHARS};
use crate::person::{
    LAST_SEEN_SURVEY_DATE, PersonSet, last_seen_survey_date, merge_set, stored_distinct_id,
};

/// Longest `distinct_id`, `$survey_id` or `$survey_submission_id` kept; PostHog truncates
/// distinct ids at 200 characters too.
pub const MAX_ID_CHARS: usize = 200;

/// How far in the future an SDK's clock may put an event before it is taken as "now" (PostHog
/// allows 23 hours).
const MAX_FUTURE: Duration = Duration::hours(23);

/// One event as an SDK sent it, after the transport's encodings are undone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CapturedEvent {
    pub event: String,
    pub uuid: Option<Uuid>,
    /// The top-level `distinct_id`; the web SDK sends it only in `properties`.
    pub distinct_id: Option<String>,
    /// The SDK's clock when the event happened.
    pub timestamp: Option<DateTime<Utc>>,
    /// Milliseconds before sending that the event happened (older SDKs, instead of `timestamp`).
    pub offset_ms: Option<i64>,
    pub properties: Map<String, Value>,
}

/// One capture request's events, with the SDK's clock at sending time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureBatch {
    pub events: Vec<CapturedEvent>,
    pub sent_at: Option<DateTime<Utc>>,
}

/// The event posthog-js sends when a person joins or leaves an early access feature
/// (`updateEarlyAccessFeatureEnrollment`), `$set`-ting its enrollment property.
pub const ENROLLMENT_EVENT: &str = "$feature_enrollment_update";
/// The person property that enrolls a person in the early access feature of a flag:
/// `$feature_enrollment/<flag key>`, read by the flag's `super_groups`.
pub const ENROLLMENT_PREFIX: &str = "$feature_enrollment/";

/// The event posthog-js's `group()` and the server SDKs' `group_identify` send: it names a
/// group (`$group_type`, `$group_key`) and sets its properties (`$group_set`).
pub const GROUP_IDENTIFY_EVENT: &str = "$groupidentify";

/// Whether capture keeps an event's properties: survey events all their `$survey_*` ones, their
/// context ([`CONTEXT_PROPERTIES`]) and `$set`, enrollment events their `$set`, group identifies their `$group_*` ones.
pub fn keeps_properties(event: &str) -> bool {
    SurveyEventKind::parse(event).is_some()
        || event == ENROLLMENT_EVENT
        || event == GROUP_IDENTIFY_EVENT
}

impl CaptureBatch {
    /// The batch's survey events, timed by the server's clock `now`; other events are dropped.
    ///
    /// # Errors
    /// `Invalid` when any event lacks a name or a `distinct_id`, or names ids longer than
    /// [`MAX_ID_CHARS`]: a rejected batch stores nothing, so the SDK's retry cannot half-apply.
    pub fn survey_events(&self, now: DateTime<Utc>) -> Result<Vec<SurveyEvent>, ValidationError> {
        let mut kept = Vec::new();
        for (index, event) in self.events.iter().enumerate() {
            if event.event.is_empty() {
                return Err(ValidationError::field(
                    "event",
                    ValidationCode::Required,
                    format!("Event {index} has no event name."),
                ));
            }
            let distinct_id = distinct_id(event).ok_or_else(|| {
                ValidationError::field(
                    "distinct_id",
                    ValidationCode::Required,
                    format!("Event {index} has no distinct_id."),
                )
            })?;
            let Some(kind) = SurveyEventKind::parse(&event.event) else {
                continue;
            };
            let survey_id = property_string(&event.properties, "$survey_id").unwrap_or_default();
            let submission_id = property_string(&event.properties, "$survey_submission_id")
                .filter(|id| !id.is_empty());
            for (attr, value) in [
                ("$survey_id", Some(&survey_id)),
                ("$survey_submission_id", submission_id.as_ref()),
            ] {
                if value.is_some_and(|v| v.chars().count() > MAX_ID_CHARS) {
                    return Err(ValidationError::field(
                        attr,
                        ValidationCode::MaxLength,
                        format!("Event {index}: {attr} is longer than {MAX_ID_CHARS} characters."),
                    ));
                }
            }
            kept.push(SurveyEvent {
                uuid: event.uuid.unwrap_or_else(Uuid::now_v7),
                kind,
                survey_id,
                distinct_id,
                timestamp: self.happened_at(event, now),
                submission_id,
                properties: survey_properties(&event.properties),
            });
        }
        Ok(kept)
    }

    /// What the batch's survey events `$set` on their persons (`properties.$set`, where the SDKs
    /// put it, e.g. `{"$survey_responded/<id>": true}`), with `$last_seen_survey_date` set to
    /// the time of each `survey shown` event (by the server's clock `now`, as
    /// [`Self::survey_events`] times it; over the SDK's own value, as PostHog's ingestion sets
    /// it), and the early-access enrollments of `$feature_enrollment_update` events (their
    /// `$feature_enrollment/<flag key>` keys only): one set per distinct id, first seen first,
    /// later events' keys winning but an older last-seen date ([`merge_set`]). Events without a
    /// `distinct_id` are skipped (the batch is refused by [`Self::survey_events`] anyway).
    pub fn person_sets(&self, now: DateTime<Utc>) -> Vec<PersonSet> {
        let mut sets: Vec<PersonSet> = Vec::new();
        // Where each person's set sits in `sets`: one lookup an event, whatever the batch's size.
        let mut positions: HashMap<String, usize> = HashMap::new();
        for event in &self.events {
            let enrollment = event.event == ENROLLMENT_EVENT;
            let kind = SurveyEventKind::parse(&event.event);
            if kind.is_none() && !enrollment {
                continue;
            }
            let Some(distinct_id) = distinct_id(event) else {
                continue;
            };
            let mut set: Map<String, Value> = match event.properties.get("$set") {
                Some(Value::Object(set)) if enrollment => set
                    .iter()
                    .filter(|(key, _)| key.starts_with(ENROLLMENT_PREFIX))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect(),
                Some(Value::Object(set)) => set.clone(),
                _ => Map::new(),
            };
            if kind == Some(SurveyEventKind::Shown) {
                let seen = last_seen_survey_date(self.happened_at(event, now));
                set.insert(LAST_SEEN_SURVEY_DATE.to_owned(), seen);
            }
            if set.is_empty() {
                continue;
            }
            match positions.get(&distinct_id) {
                Some(&position) => merge_set(&mut sets[position].properties, set),
                None => {
                    positions.insert(distinct_id.clone(), sets.len());
                    sets.push(PersonSet {
                        distinct_id,
                        properties: set,
                    });
                }
            }
        }
        sets
    }

    /// What the batch's `$groupidentify` events set: one set per group (type and key), first
    /// seen first, later events' `$group_set` keys winning. An event naming no type (or one that
    /// is not a string), no key (a string or a number, taken as its text), or either longer than
    /// [`MAX_GROUP_NAME_CHARS`] is dropped, as PostHog's ingestion drops it, without refusing
    /// the batch; a `$group_set` that is absent or not an object sets nothing, but the group is
    /// still identified.
    pub fn group_sets(&self) -> Vec<GroupSet> {
        let mut sets: Vec<GroupSet> = Vec::new();
        // Where each group's set sits in `sets`: one lookup an event, whatever the batch's size.
        let mut positions: HashMap<(String, String), usize> = HashMap::new();
        for event in &self.events {
            if event.event != GROUP_IDENTIFY_EVENT {
                continue;
            }
            let Some(Value::String(group_type)) = event.properties.get("$group_type") else {
                continue;
            };
            let Some(group_key) = property_string(&event.properties, "$group_key") else {
                continue;
            };
            let named =
                |text: &str| !text.is_empty() && text.chars().count() <= MAX_GROUP_NAME_CHARS;
            if !named(group_type) || !named(&group_key) {
                continue;
            }
            let set = match event.properties.get("$group_set") {
                Some(Value::Object(set)) => set.clone(),
                _ => Map::new(),
            };
            match positions.get(&(group_type.clone(), group_key.clone())) {
                Some(&position) => sets[position].properties.extend(set),
                None => {
                    positions.insert((group_type.clone(), group_key.clone()), sets.len());
                    sets.push(GroupSet {
                        group_type: group_type.clone(),
                        group_key,
                        properties: set,
                    });
                }
            }
        }
        sets
    }

    /// When the event happened by the server's clock: the SDK's timestamp corrected by how far
    /// its clock was off when sending (`sent_at` vs `now`), as PostHog's ingestion does.
    fn happened_at(&self, event: &CapturedEvent, now: DateTime<Utc>) -> DateTime<Utc> {
        let at = match (event.timestamp, self.sent_at, event.offset_ms) {
            (Some(timestamp), Some(sent_at), _) => {
                now.checked_add_signed(timestamp.signed_duration_since(sent_at))
            }
            (Some(timestamp), None, _) => Some(timestamp),
            (None, _, Some(offset)) => {
                Duration::try_milliseconds(offset).and_then(|offset| now.checked_sub_signed(offset))
            }
            (None, _, None) => Some(now),
        };
        match at {
            Some(at) if at <= now + MAX_FUTURE => at,
            _ => now,
        }
    }
}

/// The top-level `distinct_id`, else `properties.distinct_id`; truncated to [`MAX_ID_CHARS`].
fn distinct_id(event: &CapturedEvent) -> Option<String> {
    event
        .distinct_id
        .clone()
        .or_else(|| property_string(&event.properties, "distinct_id"))
        .filter(|id| !id.is_empty())
        .map(|id| stored_distinct_id(&id))
}

/// A property as text: strings as they are, numbers as written (SDKs send ids of both kinds).
fn property_string(properties: &Map<String, Value>, key: &str) -> Option<String> {
    match properties.get(key)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The properties a survey event is kept with: `$survey_*` (answers, questions, completion,
/// iteration, language) and where it was answered ([`CONTEXT_PROPERTIES`]).
fn survey_properties(properties: &Map<String, Value>) -> Map<String, Value> {
    properties
        .iter()
        .filter(|(key, _)| {
            key.starts_with("$survey_") || CONTEXT_PROPERTIES.contains(&key.as_str())
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + seconds, 0).unwrap()
    }

    fn event(name: &str, properties: Value) -> CapturedEvent {
        CapturedEvent {
            event: name.into(),
            properties: properties.as_object().unwrap().clone(),
            ..CapturedEvent::default()
        }
    }

    fn batch(events: Vec<CapturedEvent>) -> CaptureBatch {
        CaptureBatch {
            events,
            sent_at: None,
        }
    }

    #[test]
    fn person_sets_gather_the_survey_events_set_per_person() {
        let batch = batch(vec![
            event(
                "survey sent",
                json!({"distinct_id": "p", "$survey_id": "s", "$set": {"$survey_responded/s": true, "a": 1}}),
            ),
            event(
                "$pageview",
                json!({"distinct_id": "p", "$set": {"email": "x"}}),
            ),
            event(
                "survey dismissed",
                json!({"distinct_id": "q", "$survey_id": "t", "$set": {"$survey_dismissed/t": true}}),
            ),
            event(
                "survey abandoned",
                json!({"distinct_id": "p", "$survey_id": "s", "$set": {"a": "b"}}),
            ),
            event(
                "survey abandoned",
                json!({"distinct_id": "q", "$survey_id": "t", "$set": {}}),
            ),
            event(
                "survey abandoned",
                json!({"distinct_id": "r", "$survey_id": "t", "$set": "x"}),
            ),
        ]);
        assert_eq!(
            batch.person_sets(at(0)),
            vec![
                PersonSet {
                    distinct_id: "p".to_owned(),
                    properties: json!({"$survey_responded/s": true, "a": "b"})
                        .as_object()
                        .unwrap()
                        .clone()
                },
                PersonSet {
                    distinct_id: "q".to_owned(),
                    properties: json!({"$survey_dismissed/t": true})
                        .as_object()
                        .unwrap()
                        .clone()
                },
            ]
        );
    }

    #[test]
    fn survey_shown_sets_when_the_person_last_saw_a_survey_the_latest_kept() {
        let shown = |distinct_id: &str, seconds: i64, set: Value| {
            let mut shown = event(
                "survey shown",
                json!({"distinct_id": distinct_id, "$survey_id": "s", "$set": set}),
            );
            shown.timestamp = Some(at(seconds));
            shown
        };
        let batch = batch(vec![
            // posthog-js's own date is kept under its own name; one under the server's name
            // is replaced by the event's time, as PostHog's ingestion replaces it.
            shown(
                "p",
                -60,
                json!({"$survey_last_seen_date": "2027-01-15T07:59:00.000Z",
                       "$last_seen_survey_date": "2099-01-01T00:00:00.000Z"}),
            ),
            // An earlier event sent after it does not take the date back.
            shown("p", -120, json!(null)),
            shown("q", -30, json!("not an object")),
        ]);
        let sets = batch.person_sets(at(0));
        assert_eq!(
            sets.iter()
                .map(|set| (
                    set.distinct_id.as_str(),
                    Value::Object(set.properties.clone())
                ))
                .collect::<Vec<_>>(),
            [
                (
                    "p",
                    json!({"$survey_last_seen_date": "2027-01-15T07:59:00.000Z",
                           "$last_seen_survey_date": "2027-01-15T07:59:00.000Z"})
                ),
                (
                    "q",
                    json!({"$last_seen_survey_date": "2027-01-15T07:59:30.000Z"})
                ),
            ]
        );
    }

    fn group_set(group_type: &str, group_key: &str, properties: Value) -> GroupSet {
        GroupSet {
            group_type: group_type.to_owned(),
            group_key: group_key.to_owned(),
            properties: properties.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn group_sets_gather_each_groups_group_set_later_keys_winning() {
        let batch = batch(vec![
            event(
                "$groupidentify",
                json!({"distinct_id": "p", "$group_type": "company", "$group_key": "acme",
                       "$group_set": {"name": "Acme", "plan": "free"}}),
            ),
            event(
                "$pageview",
                json!({"distinct_id": "p", "$group_type": "company", "$group_key": "acme",
                       "$group_set": {"name": "Ignored"}}),
            ),
            event(
                "$groupidentify",
                json!({"distinct_id": "p", "$group_type": "team", "$group_key": 42}),
            ),
            event(
                "$groupidentify",
                json!({"distinct_id": "p", "$group_type": "company", "$group_key": "acme",
                       "$group_set": {"plan": "pro"}}),
            ),
        ]);
        assert_eq!(
            batch.group_sets(),
            vec![
                group_set("company", "acme", json!({"name": "Acme", "plan": "pro"})),
                group_set("team", "42", json!({})),
            ]
        );
    }

    #[test]
    fn group_identifies_without_a_usable_type_or_key_are_dropped_not_refused() {
        let long = "x".repeat(MAX_GROUP_NAME_CHARS + 1);
        let longest = "x".repeat(MAX_GROUP_NAME_CHARS);
        let identify = |properties: Value| event("$groupidentify", properties);
        let batch = batch(vec![
            identify(json!({"distinct_id": "p", "$group_key": "acme"})),
            identify(json!({"distinct_id": "p", "$group_type": 1, "$group_key": "acme"})),
            identify(json!({"distinct_id": "p", "$group_type": "", "$group_key": "acme"})),
            identify(json!({"distinct_id": "p", "$group_type": "company"})),
            identify(json!({"distinct_id": "p", "$group_type": "company", "$group_key": ""})),
            identify(json!({"distinct_id": "p", "$group_type": "company", "$group_key": true})),
            identify(json!({"distinct_id": "p", "$group_type": long, "$group_key": "acme"})),
            identify(json!({"distinct_id": "p", "$group_type": "company", "$group_key": long})),
            identify(
                json!({"distinct_id": "p", "$group_type": "company", "$group_key": longest,
                            "$group_set": "not an object"}),
            ),
        ]);
        assert_eq!(batch.survey_events(at(0)).unwrap(), vec![]);
        assert_eq!(
            batch.group_sets(),
            vec![group_set("company", &longest, json!({}))]
        );
    }

    #[test]
    fn group_identifies_keep_their_properties() {
        assert!(keeps_properties(GROUP_IDENTIFY_EVENT));
        assert!(!keeps_properties("$pageview"));
    }

    #[test]
    fn keeps_survey_events_and_drops_the_rest() {
        let batch = batch(vec![
            event("$pageview", json!({"distinct_id": "p"})),
            event(
                "survey sent",
                json!({"distinct_id": "p", "$survey_id": "s", "$survey_response_q1": 5,
                       "$current_url": "x", "$lib": "web", "$survey_iteration": 2}),
            ),
            event(
                "survey shown",
                json!({"distinct_id": "p", "$survey_id": "s"}),
            ),
            event(
                "survey abandoned",
                json!({"distinct_id": "p", "$survey_id": "s", "$survey_partially_completed": true}),
            ),
        ]);
        let kept = batch.survey_events(at(0)).unwrap();
        assert_eq!(
            kept.iter().map(|e| e.kind).collect::<Vec<_>>(),
            [
                SurveyEventKind::Sent,
                SurveyEventKind::Shown,
                SurveyEventKind::Abandoned
            ]
        );
        assert_eq!(kept[0].survey_id, "s");
        // Answers, the survey's iteration and where it was answered; not the library.
        assert_eq!(
            Value::Object(kept[0].properties.clone()),
            json!({"$survey_id": "s", "$survey_response_q1": 5, "$current_url": "x",
                   "$survey_iteration": 2})
        );
        assert!(kept[0].is_response() && !kept[1].is_response() && kept[2].is_response());
    }

    #[test]
    fn distinct_id_is_read_at_the_top_level_first_then_in_properties() {
        let mut top = event("survey sent", json!({"distinct_id": "inner"}));
        top.distinct_id = Some("outer".into());
        let inner = event("survey sent", json!({"distinct_id": 42}));
        let kept = batch(vec![top, inner]).survey_events(at(0)).unwrap();
        assert_eq!(kept[0].distinct_id, "outer");
        assert_eq!(kept[1].distinct_id, "42");
    }

    #[test]
    fn an_event_without_distinct_id_rejects_the_whole_batch() {
        let error = batch(vec![
            event("survey sent", json!({"distinct_id": "p"})),
            event("$pageview", json!({})),
        ])
        .survey_events(at(0))
        .unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("distinct_id"));
        assert!(error.detail.contains("Event 1"), "{}", error.detail);
    }

    #[test]
    fn an_event_without_a_name_is_rejected() {
        let error = batch(vec![event("", json!({"distinct_id": "p"}))])
            .survey_events(at(0))
            .unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("event"));
    }

    #[test]
    fn overlong_ids_are_rejected_and_overlong_distinct_ids_truncated() {
        let long = "x".repeat(MAX_ID_CHARS + 1);
        let error = batch(vec![event(
            "survey sent",
            json!({"distinct_id": "p", "$survey_id": long}),
        )])
        .survey_events(at(0))
        .unwrap_err();
        assert_eq!(error.attr.as_deref(), Some("$survey_id"));
        let kept = batch(vec![event("survey sent", json!({"distinct_id": long}))])
            .survey_events(at(0))
            .unwrap();
        assert_eq!(kept[0].distinct_id.chars().count(), MAX_ID_CHARS);
    }

    #[test]
    fn an_empty_submission_id_is_no_submission_id() {
        let kept = batch(vec![event(
            "survey sent",
            json!({"distinct_id": "p", "$survey_submission_id": ""}),
        )])
        .survey_events(at(0))
        .unwrap();
        assert_eq!(kept[0].submission_id, None);
        assert_eq!(kept[0].submission_key(), kept[0].uuid.to_string());
    }

    #[test]
    fn timestamps_are_corrected_by_the_sdks_clock_skew() {
        let mut skewed = event("survey sent", json!({"distinct_id": "p"}));
        // The SDK's clock runs an hour ahead: it sent at +3600 what happened at +3590.
        skewed.timestamp = Some(at(3590));
        let batch = CaptureBatch {
            events: vec![skewed],
            sent_at: Some(at(3600)),
        };
        assert_eq!(batch.survey_events(at(0)).unwrap()[0].timestamp, at(-10));
    }

    #[test]
    fn offsets_count_back_from_now_and_far_futures_become_now() {
        let mut offset = event("survey sent", json!({"distinct_id": "p"}));
        offset.offset_ms = Some(5_000);
        let mut future = event("survey sent", json!({"distinct_id": "p"}));
        future.timestamp = Some(at(24 * 3600));
        let mut overflowing = event("survey sent", json!({"distinct_id": "p"}));
        overflowing.offset_ms = Some(i64::MIN);
        let kept = batch(vec![offset, future, overflowing])
            .survey_events(at(0))
            .unwrap();
        assert_eq!(kept[0].timestamp, at(-5));
        assert_eq!(kept[1].timestamp, at(0));
        assert_eq!(kept[2].timestamp, at(0));
    }

    #[test]
    fn answers_are_keyed_by_suffix_and_the_legacy_key_is_question_zero() {
        let kept = batch(vec![event(
            "survey sent",
            json!({"distinct_id": "p", "$survey_response": "legacy", "$survey_response_abc": [1, 2]}),
        )])
        .survey_events(at(0))
        .unwrap();
        assert_eq!(
            Value::Object(kept[0].answers()),
            json!({"0": "legacy", "abc": [1, 2]})
        );
    }
}
