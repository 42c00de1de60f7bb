//! Route table: which path and method reach which handler, and which scope object each group
//! of routes requires.

mod health;
mod organizations;
mod projects;
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
        .service(
            web::scope("/api/projects")
                .app_data(ScopeObject::Project)
                .service(web::resource("").route(web::get().to(projects::list)))
                .service(web::resource("/{project_id}").route(web::get().to(projects::retrieve))),
        );
}

/// Unknown paths.
pub(crate) async fn not_found() -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::not_found())
}
