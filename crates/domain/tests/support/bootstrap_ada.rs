//! The tenant the domain's SDK and project settings tests start from (each test file is its own
//! binary, so they include this file by `#[path]`).

use std::sync::Arc;

use domain::admin::{AdminService, BootstrapRequest, Bootstrapped};
use domain::tenancy::PluginsAccessLevel;
use domain::testing::InMemoryStore;

/// Bootstraps ada@example.com with the organization "Analytical", its project "Engine" and a
/// key of every scope, in `store`.
pub async fn bootstrap_ada(store: &InMemoryStore) -> Bootstrapped {
    AdminService::new(Arc::new(store.clone()), Arc::new(store.clone()))
        .bootstrap(BootstrapRequest {
            email: "ada@example.com".into(),
            first_name: "Ada".into(),
            organization_name: "Analytical".into(),
            project_name: "Engine".into(),
            scopes: vec!["*".into()],
            plugins_access_level: PluginsAccessLevel::Root,
        })
        .await
        .unwrap()
}
