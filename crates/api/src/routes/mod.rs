//! Route table: every path, the methods it answers, the handler for each, and the scope that
//! handler's extractor types enforce. The table is data, so [`route_table`] and its test read back
//! exactly what is registered.

mod capture;
mod feature_flags;
mod flags;
mod health;
mod organizations;
mod personal_api_keys;
mod plugin_configs;
mod plugins;
mod projects;
mod public_surveys;
mod sdk_config;
mod static_assets;
mod survey_responses;
mod surveys;
mod users;

use std::fmt;

use actix_web::http::Method;
use actix_web::{FromRequest, Handler, Responder, Route, web};
use domain::scope::RequiredScope;

use utoipa::openapi::{RefOr, Schema};

use crate::error::ApiError;
use crate::extract::{ExtractorScope, ScopeRequirement, required_scope};
use crate::openapi::{self, collect, ui};

pub use self::static_assets::StaticAssets;

/// A route as clients see it: method, path pattern, and the scope its handler enforces (`None`
/// when it needs no key). Lets tests outside this crate walk every route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInfo {
    pub method: Method,
    pub path: String,
    pub scope: Option<RequiredScope>,
}

impl fmt::Display for RouteInfo {
    /// `GET /api/projects/{project_id}/surveys survey:read`; no scope, nothing after the path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        match self.scope {
            Some(scope) => write!(f, " {scope}"),
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
                scope: route.scope,
            })
        })
        .collect()
}

/// The response types of every route, and the types they contain, named for the OpenAPI
/// document's components.
pub(crate) fn response_schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
    collect::<crate::dto::FlagResponse>(schemas);
    collect::<crate::dto::ActivityResponse>(schemas);
    collect::<organizations::OrganizationResponse>(schemas);
    collect::<personal_api_keys::PersonalApiKeyResponse>(schemas);
    collect::<plugin_configs::PluginConfigResponse>(schemas);
    collect::<plugins::PluginResponse>(schemas);
    collect::<projects::ProjectResponse>(schemas);
    collect::<public_surveys::SurveyFeed>(schemas);
    collect::<survey_responses::ResponseBody>(schemas);
    collect::<survey_responses::StatsBody>(schemas);
    collect::<surveys::SurveyResponse>(schemas);
    collect::<surveys::DuplicatedResponse>(schemas);
    collect::<users::MeResponse>(schemas);
}

/// Registers every resource of the table. Beyond the methods the table lists, each resource
/// answers `HEAD` wherever it answers `GET` (the same handler; actix sends the headers without
/// the body) and `OPTIONS` with the methods it allows, as HTTP clients and proxies expect; a
/// method it does not answer gets a 405 naming them in `Allow`.
pub(crate) fn configure(config: &mut web::ServiceConfig) {
    for resource in table() {
        let allow = resource.allowed_methods();
        let mut registered = web::resource(resource.path);
        for route in resource.routes {
            registered = registered.route(route.handler);
            if let Some(head) = route.head {
                registered = registered.route(head);
            }
        }
        let registered = registered
            .route(web::method(Method::OPTIONS).to(move || std::future::ready(options(&allow))));
        if resource.cross_origin {
            config.service(registered.wrap(sdk_cors()));
        } else {
            config.service(registered);
        }
    }
}

/// What browsers need to let a site on any origin call the SDK endpoints: every answer (errors
/// included) carries `Access-Control-Allow-Origin: *`, and preflights are answered. No
/// credentials are involved: the SDKs name their project by its public token.
fn sdk_cors() -> actix_cors::Cors {
    actix_cors::Cors::default()
        .allow_any_origin()
        .send_wildcard()
        .allowed_methods(["GET", "POST", "OPTIONS"])
        .allow_any_header()
        .max_age(86_400)
}

