//! PostHog's internal targeting flag: every survey has one, and the web SDK shows the survey
//! only while it is on for the visitor. It is off once the person answered or dismissed the
//! survey (in the current iteration), which the SDK records as the person properties
//! `$survey_responded/<id>` and `$survey_dismissed/<id>` on the survey events it sends; and,
//! when the survey or its project sets a wait period, while the person saw any survey within it
//! (`$last_seen_survey_date`, which capture sets on every `survey shown`, on whichever device).
//!
//! PostHog stores these flags as rows; Burrow derives them from the survey and its project's
//! `survey_config`, so they cannot be edited, deleted or left behind, a change of either
//! reaches every node's SDK snapshot as it commits, and `/flags` evaluates them like any other
//! flag.

use serde_json::{Map, Value};

use super::Survey;
use crate::feature_flag::{
    ConditionSet, FeatureFlag, FlagFilters, FlagId, Operator, PropertyFilter,
};
use crate::person::LAST_SEEN_SURVEY_DATE;
use crate::tenancy::{SurveyConfig, positive_days};

impl Survey {
    /// The key the public survey feed names and `/flags` answers:
    /// `survey-targeting-<survey id without dashes>-custom`, PostHog's shape, unique per survey.
    pub fn internal_targeting_flag_key(&self) -> String {
        format!("survey-targeting-{}-custom", self.id.0.simple())
    }

    /// The days a person must not have seen any survey for this one to be shown (PostHog's
    /// `get_effective_wait_period_days`): the longer of the survey's own wait and its project's
    /// (`config`), each counted only when it is a positive number of days. The project's wait
    /// is a floor: a survey may wait longer, never shorter.
    pub fn wait_period_days(&self, config: Option<&SurveyConfig>) -> Option<u64> {
        let own = self
            .state
            .conditions
            .as_ref()
            .and_then(|conditions| conditions.seen_survey_wait_period_in_days.clone())
            .and_then(|days| positive_days(&Value::Number(days)));
        own.max(config.and_then(SurveyConfig::wait_period_floor))
    }

    /// The flag itself, with the filters PostHog builds (`build_user_interacted_filters`): on
    /// for everyone who has neither dismissed nor answered the survey and, with a wait period
    /// of N days ([`Self::wait_period_days`]), either never saw a survey or last saw one more
    /// than N days ago (a second condition set); off for everyone once the survey has an end
    /// date (stopped by hand, or by reaching its `responses_limit`).
    pub fn internal_targeting_flag(&self, config: Option<&SurveyConfig>) -> FeatureFlag {
        let suffix = match self.state.iterations.current {
            Some(iteration) if iteration > 0 => format!("/{iteration}"),
            _ => String::new(),
        };
        let person_filter = |key: String, value: &str, operator: Operator| PropertyFilter {
            key: Some(key),
            value: Some(Value::String(value.to_owned())),
            operator: Some(operator),
            kind: Some("person".into()),
            extra: Map::new(),
        };
        let not_set = |key: String| person_filter(key, "is_not_set", Operator::IsNotSet);
        let interacted = [
            not_set(format!("$survey_dismissed/{}{suffix}", self.id.0)),
            not_set(format!("$survey_responded/{}{suffix}", self.id.0)),
        ];
        let set = |last_seen: Option<PropertyFilter>| ConditionSet {
            properties: Some(interacted.iter().cloned().chain(last_seen).collect()),
            rollout_percentage: Some(100.into()),
            variant: Some(String::new()),
            ..ConditionSet::default()
        };
        let groups = match self.wait_period_days(config) {
            None => vec![set(None)],
            Some(days) => vec![
                set(Some(not_set(LAST_SEEN_SURVEY_DATE.to_owned()))),
                set(Some(person_filter(
                    LAST_SEEN_SURVEY_DATE.to_owned(),
                    &format!("{days}d"),
                    Operator::IsDateBefore,
                ))),
            ],
        };
        self.derived_flag(self.internal_targeting_flag_key(), groups)
    }

