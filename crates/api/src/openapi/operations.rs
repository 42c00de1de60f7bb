//! What each route does, for the OpenAPI document: its summary, query parameters, body and
//! successful answer. Looked up by method and path (project resources once, under
//! `/api/projects/{project_id}`; `/api/environments/…` reuses them), so the route table stays the
//! one list of routes: `super::document` walks it and asks here about each.

use actix_web::http::Method;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{KnownFormat, Ref, RefOr, Required, SchemaFormat};

use super::schemas::{numbered, paginated};

/// How a caller proves who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Auth {
    /// A personal API key (`Authorization: Bearer phx_…`).
    PersonalKey,
    /// A project's public token, in the body or the query (the SDK endpoints).
    ProjectToken,
    /// Nothing.
    Open,
}

/// One operation, before `super::document` adds its path parameters, errors and scope.
pub(super) struct Operation {
    pub id: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    pub auth: Auth,
    pub query: Vec<Parameter>,
    /// The JSON body's schema, and whether a body is required.
    pub body: Option<(RefOr<Schema>, bool)>,
    /// The successful status, and its body (none for 204).
    pub success: (u16, Option<RefOr<Schema>>),
    /// The successful body's media type (JSON but for metrics and static bundles).
    pub media: &'static str,
    /// Statuses beyond the ones every operation of its kind may answer.
    pub extra_errors: Vec<u16>,
}

impl Operation {
    fn new(tag: &'static str, id: &'static str, summary: &'static str) -> Self {
        Self {
            id,
            tag,
            summary,
            auth: Auth::PersonalKey,
            query: Vec::new(),
            body: None,
            success: (200, None),
            media: "application/json",
            extra_errors: Vec::new(),
        }
    }

    /// A 200 whose body is text of `media`, not JSON.
    fn text(mut self, media: &'static str) -> Self {
        self.success = (200, Some(string().into()));
        self.media = media;
        self
    }

    fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    fn ok(mut self, schema: impl Into<RefOr<Schema>>) -> Self {
        self.success = (200, Some(schema.into()));
        self
    }

    fn created(mut self, schema: impl Into<RefOr<Schema>>) -> Self {
        self.success = (201, Some(schema.into()));
        self
    }

    fn no_content(mut self) -> Self {
        self.success = (204, None);
        self
    }

    fn body(mut self, schema: impl Into<RefOr<Schema>>) -> Self {
        self.body = Some((schema.into(), false));
        self
    }

    fn query(mut self, parameters: impl IntoIterator<Item = Parameter>) -> Self {
        self.query.extend(parameters);
        self
    }

    /// `limit`/`offset`, answered with `{"count","next","previous","results"}` of `item`.
    fn paginated(self, item: &str) -> Self {
        self.query(limit_offset()).ok(paginated(item))
    }

    /// `page`/`limit`, answered with `{"results","next","previous","total_count"}` of `item`.
    fn numbered(self, item: &str) -> Self {
        self.query(page_limit()).ok(numbered(item))
    }

    fn also(mut self, status: u16) -> Self {
        self.extra_errors.push(status);
        self
    }
}