/// The whole API. Each path is one `web::resource` matched whole (no `web::scope` claims a
/// prefix), and no two patterns match the same path, so the order of entries does not matter.
fn table() -> Vec<ResourceSpec> {
    let mut table = vec![
        ResourceSpec::at("/_health").route(Method::GET, health::health),
        ResourceSpec::at("/_readyz").route(Method::GET, health::ready),
        ResourceSpec::at("/metrics").route(Method::GET, crate::metrics::metrics),
        ResourceSpec::at("/api/schema").route(Method::GET, openapi::schema),
        ResourceSpec::at(ui::SWAGGER_UI).route(Method::GET, ui::swagger_ui),
        ResourceSpec::at(ui::SWAGGER_UI_JS).route(Method::GET, ui::swagger_ui_js),
        ResourceSpec::at(ui::SWAGGER_UI_CSS).route(Method::GET, ui::swagger_ui_css),
        ResourceSpec::at(ui::REDOC).route(Method::GET, ui::redoc),
        ResourceSpec::at(ui::REDOC_JS).route(Method::GET, ui::redoc_js),
        ResourceSpec::at("/api/users/@me")
            .route(Method::GET, users::me)
            .route(Method::PATCH, users::switch_current),
        ResourceSpec::at("/api/personal_api_keys")
            .route(Method::GET, personal_api_keys::refused)
            .route(Method::POST, personal_api_keys::refused),
        ResourceSpec::at("/api/personal_api_keys/{key_id}")
            .route(Method::GET, personal_api_keys::retrieve)
            .route(Method::PATCH, personal_api_keys::refused)
            .route(Method::PUT, personal_api_keys::refused)
            .route(Method::DELETE, personal_api_keys::refused),
        ResourceSpec::at("/api/organizations").route(Method::GET, organizations::list),
        ResourceSpec::at("/api/projects").route(Method::GET, projects::list),
        ResourceSpec::at("/api/projects/{project_id}").route(Method::GET, projects::retrieve),
    ];
    table.extend(sdk_resources());
    table.extend(organization_resources("/api/organizations"));
    // PostHog also serves project resources under `/api/environments/{id}/`, and clients use both.
    table.extend(project_resources("/api/projects"));
    table.extend(project_resources("/api/environments"));
    table
}

/// What PostHog's SDKs call from browsers and servers, named by a project's public token
/// instead of a personal key, answered to any origin.
fn sdk_resources() -> Vec<ResourceSpec> {
    let mut resources: Vec<ResourceSpec> = ["/batch", "/capture", "/e", "/i/v0/e"]
        .into_iter()
        .map(|path| ResourceSpec::at(path).route(Method::POST, capture::capture))
        .collect();
    resources.push(ResourceSpec::at("/api/surveys").route(Method::GET, public_surveys::feed));
    resources.push(
        ResourceSpec::at("/array/{token}/config").route(Method::GET, sdk_config::remote_config),
    );
    resources.push(
        ResourceSpec::at("/array/{token}/config.js")
            .route(Method::GET, sdk_config::remote_config_script),
    );
    resources.push(ResourceSpec::at("/flags").route(Method::POST, flags::flags));
    // Any one segment, so even a refused name is answered with CORS; the handlers serve plain
    // names only.
    resources.push(
        ResourceSpec::at("/static/{version}/{file}").route(Method::GET, static_assets::versioned),
    );
    resources
        .push(ResourceSpec::at("/static/{file}").route(Method::GET, static_assets::unversioned));
    resources
        .into_iter()
        .map(ResourceSpec::cross_origin)
        .collect()
}

