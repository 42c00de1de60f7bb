//! Extractors: everything a handler needs from a request, checked once, in one place.

mod auth;
mod body;
pub(crate) mod json;
mod pagination;
mod path;
mod scopes;

pub use auth::{Caller, KeyHolder, OrganizationCaller, ProjectCaller};
pub use json::JsonObject;
pub use pagination::{NumberedPage, PageNumber, Paginated, Pagination};
pub(crate) use path::path_id;
pub use scopes::{
    ExtractorScope, FeatureFlags, Organizations, Plugins, Projects, ScopeRequirement, Surveys,
    Users, required_scope,
};