/// The operation answering `method` at `path` (a route-table path without its regexes, a
/// project resource under `/api/projects/{project_id}`), if there is one.
pub(super) fn describe(method: &Method, path: &str) -> Option<Operation> {
    let op = Operation::new;
    let project = path.strip_prefix("/api/projects/{project_id}");
    let plugins = path.strip_prefix("/api/organizations/{organization_id}/plugins");
    Some(match (method.as_str(), path, project, plugins) {
        ("GET", "/_health", ..) => op("service", "health", "Whether the process runs")
            .auth(Auth::Open)
            .ok(status_ok()),
        ("GET", "/_readyz", ..) => op("service", "ready", "Whether PostgreSQL answers")
            .auth(Auth::Open)
            .ok(status_ok())
            .also(503),
        ("GET", "/metrics", ..) => op("service", "metrics", "Prometheus metrics of this node")
            .auth(Auth::Open)
            .text("text/plain; version=0.0.4; charset=utf-8"),
        ("GET", "/array/{token}/config", ..) => op(
            "sdk",
            "remote_config",
            "The remote config posthog-js loads: surveys and flags on, gzip capture at /i/v0/e/",
        )
        .auth(Auth::ProjectToken)
        .ok(ObjectBuilder::new())
        .also(404),
        ("GET", "/array/{token}/config.js", ..) => op(
            "sdk",
            "remote_config_script",
            "The same remote config as a script setting window._POSTHOG_REMOTE_CONFIG[token]",
        )
        .auth(Auth::ProjectToken)
        .text("application/javascript; charset=utf-8")
        .also(404),
        ("POST", "/flags", ..) => op(
            "sdk",
            "flags",
            "The project's flags and its surveys' internal targeting flags, evaluated for one person",
        )
        .auth(Auth::ProjectToken)
        .query([query(
            "v",
            "2 (or more) for the `flags` answer; otherwise the legacy `featureFlags` one.",
            ObjectBuilder::new().schema_type(Type::Integer),
        )])
        .body(
            ObjectBuilder::new()
                .property("token", string())
                .property("distinct_id", string())
                .property("person_properties", ObjectBuilder::new())
                .property("flag_keys", ArrayBuilder::new().items(string()))
                .required("distinct_id"),
        )
        .ok(ObjectBuilder::new()),
        ("GET", "/static/{file}" | "/static/{version}/{file}", ..) => op(
            "sdk",
            if path.contains("{version}") {
                "static_versioned"
            } else {
                "static_newest"
            },
            "A file of posthog-js's dist (e.g. surveys.js) from BURROW_STATIC_DIR",
        )
        .auth(Auth::Open)
        .query([query(
            "v",
            "A version to prefer when it is there (the unversioned path only).",
            string(),
        )])
        .text("application/javascript")
        .also(404),
        ("GET", "/api/schema", ..) => op("service", "schema", "This OpenAPI document")
            .auth(Auth::Open)
            .ok(ObjectBuilder::new()),
        ("GET", "/api/users/@me", ..) => op("users", "users_me", "The key's owner").ok(r("Me")),
        ("PATCH", "/api/users/@me", ..) => op(
            "users",
            "users_switch_current",
            "Switch the current project or organization",
        )
        .body(r("SwitchCurrent"))
        .ok(r("Me")),
        (_, "/api/personal_api_keys", ..) => refused(method, false)?,
        ("GET", "/api/personal_api_keys/{key_id}", ..) => op(
            "personal_api_keys",
            "personal_api_keys_retrieve",
            "The calling key (`@current` or its own id); any other id is 403",
        )
        .ok(r("PersonalApiKey")),
        (_, "/api/personal_api_keys/{key_id}", ..) => refused(method, true)?,
        ("GET", "/api/organizations", ..) => op(
            "organizations",
            "organizations_list",
            "Organizations the user belongs to and the key reaches",
        )
        .paginated("Organization"),
        ("GET", "/api/organizations/{organization_id}", ..) => op(
            "organizations",
            "organizations_retrieve",
            "One organization",
        )
        .ok(r("Organization")),
        ("GET", "/api/organizations/{organization_id}/projects", ..) => op(
            "projects",
            "organizations_projects_list",
            "The organization's projects the key sees",
        )
        .paginated("Project"),
        ("GET", "/api/organizations/{organization_id}/projects/{project_id}", ..) => op(
            "projects",
            "organizations_projects_retrieve",
            "One of the organization's projects",
        )
        .ok(r("Project")),
        ("GET", "/api/projects", ..) => op(
            "projects",
            "projects_list",
            "Projects of the user's organizations that the key reaches",
        )
        .paginated("Project"),
        ("GET", "/api/projects/{project_id}", ..) => {
            op("projects", "projects_retrieve", "One project").ok(r("Project"))
        }
        ("POST", "/batch" | "/capture" | "/e" | "/i/v0/e", ..) => capture(path),
        ("GET", "/api/surveys", ..) => op(
            "sdk",
            "surveys_feed",
            "The project's unarchived surveys, as PostHog's SDKs fetch them",
        )
        .auth(Auth::ProjectToken)
        .query([
            query("token", "The project's public token.", string()),
            query("api_key", "The same, as older SDKs send it.", string()),
        ])
        .ok(r("SurveyFeed")),
        (_, _, _, Some(rest)) => plugin(method, rest)?,
        (_, _, Some(rest), _) => project_resource(method, rest)?,
        _ => return None,
    })
}

