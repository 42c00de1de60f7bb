//! Route table: which path and method reach which handler, and which scope object each group
//! of routes requires.

mod feature_flags;
mod health;
mod organizations;
mod projects;
mod surveys;
mod users;

use actix_web::web;
use domain::scope::ScopeObject;

use crate::error::ApiError;

pub(crate) fn configure(config: &mut web::ServiceConfig) {
    config
        .service(web::resource("/_health").route(web::get().to(health::health)))
        .service(web::resource("/_readyz").route(web::get().to(health::ready)))
        .service(
            web::scope("/api/users")
                .app_data(ScopeObject::User)
                .service(web::resource("/@me").route(web::get().to(users::me))),
        )
        .service(
            web::scope("/api/organizations")
                .app_data(ScopeObject::Organization)
                .service(web::resource("").route(web::get().to(organizations::list)))
                .service(
                    web::resource("/{organization_id}")
                        .route(web::get().to(organizations::retrieve)),
                ),
        )
        // Nested project resources first: the `/api/projects` scope would otherwise claim them.
        // PostHog also serves them under `/api/environments/{id}/`, and clients use both.
        .configure(|config| project_resources(config, "/api/projects"))
        .configure(|config| project_resources(config, "/api/environments"))
        .service(
            web::scope("/api/projects")
                .app_data(ScopeObject::Project)
                .service(web::resource("").route(web::get().to(projects::list)))
                .service(web::resource("/{project_id}").route(web::get().to(projects::retrieve))),
        );
}

/// The resources that live inside a project, mounted under `prefix`.
fn project_resources(config: &mut web::ServiceConfig, prefix: &str) {
    config
        .service(
            web::scope(&format!("{prefix}/{{project_id}}/surveys"))
                .app_data(ScopeObject::Survey)
                .service(
                    web::resource("")
                        .route(web::get().to(surveys::list))
                        .route(web::post().to(surveys::create)),
                )
                .service(
                    web::resource("/{survey_id}")
                        .route(web::get().to(surveys::retrieve))
                        .route(web::patch().to(surveys::partial_update))
                        .route(web::put().to(surveys::full_update))
                        .route(web::delete().to(surveys::delete)),
                ),
        )
        .service(
            web::scope(&format!("{prefix}/{{project_id}}/feature_flags"))
                .app_data(ScopeObject::FeatureFlag)
                .service(
                    web::resource("")
                        .route(web::get().to(feature_flags::list))
                        .route(web::post().to(feature_flags::create)),
                )
                .service(
                    web::resource("/{flag_id}")
                        .route(web::get().to(feature_flags::retrieve))
                        .route(web::patch().to(feature_flags::update))
                        .route(web::delete().to(feature_flags::delete)),
                ),
        );
}

/// Unknown paths.
pub(crate) async fn not_found() -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::not_found())
}
