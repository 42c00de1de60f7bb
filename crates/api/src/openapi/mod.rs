//! The OpenAPI 3.1 document of the whole API, served at `/api/schema/`. It renders the route
//! table's declarations: every route that declares an operation (all but the pages rendering
//! the document) becomes one, with its path parameters, the errors it may answer, and the scope
//! its handler's extractor enforces (`x-required-scope`, read back from the handler's types like
//! `api::route_table` does). Request and response schemas are derived with utoipa from the types
//! the operations name: the bodies the parsers build and the response DTOs.

use std::sync::OnceLock;

use actix_web::http::Method;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ComponentsBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{Content, InfoBuilder, OpenApi, OpenApiBuilder, Paths, Ref, RefOr, Required};

use crate::contract::schemas::{ErrorSchema, string, uuid};
use crate::contract::{Auth, Components, Operation, collect};
use crate::routes::{RouteInfo, operations};

/// The security scheme every keyed operation names.
const PERSONAL_API_KEY: &str = "PersonalApiKey";

/// The document, built once per process.
pub fn document() -> &'static OpenApi {
    static DOCUMENT: OnceLock<OpenApi> = OnceLock::new();
    DOCUMENT.get_or_init(build)
}

/// The document as served and as checked in (`docs/openapi.json`): pretty JSON with a final
/// newline.
pub fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let mut json = document()
            .to_pretty_json()
            .expect("the document serializes");
        json.push('\n');
        json
    })
}

/// A route-table path as OpenAPI writes it: `{survey_id:[0-9a-fA-F-]{32,36}}` → `{survey_id}`.
pub fn openapi_path(route_path: &str) -> String {
    let mut path = String::with_capacity(route_path.len());
    let mut depth = 0_usize;
    let mut in_pattern = false;
    for c in route_path.chars() {
        match c {
            '{' => {
                depth += 1;
                if !in_pattern {
                    path.push(c);
                }
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    in_pattern = false;
                    path.push(c);
                }
            }
            ':' if depth == 1 => in_pattern = true,
            _ if !in_pattern => path.push(c),
            _ => {}
        }
    }
    path
}

fn build() -> OpenApi {
    let mut paths = Paths::new();
    let mut schemas = Components::new();
    for (route, operation) in operations() {
        let Some(method) = http_method(&route.method) else {
            // Left out; `tests::every_route_is_an_operation_and_nothing_else_is` names it.
            continue;
        };
        for component in &operation.components {
            component(&mut schemas);
        }
        let path = openapi_path(&route.path);
        // The same operations serve `/api/environments/…`; their ids must differ.
        let environment = path.starts_with("/api/environments/");
        paths.add_path_operation(
            &path,
            vec![method],
            render(&route, &path, operation, environment),
        );
    }
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Burrow")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "PostHog's API for organization plugins and project surveys, as Burrow \
                     serves it. Every route also answers with a trailing slash, `HEAD` wherever \
                     it answers `GET`, and `OPTIONS`. A keyed operation names the scope it needs \
                     in `x-required-scope` (space-separated when it needs more than one); \
                     `/api/environments/{project_id}/…` serves the same \
                     resources as `/api/projects/{project_id}/…`.",
                ))
                .build(),
        )
        .paths(paths)
        .components(Some(components(schemas)))
        .tags(Some(
            [
                ("surveys", "Surveys, their responses, stats and activity"),
                ("plugins", "An organization's plugins"),
                ("plugin_configs", "A project's plugin configs"),
                ("feature_flags", "A project's feature flags"),
                (
                    "early_access_features",
                    "A project's early access features, which persons opt into",
                ),
                (
                    "cohorts",
                    "A project's cohorts of persons, which flags filter by",
                ),
                (
                    "groups",
                    "A project's group types and groups, which flags may aggregate by",
                ),
                ("projects", "Projects"),
                ("organizations", "Organizations"),
                ("users", "The key's owner"),
                ("personal_api_keys", "Personal API keys"),
                (
                    "sdk",
                    "What PostHog's SDKs call, with a project's public token",
                ),
                ("service", "Health, readiness and this document"),
            ]
            .map(|(name, description)| {
                TagBuilder::new()
                    .name(name)
                    .description(Some(description))
                    .build()
            }),
        ))
        .build()
}

