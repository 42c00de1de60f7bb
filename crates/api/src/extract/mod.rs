//! Extractors: everything a handler needs from a request, checked once, in one place.

mod auth;
mod body;
pub(crate) use body::{held_for, read_limited};
pub(crate) mod json;
mod json_list;
mod json_object;
mod json_or_form;
mod pagination;
mod path;
mod scopes;

pub(crate) use auth::bearer_of;
pub use auth::{Caller, KeyHolder, OrganizationCaller, ProjectCaller};
pub use json_list::JsonList;
pub use json_object::JsonObject;
pub use json_or_form::{Form, JsonOrForm};
pub use pagination::{DEFAULT_LIMIT, MAX_LIMIT, NumberedPage, PageNumber, Paginated, Pagination};
pub(crate) use path::{ResponseUuid, path_id};
pub use scopes::{
    ActivityLogs, Cohorts, EarlyAccessFeatures, ExtractorScope, FeatureFlags, Groups,
    Organizations, Persons, Plugins, Projects, ScopeRequirement, SurveyQueries, Surveys, Users,
    Webhooks, required_scope,
};