/// The organization named by `{organization_id}` under `prefix`, and the resources inside it.
fn organization_resources(prefix: &str) -> Vec<ResourceSpec> {
    let organization = format!("{prefix}/{{organization_id}}");
    let plugins = format!("{organization}/plugins");
    // Plugin ids are digits only, so `activity`, `repository` and `unused` never read as ids.
    let plugin = format!("{plugins}/{{plugin_id:\\d+}}");
    vec![
        ResourceSpec::at(organization.clone()).route(Method::GET, organizations::retrieve),
        ResourceSpec::at(format!("{organization}/projects"))
            .route(Method::GET, projects::list_in_organization),
        ResourceSpec::at(format!("{organization}/projects/{{project_id}}"))
            .route(Method::GET, projects::retrieve_in_organization),
        ResourceSpec::at(plugins.clone())
            .route(Method::GET, plugins::list)
            .route(Method::POST, plugins::create),
        ResourceSpec::at(format!("{plugins}/activity")).route(Method::GET, plugins::activity),
        ResourceSpec::at(format!("{plugins}/repository")).route(Method::GET, plugins::repository),
        ResourceSpec::at(format!("{plugins}/unused")).route(Method::GET, plugins::unused),
        ResourceSpec::at(plugin.clone())
            .route(Method::GET, plugins::retrieve)
            .route(Method::PATCH, plugins::update)
            .route(Method::PUT, plugins::update)
            .route(Method::DELETE, plugins::delete),
        ResourceSpec::at(format!("{plugin}/check_for_updates"))
            .route(Method::GET, plugins::check_for_updates),
        ResourceSpec::at(format!("{plugin}/source")).route(Method::GET, plugins::source),
        ResourceSpec::at(format!("{plugin}/update_source"))
            .route(Method::PATCH, plugins::update_source),
        ResourceSpec::at(format!("{plugin}/upgrade")).route(Method::POST, plugins::upgrade),
    ]
}

/// The resources that live inside the project named by `{project_id}` under `prefix`.
fn project_resources(prefix: &str) -> Vec<ResourceSpec> {
    let project = format!("{prefix}/{{project_id}}");
    let all_surveys = format!("{project}/surveys");
    // Survey ids are UUIDs, so `responses_count`, `stats` and `activity` never read as ids.
    let survey = format!("{all_surveys}/{{survey_id:[0-9a-fA-F-]{{32,36}}}}");
    vec![
        ResourceSpec::at(all_surveys.clone())
            .route(Method::GET, surveys::list)
            .route(Method::POST, surveys::create),
        ResourceSpec::at(format!("{all_surveys}/responses_count"))
            .route(Method::GET, survey_responses::responses_count),
        ResourceSpec::at(format!("{all_surveys}/stats"))
            .route(Method::GET, survey_responses::project_stats),
        ResourceSpec::at(format!("{survey}/stats"))
            .route(Method::GET, survey_responses::survey_stats),
        ResourceSpec::at(format!("{survey}/responses")).route(Method::GET, survey_responses::list),
        ResourceSpec::at(format!("{survey}/responses/{{response_uuid}}/archive"))
            .route(Method::POST, survey_responses::archive),
        ResourceSpec::at(format!("{survey}/responses/{{response_uuid}}/unarchive"))
            .route(Method::POST, survey_responses::unarchive),
        ResourceSpec::at(format!("{survey}/archived-response-uuids"))
            .route(Method::GET, survey_responses::archived_uuids),
        ResourceSpec::at(format!("{all_surveys}/activity"))
            .route(Method::GET, surveys::project_activity),
        ResourceSpec::at(format!("{survey}/activity")).route(Method::GET, surveys::survey_activity),
        ResourceSpec::at(format!("{survey}/duplicate_to_projects"))
            .route(Method::POST, surveys::duplicate_to_projects),
        ResourceSpec::at(survey)
            .route(Method::GET, surveys::retrieve)
            .route(Method::PATCH, surveys::partial_update)
            .route(Method::PUT, surveys::full_update)
            .route(Method::DELETE, surveys::delete),
        ResourceSpec::at(format!("{project}/feature_flags"))
            .route(Method::GET, feature_flags::list)
            .route(Method::POST, feature_flags::create),
        ResourceSpec::at(format!("{project}/plugin_configs"))
            .route(Method::GET, plugin_configs::list)
            .route(Method::POST, plugin_configs::create),
        ResourceSpec::at(format!("{project}/plugin_configs/{{config_id}}"))
            .route(Method::GET, plugin_configs::retrieve)
            .route(Method::PATCH, plugin_configs::update)
            .route(Method::DELETE, plugin_configs::delete),
        ResourceSpec::at(format!("{project}/feature_flags/{{flag_id}}"))
            .route(Method::GET, feature_flags::retrieve)
            .route(Method::PATCH, feature_flags::update)
            .route(Method::DELETE, feature_flags::delete),
    ]
}