fn http_method(method: &Method) -> Option<HttpMethod> {
    Some(match *method {
        Method::GET => HttpMethod::Get,
        Method::POST => HttpMethod::Post,
        Method::PUT => HttpMethod::Put,
        Method::PATCH => HttpMethod::Patch,
        Method::DELETE => HttpMethod::Delete,
        _ => return None,
    })
}

/// The full operation: its description, path parameters, body, answers and scope.
fn render(
    route: &RouteInfo,
    path: &str,
    described: Operation,
    environment: bool,
) -> utoipa::openapi::path::Operation {
    let id = if environment {
        format!("environments_{}", described.id)
    } else {
        described.id.to_owned()
    };
    let mut builder = OperationBuilder::new()
        .tag(described.tag)
        .operation_id(Some(id))
        .summary(Some(described.summary))
        .parameters(Some(path_parameters(path).chain(described.query)));
    let mut errors: Vec<u16> = match described.auth {
        Auth::PersonalKey => vec![400, 401, 403, 404, 413, 415, 429, 500, 503],
        Auth::ProjectToken => vec![400, 401, 413, 415, 500, 503],
        // 400: a URL carrying `%00`, refused before any route.
        Auth::Open => vec![400, 500],
    };
    errors.extend(described.extra_errors);
    errors.sort_unstable();
    errors.dedup();
    match (described.auth, route.scope_list()) {
        (Auth::PersonalKey, scope) => {
            let needs = match route.scopes.as_slice() {
                [] => "any valid personal API key".to_owned(),
                [scope] => format!("scope `{scope}`"),
                scopes => format!(
                    "scopes {}",
                    scopes
                        .iter()
                        .map(|scope| format!("`{scope}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            };
            builder = builder
                .description(Some(format!("Needs {needs}.")))
                .security(SecurityRequirement::new(
                    PERSONAL_API_KEY,
                    Vec::<String>::new(),
                ))
                .extensions(Some(
                    ExtensionsBuilder::new()
                        .add(
                            "x-required-scope",
                            scope.map_or(serde_json::Value::Null, Into::into),
                        )
                        .build(),
                ));
        }
        (Auth::ProjectToken, _) => {
            builder = builder.description(Some(
                "Needs the project's public token (`phc_…`), as `api_key`/`token` in the body \
                 or the query; no personal key.",
            ));
        }
        (Auth::Open, _) => builder = builder.description(Some("Needs no key.")),
    }
    if let Some((schema, required)) = described.body {
        let mut body = RequestBodyBuilder::new()
            .required(Some(if required {
                Required::True
            } else {
                Required::False
            }))
            .content("application/json", Content::new(Some(schema.clone())));
        if let Some(form) = &described.form {
            body = body.content("multipart/form-data", Content::new(Some(form.clone())));
        }
        if described.auth == Auth::ProjectToken {
            body = body.content(
                "application/x-www-form-urlencoded",
                Content::new(Some(
                    ObjectBuilder::new().property(
                        "data",
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .description(Some("The JSON body, optionally base64-encoded.")),
                    ),
                )),
            );
        }
        builder = builder.request_body(Some(body.build()));
    }
    let (status, schema) = described.success;
    let success = match schema {
        Some(schema) => described.media.iter().fold(
            ResponseBuilder::new().description(status_description(status)),
            |response, media| response.content(*media, Content::new(Some(schema.clone()))),
        ),
        None => ResponseBuilder::new().description(status_description(status)),
    };
    builder = builder.response(status.to_string(), success.build());
    if described.conditional {
        builder = builder.response(
            "304",
            ResponseBuilder::new()
                .description("Not modified: `If-None-Match` named the current `ETag`; no body")
                .build(),
        );
    }
    for error in errors {
        builder = if described.page_errors.contains(&error) {
            builder.response(
                error.to_string(),
                ResponseBuilder::new()
                    .description("An HTML page saying why (or the JSON error of an unmatched path)")
                    .content(
                        "text/html; charset=utf-8",
                        Content::new(Some(RefOr::from(string()))),
                    )
                    .content(
                        "application/json",
                        Content::new(Some(Ref::from_schema_name("Error"))),
                    )
                    .build(),
            )
        } else {
            builder.response(
                error.to_string(),
                Ref::from_response_name(error_name(error)),
            )
        };
    }
    builder.build()
}

fn status_description(status: u16) -> &'static str {
    match status {
        201 => "Created",
        204 => "Done; no body",
        _ => "OK",
    }
}

/// The shared error responses, by the status each stands for; any other status is a
/// `ServerError`.
const ERRORS: [(u16, &str, &str); 10] = [
    (
        400,
        "BadRequest",
        "Malformed or invalid request (`validation_error`, `parse_error`)",
    ),
    (401, "Unauthorized", "No key, or one that is not valid"),
    (
        403,
        "Forbidden",
        "The key lacks the scope, or the caller the access",
    ),
    (404, "NotFound", "No such resource (or not the caller's)"),
    (413, "PayloadTooLarge", "Body over the size limit"),
    (415, "UnsupportedMediaType", "Body that is not JSON"),
    (
        429,
        "TooManyRequests",
        "The key is over its rate limit (`throttled`; `Retry-After` says when)",
    ),
    (
        500,
        "ServerError",
        "Unexpected failure (logged with the request id)",
    ),
    (502, "BadGateway", "A plugin's upstream failed"),
    (
        503,
        "ServiceUnavailable",
        "PostgreSQL does not answer (`database_unavailable`; nothing was written)",
    ),
];

/// The shared response each error status refers to.
fn error_name(status: u16) -> &'static str {
    ERRORS
        .iter()
        .find(|(known, ..)| *known == status)
        .map_or("ServerError", |(_, name, _)| name)
}

/// Every `{name}` of `path`, described by name.
fn path_parameters(path: &str) -> impl Iterator<Item = utoipa::openapi::path::Parameter> {
    let names: Vec<String> = path
        .split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(str::to_owned)
        .collect();
    names.into_iter().map(|name| {
        let (description, schema) = path_parameter(&name);
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Path)
            .required(Required::True)
            .description(Some(description))
            .schema(Some(schema))
            .build()
    })
}

fn path_parameter(name: &str) -> (&'static str, RefOr<Schema>) {
    let integer = || ObjectBuilder::new().schema_type(Type::Integer);
    let either = |id: ObjectBuilder| -> RefOr<Schema> {
        let current = string().enum_values(Some(["@current"]));
        OneOfBuilder::new().item(id).item(current).into()
    };
    match name {
        "project_id" => ("A project id, or `@current`.", either(integer())),
        "organization_id" => ("An organization id, or `@current`.", either(uuid())),
        "key_id" => ("A key's id, or `@current`.", either(uuid())),
        "survey_id" => ("A survey id.", uuid().into()),
        "response_uuid" => ("A response's uuid (its event's).", uuid().into()),
        "plugin_id" => ("A plugin id.", integer().minimum(Some(0)).into()),
        "flag_id" => ("A flag id.", integer().into()),
        "cohort_id" => ("A cohort id.", integer().into()),
        "group_type_index" => (
            "A group type's index, 0–4.",
            integer().minimum(Some(0)).into(),
        ),
        "feature_id" => ("An early access feature's id.", uuid().into()),
        "flag" => ("A flag's id, or its key.", string().into()),
        "config_id" => ("A plugin config id.", integer().into()),
        "token" => ("A project's public token (`phc_…`).", string().into()),
        "version" => ("A posthog-js version (`1.449.2`).", string().into()),
        "file" => ("A file name of posthog-js's dist.", string().into()),
        _ => ("", string().into()),
    }
}

/// The request and response types the operations name (`schemas`), the error body, the shared
/// error responses and the security scheme.
fn components(mut schemas: Components) -> utoipa::openapi::schema::Components {
    collect::<ErrorSchema>(&mut schemas);
    schemas.sort_by(|a, b| a.0.cmp(&b.0));
    schemas.dedup_by(|a, b| a.0 == b.0);
    let error = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                Content::new(Some(Ref::from_schema_name("Error"))),
            )
            .build()
    };
    ComponentsBuilder::new()
        .schemas_from_iter(schemas)
        .responses_from_iter(ERRORS.map(|(_, name, description)| (name, error(description))))
        .security_scheme(
            PERSONAL_API_KEY,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("phx_…")
                    .description(Some(
                        "A personal API key (`burrow admin create-key`); also read from the \
                         body's or the query's `personal_api_key`.",
                    ))
                    .build(),
            ),
        )
        .build()
}

#[cfg(test)]
mod tests;
