//! The request bodies, described for the OpenAPI document. Handlers read bodies field by field
//! (`fields::Fields`, in the serializer's order, with DRF's messages), so these structs are
//! never built: they only say which fields a body may carry. Unknown fields are ignored, so
//! every body allows additional properties.

#![expect(
    dead_code,
    reason = "schema-only types: they describe bodies and are never built"
)]

use serde_json::Value;
use utoipa::ToSchema;

use super::schemas::PluginType;

/// A feature flag to create (`key` required) or change (any subset; `deleted: true` deletes).
#[derive(ToSchema)]
#[schema(as = FeatureFlagWrite)]
pub(crate) struct FeatureFlagWrite {
    /// Letters, digits, `-` and `_`; unique among the project's live flags.
    #[schema(nullable = false, pattern = "^[a-zA-Z0-9_-]+$")]
    key: Option<String>,
    #[schema(nullable = false)]
    name: Option<String>,
    /// `{groups: [{properties, rollout_percentage, variant}], multivariate?, payloads?}`.
    #[schema(value_type = Object, required = false)]
    filters: Option<Value>,
    #[schema(nullable = false)]
    active: Option<bool>,
    #[schema(nullable = false)]
    ensure_experience_continuity: Option<bool>,
    /// PATCH only: `true` deletes the flag (soft).
    #[schema(nullable = false)]
    deleted: Option<bool>,
}

/// A plugin to install (POST: `url` unless `plugin_type` is `source`) or change.
#[derive(ToSchema)]
#[schema(as = PluginWrite)]
pub(crate) struct PluginWrite {
    /// Install only: a GitHub, GitLab, npm or `file:` URL.
    url: Option<String>,
    #[schema(value_type = Option<PluginType>)]
    plugin_type: Option<String>,
    #[schema(max_length = 200)]
    name: Option<String>,
    description: Option<String>,
    #[schema(max_length = 800)]
    icon: Option<String>,
    /// A list or an object.
    #[schema(required = false)]
    config_schema: Option<Value>,
    #[schema(max_length = 200)]
    tag: Option<String>,
    /// Needs the organization's `root` plugin level.
    #[schema(nullable = false)]
    is_global: Option<bool>,
    #[schema(value_type = Object, required = false)]
    capabilities: Option<Value>,
    #[schema(required = false)]
    metrics: Option<Value>,
    #[schema(required = false)]
    public_jobs: Option<Value>,
}

/// `upgrade`: optionally the version to install.
#[derive(ToSchema)]
pub(crate) struct PluginUpgrade {
    #[schema(max_length = 200)]
    tag: Option<String>,
}

/// A plugin config to create (`plugin` required) or change.
#[derive(ToSchema)]
#[schema(as = PluginConfigWrite)]
pub(crate) struct PluginConfigWrite {
    /// The plugin's id (create only).
    #[schema(nullable = false)]
    plugin: Option<i32>,
    #[schema(nullable = false)]
    enabled: Option<bool>,
    #[schema(nullable = false)]
    order: Option<i32>,
    /// Values of the plugin's config fields; a secret sent as `null` keeps the stored one.
    #[schema(value_type = Object, required = false)]
    config: Option<Value>,
    #[schema(max_length = 400)]
    name: Option<String>,
    #[schema(max_length = 1000)]
    description: Option<String>,
}

/// `PATCH /api/users/@me/`: switch the current project or organization.
#[derive(ToSchema)]
pub(crate) struct SwitchCurrent {
    /// A project id; its organization becomes current too.
    #[schema(nullable = false, minimum = 1, maximum = 2_147_483_647)]
    set_current_team: Option<i64>,
    /// An organization id; its first project the key sees becomes current.
    #[schema(nullable = false, format = Uuid)]
    set_current_organization: Option<String>,
}

/// An SDK's capture request: one event, or a batch, with the project's public token.
#[derive(ToSchema)]
pub(crate) struct CaptureBody {
    /// The project's public token (also read as `token`, or from the query string).
    api_key: Option<String>,
    /// One event's name, when the body is one event.
    event: Option<String>,
    #[schema(value_type = Option<Object>)]
    properties: Option<Value>,
    /// Several events.
    #[schema(value_type = Option<Vec<Object>>)]
    batch: Option<Value>,
}