/// `/api/personal_api_keys/…` that a personal key may not use: always 403.
fn refused(method: &Method, one: bool) -> Option<Operation> {
    let (id, summary) = match (method.as_str(), one) {
        ("GET", false) => (
            "personal_api_keys_list",
            "Listing keys (refused to personal keys)",
        ),
        ("POST", false) => (
            "personal_api_keys_create",
            "Making a key (refused to personal keys)",
        ),
        ("PATCH", true) => (
            "personal_api_keys_partial_update",
            "Changing a key (refused)",
        ),
        ("PUT", true) => ("personal_api_keys_update", "Replacing a key (refused)"),
        ("DELETE", true) => ("personal_api_keys_destroy", "Deleting a key (refused)"),
        _ => return None,
    };
    let operation = Operation::new("personal_api_keys", id, summary).ok(ObjectBuilder::new());
    Some(if matches!(method.as_str(), "GET" | "DELETE") {
        operation
    } else {
        operation.body(ObjectBuilder::new())
    })
}

fn capture(path: &str) -> Operation {
    let (id, summary) = match path {
        "/batch" => ("capture_batch", "Capture a batch of events (SDKs)"),
        "/capture" => ("capture", "Capture events (SDKs)"),
        "/e" => ("capture_e", "Capture events (SDKs, short path)"),
        _ => ("capture_i_v0_e", "Capture events (SDKs, versioned path)"),
    };
    let mut operation = Operation::new("sdk", id, summary)
        .auth(Auth::ProjectToken)
        .query([
            query(
                "compression",
                "`gzip-js` or `base64` when the body is encoded so.",
                string(),
            ),
            query("token", "The project's public token.", string()),
            query("api_key", "The same, as older SDKs send it.", string()),
        ])
        .ok(ObjectBuilder::new()
            .property("status", ObjectBuilder::new().schema_type(Type::Integer))
            .required("status"));
    operation.body = Some((r("CaptureBody"), true));
    operation
}

/// Under `/api/organizations/{organization_id}/plugins`.
fn plugin(method: &Method, rest: &str) -> Option<Operation> {
    let op = |id, summary| Operation::new("plugins", id, summary);
    Some(match (method.as_str(), rest) {
        ("GET", "") => op("plugins_list", "The organization's plugins").paginated("Plugin"),
        ("POST", "") => op("plugins_create", "Install a plugin")
            .body(r("PluginWrite"))
            .created(r("Plugin"))
            .also(502),
        ("GET", "/activity") => {
            op("plugins_activity", "The organization's plugin activity").numbered("ActivityEntry")
        }
        ("GET", "/repository") => op(
            "plugins_repository",
            "The configured plugin listing, verbatim (`[]` when none is configured)",
        )
        .ok(any())
        .also(502),
        ("GET", "/unused") => op(
            "plugins_unused",
            "Ids of the organization's plugins no project has enabled",
        )
        .ok(ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::Integer))),
        ("GET", "/{plugin_id}") => op("plugins_retrieve", "One plugin").ok(r("Plugin")),
        ("PATCH", "/{plugin_id}") => op("plugins_partial_update", "Change a plugin")
            .body(r("PluginWrite"))
            .ok(r("Plugin")),
        ("PUT", "/{plugin_id}") => op("plugins_update", "Change a plugin (as PATCH)")
            .body(r("PluginWrite"))
            .ok(r("Plugin")),
        ("DELETE", "/{plugin_id}") => op("plugins_destroy", "Uninstall a plugin").no_content(),
        ("GET", "/{plugin_id}/check_for_updates") => op(
            "plugins_check_for_updates",
            "The plugin with `latest_tag` set to the newest version",
        )
        .ok(ObjectBuilder::new()
            .property("plugin", r("Plugin"))
            .required("plugin"))
        .also(502),
        ("GET", "/{plugin_id}/source") => {
            op("plugins_source", "The plugin's source files").ok(source_files(false))
        }
        ("PATCH", "/{plugin_id}/update_source") => op(
            "plugins_update_source",
            "Write source files (`null` deletes one)",
        )
        .body(source_files(true))
        .ok(source_files(false)),
        ("POST", "/{plugin_id}/upgrade") => op(
            "plugins_upgrade",
            "Download the plugin again (optionally another version)",
        )
        .body(r("PluginUpgrade"))
        .ok(r("Plugin"))
        .also(502),
        _ => return None,
    })
}

