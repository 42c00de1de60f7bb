//! Planning a write: the survey's next state from its stored state and the command, the
//! cross-field rules, and what happens to its targeting flag. Pure: no storage access. The
//! rules a store might otherwise apply (a deleted flag never serves, a flag created for a survey
//! is owned by it) are decided here, so every store only executes the plan.

use rand::Rng as _;
use serde_json::{Map, Value};

use super::activity;
use super::command::{NewSurvey, SurveyChanges};
use super::name::SurveyName;
use super::settings::Conditions;
use super::{
    Iterations, ReferencedFlags, Survey, SurveyState, SurveyType, SurveyWrite, TargetingFlag,
    TargetingPlan,
};
use crate::error::ValidationError;
use crate::feature_flag::{
    ConditionSet, FeatureFlag, FlagChanges, FlagFilters, FlagFiltersPatch, FlagId, FlagKey,
    NewFlag, PropertyFilter,
};
use crate::patch::Patch;
use crate::tenancy::UserId;

/// What to store for a new survey: the command over the defaults.
///
/// # Errors
/// A field or cross-field rule broken.
pub(crate) fn plan_create(
    survey: &NewSurvey,
    flags: &ReferencedFlags,
    creator: UserId,
) -> Result<SurveyWrite, ValidationError> {
    let defaults = SurveyState::draft(survey.name.as_str().to_owned(), survey.survey_type);
    let changes = &survey.changes;
    let state = next_state(&defaults, changes)?;
    check_rules(&state, changes, None, flags)?;
    let flag = match (&changes.targeting_flag_filters, &flags.targeting) {
        (Some(filters), _) => Some(TargetingFlag::New {
            flag: targeting_flag(&state.name, filters.filters().clone())?,
            created_by: creator,
        }),
        (None, Some(adopted)) => Some(existing(adopted.id, false)),
        (None, None) => None,
    };
    let targeting = serving_while_running(TargetingPlan { delete: None, flag }, &state);
    let activity = Some(activity::created(&state.name, creator));
    Ok(SurveyWrite {
        state,
        targeting,
        activity,
    })
}

/// What to store for an existing survey: its next state and the change to its targeting flag.
///
/// # Errors
/// A field or cross-field rule broken by the result.
pub(crate) fn plan_update(
    current: &Survey,
    changes: &SurveyChanges,
    flags: &ReferencedFlags,
    editor: UserId,
) -> Result<SurveyWrite, ValidationError> {
    let state = next_state(&current.state, changes)?;
    check_rules(&state, changes, Some(current), flags)?;
    if let (Some(count @ 1..), Some(iteration)) =
        (state.iteration_count, current.state.iterations.current)
        && iteration > count
    {
        return Err(ValidationError::invalid(
            "iteration_count",
            format!("Cannot change survey recurrence to {count}, should be at least {iteration}"),
        ));
    }

    let mut delete = None;
    // A targeting flag deleted through the flags API is let go of, never revived.
    let mut kept = current.targeting_flag.as_ref().filter(|flag| !flag.deleted);
    // Letting go of a flag deletes it only when the survey owns it.
    let mut let_go = |kept: &mut Option<&FeatureFlag>| {
        if let Some(flag) = kept.take()
            && current.owns_targeting_flag
        {
            delete = Some(flag.id);
        }
    };
    if changes.remove_targeting_flag || matches!(changes.targeting_flag_id, Patch::Null) {
        let_go(&mut kept);
    }
    let flag = if let Some(filters) = &changes.targeting_flag_filters {
        match kept {
            Some(flag) => Some(TargetingFlag::Existing {
                id: flag.id,
                owned: current.owns_targeting_flag,
                changes: FlagChanges {
                    filters: Some(flag.filters.merged_with(filters)?),
                    ..FlagChanges::default()
                },
            }),
            None => Some(TargetingFlag::New {
                flag: targeting_flag(&state.name, filters.filters().clone())?,
                created_by: editor,
            }),
        }
    } else if let Some(adopted) = &flags.targeting
        && kept.is_none_or(|flag| flag.id != adopted.id)
    {
        let_go(&mut kept);
        Some(existing(adopted.id, false))
    } else {
        kept.map(|flag| existing(flag.id, current.owns_targeting_flag))
    };
    let targeting = without_no_ops(
        serving_while_running(TargetingPlan { delete, flag }, &state),
        [current.targeting_flag.as_ref(), flags.targeting.as_ref()],
    );
    let live_filters = current
        .targeting_flag
        .as_ref()
        .filter(|flag| !flag.deleted)
        .map(|flag| flag.filters.to_json());
    let activity = activity::updated(
        (&current.state, live_filters.as_ref()),
        (&state, planned_filters(&targeting, current, flags).as_ref()),
        editor,
    );
    Ok(SurveyWrite {
        state,
        targeting,
        activity,
    })
}

