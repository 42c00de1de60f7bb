//! Ids in the path (`{survey_id}`, `{flag_id}`), parsed once into the domain's id types. A
//! malformed id names nothing, so it is a 404 like a missing one.

use actix_web::HttpRequest;
use domain::cohort::CohortId;
use domain::early_access::EarlyAccessId;
use domain::feature_flag::FlagId;
use domain::plugin::PluginId;
use domain::plugin_config::PluginConfigId;
use domain::survey::SurveyId;
use domain::webhook::{DeliveryId, WebhookId};
use uuid::Uuid;

use crate::error::ApiError;

/// An id type that a path segment can name.
pub(crate) trait PathId: Sized {
    /// The segment's name in the route pattern.
    const SEGMENT: &'static str;

    fn parse(raw: &str) -> Option<Self>;
}

impl PathId for SurveyId {
    const SEGMENT: &'static str = "survey_id";

    fn parse(raw: &str) -> Option<Self> {
        Uuid::parse_str(raw).ok().map(Self)
    }
}

impl PathId for FlagId {
    const SEGMENT: &'static str = "flag_id";

    fn parse(raw: &str) -> Option<Self> {
        raw.parse().ok().map(Self)
    }
}

impl PathId for CohortId {
    const SEGMENT: &'static str = "cohort_id";

    fn parse(raw: &str) -> Option<Self> {
        raw.parse().ok().map(Self)
    }
}

impl PathId for EarlyAccessId {
    const SEGMENT: &'static str = "feature_id";

    fn parse(raw: &str) -> Option<Self> {
        Uuid::parse_str(raw).ok().map(Self)
    }
}

impl PathId for PluginId {
    const SEGMENT: &'static str = "plugin_id";

    fn parse(raw: &str) -> Option<Self> {
        raw.parse().ok().map(Self)
    }
}

impl PathId for PluginConfigId {
    const SEGMENT: &'static str = "config_id";

    fn parse(raw: &str) -> Option<Self> {
        raw.parse().ok().map(Self)
    }
}

impl PathId for WebhookId {
    const SEGMENT: &'static str = "webhook_id";

    fn parse(raw: &str) -> Option<Self> {
        Uuid::parse_str(raw).ok().map(Self)
    }
}

impl PathId for DeliveryId {
    const SEGMENT: &'static str = "delivery_id";

    fn parse(raw: &str) -> Option<Self> {
        Uuid::parse_str(raw).ok().map(Self)
    }
}

/// The id the route's `{T::SEGMENT}` names. Called from the handler, after the caller was
/// authenticated, so a bad key is reported before a malformed id.
///
/// # Errors
/// 404 `Not found.` for a malformed id.
pub(crate) fn path_id<T: PathId>(request: &HttpRequest) -> Result<T, ApiError> {
    request
        .match_info()
        .get(T::SEGMENT)
        .and_then(T::parse)
        .ok_or_else(ApiError::not_found)
}

/// A survey response, named by the uuid of one of its `survey sent` events.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResponseUuid(pub Uuid);

impl PathId for ResponseUuid {
    const SEGMENT: &'static str = "response_uuid";

    fn parse(raw: &str) -> Option<Self> {
        Uuid::parse_str(raw).ok().map(Self)
    }
}
