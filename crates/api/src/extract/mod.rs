//! Extractors: everything a handler needs from a request, checked once, in one place.

mod auth;
mod body;
pub(crate) mod json;
mod pagination;

pub use auth::{Caller, OrganizationCaller, ProjectCaller};
pub use json::JsonObject;
pub use pagination::{Paginated, Pagination};