/// Under `/api/projects/{project_id}` (and `/api/environments/{project_id}`).
fn project_resource(method: &Method, rest: &str) -> Option<Operation> {
    let surveys = |id, summary| Operation::new("surveys", id, summary);
    let flags = |id, summary| Operation::new("feature_flags", id, summary);
    let configs = |id, summary| Operation::new("plugin_configs", id, summary);
    const SURVEY: &str = "/surveys/{survey_id}";
    Some(match (method.as_str(), rest) {
        ("GET", "/surveys") => surveys("surveys_list", "The project's surveys, newest first")
            .query([
                query(
                    "search",
                    "Terms that must all appear in the name or description.",
                    string(),
                ),
                query(
                    "archived",
                    "Only archived (`true`) or unarchived (`false`) surveys.",
                    ObjectBuilder::new().schema_type(Type::Boolean),
                ),
            ])
            .paginated("Survey"),
        ("POST", "/surveys") => surveys("surveys_create", "Create a survey")
            .body(r("SurveyWrite"))
            .created(r("Survey")),
        ("GET", "/surveys/responses_count") => {
            surveys("surveys_responses_count", "Responses per survey id")
                .query([
                    query("survey_ids", "Comma-separated survey ids.", string()),
                    query(
                        "exclude_archived",
                        "Leave archived responses out.",
                        ObjectBuilder::new().schema_type(Type::Boolean),
                    ),
                ])
                .ok(ObjectBuilder::new().additional_properties(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(0)),
                )))
        }
        ("GET", "/surveys/stats") => surveys("surveys_stats", "Survey events of the project")
            .query(date_window())
            .ok(r("SurveyStats")),
        ("GET", "/surveys/activity") => surveys(
            "surveys_activity",
            "The activity of every survey of the project",
        )
        .numbered("ActivityEntry"),
        ("GET", SURVEY) => surveys("surveys_retrieve", "One survey").ok(r("Survey")),
        ("PATCH", SURVEY) => surveys("surveys_partial_update", "Change a survey")
            .body(r("SurveyWrite"))
            .ok(r("Survey")),
        ("PUT", SURVEY) => surveys(
            "surveys_update",
            "Change a survey (`name` and `type` required)",
        )
        .body(r("SurveyWrite"))
        .ok(r("Survey")),
        ("DELETE", SURVEY) => surveys("surveys_destroy", "Delete a survey").no_content(),
        ("GET", rest) if rest.strip_prefix(SURVEY) == Some("/stats") => {
            surveys("surveys_survey_stats", "One survey's events")
                .query(date_window())
                .ok(r("SurveyStats"))
        }
        ("GET", rest) if rest.strip_prefix(SURVEY) == Some("/responses") => {
            surveys("surveys_responses_list", "One survey's responses")
                .query(date_window())
                .paginated("SurveyResponse")
        }
        ("POST", rest)
            if rest.strip_prefix(SURVEY) == Some("/responses/{response_uuid}/archive") =>
        {
            surveys("surveys_responses_archive", "Archive a response").ok(success())
        }
        ("POST", rest)
            if rest.strip_prefix(SURVEY) == Some("/responses/{response_uuid}/unarchive") =>
        {
            surveys("surveys_responses_unarchive", "Unarchive a response").ok(success())
        }
        ("GET", rest) if rest.strip_prefix(SURVEY) == Some("/archived-response-uuids") => surveys(
            "surveys_archived_response_uuids",
            "Uuids of the survey's archived responses",
        )
        .ok(ArrayBuilder::new().items(uuid())),
        ("GET", rest) if rest.strip_prefix(SURVEY) == Some("/activity") => {
            surveys("surveys_survey_activity", "One survey's activity").numbered("ActivityEntry")
        }
        ("POST", rest) if rest.strip_prefix(SURVEY) == Some("/duplicate_to_projects") => surveys(
            "surveys_duplicate_to_projects",
            "Copy the survey, as a draft, into other projects",
        )
        .body(r("DuplicateToProjects"))
        .created(r("DuplicatedResponse")),
        ("GET", "/feature_flags") => {
            flags("feature_flags_list", "The project's live flags").paginated("FeatureFlag")
        }
        ("POST", "/feature_flags") => flags("feature_flags_create", "Create a flag")
            .body(r("FeatureFlagWrite"))
            .created(r("FeatureFlag")),
        ("GET", "/feature_flags/{flag_id}") => {
            flags("feature_flags_retrieve", "One live flag").ok(r("FeatureFlag"))
        }
        ("PATCH", "/feature_flags/{flag_id}") => {
            flags("feature_flags_partial_update", "Change a flag")
                .body(r("FeatureFlagWrite"))
                .ok(r("FeatureFlag"))
        }
        ("DELETE", "/feature_flags/{flag_id}") => {
            flags("feature_flags_destroy", "Delete a flag (soft)").no_content()
        }
        ("GET", "/plugin_configs") => {
            configs("plugin_configs_list", "The project's plugin configs").paginated("PluginConfig")
        }
        ("POST", "/plugin_configs") => configs("plugin_configs_create", "Configure a plugin")
            .body(r("PluginConfigWrite"))
            .created(r("PluginConfig")),
        ("GET", "/plugin_configs/{config_id}") => {
            configs("plugin_configs_retrieve", "One plugin config").ok(r("PluginConfig"))
        }
        ("PATCH", "/plugin_configs/{config_id}") => {
            configs("plugin_configs_partial_update", "Change a plugin config")
                .body(r("PluginConfigWrite"))
                .ok(r("PluginConfig"))
        }
        ("DELETE", "/plugin_configs/{config_id}") => {
            configs("plugin_configs_destroy", "Remove a plugin config").no_content()
        }
        _ => return None,
    })
}

