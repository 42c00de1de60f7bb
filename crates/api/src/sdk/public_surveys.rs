//! `GET /api/surveys/?token=`: the SDKs' public survey feed, named by the project's public
//! token (no personal key): every unarchived survey with what the SDKs read to show it.
//! Rendered once per project snapshot; browsers and CDNs may keep it (`rendered`).

use actix_web::web;
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use domain::sdk::SdkService;
use domain::survey::{Appearance, Conditions, Questions, Survey, SurveyTranslations};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::SnapshotRenderings;
use super::rendered::{Rendered, public};
use super::transport::query_token;
use crate::contract::schemas::{SurveySchedule, SurveyType};
use crate::contract::survey_shapes;
use crate::error::ApiError;

/// The feed, `{"surveys": […]}` only, as PostHog's current `get_surveys_response` answers it:
/// older releases added the project's `survey_config`, which posthog-js never reads (its
/// project-wide wait acts through each survey's internal targeting flag, in `/flags`).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SurveyFeed {
    surveys: Vec<PublicSurvey>,
}

/// PostHog's public survey fields; `description` is deliberately left out, and flag keys are
/// left out when there is no flag.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PublicSurvey {
    id: Uuid,
    name: String,
    #[serde(rename = "type")]
    #[schema(value_type = SurveyType)]
    survey_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    linked_flag_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    targeting_flag_key: Option<String>,
    /// On until the person answers or dismisses the survey (see `/flags`).
    internal_targeting_flag_key: String,
    /// More flags the SDK must find on, as posthog-js reads them (`[{key, value}]`): while the
    /// survey samples responses, its sampling flag. Burrow's addition (PostHog's feed leaves
    /// it out, so its sampling never reaches the browser); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    feature_flag_keys: Option<[SamplingFlagKey; 1]>,
    #[schema(value_type = Option<Vec<survey_shapes::SurveyQuestion>>)]
    questions: Option<Questions>,
    #[schema(value_type = Option<survey_shapes::SurveyConditions>)]
    conditions: Option<Conditions>,
    #[schema(value_type = Option<survey_shapes::SurveyAppearance>)]
    appearance: Option<Appearance>,
    start_date: Option<DateTime<Utc>>,
    end_date: Option<DateTime<Utc>>,
    current_iteration: Option<i32>,
    current_iteration_start_date: Option<DateTime<Utc>>,
    #[schema(value_type = SurveySchedule)]
    schedule: &'static str,
    enable_partial_responses: bool,
    /// Survey-level texts by language (`name` and the thank-you message), for posthog-js to
    /// show in the page's language; left out when there are none. Only BCP-47 keys other than
    /// the base language, normalised.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<survey_shapes::SurveyTranslations>)]
    translations: Option<SurveyTranslations>,
}

/// The sampling flag's entry of [`PublicSurvey::feature_flag_keys`].
#[derive(Debug, Serialize)]
pub(crate) struct SamplingFlagKey {
    key: &'static str,
    value: String,
}

impl From<&Survey> for PublicSurvey {
    fn from(survey: &Survey) -> Self {
        let state = &survey.state;
        Self {
            internal_targeting_flag_key: survey.internal_targeting_flag_key(),
            feature_flag_keys: survey.internal_response_sampling_flag_key().map(|value| {
                [SamplingFlagKey {
                    key: "internal_response_sampling_flag_key",
                    value,
                }]
            }),
            id: survey.id.0,
            name: state.name.clone(),
            survey_type: state.survey_type.as_str(),
            linked_flag_key: survey.linked_flag.as_ref().map(|flag| flag.key.clone()),
            targeting_flag_key: survey.targeting_flag.as_ref().map(|flag| flag.key.clone()),
            questions: state
                .questions
                .as_ref()
                .map(|questions| questions.for_feed(&state.base_language)),
            conditions: state.conditions.clone(),
            appearance: state.appearance.clone(),
            start_date: state.start_date,
            end_date: state.end_date,
            current_iteration: state.iterations.current,
            current_iteration_start_date: state.iterations.current_start_date,
            schedule: state.schedule.as_str(),
            enable_partial_responses: state.enable_partial_responses,
            translations: state
                .translations
                .as_ref()
                .map(|translations| translations.for_feed(&state.base_language))
                .filter(|translations| !translations.is_empty()),
        }
    }
}

/// The token is `?token=` (the web SDK) or `?api_key=`.
pub(crate) async fn feed(
    request: HttpRequest,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
) -> Result<HttpResponse, ApiError> {
    let snapshot = sdk.snapshot(query_token(&request).as_deref()).await?;
    let rendered = snapshot.renderings.survey_feed.get_or_init(|| {
        let feed = SurveyFeed {
            surveys: snapshot.surveys.iter().map(Into::into).collect(),
        };
        Rendered::new(serde_json::to_vec(&feed).expect("a feed of JSON values serializes"))
    });
    Ok(public(&request, rendered, "application/json"))
}
