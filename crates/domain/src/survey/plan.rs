//! Planning a write: the survey's next state from its stored state and the request, the
//! cross-field rules, and what happens to its targeting flag. Pure: no storage access.

use rand::Rng as _;
use serde_json::{Map, Value};

use super::input::SurveyInput;
use super::{Attach, Detach, Iterations, Survey, SurveyState, SurveyType, TargetingPlan};
use crate::error::{ValidationCode, ValidationError};
use crate::feature_flag::{FeatureFlag, NewFlag, validate_filters};
use crate::input::Patch;
use crate::tenancy::{ProjectId, UserId};

/// Condition keys an external survey may not set.
const EXTERNAL_FORBIDDEN_CONDITIONS: [&str; 9] = [
    "url",
    "urlMatchType",
    "selector",
    "seenSurveyWaitPeriodInDays",
    "linkedFlagVariant",
    "deviceTypes",
    "deviceTypesMatchType",
    "actions",
    "events",
];

/// Flags the request names, looked up among the project's live flags (`None`: no such flag).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReferencedFlags {
    pub linked: Option<FeatureFlag>,
    pub targeting: Option<FeatureFlag>,
}

fn invalid(attr: &str, detail: impl Into<String>) -> ValidationError {
    ValidationError::field(attr, ValidationCode::Invalid, detail)
}

/// The state of a new survey: the request over the defaults.
///
/// # Errors
/// `name` or `type` missing, or a cross-field rule broken.
pub(crate) fn plan_create(
    input: &SurveyInput,
    flags: &ReferencedFlags,
    project: ProjectId,
    creator: UserId,
) -> Result<(SurveyState, TargetingPlan), ValidationError> {
    let name = input
        .name
        .clone()
        .value()
        .ok_or_else(|| ValidationError::required("name"))?;
    let survey_type = input
        .survey_type
        .value()
        .ok_or_else(|| ValidationError::required("type"))?;
    let defaults = SurveyState::draft(name, survey_type);
    let state = next_state(&defaults, input)?;
    check_rules(&state, input, None, flags)?;
    let attach = match (&input.targeting_flag_filters, &flags.targeting) {
        (Some(filters), _) => Some(Attach::New(targeting_flag(
            project,
            &state.name,
            filters,
            creator,
        )?)),
        (None, Some(adopted)) => Some(Attach::Existing(adopted.id)),
        (None, None) => None,
    };
    let targeting = TargetingPlan {
        detach: None,
        attach,
        filters: None,
        active: state.is_running(),
    };
    Ok((state, targeting))
}

/// The next state of a stored survey and the change to its targeting flag.
///
/// # Errors
/// A cross-field rule broken by the result.
pub(crate) fn plan_update(
    current: &Survey,
    input: &SurveyInput,
    flags: &ReferencedFlags,
    creator: UserId,
) -> Result<(SurveyState, TargetingPlan), ValidationError> {
    let state = next_state(&current.state, input)?;
    check_rules(&state, input, Some(current), flags)?;
    if let (Some(count @ 1..), Some(iteration)) =
        (state.iteration_count, current.state.iterations.current)
        && iteration > count
    {
        return Err(invalid(
            "iteration_count",
            format!("Cannot change survey recurrence to {count}, should be at least {iteration}"),
        ));
    }

    let mut plan = TargetingPlan {
        active: state.is_running(),
        ..TargetingPlan::default()
    };
    let mut kept = current.targeting_flag.as_ref();
    // A targeting flag deleted through the flags API is let go of, never revived.
    if let Some(deleted) = kept.filter(|flag| flag.deleted) {
        plan.detach = Some(Detach {
            flag: deleted.id,
            delete: false,
        });
        kept = None;
    }
    let detach_current = |plan: &mut TargetingPlan, kept: &mut Option<&FeatureFlag>| {
        if let Some(flag) = kept.take() {
            plan.detach = Some(Detach {
                flag: flag.id,
                delete: current.owns_targeting_flag,
            });
        }
    };
    if input.remove_targeting_flag || matches!(input.targeting_flag_id, Patch::Null) {
        detach_current(&mut plan, &mut kept);
    }
    if let Some(filters) = &input.targeting_flag_filters {
        match kept {
            Some(flag) => {
                let mut merged = flag.filters.clone();
                merged.extend(filters.clone());
                plan.filters = Some(validate_filters(&Value::Object(merged))?);
            }
            None => {
                plan.attach = Some(Attach::New(targeting_flag(
                    current.project_id,
                    &state.name,
                    filters,
                    creator,
                )?))
            }
        }
    } else if let Some(adopted) = &flags.targeting
        && kept.is_none_or(|flag| flag.id != adopted.id)
    {
        detach_current(&mut plan, &mut kept);
        plan.attach = Some(Attach::Existing(adopted.id));
    }
    Ok((state, plan))
}

