//! The route table as tests read it (compiled for tests and the `testing` feature): every
//! route with the scopes its handler enforces, one line of text each, and which of them the
//! OpenAPI document lists.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::OnceLock;

use super::{RouteInfo, operations, table};

impl fmt::Display for RouteInfo {
    /// `GET /api/projects/{project_id}/surveys survey:read`; no scope, nothing after the path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        match self.scope_list() {
            Some(scopes) => write!(f, " {scopes}"),
            None => Ok(()),
        }
    }
}

/// Every route the app serves, read from the same table that registers them.
pub fn route_table() -> Vec<RouteInfo> {
    table()
        .into_iter()
        .flat_map(|resource| {
            let path = resource.path;
            resource.routes.into_iter().map(move |route| RouteInfo {
                method: route.method,
                path: path.clone(),
                scopes: route.scopes,
            })
        })
        .collect()
}

/// Whether the route at `path` (a route-table pattern) is in the OpenAPI document: every route
/// but the pages that render it and their assets.
pub fn is_documented(path: &str) -> bool {
    static PATHS: OnceLock<BTreeSet<String>> = OnceLock::new();
    PATHS
        .get_or_init(|| {
            operations()
                .into_iter()
                .map(|(route, _)| route.path)
                .collect()
        })
        .contains(path)
}
