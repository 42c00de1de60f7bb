//! Route table: every path, the methods it answers, the handler for each, the scope that
//! handler's extractor types enforce, and its operation on the wire (`table.rs`). The table is
//! data, so the route listing tests read (`listing.rs`) and the OpenAPI document read back
//! exactly what is registered.

mod api_schema;
mod cohorts;
mod console;
mod early_access;
mod feature_flags;
mod groups;
mod health;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod listing;
mod organizations;
mod personal_api_keys;
mod plugin_configs;
mod plugins;
mod projects;
mod survey_responses;
mod surveys;
mod table;
mod users;
mod webhooks;

use actix_web::http::Method;
use actix_web::{FromRequest, Handler, Responder, Route, web};
use domain::scope::RequiredScope;

use crate::contract::Operation;
use crate::error::ApiError;
use crate::extract::{ExtractorScope, ScopeRequirement, required_scope};
use table::table;

pub(crate) use self::api_schema::ApiDocument;
pub use self::surveys::SurveyJson;

/// A route as clients see it: method, path pattern, and the scopes its handler enforces, in the
/// order it checks them (none when it needs no key, or any valid key). Lets tests outside this
/// crate walk every route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInfo {
    pub method: Method,
    pub path: String,
    pub scopes: Vec<RequiredScope>,
}

