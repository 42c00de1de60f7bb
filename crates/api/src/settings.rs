//! What the HTTP layer needs to know about its deployment.

use url::Url;

/// Deployment settings of the API, shared by every worker.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// Public base URL for absolute links (`BURROW_SITE_URL`); `None` uses the request's host.
    pub site_url: Option<Url>,
    /// Largest accepted request body (`BURROW_MAX_BODY_BYTES`).
    pub max_body_bytes: usize,
}

impl ApiSettings {
    pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
}

impl Default for ApiSettings {
    fn default() -> Self {
        Self {
            site_url: None,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
        }
    }
}
