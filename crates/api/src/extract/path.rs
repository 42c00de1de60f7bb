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

/// `PathId` for each id newtype: its segment, and whether its text is a UUID or a number.
macro_rules! path_ids {
    ($($id:ty => $segment:literal as $read:ident;)*) => {$(
        impl PathId for $id {
            const SEGMENT: &'static str = $segment;

            fn parse(raw: &str) -> Option<Self> {
                $read(raw).map(Self)
            }
        }
    )*};
}

path_ids! {
    SurveyId => "survey_id" as uuid;
    FlagId => "flag_id" as number;
    CohortId => "cohort_id" as number;
    EarlyAccessId => "feature_id" as uuid;
    PluginId => "plugin_id" as number;
    PluginConfigId => "config_id" as number;
    WebhookId => "webhook_id" as uuid;
    DeliveryId => "delivery_id" as uuid;
}

fn uuid(raw: &str) -> Option<Uuid> {
    Uuid::parse_str(raw).ok()
}

fn number<N: std::str::FromStr>(raw: &str) -> Option<N> {
    raw.parse().ok()
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