/// The filters of the targeting flag a plan leaves the survey with, as they will be stored.
fn planned_filters(
    plan: &TargetingPlan,
    current: &Survey,
    flags: &ReferencedFlags,
) -> Option<Map<String, Value>> {
    match plan.flag.as_ref()? {
        TargetingFlag::New { flag, .. } => Some(flag.filters.to_json()),
        TargetingFlag::Existing { id, changes, .. } => match &changes.filters {
            Some(filters) => Some(filters.to_json()),
            // Kept or adopted as it is: one of the flags the plan was made against.
            None => [current.targeting_flag.as_ref(), flags.targeting.as_ref()]
                .into_iter()
                .flatten()
                .find(|flag| flag.id == *id)
                .map(|flag| flag.filters.to_json()),
        },
    }
}

/// An existing flag the survey points at, unchanged so far.
pub(super) fn existing(id: FlagId, owned: bool) -> TargetingFlag {
    TargetingFlag::Existing {
        id,
        owned,
        changes: FlagChanges::default(),
    }
}

/// The last step of every plan: the targeting flag the survey ends up with serves exactly while
/// the survey runs.
pub(super) fn serving_while_running(mut plan: TargetingPlan, state: &SurveyState) -> TargetingPlan {
    let running = state.is_running();
    match &mut plan.flag {
        Some(TargetingFlag::New { flag, .. }) => flag.active = running,
        Some(TargetingFlag::Existing { changes, .. }) => changes.active = Some(running),
        None => {}
    }
    plan
}

/// Leaves out of an existing flag's changes what the flag already is, so a write that changes
/// nothing about its targeting flag does not write the flag.
pub(super) fn without_no_ops(
    mut plan: TargetingPlan,
    known: [Option<&FeatureFlag>; 2],
) -> TargetingPlan {
    if let Some(TargetingFlag::Existing { id, changes, .. }) = &mut plan.flag
        && let Some(flag) = known.into_iter().flatten().find(|flag| flag.id == *id)
    {
        if changes.active == Some(flag.active) {
            changes.active = None;
        }
        if changes
            .filters
            .as_ref()
            .is_some_and(|filters| filters == &flag.filters)
        {
            changes.filters = None;
        }
    }
    plan
}

/// The command's fields applied over `base`, with the iterations recomputed.
fn next_state(base: &SurveyState, changes: &SurveyChanges) -> Result<SurveyState, ValidationError> {
    let mut state = base.clone();
    changes
        .name
        .clone()
        .map(SurveyName::into_string)
        .assign_to(&mut state.name);
    changes
        .description
        .clone()
        .assign_to(&mut state.description);
    changes.survey_type.assign_to(&mut state.survey_type);
    changes.schedule.assign_to(&mut state.schedule);
    state.linked_flag_id = changes.linked_flag_id.apply(state.linked_flag_id);
    state.questions = changes.questions.clone().apply(state.questions);
    state.conditions = changes.conditions.clone().apply(state.conditions);
    state.appearance = changes.appearance.clone().apply(state.appearance);
    state.start_date = changes.start_date.apply(state.start_date);
    state.end_date = changes.end_date.apply(state.end_date);
    if let Some(archived) = changes.archived {
        state.archived = archived;
    }
    state.responses_limit = changes.responses_limit.apply(state.responses_limit);
    state.iteration_count = changes.iteration_count.apply(state.iteration_count);
    state.iteration_frequency_days = changes
        .iteration_frequency_days
        .apply(state.iteration_frequency_days);
    state.enable_partial_responses = changes
        .enable_partial_responses
        .apply(Some(state.enable_partial_responses))
        .unwrap_or(false);
    state.enable_iframe_embedding = changes
        .enable_iframe_embedding
        .apply(Some(state.enable_iframe_embedding))
        .unwrap_or(false);
    state.response_sampling = base.response_sampling.changed(&changes.response_sampling)?;
    state.form_content = changes.form_content.clone().apply(state.form_content);
    apply_languages(&mut state, base, changes)?;
    state.iterations = Iterations::compute(
        state.iteration_count,
        state.iteration_frequency_days,
        state.start_date,
        &base.iterations,
    )?;
    Ok(state)
}