/// One path and the methods it answers, registered as one `web::resource` (a second resource
/// with the same path would never be reached).
struct ResourceSpec {
    path: String,
    routes: Vec<RouteSpec>,
    /// Answered to browsers on any origin (the SDK endpoints).
    cross_origin: bool,
}

/// One method of a resource: its handler, and the scope the handler's extractors enforce.
struct RouteSpec {
    method: Method,
    scope: Option<RequiredScope>,
    handler: Route,
    /// For a `GET`: the same handler answering `HEAD`.
    head: Option<Route>,
}

/// `OPTIONS`: the methods the resource allows, in `Allow` and, as DRF describes a view, in a
/// small JSON body.
fn options(allow: &str) -> actix_web::HttpResponse {
    actix_web::HttpResponse::Ok()
        .insert_header((actix_web::http::header::ALLOW, allow))
        .json(serde_json::json!({
            "renders": ["application/json"],
            "parses": ["application/json"],
        }))
}

impl ResourceSpec {
    fn at(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            routes: Vec::new(),
            cross_origin: false,
        }
    }

    /// The `Allow` list: the table's methods, `HEAD` with `GET`, and `OPTIONS`.
    fn allowed_methods(&self) -> String {
        let mut methods: Vec<&str> = Vec::new();
        for route in &self.routes {
            methods.push(route.method.as_str());
            if route.head.is_some() {
                methods.push(Method::HEAD.as_str());
            }
        }
        methods.push(Method::OPTIONS.as_str());
        methods.join(", ")
    }

    fn cross_origin(self) -> Self {
        Self {
            cross_origin: true,
            ..self
        }
    }

    /// Answers `method` with `handler`, whose scope is read from the types of its arguments:
    /// the one the caller extractor will check, never a second copy that could disagree.
    fn route<F, Args>(mut self, method: Method, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + ExtractorScope + 'static,
        F::Output: Responder + 'static,
    {
        let scope = <Args::Resource as ScopeRequirement>::OBJECT
            .map(|object| required_scope(object, &method));
        let head = (method == Method::GET).then(|| web::method(Method::HEAD).to(handler.clone()));
        self.routes.push(RouteSpec {
            handler: web::method(method.clone()).to(handler),
            method,
            scope,
            head,
        });
        self
    }
}