/// Any JSON value.
fn any() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::AnyValue)
}

/// A reference to the component schema `name`.
fn r(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn uuid() -> ObjectBuilder {
    string().format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
}

/// `{"status": "ok"}`.
fn status_ok() -> ObjectBuilder {
    ObjectBuilder::new()
        .property("status", string().enum_values(Some(["ok"])))
        .required("status")
}

/// `{"success": true}`.
fn success() -> ObjectBuilder {
    ObjectBuilder::new()
        .property("success", ObjectBuilder::new().schema_type(Type::Boolean))
        .required("success")
}

/// `{filename: content}`; with `deleting`, a `null` content deletes the file.
fn source_files(deleting: bool) -> ObjectBuilder {
    let content = if deleting {
        ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::String, Type::Null]))
    } else {
        string()
    };
    ObjectBuilder::new().additional_properties(Some(content))
}

fn query(name: &str, description: &str, schema: impl Into<RefOr<Schema>>) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

fn limit_offset() -> [Parameter; 2] {
    [
        query(
            "limit",
            "Page size (default 100, at most 1000); unusable values fall back to the default.",
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
        query(
            "offset",
            "How many to skip (default 0).",
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
    ]
}

fn page_limit() -> [Parameter; 2] {
    [
        query(
            "page",
            "Page number, from 1.",
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
        query(
            "limit",
            "Page size (default 10).",
            ObjectBuilder::new().schema_type(Type::Integer),
        ),
    ]
}

fn date_window() -> [Parameter; 2] {
    let date = || string().format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)));
    [
        query("date_from", "ISO 8601 with a timezone.", date()),
        query("date_to", "ISO 8601 with a timezone.", date()),
    ]
}