impl RouteInfo {
    /// The scopes, space-separated as OAuth writes a scope list (`survey:read query:read`);
    /// `None` when there are none.
    pub fn scope_list(&self) -> Option<String> {
        (!self.scopes.is_empty()).then(|| {
            self.scopes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
    }
}

/// Every route that is an operation of the OpenAPI document (all but the pages rendering it),
/// with the operation its table entry declares.
pub(crate) fn operations() -> Vec<(RouteInfo, Operation)> {
    table()
        .into_iter()
        .flat_map(|resource| {
            let path = resource.path;
            resource.routes.into_iter().filter_map(move |route| {
                let info = RouteInfo {
                    method: route.method,
                    path: path.clone(),
                    scopes: route.scopes,
                };
                Some((info, route.operation?))
            })
        })
        .collect()
}

/// Registers every resource of the table. Beyond the methods the table lists, each resource
/// answers `HEAD` wherever it answers `GET` (the same handler; actix sends the headers without
/// the body) and `OPTIONS` with the methods it allows, as HTTP clients and proxies expect; a
/// method it does not answer gets a 405 naming them in `Allow`.
pub(crate) fn configure(config: &mut web::ServiceConfig) {
    let mut table = table().into_iter().peekable();
    while let Some(resource) = table.next() {
        let Some(root) = resource.family.clone() else {
            let cross_origin = resource.cross_origin;
            let registered = resource.into_resource(None);
            if cross_origin {
                config.service(registered.wrap(sdk_cors()));
            } else {
                config.service(registered);
            }
            continue;
        };
        let mut family = vec![resource];
        while let Some(member) = table.next_if(|next| next.family.as_ref() == Some(&root)) {
            family.push(member);
        }
        config.service(family_scope(&root, family));
    }
}

/// A family's resources under one `web::scope` at its root and, when every member's path goes
/// on with a literal segment (`/surveys`, `/webhooks`, …), under a scope per segment: a literal
/// matches only itself, so each of those scopes claims only its own members' paths. A request
/// is then matched against a handful of patterns instead of the whole table's.
fn family_scope(root: &str, members: Vec<ResourceSpec>) -> actix_web::Scope {
    let by_segment = members
        .iter()
        .all(|member| !member.first_segment(root).contains('{'));
    let mut scope = web::scope(root);
    let mut groups: Vec<(String, Vec<ResourceSpec>)> = Vec::new();
    for member in members {
        let segment = member.first_segment(root).to_owned();
        if !by_segment || segment.is_empty() {
            scope = scope.service(member.into_resource(Some(root)));
        } else if let Some((_, group)) = groups.iter_mut().find(|(named, _)| *named == segment) {
            group.push(member);
        } else {
            groups.push((segment, vec![member]));
        }
    }
    for (segment, group) in groups {
        let prefix = format!("{root}/{segment}");
        let inner = group
            .into_iter()
            .fold(web::scope(&prefix[root.len()..]), |inner, member| {
                inner.service(member.into_resource(Some(&prefix)))
            });
        scope = scope.service(inner);
    }
    scope
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

/// One path and the methods it answers, registered as one `web::resource` (a second resource
/// with the same path would never be reached).
struct ResourceSpec {
    path: String,
    routes: Vec<RouteSpec>,
    /// Answered to browsers on any origin (the SDK endpoints).
    cross_origin: bool,
    /// The root of the family it is registered in (see [`family_scope`]), a prefix of `path`.
    family: Option<String>,
}

/// One method of a resource: its handler, the scopes the handler's extractors enforce, and its
/// operation (none for the pages that render the document).
struct RouteSpec {
    method: Method,
    scopes: Vec<RequiredScope>,
    handler: Route,
    /// For a `GET`: the same handler answering `HEAD`.
    head: Option<Route>,
    operation: Option<Operation>,
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

/// `ResourceSpec::get(handler, operation)` and the like: answers the method with `handler`,
/// described by `operation`. The handler's scope is read from the types of its arguments: the
/// one the caller extractor will check, never a second copy that could disagree.
macro_rules! answering_each {
    ($($name:ident $method:ident),*) => {$(
        fn $name<F, Args>(self, handler: F, operation: Operation) -> Self
        where
            F: Handler<Args>,
            Args: FromRequest + ExtractorScope + 'static,
            F::Output: Responder + 'static,
        {
            self.answer(Method::$method, handler, Some(operation))
        }
    )*};
}

impl ResourceSpec {
    fn at(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            routes: Vec::new(),
            cross_origin: false,
            family: None,
        }
    }

    /// `resources`, whose paths are under `root`, as the family registered there (a test
    /// holds the table to it).
    fn family(root: &str, resources: Vec<Self>) -> Vec<Self> {
        resources
            .into_iter()
            .map(|resource| Self {
                family: Some(root.to_owned()),
                ..resource
            })
            .collect()
    }

    /// The segment of its path after `root` (empty for the root itself).
    fn first_segment(&self, root: &str) -> &str {
        let rest = self.path.get(root.len()..).unwrap_or_default();
        rest.trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or_default()
    }

    /// The resource with its routes, `OPTIONS` and the `Allow` list, at its path less the
    /// `prefix` of the scope it is registered in.
    fn into_resource(self, prefix: Option<&str>) -> actix_web::Resource {
        let allow = self.allowed_methods();
        let path = prefix
            .and_then(|prefix| self.path.strip_prefix(prefix))
            .unwrap_or(&self.path);
        let mut registered = web::resource(path);
        for route in self.routes {
            registered = registered.route(route.handler);
            if let Some(head) = route.head {
                registered = registered.route(head);
            }
        }
        registered
            .route(web::method(Method::OPTIONS).to(move || std::future::ready(options(&allow))))
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

    answering_each!(get GET, post POST, patch PATCH, put PUT, delete DELETE);

    /// Answers `GET` with a page rendering the document: served, but no operation of it.
    fn page<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + ExtractorScope + 'static,
        F::Output: Responder + 'static,
    {
        self.answer(Method::GET, handler, None)
    }

    fn answer<F, Args>(mut self, method: Method, handler: F, operation: Option<Operation>) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + ExtractorScope + 'static,
        F::Output: Responder + 'static,
    {
        let scopes = <Args::Resource as ScopeRequirement>::OBJECTS
            .iter()
            .map(|object| required_scope(*object, &method))
            .collect();
        let head = (method == Method::GET).then(|| web::method(Method::HEAD).to(handler.clone()));
        self.routes.push(RouteSpec {
            handler: web::method(method.clone()).to(handler),
            method,
            scopes,
            head,
            operation,
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
    use listing::route_table;

    #[test]
    fn every_route_is_listed_with_the_scope_its_handler_enforces() {
        let mut listed: Vec<String> = route_table().iter().map(ToString::to_string).collect();
        listed.sort();
        assert_eq!(
            listed,
            [
                "DELETE /api/environments/{project_id}/early_access_feature/{feature_id:[0-9a-fA-F-]{32,36}} early_access_feature:write",
                "DELETE /api/environments/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "DELETE /api/environments/{project_id}/groups_types/{group_type_index:\\d+} group:write",
                "DELETE /api/environments/{project_id}/plugin_configs/{config_id} plugin:write",
                "DELETE /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "DELETE /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid:[0-9a-fA-F-]{32,36}} survey:write",
                "DELETE /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}} webhook:write",
                "DELETE /api/organizations/{organization_id}/plugins/{plugin_id:\\d+} plugin:write",
                "DELETE /api/personal_api_keys/{key_id}",
                "DELETE /api/projects/{project_id}/early_access_feature/{feature_id:[0-9a-fA-F-]{32,36}} early_access_feature:write",
                "DELETE /api/projects/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "DELETE /api/projects/{project_id}/groups_types/{group_type_index:\\d+} group:write",
                "DELETE /api/projects/{project_id}/plugin_configs/{config_id} plugin:write",
                "DELETE /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "DELETE /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid:[0-9a-fA-F-]{32,36}} survey:write",
                "DELETE /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}} webhook:write",
                "GET /_health",
                "GET /_readyz",
                "GET /api/early_access_features",
                "GET /api/environments/{project_id} project:read",
                "GET /api/environments/{project_id}/cohorts cohort:read",
                "GET /api/environments/{project_id}/cohorts/{cohort_id} cohort:read",
                "GET /api/environments/{project_id}/cohorts/{cohort_id}/persons person:read",
                "GET /api/environments/{project_id}/early_access_feature early_access_feature:read",
                "GET /api/environments/{project_id}/early_access_feature/{feature_id:[0-9a-fA-F-]{32,36}} early_access_feature:read",
                "GET /api/environments/{project_id}/feature_flags feature_flag:read",
                "GET /api/environments/{project_id}/feature_flags/{flag_id} feature_flag:read",
                "GET /api/environments/{project_id}/feature_flags/{flag}/remote_config feature_flag:read",
                "GET /api/environments/{project_id}/groups/find group:read",
                "GET /api/environments/{project_id}/groups_types group:read",
                "GET /api/environments/{project_id}/plugin_configs plugin:read",
                "GET /api/environments/{project_id}/plugin_configs/{config_id} plugin:read",
                "GET /api/environments/{project_id}/surveys survey:read",
                "GET /api/environments/{project_id}/surveys/activity activity_log:read",
                "GET /api/environments/{project_id}/surveys/question_labels survey:read",
                "GET /api/environments/{project_id}/surveys/responses_count survey:read",
                "GET /api/environments/{project_id}/surveys/stats survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/activity activity_log:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/archived-response-uuids survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses survey:read query:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/browse survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/export survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/results survey:read",
                "GET /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/stats survey:read",
                "GET /api/environments/{project_id}/webhooks webhook:read",
                "GET /api/environments/{project_id}/webhooks/activity activity_log:read",
                "GET /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}} webhook:read",
                "GET /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/activity activity_log:read",
                "GET /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/deliveries webhook:read",
                "GET /api/feature_flag/local_evaluation feature_flag:read",
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
                "GET /api/projects/{project_id}/cohorts cohort:read",
                "GET /api/projects/{project_id}/cohorts/{cohort_id} cohort:read",
                "GET /api/projects/{project_id}/cohorts/{cohort_id}/persons person:read",
                "GET /api/projects/{project_id}/early_access_feature early_access_feature:read",
                "GET /api/projects/{project_id}/early_access_feature/{feature_id:[0-9a-fA-F-]{32,36}} early_access_feature:read",
                "GET /api/projects/{project_id}/feature_flags feature_flag:read",
                "GET /api/projects/{project_id}/feature_flags/{flag_id} feature_flag:read",
                "GET /api/projects/{project_id}/feature_flags/{flag}/remote_config feature_flag:read",
                "GET /api/projects/{project_id}/groups/find group:read",
                "GET /api/projects/{project_id}/groups_types group:read",
                "GET /api/projects/{project_id}/plugin_configs plugin:read",
                "GET /api/projects/{project_id}/plugin_configs/{config_id} plugin:read",
                "GET /api/projects/{project_id}/surveys survey:read",
                "GET /api/projects/{project_id}/surveys/activity activity_log:read",
                "GET /api/projects/{project_id}/surveys/question_labels survey:read",
                "GET /api/projects/{project_id}/surveys/responses_count survey:read",
                "GET /api/projects/{project_id}/surveys/stats survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/activity activity_log:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/archived-response-uuids survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses survey:read query:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/browse survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/export survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/results survey:read",
                "GET /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/stats survey:read",
                "GET /api/projects/{project_id}/webhooks webhook:read",
                "GET /api/projects/{project_id}/webhooks/activity activity_log:read",
                "GET /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}} webhook:read",
                "GET /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/activity activity_log:read",
                "GET /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/deliveries webhook:read",
                "GET /api/schema",
                "GET /api/schema/redoc",
                "GET /api/schema/redoc/2.5.4/redoc.standalone.js",
                "GET /api/schema/swagger-ui",
                "GET /api/schema/swagger-ui/5.35.0/swagger-ui-bundle.js",
                "GET /api/schema/swagger-ui/5.35.0/swagger-ui.css",
                "GET /api/surveys",
                "GET /api/users/@me user:read",
                "GET /app",
                "GET /app/{file}",
                "GET /array/{token}/config",
                "GET /array/{token}/config.js",
                "GET /external_surveys/{survey_id}",
                "GET /flags/definitions feature_flag:read",
                "GET /metrics",
                "GET /static/{file}",
                "GET /static/{version}/{file}",
                "PATCH /api/environments/{project_id} project:write",
                "PATCH /api/environments/{project_id}/cohorts/{cohort_id} cohort:write",
                "PATCH /api/environments/{project_id}/cohorts/{cohort_id}/add_persons_to_static_cohort cohort:write",
                "PATCH /api/environments/{project_id}/cohorts/{cohort_id}/remove_person_from_static_cohort cohort:write",
                "PATCH /api/environments/{project_id}/early_access_feature/{feature_id:[0-9a-fA-F-]{32,36}} early_access_feature:write",
                "PATCH /api/environments/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "PATCH /api/environments/{project_id}/groups_types/update_metadata group:write",
                "PATCH /api/environments/{project_id}/plugin_configs/{config_id} plugin:write",
                "PATCH /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "PATCH /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}} webhook:write",
                "PATCH /api/organizations/{organization_id}/plugins/{plugin_id:\\d+} plugin:write",
                "PATCH /api/organizations/{organization_id}/plugins/{plugin_id:\\d+}/update_source plugin:write",
                "PATCH /api/personal_api_keys/{key_id}",
                "PATCH /api/projects/{project_id} project:write",
                "PATCH /api/projects/{project_id}/cohorts/{cohort_id} cohort:write",
                "PATCH /api/projects/{project_id}/cohorts/{cohort_id}/add_persons_to_static_cohort cohort:write",
                "PATCH /api/projects/{project_id}/cohorts/{cohort_id}/remove_person_from_static_cohort cohort:write",
                "PATCH /api/projects/{project_id}/early_access_feature/{feature_id:[0-9a-fA-F-]{32,36}} early_access_feature:write",
                "PATCH /api/projects/{project_id}/feature_flags/{flag_id} feature_flag:write",
                "PATCH /api/projects/{project_id}/groups_types/update_metadata group:write",
                "PATCH /api/projects/{project_id}/plugin_configs/{config_id} plugin:write",
                "PATCH /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "PATCH /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}} webhook:write",
                "PATCH /api/users/@me user:write",
                "POST /api/environments/{project_id}/cohorts cohort:write",
                "POST /api/environments/{project_id}/early_access_feature early_access_feature:write",
                "POST /api/environments/{project_id}/feature_flags feature_flag:write",
                "POST /api/environments/{project_id}/persons/bulk_delete person:write",
                "POST /api/environments/{project_id}/plugin_configs plugin:write",
                "POST /api/environments/{project_id}/surveys survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/duplicate_to_projects survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/launch survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/reset survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/archive survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/unarchive survey:write",
                "POST /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/stop survey:write",
                "POST /api/environments/{project_id}/webhooks webhook:write",
                "POST /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/deliveries/{delivery_id}/retry webhook:write",
                "POST /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/rotate_secret webhook:write",
                "POST /api/environments/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/test webhook:write",
                "POST /api/organizations/{organization_id}/plugins plugin:write",
                "POST /api/organizations/{organization_id}/plugins/{plugin_id:\\d+}/upgrade plugin:write",
                "POST /api/personal_api_keys",
                "POST /api/projects/{project_id}/cohorts cohort:write",
                "POST /api/projects/{project_id}/early_access_feature early_access_feature:write",
                "POST /api/projects/{project_id}/feature_flags feature_flag:write",
                "POST /api/projects/{project_id}/persons/bulk_delete person:write",
                "POST /api/projects/{project_id}/plugin_configs plugin:write",
                "POST /api/projects/{project_id}/surveys survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/duplicate_to_projects survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/launch survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/reset survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/archive survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/responses/{response_uuid}/unarchive survey:write",
                "POST /api/projects/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}}/stop survey:write",
                "POST /api/projects/{project_id}/webhooks webhook:write",
                "POST /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/deliveries/{delivery_id}/retry webhook:write",
                "POST /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/rotate_secret webhook:write",
                "POST /api/projects/{project_id}/webhooks/{webhook_id:[0-9a-fA-F-]{32,36}}/test webhook:write",
                "POST /batch",
                "POST /capture",
                "POST /e",
                "POST /flags",
                "POST /i/v0/e",
                "POST /i/v1/analytics/events",
                "PUT /api/environments/{project_id}/groups_types/set_default_columns group:write",
                "PUT /api/environments/{project_id}/surveys/{survey_id:[0-9a-fA-F-]{32,36}} survey:write",
                "PUT /api/organizations/{organization_id}/plugins/{plugin_id:\\d+} plugin:write",
                "PUT /api/personal_api_keys/{key_id}",
                "PUT /api/projects/{project_id}/groups_types/set_default_columns group:write",
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

    /// A family's scope claims every path under its root, so its members must stand together
    /// in the table, and every other resource under that root must be the root itself,
    /// registered before the family (routes are matched in order); none of the members answers
    /// other origins (a family's resources are registered without CORS).
    #[test]
    fn each_family_is_contiguous_and_holds_every_path_under_its_root() {
        let table = table();
        let mut families: Vec<(&str, usize)> = Vec::new();
        for (index, resource) in table.iter().enumerate() {
            let Some(root) = resource.family.as_deref() else {
                continue;
            };
            assert!(!resource.cross_origin, "{}", resource.path);
            if index == 0 || table[index - 1].family.as_deref() != Some(root) {
                assert!(
                    families.iter().all(|(known, _)| *known != root),
                    "{root} is split in two"
                );
                families.push((root, index));
            }
        }
        assert!(families.len() >= 3, "{families:?}");
        for (index, resource) in table.iter().enumerate() {
            for &(root, first) in &families {
                let Some(rest) = resource.path.strip_prefix(root) else {
                    continue;
                };
                if resource.family.as_deref() == Some(root)
                    || !rest.starts_with('/') && !rest.is_empty()
                {
                    continue;
                }
                assert!(
                    rest.is_empty() && index < first,
                    "{} is under the family at {root} but not in it",
                    resource.path
                );
            }
        }
    }
}