    /// A flag Burrow derives from the survey (its internal targeting flag, its sampling flag):
    /// named as PostHog names the survey's flags, off once the survey has an end date, as
    /// posthog-js stops showing it then. It has no row, so its id is 0.
    pub(super) fn derived_flag(&self, key: String, groups: Vec<ConditionSet>) -> FeatureFlag {
        FeatureFlag {
            id: FlagId(0),
            project_id: self.project_id,
            name: format!("Targeting flag for survey {}", self.state.name),
            key,
            filters: FlagFilters {
                groups,
                ..FlagFilters::default()
            },
            deleted: false,
            active: self.state.end_date.is_none(),
            ensure_experience_continuity: false,
            is_remote_configuration: false,
            created_at: self.created_at,
            created_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};
    use uuid::Uuid;

    use serde_json::json;

    use super::*;
    use crate::feature_flag::Person;
    use crate::person::last_seen_survey_date;
    use crate::survey::{Conditions, SurveyId, SurveyState, SurveyType};
    use crate::tenancy::ProjectId;
    use crate::testing::CompiledEachTime;
    use crate::testing::evaluate;

    const ID: &str = "0192f5a4-0000-7000-8000-0000000000aa";

    fn survey(iteration: Option<i32>) -> Survey {
        let mut state = SurveyState::draft("NPS".into(), SurveyType::Popover);
        state.iterations.current = iteration;
        Survey {
            id: SurveyId(Uuid::parse_str(ID).unwrap()),
            project_id: ProjectId(7),
            state,
            linked_flag: None,
            targeting_flag: None,
            owns_targeting_flag: false,
            created_at: Utc::now(),
            created_by: None,
        }
    }

    /// A survey whose conditions set `seenSurveyWaitPeriodInDays` to `days`.
    fn waiting(days: Value) -> Survey {
        let mut survey = survey(None);
        survey.state.conditions =
            Some(Conditions::parse(json!({"seenSurveyWaitPeriodInDays": days})).unwrap());
        survey
    }

    fn project(days: Value) -> SurveyConfig {
        SurveyConfig::parse(json!({"seenSurveyWaitPeriodInDays": days})).unwrap()
    }

    fn shown_with(survey: &Survey, config: Option<&SurveyConfig>, properties: Value) -> bool {
        let Value::Object(properties) = properties else {
            panic!("properties are an object");
        };
        evaluate(
            &survey.internal_targeting_flag(config),
            &Person {
                distinct_id: "someone".into(),
                properties,
            },
            &CompiledEachTime,
        )
        .enabled
    }

    fn shown(survey: &Survey, properties: Value) -> bool {
        shown_with(survey, None, properties)
    }

    /// A person who last saw a survey `days_ago`.
    fn seen(days_ago: i64) -> Value {
        json!({"$last_seen_survey_date": last_seen_survey_date(Utc::now() - Duration::days(days_ago))})
    }

    fn filters_json(survey: &Survey, config: Option<&SurveyConfig>) -> Value {
        serde_json::to_value(&survey.internal_targeting_flag(config).filters).unwrap()
    }

    #[test]
    fn the_key_is_posthogs_shape_and_unique_per_survey() {
        assert_eq!(
            survey(None).internal_targeting_flag_key(),
            "survey-targeting-0192f5a40000700080000000000000aa-custom"
        );
    }

    #[test]
    fn without_a_wait_the_filters_are_posthogs_one_condition_set() {
        assert_eq!(
            filters_json(&survey(None), None),
            json!({"groups": [{"variant": "", "rollout_percentage": 100, "properties": [
                {"key": format!("$survey_dismissed/{ID}"), "value": "is_not_set",
                 "operator": "is_not_set", "type": "person"},
                {"key": format!("$survey_responded/{ID}"), "value": "is_not_set",
                 "operator": "is_not_set", "type": "person"}]}]})
        );
    }

    #[test]
    fn with_a_wait_the_filters_are_posthogs_two_condition_sets() {
        let interacted = |iteration: &str| {
            vec![
                json!({"key": format!("$survey_dismissed/{ID}{iteration}"), "value": "is_not_set",
                       "operator": "is_not_set", "type": "person"}),
                json!({"key": format!("$survey_responded/{ID}{iteration}"), "value": "is_not_set",
                       "operator": "is_not_set", "type": "person"}),
            ]
        };
        let expected = |iteration: &str, days: &str| {
            let with = |last_seen: Value| {
                let mut properties = interacted(iteration);
                properties.push(last_seen);
                json!({"variant": "", "rollout_percentage": 100, "properties": properties})
            };
            json!({"groups": [
                with(json!({"key": "$last_seen_survey_date", "value": "is_not_set",
                            "operator": "is_not_set", "type": "person"})),
                with(json!({"key": "$last_seen_survey_date", "value": days,
                            "operator": "is_date_before", "type": "person"})),
            ]})
        };
        assert_eq!(filters_json(&waiting(json!(30)), None), expected("", "30d"));
        let mut recurring = waiting(json!(7));
        recurring.state.iterations.current = Some(2);
        assert_eq!(filters_json(&recurring, None), expected("/2", "7d"));
    }

    #[test]
    fn the_wait_is_the_longer_of_the_surveys_and_the_projects_each_when_positive() {
        let cases = [
            (json!(null), json!(null), None),
            (json!(10), json!(null), Some(10)),
            (json!(null), json!(10), Some(10)),
            (json!(10), json!(30), Some(30)),
            (json!(30), json!(10), Some(30)),
            (json!(0), json!(5), Some(5)),
            (json!(5), json!(0), Some(5)),
            (json!(0), json!(0), None),
            (json!(-3), json!(null), None),
            (json!(2.9), json!(null), Some(2)),
            (json!(0.5), json!(null), None),
        ];
        for (own, floor, expected) in cases {
            let survey = if own.is_null() {
                survey(None)
            } else {
                waiting(own.clone())
            };
            let config = (!floor.is_null()).then(|| project(floor.clone()));
            assert_eq!(
                survey.wait_period_days(config.as_ref()),
                expected,
                "survey {own}, project {floor}"
            );
        }
        assert_eq!(
            waiting(json!(3)).wait_period_days(Some(&SurveyConfig::parse(json!({})).unwrap())),
            Some(3)
        );
    }

    #[test]
    fn a_person_who_answered_or_dismissed_is_not_shown_the_survey_again() {
        let survey = survey(None);
        assert!(shown(&survey, json!({})));
        assert!(shown(&survey, json!({"$survey_responded/another": true})));
        assert!(!shown(
            &survey,
            json!({format!("$survey_responded/{ID}"): true})
        ));
        assert!(!shown(
            &survey,
            json!({format!("$survey_dismissed/{ID}"): true})
        ));
    }

    #[test]
    fn a_person_who_saw_a_survey_within_the_wait_is_not_shown_another() {
        let thirty = waiting(json!(30));
        assert!(shown(&thirty, json!({})), "never saw a survey");
        assert!(!shown(&thirty, seen(1)));
        assert!(!shown(&thirty, seen(29)));
        assert!(shown(&thirty, seen(31)));
        // Answered long ago, still not shown again.
        let mut answered = seen(31);
        answered[format!("$survey_responded/{ID}")] = json!(true);
        assert!(!shown(&thirty, answered));
        // Without a wait, when the person last saw a survey does not matter.
        assert!(shown(&survey(None), seen(1)));
    }

    #[test]
    fn the_projects_wait_holds_a_survey_with_a_shorter_or_no_wait() {
        let floor = project(json!(30));
        assert!(!shown_with(&survey(None), Some(&floor), seen(10)));
        assert!(!shown_with(&waiting(json!(7)), Some(&floor), seen(10)));
        assert!(shown_with(&waiting(json!(7)), Some(&floor), seen(31)));
        // A survey waiting longer than the project keeps its own wait.
        assert!(!shown_with(&waiting(json!(60)), Some(&floor), seen(40)));
        assert!(shown_with(
            &waiting(json!(7)),
            Some(&project(json!(0))),
            seen(10)
        ));
    }

    #[test]
    fn a_recurring_survey_asks_again_in_its_next_iteration() {
        let answered_first = json!({format!("$survey_responded/{ID}/1"): true});
        assert!(!shown(&survey(Some(1)), answered_first.clone()));
        assert!(shown(&survey(Some(2)), answered_first));
    }
}
