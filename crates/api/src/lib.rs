//! Burrow's HTTP layer: a thin actix-web shell over the domain services. It depends on the
//! domain only; the server crate hands it services already wired to adapters.

mod body_budget;
mod catch_panic;
mod contract;
mod dto;
mod error;
mod extract;
mod fallback_errors;
mod fields;
mod metrics;
mod null_characters;
pub mod openapi;
mod request_span;
mod routes;
mod sdk;
mod settings;

use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{self, NormalizePath, TrailingSlash};
use actix_web::{App, web};
use domain::access::AccessService;
use domain::cohort::CohortService;
use domain::early_access::EarlyAccessService;
use domain::feature_flag::FeatureFlagService;
use domain::group::GroupService;
use domain::plugin::PluginService;
use domain::plugin_config::PluginConfigService;
use domain::ports::Readiness;
use domain::rate_limit::RateLimiter;
use domain::sdk::SdkService;
use domain::survey::{RenderedSurveys, SurveyService};
use domain::survey_response::SurveyResponseService;
use domain::tenancy::ProjectService;
use domain::webhook::{DispatchCounts, WebhookService};

pub use body_budget::BodyBudget;
pub use error::{ApiError, ErrorBody};
pub use metrics::Metrics;
pub use routes::RouteInfo;
pub use routes::SurveyJson;
#[cfg(any(test, feature = "testing"))]
pub use routes::listing::{is_documented, route_table};
pub use sdk::SnapshotRenderings;
pub use settings::{ApiSettings, StaticAssets};

/// The domain services the routes call. Cheap to clone: one copy per worker.
#[derive(Clone)]
pub struct Services {
    pub access: Arc<AccessService>,
    /// A project as stored, and its settings' writes.
    pub projects: Arc<ProjectService>,
    pub flags: Arc<FeatureFlagService>,
    pub cohorts: Arc<CohortService>,
    pub groups: Arc<GroupService>,
    pub early_access: Arc<EarlyAccessService>,
    pub plugins: Arc<PluginService>,
    pub plugin_configs: Arc<PluginConfigService>,
    pub surveys: Arc<SurveyService>,
    /// Survey reads that reuse renderings ([`SurveyJson::render`]) while surveys are unchanged.
    pub rendered_surveys: Arc<RenderedSurveys<SurveyJson>>,
    pub survey_responses: Arc<SurveyResponseService>,
    pub rate_limiter: Arc<RateLimiter>,
    /// The SDK edge's use cases, keeping what `sdk/` renders with each snapshot.
    pub sdk: Arc<SdkService<SnapshotRenderings>>,
    pub webhooks: Arc<WebhookService>,
    /// What this node's webhook dispatcher did, for `/metrics` (zero where it does not send).
    pub webhook_counts: Arc<DispatchCounts>,
    pub readiness: Arc<dyn Readiness>,
}

/// The whole application: routes, extractor configuration and middleware.
pub fn app(
    services: Services,
    settings: ApiSettings,
    metrics: Metrics,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .app_data(web::Data::from(services.access))
        .app_data(web::Data::from(services.projects))
        .app_data(web::Data::from(services.flags))
        .app_data(web::Data::from(services.cohorts))
        .app_data(web::Data::from(services.groups))
        .app_data(web::Data::from(services.early_access))
        .app_data(web::Data::from(services.plugins))
        .app_data(web::Data::from(services.plugin_configs))
        .app_data(web::Data::from(services.surveys))
        .app_data(web::Data::from(services.rendered_surveys))
        .app_data(web::Data::from(services.survey_responses))
        .app_data(web::Data::from(services.rate_limiter))
        .app_data(web::Data::from(services.sdk))
        .app_data(web::Data::from(services.webhooks))
        .app_data(web::Data::from(services.webhook_counts))
        .app_data(web::Data::from(services.readiness))
        .app_data(web::Data::new(metrics))
        .app_data(settings)
        .app_data(web::Data::new(routes::ApiDocument(openapi::document_json)))
        .configure(routes::configure)
        .default_service(web::to(routes::not_found))
        // Order matters: the last `wrap` runs first. Paths lose their trailing slash before
        // routing, metrics count what the client finally gets, the error fallback sees every
        // response on its way out, a panic becomes a 500 inside the request's span, and a URL
        // carrying U+0000 is refused before any handler sees it.
        .wrap(middleware::from_fn(null_characters::refuse_null_characters))
        .wrap(middleware::from_fn(catch_panic::catch_panic))
        .wrap(fallback_errors::fallback_errors())
        .wrap(middleware::from_fn(metrics::record))
        .wrap(NormalizePath::new(TrailingSlash::Trim))
        .wrap(tracing_actix_web::TracingLogger::<
            request_span::RedactedRootSpan,
        >::new())
}