/// The request's fields applied over `base`, with the iterations recomputed.
fn next_state(base: &SurveyState, input: &SurveyInput) -> Result<SurveyState, ValidationError> {
    let mut state = base.clone();
    if let Patch::Value(name) = &input.name {
        state.name.clone_from(name);
    }
    if let Patch::Value(description) = &input.description {
        state.description.clone_from(description);
    }
    if let Patch::Value(kind) = input.survey_type {
        state.survey_type = kind;
    }
    if let Patch::Value(schedule) = input.schedule {
        state.schedule = schedule;
    }
    state.linked_flag_id = input.linked_flag_id.apply(state.linked_flag_id);
    state.questions = input.questions.clone().apply(state.questions);
    state.conditions = input.conditions.clone().apply(state.conditions);
    state.appearance = input.appearance.clone().apply(state.appearance);
    state.start_date = input.start_date.apply(state.start_date);
    state.end_date = input.end_date.apply(state.end_date);
    if let Some(archived) = input.archived {
        state.archived = archived;
    }
    state.responses_limit = input.responses_limit.apply(state.responses_limit);
    state.iteration_count = input.iteration_count.apply(state.iteration_count);
    state.iteration_frequency_days = input
        .iteration_frequency_days
        .apply(state.iteration_frequency_days);
    match input.enable_partial_responses {
        Patch::Value(enabled) => state.enable_partial_responses = enabled,
        Patch::Null => state.enable_partial_responses = false,
        Patch::Absent => {}
    }
    state.iterations = Iterations::compute(
        state.iteration_count,
        state.iteration_frequency_days,
        state.start_date,
        &base.iterations,
    )?;
    Ok(state)
}

fn check_rules(
    state: &SurveyState,
    input: &SurveyInput,
    current: Option<&Survey>,
    flags: &ReferencedFlags,
) -> Result<(), ValidationError> {
    if matches!(input.linked_flag_id, Patch::Value(_)) && flags.linked.is_none() {
        return Err(invalid(
            "linked_flag_id",
            "Feature Flag with this ID does not exist",
        ));
    }
    if matches!(input.targeting_flag_id, Patch::Value(_)) && flags.targeting.is_none() {
        return Err(invalid(
            "targeting_flag_id",
            "Targeting Feature Flag with this ID does not exist",
        ));
    }
    if !input.conditions.is_absent() || !input.linked_flag_id.is_absent() {
        let linked = match input.linked_flag_id {
            Patch::Value(_) => flags.linked.as_ref(),
            Patch::Null => None,
            Patch::Absent => current.and_then(|survey| survey.linked_flag.as_ref()),
        };
        check_linked_flag_variant(state.conditions.as_ref(), linked)?;
    }
    if let Some(filters) = &input.targeting_flag_filters {
        check_targeting_filters(filters)?;
    }
    check_shuffle_and_branching(state)?;
    if state.survey_type == SurveyType::ExternalSurvey {
        check_external(state, input)?;
    }
    if let (Some(start), Some(end)) = (state.start_date, state.end_date)
        && end < start
    {
        return Err(invalid(
            "end_date",
            "End date must not be before the start date.",
        ));
    }
    Ok(())
}

