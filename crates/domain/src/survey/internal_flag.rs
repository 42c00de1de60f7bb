//! PostHog's internal targeting flag: every survey has one, and the web SDK shows the survey
//! only while it is on for the visitor. It is off once the person answered or dismissed the
//! survey (in the current iteration), which the SDK records as the person properties
//! `$survey_responded/<id>` and `$survey_dismissed/<id>` on the survey events it sends.
//!
//! PostHog stores these flags as rows; Burrow derives them from the survey, so they cannot be
//! edited, deleted or left behind, and `/flags` evaluates them like any other flag.

use serde_json::{Map, Value};

use super::Survey;
use crate::feature_flag::{
    ConditionSet, FeatureFlag, FlagFilters, FlagId, Operator, PropertyFilter,
};

impl Survey {
    /// The key the public survey feed names and `/flags` answers:
    /// `survey-targeting-<survey id without dashes>-custom`, PostHog's shape, unique per survey.
    pub fn internal_targeting_flag_key(&self) -> String {
        format!("survey-targeting-{}-custom", self.id.0.simple())
    }

    /// The flag itself: on for everyone who has neither answered nor dismissed the survey, and
    /// off for everyone once the survey has an end date (stopped by hand, or by reaching its
    /// `responses_limit`), as posthog-js stops showing it then. It has no row, so its id is 0.
    pub fn internal_targeting_flag(&self) -> FeatureFlag {
        let suffix = match self.state.iterations.current {
            Some(iteration) if iteration > 0 => format!("/{iteration}"),
            _ => String::new(),
        };
        let not_set = |interaction: &str| PropertyFilter {
            key: Some(format!("${interaction}/{}{suffix}", self.id.0)),
            value: Some(Value::String("is_not_set".into())),
            operator: Some(Operator::IsNotSet),
            kind: Some("person".into()),
            extra: Map::new(),
        };
        let filters = FlagFilters {
            groups: vec![ConditionSet {
                properties: Some(vec![
                    not_set("survey_responded"),
                    not_set("survey_dismissed"),
                ]),
                rollout_percentage: Some(100.into()),
                ..ConditionSet::default()
            }],
            ..FlagFilters::default()
        };
        FeatureFlag {
            id: FlagId(0),
            project_id: self.project_id,
            name: format!("Targeting flag for survey {}", self.state.name),
            key: self.internal_targeting_flag_key(),
            filters,
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
    use chrono::Utc;
    use uuid::Uuid;

    use serde_json::json;

    use super::*;
    use crate::feature_flag::{Person, evaluate};
    use crate::survey::{SurveyId, SurveyState, SurveyType};
    use crate::tenancy::ProjectId;
    use crate::testing::CompiledEachTime;

    fn survey(iteration: Option<i32>) -> Survey {
        let mut state = SurveyState::draft("NPS".into(), SurveyType::Popover);
        state.iterations.current = iteration;
        Survey {
            id: SurveyId(Uuid::parse_str("0192f5a4-0000-7000-8000-0000000000aa").unwrap()),
            project_id: ProjectId(7),
            state,
            linked_flag: None,
            targeting_flag: None,
            owns_targeting_flag: false,
            created_at: Utc::now(),
            created_by: None,
        }
    }

    fn shown(survey: &Survey, properties: Value) -> bool {
        let Value::Object(properties) = properties else {
            panic!("properties are an object");
        };
        evaluate(
            &survey.internal_targeting_flag(),
            &Person {
                distinct_id: "someone".into(),
                properties,
            },
            &CompiledEachTime,
        )
        .enabled
    }

    #[test]
    fn the_key_is_posthogs_shape_and_unique_per_survey() {
        assert_eq!(
            survey(None).internal_targeting_flag_key(),
            "survey-targeting-0192f5a40000700080000000000000aa-custom"
        );
    }

    #[test]
    fn a_person_who_answered_or_dismissed_is_not_shown_the_survey_again() {
        let survey = survey(None);
        let id = "0192f5a4-0000-7000-8000-0000000000aa";
        assert!(shown(&survey, json!({})));
        assert!(shown(&survey, json!({"$survey_responded/another": true})));
        assert!(!shown(
            &survey,
            json!({format!("$survey_responded/{id}"): true})
        ));
        assert!(!shown(
            &survey,
            json!({format!("$survey_dismissed/{id}"): true})
        ));
    }

    #[test]
    fn a_recurring_survey_asks_again_in_its_next_iteration() {
        let id = "0192f5a4-0000-7000-8000-0000000000aa";
        let answered_first = json!({format!("$survey_responded/{id}/1"): true});
        assert!(!shown(&survey(Some(1)), answered_first.clone()));
        assert!(shown(&survey(Some(2)), answered_first));
    }
}