/// `base_language` and `translations` over `base`: sent translation keys are checked against
/// the next base language (PostHog names it as sent) and kept unchecked when already stored; a
/// base language sent alone may not be one of the stored keys.
fn apply_languages(
    state: &mut SurveyState,
    base: &SurveyState,
    changes: &SurveyChanges,
) -> Result<(), ValidationError> {
    if let Some(language) = &changes.base_language {
        state.base_language = language.code.clone();
    }
    let raw_base = changes
        .base_language
        .as_ref()
        .map(|language| language.sent.as_str());
    if matches!(changes.questions, Patch::Value(_))
        && let Some(questions) = state.questions.take()
    {
        state.questions = Some(questions.with_checked_translations(
            &state.base_language,
            raw_base,
            base.questions.as_ref(),
        )?);
    }
    match &changes.translations {
        Patch::Absent => {
            let collides = base
                .translations
                .as_ref()
                .is_some_and(|stored| stored.names(&state.base_language));
            if changes.base_language.is_some() && collides {
                return Err(ValidationError::invalid(
                    "base_language",
                    format!(
                        "'{}' already exists as a translation key on this survey. Remove the \
                         translation first, or pick a different base language.",
                        state.base_language.as_str()
                    ),
                ));
            }
        }
        Patch::Null => state.translations = None,
        Patch::Value(sent) => {
            state.translations = Some(sent.clone().with_checked_keys(
                &state.base_language,
                raw_base,
                base.translations.as_ref(),
            )?);
        }
    }
    Ok(())
}

fn check_rules(
    state: &SurveyState,
    changes: &SurveyChanges,
    current: Option<&Survey>,
    flags: &ReferencedFlags,
) -> Result<(), ValidationError> {
    if matches!(changes.linked_flag_id, Patch::Value(_)) && flags.linked.is_none() {
        return Err(ValidationError::invalid(
            "linked_flag_id",
            "Feature Flag with this ID does not exist",
        ));
    }
    if matches!(changes.targeting_flag_id, Patch::Value(_)) && flags.targeting.is_none() {
        return Err(ValidationError::invalid(
            "targeting_flag_id",
            "Targeting Feature Flag with this ID does not exist",
        ));
    }
    if !changes.conditions.is_absent() || !changes.linked_flag_id.is_absent() {
        let linked = match changes.linked_flag_id {
            Patch::Value(_) => flags.linked.as_ref(),
            Patch::Null => None,
            Patch::Absent => current.and_then(|survey| survey.linked_flag.as_ref()),
        };
        check_linked_flag_variant(state.conditions.as_ref(), linked)?;
    }
    if let Some(filters) = &changes.targeting_flag_filters {
        check_targeting_filters(filters)?;
    }
    check_shuffle_and_branching(state)?;
    if state.survey_type == SurveyType::ExternalSurvey {
        check_external(state, changes)?;
    }
    if let (Some(start), Some(end)) = (state.start_date, state.end_date)
        && end < start
    {
        return Err(ValidationError::invalid(
            "end_date",
            "End date must not be before the start date.",
        ));
    }
    Ok(())
}