fn check_linked_flag_variant(
    conditions: Option<&Map<String, Value>>,
    linked: Option<&FeatureFlag>,
) -> Result<(), ValidationError> {
    let variant = conditions
        .and_then(|c| c.get("linkedFlagVariant"))
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty() && *v != "any");
    let Some(variant) = variant else {
        return Ok(());
    };
    let Some(flag) = linked else {
        return Err(invalid(
            "conditions",
            "linkedFlagVariant can only be used when a linked_flag_id is specified",
        ));
    };
    let variants = flag.variant_keys();
    if variants.is_empty() {
        return Err(invalid(
            "conditions",
            format!(
                "Feature flag variant '{variant}' specified but the linked feature flag has no variants"
            ),
        ));
    }
    if !variants.iter().any(|v| v == variant) {
        return Err(invalid(
            "conditions",
            format!(
                "Feature flag variant '{variant}' does not exist. Available variants: {}",
                variants.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Targeting that reaches everyone is no targeting: PostHog refuses it.
fn check_targeting_filters(filters: &Map<String, Value>) -> Result<(), ValidationError> {
    let groups = filters
        .get("groups")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let everyone = groups.iter().any(|group| {
        let rollout_all = match group.get("rollout_percentage") {
            None | Some(Value::Null) => true,
            Some(p) => p.as_f64() == Some(100.0),
        };
        let no_properties = group
            .get("properties")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        rollout_all && no_properties
    });
    if everyone {
        return Err(invalid(
            "targeting_flag_filters",
            "Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting",
        ));
    }
    validate_filters(&Value::Object(filters.clone())).map(|_| ())
}

fn check_shuffle_and_branching(state: &SurveyState) -> Result<(), ValidationError> {
    let shuffled = state
        .appearance
        .as_ref()
        .and_then(|a| a.get("shuffleQuestions"))
        .is_some_and(|v| v.as_bool() == Some(true));
    let branched = state
        .questions
        .as_ref()
        .and_then(Value::as_array)
        .is_some_and(|qs| {
            qs.iter()
                .any(|q| q.get("branching").is_some_and(|b| !b.is_null()))
        });
    if shuffled && branched {
        return Err(invalid(
            "questions",
            "Question shuffling and question branching cannot be used together. Please disable one of these features.",
        ));
    }
    Ok(())
}

fn check_external(state: &SurveyState, input: &SurveyInput) -> Result<(), ValidationError> {
    if state.linked_flag_id.is_some() {
        return Err(invalid(
            "linked_flag_id",
            "linked_flag_id is not allowed for external surveys",
        ));
    }
    if input.targeting_flag_filters.is_some() {
        return Err(invalid(
            "targeting_flag_filters",
            "targeting_flag_filters is not allowed for external surveys",
        ));
    }
    if let Some(conditions) = &state.conditions {
        let forbidden: Vec<&str> = EXTERNAL_FORBIDDEN_CONDITIONS
            .into_iter()
            .filter(|key| match conditions.get(*key) {
                None | Some(Value::Null) => false,
                Some(Value::Object(group)) => group
                    .get("values")
                    .and_then(Value::as_array)
                    .is_some_and(|values| !values.is_empty()),
                Some(_) => true,
            })
            .collect();
        if !forbidden.is_empty() {
            return Err(invalid(
                "conditions",
                format!(
                    "The following condition fields are not allowed for external surveys: {}",
                    forbidden.join(", ")
                ),
            ));
        }
    }
    if state
        .appearance
        .as_ref()
        .and_then(|a| a.get("surveyPopupDelaySeconds"))
        .is_some_and(|v| !v.is_null())
    {
        return Err(invalid(
            "appearance",
            "surveyPopupDelaySeconds is not allowed for external surveys",
        ));
    }
    Ok(())
}

/// A new targeting flag: `survey-targeting-<10 hex>`, named after the survey, inactive until
/// the plan's `active` says otherwise.
fn targeting_flag(
    project: ProjectId,
    survey_name: &str,
    filters: &Map<String, Value>,
    creator: UserId,
) -> Result<NewFlag, ValidationError> {
    let suffix: String = (0..10)
        .map(|_| char::from_digit(rand::rng().random_range(0..16), 16).expect("digit below 16"))
        .collect();
    Ok(NewFlag {
        project_id: project,
        name: format!("Targeting flag for survey {survey_name}"),
        key: format!("survey-targeting-{suffix}"),
        filters: validate_filters(&Value::Object(filters.clone()))?,
        active: false,
        ensure_experience_continuity: false,
        created_by: Some(creator),
    })
}