/// Unknown paths.
pub(crate) async fn not_found() -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::not_found())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_listed_with_the_scope_its_handler_enforces() {
        let mut listed: Vec<String> = route_table().iter().map(ToString::to_string).collect();
        listed.sort();
        assert_eq!(
            listed,
            [
                "DELETE /api/environments/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "DELETE /api/environments/{project_id}/plugin_configs/{config_id} plugin:write",
                "DELETE /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "DELETE /api/organizations/{organization_id}/plugins/{plugin_id:\\d+} plugin:write",
                "DELETE /api/personal_api_keys/{key_id}",
                "DELETE /api/projects/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "DELETE /api/projects/{project_id}/plugin_configs/{config_id} plugin:write",
                "DELETE /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "GET /_health",
                "GET /_readyz",
                "GET /api/environments/{project_id}/feature_flags feature_flag:read",
                "GET /api/environments/{project_id}/feature_flags/{flag_id} feature_flag:read",
                "GET /api/environments/{project_id}/plugin_configs plugin:read",
                "GET /api/environments/{project_id}/plugin_configs/{config_id} plugin:read",
                "GET /api/environments/{project_id}/surveys survey:read",
                "GET /api/environments/{project_id}/surveys/activity activity_log:read",
                "GET /api/environments/{project_id}/surveys/responses_count survey:read",
                "GET /api/environments/{project_id}/surveys/stats survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/activity activity_log:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/archived-response-uuids survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/stats survey:read",
                "GET /api/organizations organization:read",
                "GET /api/organizations/{organization_id} organization:read",
                "GET /api/organizations/{organization_id}/plugins plugin:read",
                "GET /api/organizations/{organization_id}/plugins/activity plugin:read",
                "GET /api/organizations/{organization_id}/plugins/repository plugin:read",
                "GET /api/organizations/{organization_id}/plugins/unused plugin:read",
                "GET /api/organizations/{organization_id}/plugins/{plugin_id:\\d+} plugin:read",
                "GET /api/organizations/{organization_id}/plugins/{plugin_id:\\d+}/check_for_updates plugin:read",
                "GET /api/organizations/{organization_id}/plugins/{plugin_id:\\d+}/source plugin:read",
                "GET /api/organizations/{organization_id}/projects project:read",
                "GET /api/organizations/{organization_id}/projects/{project_id} project:read",
                "GET /api/personal_api_keys",
                "GET /api/personal_api_keys/{key_id}",
                "GET /api/projects project:read",
                "GET /api/projects/{project_id} project:read",
                "GET /api/projects/{project_id}/feature_flags feature_flag:read",
                "GET /api/projects/{project_id}/feature_flags/{flag_id} feature_flag:read",
                "GET /api/projects/{project_id}/plugin_configs plugin:read",
                "GET /api/projects/{project_id}/plugin_configs/{config_id} plugin:read",
                "GET /api/projects/{project_id}/surveys survey:read",
                "GET /api/projects/{project_id}/surveys/activity activity_log:read",
                "GET /api/projects/{project_id}/surveys/responses_count survey:read",
                "GET /api/projects/{project_id}/surveys/stats survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/activity activity_log:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/archived-response-uuids survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/stats survey:read",
                "GET /api/schema",
                "GET /api/schema/redoc",
                "GET /api/schema/redoc/2.5.4/redoc.standalone.js",
                "GET /api/schema/swagger-ui",
                "GET /api/schema/swagger-ui/5.35.0/swagger-ui-bundle.js",
                "GET /api/schema/swagger-ui/5.35.0/swagger-ui.css",
                "GET /api/surveys",
                "GET /api/users/@me user:read",
                "GET /array/{token}/config",
                "GET /array/{token}/config.js",
                "GET /metrics",
                "GET /static/{file}",
                "GET /static/{version}/{file}",
                "PATCH /api/environments/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "PATCH /api/environments/{project_id}/plugin_configs/{config_id} plugin:write",
                "PATCH /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "PATCH /api/organizations/{organization_id}/plugins/{plugin_id:\\d+} plugin:write",
                "PATCH /api/organizations/{organization_id}/plugins/{plugin_id:\\d+}/update_source plugin:write",
                "PATCH /api/personal_api_keys/{key_id}",
                "PATCH /api/projects/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "PATCH /api/projects/{project_id}/plugin_configs/{config_id} plugin:write",
                "PATCH /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "PATCH /api/users/@me user:write",
                "POST /api/environments/{project_id}/feature_flags feature_flag:write",
                "POST /api/environments/{project_id}/plugin_configs plugin:write",
                "POST /api/environments/{project_id}/surveys survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/duplicate_to_projects survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/archive survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/unarchive survey:write",
                "POST /api/organizations/{organization_id}/plugins plugin:write",
                "POST /api/organizations/{organization_id}/plugins/{plugin_id:\\d+}/upgrade plugin:write",
                "POST /api/personal_api_keys",
                "POST /api/projects/{project_id}/feature_flags feature_flag:write",
                "POST /api/projects/{project_id}/plugin_configs plugin:write",
                "POST /api/projects/{project_id}/surveys survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/duplicate_to_projects survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/archive survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/unarchive survey:write",
                "POST /batch",
                "POST /capture",
                "POST /e",
                "POST /flags",
                "POST /i/v0/e",
                "PUT /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "PUT /api/organizations/{organization_id}/plugins/{plugin_id:\\d+} plugin:write",
                "PUT /api/personal_api_keys/{key_id}",
                "PUT /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
            ]
        );
    }

    #[test]
    fn no_two_resources_share_a_path_so_none_hides_another() {
        let paths: Vec<String> = table().into_iter().map(|resource| resource.path).collect();
        let mut distinct = paths.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), paths.len(), "{paths:#?}");
    }
}
