//! What the HTTP layer needs to know about its deployment.

mod static_assets;

use url::Url;

pub use static_assets::StaticAssets;

use crate::body_budget::BodyBudget;

/// Deployment settings of the API, shared by every worker.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// Public base URL for absolute links (`BURROW_SITE_URL`); `None` uses the request's host.
    pub site_url: Option<Url>,
    /// Largest accepted request body (`BURROW_MAX_BODY_BYTES`).
    pub max_body_bytes: usize,
    /// Largest capture body, and largest it may inflate to (`BURROW_CAPTURE_MAX_BODY_BYTES`):
    /// SDKs batch many events per request.
    pub capture_max_body_bytes: usize,
    /// Most events in one capture request (`BURROW_CAPTURE_MAX_EVENTS`).
    pub capture_max_events: usize,
    /// Where posthog-js's `dist/` files are (`BURROW_STATIC_DIR`, its layout told apart once by
    /// [`StaticAssets::open`]), served at `/static/…` for the SDK's snippet and lazily loaded
    /// bundles; `None` answers 404 there.
    pub static_assets: Option<StaticAssets>,
    /// How many bytes of request bodies this node holds at once (`BURROW_BODY_MEMORY_MB`).
    pub body_budget: BodyBudget,
    /// How long browsers and CDNs may keep the remote config and the survey feed before asking
    /// again (`BURROW_SDK_MAX_AGE_SECS`); 0 makes them ask each time (a 304 when unchanged).
    pub sdk_max_age_secs: u32,
}

impl ApiSettings {
    pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
    pub const DEFAULT_CAPTURE_MAX_BODY_BYTES: usize = 20 * 1024 * 1024;
    pub const DEFAULT_CAPTURE_MAX_EVENTS: usize = 10_000;
    /// Short enough that a change reaches every visitor within a minute behind a CDN.
    pub const DEFAULT_SDK_MAX_AGE_SECS: u32 = 30;
}

impl Default for ApiSettings {
    fn default() -> Self {
        Self {
            site_url: None,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            capture_max_body_bytes: Self::DEFAULT_CAPTURE_MAX_BODY_BYTES,
            capture_max_events: Self::DEFAULT_CAPTURE_MAX_EVENTS,
            static_assets: None,
            body_budget: BodyBudget::new(BodyBudget::DEFAULT_BYTES),
            sdk_max_age_secs: Self::DEFAULT_SDK_MAX_AGE_SECS,
        }
    }
}