fn check_linked_flag_variant(
    conditions: Option<&Conditions>,
    linked: Option<&FeatureFlag>,
) -> Result<(), ValidationError> {
    let variant = conditions
        .and_then(|c| c.linked_flag_variant.as_deref())
        .filter(|v| !v.is_empty() && *v != "any");
    let Some(variant) = variant else {
        return Ok(());
    };
    let Some(flag) = linked else {
        return Err(ValidationError::invalid(
            "conditions",
            "linkedFlagVariant can only be used when a linked_flag_id is specified",
        ));
    };
    let variants = flag.variant_keys();
    if variants.is_empty() {
        return Err(ValidationError::invalid(
            "conditions",
            format!(
                "Feature flag variant '{variant}' specified but the linked feature flag has no variants"
            ),
        ));
    }
    if !variants.iter().any(|v| v == variant) {
        return Err(ValidationError::invalid(
            "conditions",
            format!(
                "Feature flag variant '{variant}' does not exist. Available variants: {}",
                variants.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Targeting that reaches everyone is no targeting: PostHog refuses it. Targeting by another
/// flag's value is what `linked_flag_id` is for: a dependency in the targeting flag, written
/// through the survey, would escape the checks that keep flag dependencies whole (the flag
/// depended on can be switched off under it), so it is refused.
fn check_targeting_filters(filters: &FlagFiltersPatch) -> Result<(), ValidationError> {
    let depends = filters
        .filters()
        .condition_sets()
        .flat_map(ConditionSet::properties)
        .any(PropertyFilter::is_flag_dependency);
    if depends {
        return Err(ValidationError::invalid(
            "targeting_flag_filters",
            "Survey targeting cannot depend on other feature flags; link the survey to a flag \
             (linked_flag_id) instead.",
        ));
    }
    if filters.filters().serves_everyone() {
        return Err(ValidationError::invalid(
            "targeting_flag_filters",
            "Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting",
        ));
    }
    Ok(())
}

fn check_shuffle_and_branching(state: &SurveyState) -> Result<(), ValidationError> {
    let shuffled = state
        .appearance
        .as_ref()
        .is_some_and(|a| a.shuffle_questions == Some(true));
    let branched = state
        .questions
        .as_ref()
        .is_some_and(|qs| qs.iter().any(|q| q.base().branching.is_some()));
    if shuffled && branched {
        // PostHog raises it for the survey as a whole: `attr` null.
        return Err(ValidationError::invalid_input(
            "Question shuffling and question branching cannot be used together. Please disable one of these features.",
        ));
    }
    Ok(())
}

fn check_external(state: &SurveyState, changes: &SurveyChanges) -> Result<(), ValidationError> {
    if state.linked_flag_id.is_some() {
        return Err(ValidationError::invalid(
            "linked_flag_id",
            "linked_flag_id is not allowed for external surveys",
        ));
    }
    if changes.targeting_flag_filters.is_some() {
        return Err(ValidationError::invalid(
            "targeting_flag_filters",
            "targeting_flag_filters is not allowed for external surveys",
        ));
    }
    if let Some(conditions) = &state.conditions {
        let forbidden = conditions.web_targeting();
        if !forbidden.is_empty() {
            return Err(ValidationError::invalid(
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
        .is_some_and(|a| a.survey_popup_delay_seconds.is_some())
    {
        return Err(ValidationError::invalid(
            "appearance",
            "surveyPopupDelaySeconds is not allowed for external surveys",
        ));
    }
    Ok(())
}

/// A new targeting flag: `survey-targeting-<10 hex>`, named after the survey.
pub(super) fn targeting_flag(
    survey_name: &str,
    filters: FlagFilters,
) -> Result<NewFlag, ValidationError> {
    let suffix: String = (0..10)
        .map(|_| char::from_digit(rand::rng().random_range(0..16), 16).expect("digit below 16"))
        .collect();
    Ok(NewFlag {
        key: FlagKey::parse(&format!("survey-targeting-{suffix}"))?,
        name: format!("Targeting flag for survey {survey_name}"),
        filters,
        active: false,
        ensure_experience_continuity: false,
        is_remote_configuration: false,
    })
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::*;
    use crate::survey::SurveyId;
    use crate::tenancy::ProjectId;

    const EDITOR: UserId = UserId(7);

    fn patch(filters: &Map<String, Value>) -> FlagFiltersPatch {
        FlagFiltersPatch::parse(filters).unwrap()
    }

    fn filters() -> Map<String, Value> {
        json!({"groups": [{"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}], "rollout_percentage": 50}]})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn flag(id: i32, deleted: bool) -> FeatureFlag {
        FeatureFlag {
            id: FlagId(id),
            project_id: ProjectId(1),
            name: String::new(),
            key: format!("flag-{id}"),
            filters: FlagFilters::parse(Value::Object(filters())).unwrap(),
            deleted,
            active: !deleted,
            ensure_experience_continuity: false,
            is_remote_configuration: false,
            created_at: Utc::now(),
            created_by: None,
        }
    }

    fn new_survey(changes: SurveyChanges) -> NewSurvey {
        NewSurvey::new(SurveyChanges {
            name: Patch::Value(SurveyName::parse("Onboarding").unwrap()),
            survey_type: Patch::Value(SurveyType::Popover),
            ..changes
        })
        .unwrap()
    }

    /// A stored survey whose targeting flag is `targeting` (owned or adopted), launched or not.
    fn stored(targeting: Option<FeatureFlag>, owned: bool, launched: bool) -> Survey {
        let mut state = SurveyState::draft("Onboarding".into(), SurveyType::Popover);
        state.start_date = launched.then(Utc::now);
        Survey {
            id: SurveyId::generate(),
            project_id: ProjectId(1),
            state,
            linked_flag: None,
            targeting_flag: targeting,
            owns_targeting_flag: owned,
            created_at: Utc::now(),
            created_by: None,
        }
    }

    fn update(current: &Survey, changes: SurveyChanges, flags: &ReferencedFlags) -> TargetingPlan {
        plan_update(current, &changes, flags, EDITOR)
            .unwrap()
            .targeting
    }

    #[test]
    fn targeting_filters_on_create_make_a_new_owned_flag_serving_only_once_launched() {
        let draft = plan_create(
            &new_survey(SurveyChanges {
                targeting_flag_filters: Some(patch(&filters())),
                ..SurveyChanges::default()
            }),
            &ReferencedFlags::default(),
            EDITOR,
        )
        .unwrap();
        let Some(TargetingFlag::New { flag, created_by }) = &draft.targeting.flag else {
            panic!("expected a new flag: {:?}", draft.targeting);
        };
        assert!(draft.targeting.flag.as_ref().unwrap().owned());
        assert_eq!(*created_by, EDITOR);
        assert_eq!(flag.name, "Targeting flag for survey Onboarding");
        assert!(!flag.active);

        let launched = plan_create(
            &new_survey(SurveyChanges {
                targeting_flag_filters: Some(patch(&filters())),
                start_date: Patch::Value(Utc::now()),
                ..SurveyChanges::default()
            }),
            &ReferencedFlags::default(),
            EDITOR,
        )
        .unwrap();
        assert!(matches!(
            launched.targeting.flag,
            Some(TargetingFlag::New { ref flag, .. }) if flag.active
        ));
    }

    #[test]
    fn an_adopted_flag_is_not_owned_and_serves_while_the_survey_runs() {
        let adopted = flag(3, false);
        let plan = plan_create(
            &new_survey(SurveyChanges {
                targeting_flag_id: Patch::Value(adopted.id),
                start_date: Patch::Value(Utc::now()),
                ..SurveyChanges::default()
            }),
            &ReferencedFlags {
                linked: None,
                targeting: Some(adopted),
            },
            EDITOR,
        )
        .unwrap();
        assert_eq!(
            plan.targeting.flag,
            Some(TargetingFlag::Existing {
                id: FlagId(3),
                owned: false,
                changes: FlagChanges {
                    active: Some(true),
                    ..FlagChanges::default()
                }
            })
        );
    }

    #[test]
    fn a_kept_flag_follows_the_survey_running_state_on_every_write() {
        let current = stored(Some(flag(1, false)), true, true);
        let archived = update(
            &current,
            SurveyChanges {
                archived: Some(true),
                ..SurveyChanges::default()
            },
            &ReferencedFlags::default(),
        );
        assert_eq!(
            archived,
            TargetingPlan {
                delete: None,
                flag: Some(TargetingFlag::Existing {
                    id: FlagId(1),
                    owned: true,
                    changes: FlagChanges {
                        active: Some(false),
                        ..FlagChanges::default()
                    }
                })
            }
        );
    }

    #[test]
    fn what_a_kept_flag_already_is_is_not_written_again() {
        let current = stored(Some(flag(1, false)), true, true);
        let renamed = update(
            &current,
            SurveyChanges {
                name: Patch::Value(SurveyName::parse("Renamed").unwrap()),
                targeting_flag_filters: Some(patch(&filters())),
                ..SurveyChanges::default()
            },
            &ReferencedFlags::default(),
        );
        let Some(TargetingFlag::Existing { id, changes, .. }) = renamed.flag else {
            panic!("the flag is kept: {renamed:?}");
        };
        assert_eq!(id, FlagId(1));
        assert!(
            changes.is_empty(),
            "already serving, same filters: {changes:?}"
        );
    }

    #[test]
    fn a_targeting_flag_deleted_elsewhere_is_let_go_of_never_revived_or_deleted_again() {
        let current = stored(Some(flag(1, true)), true, true);
        let plan = update(
            &current,
            SurveyChanges::default(),
            &ReferencedFlags::default(),
        );
        assert_eq!(plan, TargetingPlan::default());
    }

    #[test]
    fn removing_or_nulling_the_flag_deletes_it_only_when_owned() {
        for changes in [
            SurveyChanges {
                remove_targeting_flag: true,
                ..SurveyChanges::default()
            },
            SurveyChanges {
                targeting_flag_id: Patch::Null,
                ..SurveyChanges::default()
            },
        ] {
            let owned = stored(Some(flag(1, false)), true, false);
            assert_eq!(
                update(&owned, changes.clone(), &ReferencedFlags::default()),
                TargetingPlan {
                    delete: Some(FlagId(1)),
                    flag: None
                }
            );
            let adopted = stored(Some(flag(1, false)), false, false);
            assert_eq!(
                update(&adopted, changes, &ReferencedFlags::default()),
                TargetingPlan::default(),
                "an adopted flag is only detached"
            );
        }
    }

    #[test]
    fn new_filters_merge_into_a_kept_flag_or_make_a_new_one() {
        let current = stored(Some(flag(1, false)), true, false);
        let merged = update(
            &current,
            SurveyChanges {
                targeting_flag_filters: json!({"payloads": {"true": "x"}}).as_object().map(patch),
                ..SurveyChanges::default()
            },
            &ReferencedFlags::default(),
        );
        let Some(TargetingFlag::Existing { changes, .. }) = merged.flag else {
            panic!("expected the kept flag: {merged:?}");
        };
        let merged_filters = changes.filters.unwrap().to_json();
        assert_eq!(merged_filters["groups"], filters()["groups"]);
        assert_eq!(merged_filters["payloads"], json!({"true": "x"}));

        let untargeted = stored(None, false, false);
        let fresh = update(
            &untargeted,
            SurveyChanges {
                targeting_flag_filters: Some(patch(&filters())),
                ..SurveyChanges::default()
            },
            &ReferencedFlags::default(),
        );
        assert!(matches!(fresh.flag, Some(TargetingFlag::New { .. })));
    }

    #[test]
    fn adopting_another_flag_lets_go_of_the_owned_one() {
        let current = stored(Some(flag(1, false)), true, false);
        let plan = update(
            &current,
            SurveyChanges {
                targeting_flag_id: Patch::Value(FlagId(2)),
                ..SurveyChanges::default()
            },
            &ReferencedFlags {
                linked: None,
                targeting: Some(flag(2, false)),
            },
        );
        assert_eq!(plan.delete, Some(FlagId(1)));
        assert!(matches!(
            plan.flag,
            Some(TargetingFlag::Existing {
                id: FlagId(2),
                owned: false,
                ..
            })
        ));
    }

    #[test]
    fn an_update_records_the_fields_it_changed_and_an_unchanged_one_records_nothing() {
        let current = stored(None, false, false);
        let renamed = plan_update(
            &current,
            &SurveyChanges {
                name: Patch::Value(SurveyName::parse("Renamed").unwrap()),
                description: Patch::Value(String::new()),
                ..SurveyChanges::default()
            },
            &ReferencedFlags::default(),
            EDITOR,
        )
        .unwrap()
        .activity
        .unwrap();
        assert_eq!((renamed.user, renamed.activity), (EDITOR, "updated"));
        assert_eq!(renamed.detail["name"], "Renamed");
        assert_eq!(
            renamed.detail["changes"],
            json!([{"type": "Survey", "action": "changed", "field": "name", "before": "Onboarding", "after": "Renamed"}])
        );
        let same = plan_update(
            &current,
            &SurveyChanges {
                name: Patch::Value(SurveyName::parse("Onboarding").unwrap()),
                ..SurveyChanges::default()
            },
            &ReferencedFlags::default(),
            EDITOR,
        )
        .unwrap();
        assert_eq!(same.activity, None);
    }

    #[test]
    fn an_update_records_the_targeting_filters_the_plan_leaves_the_survey_with() {
        let field = |write: SurveyWrite| {
            let changes = write.activity.unwrap().detail["changes"].clone();
            assert_eq!(changes.as_array().unwrap().len(), 1, "{changes}");
            changes[0].clone()
        };
        let merged = json!({"groups": [{"properties": [], "rollout_percentage": 10}]});
        let current = stored(Some(flag(1, false)), true, false);
        let changed = field(
            plan_update(
                &current,
                &SurveyChanges {
                    targeting_flag_filters: merged.as_object().map(patch),
                    ..SurveyChanges::default()
                },
                &ReferencedFlags::default(),
                EDITOR,
            )
            .unwrap(),
        );
        assert_eq!(
            changed,
            json!({"type": "Survey", "action": "changed", "field": "targeting_flag_filters", "before": filters(), "after": merged})
        );
        let removed = field(
            plan_update(
                &current,
                &SurveyChanges {
                    remove_targeting_flag: true,
                    ..SurveyChanges::default()
                },
                &ReferencedFlags::default(),
                EDITOR,
            )
            .unwrap(),
        );
        assert_eq!(
            (removed["action"].clone(), removed["after"].clone()),
            (json!("deleted"), Value::Null)
        );
        let mut other = flag(2, false);
        other.filters = FlagFilters::parse(merged.clone()).unwrap();
        let adopted = field(
            plan_update(
                &stored(None, false, false),
                &SurveyChanges {
                    targeting_flag_id: Patch::Value(FlagId(2)),
                    ..SurveyChanges::default()
                },
                &ReferencedFlags {
                    linked: None,
                    targeting: Some(other),
                },
                EDITOR,
            )
            .unwrap(),
        );
        assert_eq!(
            (adopted["action"].clone(), adopted["after"].clone()),
            (json!("created"), merged)
        );
        let kept = plan_update(
            &current,
            &SurveyChanges::default(),
            &ReferencedFlags::default(),
            EDITOR,
        )
        .unwrap();
        assert_eq!(kept.activity, None, "keeping the flag changes nothing");
    }

    #[test]
    fn a_create_records_its_creator_and_name_without_changes() {
        let write = plan_create(
            &new_survey(SurveyChanges::default()),
            &ReferencedFlags::default(),
            EDITOR,
        )
        .unwrap();
        let activity = write.activity.unwrap();
        assert_eq!((activity.user, activity.activity), (EDITOR, "created"));
        assert_eq!(
            activity.detail,
            json!({"name": "Onboarding", "changes": null})
        );
    }

    #[test]
    fn a_referenced_flag_that_is_not_live_is_refused() {
        let current = stored(None, false, false);
        let error = plan_update(
            &current,
            &SurveyChanges {
                targeting_flag_id: Patch::Value(FlagId(9)),
                ..SurveyChanges::default()
            },
            &ReferencedFlags::default(),
            EDITOR,
        )
        .unwrap_err();
        assert_eq!(
            (error.attr.as_deref(), error.detail.as_str()),
            (
                Some("targeting_flag_id"),
                "Targeting Feature Flag with this ID does not exist"
            )
        );
    }
}
