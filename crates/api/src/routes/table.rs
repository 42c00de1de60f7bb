//! The whole API as data: every path, the methods it answers, and for each its handler and its
//! operation — summary, tag, id, query parameters, request and response types — declared here
//! once. Registration (`super::configure`), `route_table()` and the OpenAPI document all read
//! this table.

use domain::cohort::MAX_COHORT_SEARCH_CHARS;
use domain::survey::{MAX_FILTERED_IDS, MAX_SEARCH_CHARS, SurveyStatus};
use utoipa::PartialSchema as _;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};

use super::{
    ResourceSpec, api_schema, cohorts, console, early_access, feature_flags, groups, health,
    organizations, personal_api_keys, plugin_configs, plugins, projects, survey_responses, surveys,
    users, webhooks,
};
use crate::contract::schemas::{
    SurveyType as SchemaSurveyType, any, integer_within, query, source_files, status_ok, string,
    success, uuid,
};
use crate::contract::{Auth, Operation};
use crate::dto::{ActivityResponse, FlagResponse};
use crate::sdk::{
    capture, capture_v1, early_access_features, flag_definitions, flags, hosted_surveys,
    public_surveys, remote_config, static_assets,
};
use organizations::OrganizationResponse;
use plugin_configs::PluginConfigResponse;
use plugins::PluginResponse;
use projects::{ProjectDetailResponse, ProjectResponse};
use survey_responses::{
    BulkDeleteWrite, DeletedBody, ResponseBody, ResponseListBody, ResultsBody, StatsBody,
};
use surveys::{
    DuplicateToProjects, DuplicatedResponse, QuestionLabels, SurveyResponse, SurveyWrite,
};
use webhooks::{DeliveryResponse, WebhookResponse, WebhookWithSecret, WebhookWrite};

/// The whole API. Each path is one `web::resource`, and no two patterns match the same path, so
/// the order of entries does not matter to routing; the document lists paths in this order. The
/// resources inside an organization or a project are a family (`ResourceSpec::in_family`),
/// registered under a scope of their own, so a request is matched against one family's
/// patterns rather than every pattern of the API.
pub(super) fn table() -> Vec<ResourceSpec> {
    let service = |id, summary| Operation::new("service", id, summary).auth(Auth::Open);
    let users = |id, summary| Operation::new("users", id, summary);
    let keys = |id, summary| Operation::new("personal_api_keys", id, summary);
    let mut table = vec![
        ResourceSpec::at("/_health").get(
            health::health,
            service("health", "Whether the process runs").ok_inline(status_ok()),
        ),
        ResourceSpec::at("/_readyz").get(
            health::ready,
            service("ready", "Whether PostgreSQL answers")
                .ok_inline(status_ok())
                .also(503),
        ),
        ResourceSpec::at("/metrics").get(
            crate::metrics::metrics,
            service("metrics", "Prometheus metrics of this node")
                .text(&["text/plain; version=0.0.4; charset=utf-8"]),
        ),
        ResourceSpec::at("/api/schema").get(
            api_schema::schema,
            service("schema", "This OpenAPI document").ok_inline(ObjectBuilder::new()),
        ),
        ResourceSpec::at(api_schema::SWAGGER_UI).page(api_schema::swagger_ui),
        ResourceSpec::at(api_schema::SWAGGER_UI_JS).page(api_schema::swagger_ui_js),
        ResourceSpec::at(api_schema::SWAGGER_UI_CSS).page(api_schema::swagger_ui_css),
        ResourceSpec::at(api_schema::REDOC).page(api_schema::redoc),
        ResourceSpec::at(api_schema::REDOC_JS).page(api_schema::redoc_js),
        ResourceSpec::at(console::INDEX).page(console::index),
        ResourceSpec::at(console::FILE).page(console::asset),
        ResourceSpec::at("/api/users/@me")
            .get(
                users::me,
                users("users_me", "The key's owner").ok::<users::MeResponse>(),
            )
            .patch(
                users::switch_current,
                users(
                    "users_switch_current",
                    "Switch the current project or organization",
                )
                .body::<users::SwitchCurrent>()
                .ok::<users::MeResponse>(),
            ),
        ResourceSpec::at("/api/personal_api_keys")
            .get(
                personal_api_keys::refused,
                keys(
                    "personal_api_keys_list",
                    "Listing keys (refused to personal keys)",
                )
                .ok_inline(ObjectBuilder::new()),
            )
            .post(
                personal_api_keys::refused,
                keys(
                    "personal_api_keys_create",
                    "Making a key (refused to personal keys)",
                )
                .body_inline(ObjectBuilder::new())
                .ok_inline(ObjectBuilder::new()),
            ),
        ResourceSpec::at("/api/personal_api_keys/{key_id}")
            .get(
                personal_api_keys::retrieve,
                keys(
                    "personal_api_keys_retrieve",
                    "The calling key (`@current` or its own id); any other id is 403",
                )
                .ok::<personal_api_keys::PersonalApiKeyResponse>(),
            )
            .patch(
                personal_api_keys::refused,
                keys(
                    "personal_api_keys_partial_update",
                    "Changing a key (refused)",
                )
                .body_inline(ObjectBuilder::new())
                .ok_inline(ObjectBuilder::new()),
            )
            .put(
                personal_api_keys::refused,
                keys("personal_api_keys_update", "Replacing a key (refused)")
                    .body_inline(ObjectBuilder::new())
                    .ok_inline(ObjectBuilder::new()),
            )
            .delete(
                personal_api_keys::refused,
                keys("personal_api_keys_destroy", "Deleting a key (refused)")
                    .ok_inline(ObjectBuilder::new()),
            ),
        ResourceSpec::at("/api/organizations").get(
            organizations::list,
            Operation::new(
                "organizations",
                "organizations_list",
                "Organizations the user belongs to and the key reaches",
            )
            .paginated::<OrganizationResponse>(),
        ),
        ResourceSpec::at("/api/projects").get(
            projects::list,
            Operation::new(
                "projects",
                "projects_list",
                "Projects of the user's organizations that the key reaches",
            )
            .paginated::<ProjectResponse>(),
        ),
    ];
    // PostHog writes a project's settings under both prefixes (`/api/environments/{id}/` is the
    // team's own URL); each is registered before the family of resources under it.
    for prefix in ["/api/projects", "/api/environments"] {
        table.push(
            ResourceSpec::at(format!("{prefix}/{{project_id}}"))
                .get(
                    projects::retrieve,
                    Operation::new("projects", "projects_retrieve", "One project")
                        .ok::<ProjectDetailResponse>(),
                )
                .patch(
                    projects::update,
                    Operation::new(
                        "projects",
                        "projects_partial_update",
                        "Change a project's survey_config (the one field Burrow writes)",
                    )
                    .body::<projects::ProjectWrite>()
                    .ok::<ProjectDetailResponse>(),
                ),
        );
    }
    table.extend(sdk_resources());
    table.extend(flag_definition_resources());
    table.extend(organization_resources("/api/organizations"));
    // PostHog also serves project resources under `/api/environments/{id}/`, and clients use both.
    table.extend(project_resources("/api/projects"));
    table.extend(project_resources("/api/environments"));
    table
}

/// What PostHog's SDKs call from browsers and servers, named by a project's public token
/// instead of a personal key, answered to any origin.
fn sdk_resources() -> Vec<ResourceSpec> {
    let sdk = |id, summary| Operation::new("sdk", id, summary).auth(Auth::ProjectToken);
    let tokens = || {
        [
            query("token", "The project's public token.", string()),
            query("api_key", "The same, as older SDKs send it.", string()),
        ]
    };
    let capture = |id, summary| {
        sdk(id, summary)
            .query([query(
                "compression",
                "`gzip-js` or `base64` when the body is encoded so.",
                string(),
            )])
            .query(tokens())
            .required_body::<capture::CapturePayload<'static>>()
            .ok_inline(
                ObjectBuilder::new()
                    .property("status", ObjectBuilder::new().schema_type(Type::Integer))
                    .required("status"),
            )
    };
    // Any one segment, so even a refused name is answered with CORS; the handlers serve plain
    // names only.
    let static_file = |id| {
        Operation::new(
            "sdk",
            id,
            "A file of posthog-js's dist (e.g. surveys.js) from BURROW_STATIC_DIR",
        )
        .auth(Auth::Open)
        .query([query(
            "v",
            "A version to prefer when it is there (the unversioned path only).",
            string(),
        )])
        .text(&["application/javascript"])
        .also(404)
    };
    [
        ResourceSpec::at("/batch").post(
            capture::capture,
            capture("capture_batch", "Capture a batch of events (SDKs)"),
        ),
        ResourceSpec::at("/capture").post(
            capture::capture,
            capture("capture", "Capture events (SDKs)"),
        ),
        ResourceSpec::at("/e").post(
            capture::capture,
            capture("capture_e", "Capture events (SDKs, short path)"),
        ),
        ResourceSpec::at("/i/v0/e").post(
            capture::capture,
            capture("capture_i_v0_e", "Capture events (SDKs, versioned path)"),
        ),
        ResourceSpec::at("/i/v1/analytics/events").post(
            capture_v1::capture,
            sdk(
                "capture_v1",
                "Capture a batch of events, the token as a Bearer credential (capture v1: a result \
                 per event uuid)",
            )
            .required_body::<capture_v1::CaptureV1Body>()
            .ok::<capture_v1::CaptureV1Results>(),
        ),
        ResourceSpec::at("/api/early_access_features").get(
            early_access_features::list,
            sdk(
                "early_access_features_sdk_list",
                "The project's early access features in the stages asked for (posthog-js)",
            )
            .query(tokens())
            .query([query(
                "stage",
                "A stage to list (repeatable; `beta` when none is given).",
                string(),
            )])
            .ok::<early_access_features::EarlyAccessFeatureList>(),
        ),
        ResourceSpec::at("/external_surveys/{survey_id}").get(
            hosted_surveys::page,
            Operation::new(
                "sdk",
                "external_surveys_page",
                "A hosted survey's page (HTML); 404 for an unknown survey, 410 for a closed one",
            )
            .auth(Auth::Open)
            .page_errors(&[404, 410])
            .text(&["text/html; charset=utf-8"]),
        ),
        ResourceSpec::at("/api/surveys").get(
            public_surveys::feed,
            sdk(
                "surveys_feed",
                "The project's unarchived surveys, as PostHog's SDKs fetch them",
            )
            .query(tokens())
            .ok::<public_surveys::SurveyFeed>()
            .conditional(),
        ),
        ResourceSpec::at("/array/{token}/config").get(
            remote_config::remote_config,
            sdk(
                "remote_config",
                "The remote config posthog-js loads: surveys and flags on, gzip capture at /i/v0/e/",
            )
            .ok_inline(ObjectBuilder::new())
            .conditional()
            .also(404),
        ),
        ResourceSpec::at("/array/{token}/config.js").get(
            remote_config::remote_config_script,
            sdk(
                "remote_config_script",
                "The same remote config as a script setting window._POSTHOG_REMOTE_CONFIG[token]",
            )
            .text(&["application/javascript; charset=utf-8"])
            .conditional()
            .also(404),
        ),
        ResourceSpec::at("/flags").post(
            flags::flags,
            sdk(
                "flags",
                "The project's flags and its surveys' internal targeting flags, evaluated for one person",
            )
            .query([query(
                "v",
                "2 (or more) for the `flags` answer; otherwise the legacy `featureFlags` one.",
                ObjectBuilder::new().schema_type(Type::Integer),
            )])
            .body::<flags::FlagsBody>()
            .ok_inline(ObjectBuilder::new()),
        ),
        ResourceSpec::at("/static/{version}/{file}").get(
            static_assets::versioned,
            static_file("static_versioned"),
        ),
        ResourceSpec::at("/static/{file}").get(
            static_assets::unversioned,
            static_file("static_newest"),
        ),
    ]
    .into_iter()
    .map(ResourceSpec::cross_origin)
    .collect()
}

/// What server-side SDKs poll for local evaluation, with a personal key: two paths, one answer.
fn flag_definition_resources() -> Vec<ResourceSpec> {
    let definitions = |id, summary| {
        Operation::new("feature_flags", id, summary)
            .query([
                query("token", "The project's public token.", string()),
                query(
                    "send_cohorts",
                    "Accepted for posthog-python; Burrow has no cohorts.",
                    string(),
                ),
            ])
            .ok::<flag_definitions::FlagDefinitions>()
            .conditional()
    };
    vec![
        ResourceSpec::at("/flags/definitions").get(
            flag_definitions::definitions,
            definitions(
                "flag_definitions",
                "Flag definitions for local evaluation (posthog-python 7.11.2 and later)",
            ),
        ),
        ResourceSpec::at("/api/feature_flag/local_evaluation").get(
            flag_definitions::definitions,
            definitions(
                "feature_flag_local_evaluation",
                "Flag definitions for local evaluation (older server-side SDKs)",
            ),
        ),
    ]
}

/// The organization named by `{organization_id}` under `prefix`, and the resources inside it.
fn organization_resources(prefix: &str) -> Vec<ResourceSpec> {
    let organization = format!("{prefix}/{{organization_id}}");
    let all_plugins = format!("{organization}/plugins");
    // Plugin ids are digits only, so `activity`, `repository` and `unused` never read as ids.
    let plugin = format!("{all_plugins}/{{plugin_id:\\d+}}");
    let projects = |id, summary| Operation::new("projects", id, summary);
    let plugins = |id, summary| Operation::new("plugins", id, summary);
    let resources = vec![
        ResourceSpec::at(organization.clone()).get(
            organizations::retrieve,
            Operation::new(
                "organizations",
                "organizations_retrieve",
                "One organization",
            )
            .ok::<OrganizationResponse>(),
        ),
        ResourceSpec::at(format!("{organization}/projects")).get(
            projects::list_in_organization,
            projects(
                "organizations_projects_list",
                "The organization's projects the key sees",
            )
            .paginated::<ProjectResponse>(),
        ),
        ResourceSpec::at(format!("{organization}/projects/{{project_id}}")).get(
            projects::retrieve_in_organization,
            projects(
                "organizations_projects_retrieve",
                "One of the organization's projects",
            )
            .ok::<ProjectDetailResponse>(),
        ),
        ResourceSpec::at(all_plugins.clone())
            .get(
                plugins::list,
                plugins("plugins_list", "The organization's plugins").paginated::<PluginResponse>(),
            )
            .post(
                plugins::create,
                plugins("plugins_create", "Install a plugin")
                    .body::<plugins::PluginWrite>()
                    .created::<PluginResponse>()
                    .also(502),
            ),
        ResourceSpec::at(format!("{all_plugins}/activity")).get(
            plugins::activity,
            plugins("plugins_activity", "The organization's plugin activity")
                .numbered::<ActivityResponse>(),
        ),
        ResourceSpec::at(format!("{all_plugins}/repository")).get(
            plugins::repository,
            plugins(
                "plugins_repository",
                "The configured plugin listing, verbatim (`[]` when none is configured)",
            )
            .ok_inline(any())
            .also(502),
        ),
        ResourceSpec::at(format!("{all_plugins}/unused")).get(
            plugins::unused,
            plugins(
                "plugins_unused",
                "Ids of the organization's plugins no project has enabled",
            )
            .ok_inline(ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::Integer))),
        ),
        ResourceSpec::at(plugin.clone())
            .get(
                plugins::retrieve,
                plugins("plugins_retrieve", "One plugin").ok::<PluginResponse>(),
            )
            .patch(
                plugins::update,
                plugins("plugins_partial_update", "Change a plugin")
                    .body::<plugins::PluginWrite>()
                    .ok::<PluginResponse>(),
            )
            .put(
                plugins::update,
                plugins("plugins_update", "Change a plugin (as PATCH)")
                    .body::<plugins::PluginWrite>()
                    .ok::<PluginResponse>(),
            )
            .delete(
                plugins::delete,
                plugins("plugins_destroy", "Uninstall a plugin").no_content(),
            ),
        ResourceSpec::at(format!("{plugin}/check_for_updates")).get(
            plugins::check_for_updates,
            plugins(
                "plugins_check_for_updates",
                "The plugin with `latest_tag` set to the newest version",
            )
            .ok_around::<PluginResponse>(|plugin| {
                ObjectBuilder::new()
                    .property("plugin", plugin)
                    .required("plugin")
                    .into()
            })
            .also(502),
        ),
        ResourceSpec::at(format!("{plugin}/source")).get(
            plugins::source,
            plugins("plugins_source", "The plugin's source files").ok_inline(source_files(false)),
        ),
        ResourceSpec::at(format!("{plugin}/update_source")).patch(
            plugins::update_source,
            plugins(
                "plugins_update_source",
                "Write source files (`null` deletes one)",
            )
            .body_inline(source_files(true))
            .ok_inline(source_files(false)),
        ),
        ResourceSpec::at(format!("{plugin}/upgrade")).post(
            plugins::upgrade,
            plugins(
                "plugins_upgrade",
                "Download the plugin again (optionally another version)",
            )
            .body::<plugins::PluginUpgrade>()
            .ok::<PluginResponse>()
            .also(502),
        ),
    ];
    ResourceSpec::family(&organization, resources)
}

/// The resources that live inside the project named by `{project_id}` under `prefix`. Their
/// operations are declared once for both prefixes; the document tells the two apart.
fn project_resources(prefix: &str) -> Vec<ResourceSpec> {
    let project = format!("{prefix}/{{project_id}}");
    let all_surveys = format!("{project}/surveys");
    // Survey ids are UUIDs, so `responses_count`, `stats` and `activity` never read as ids.
    let survey = format!("{all_surveys}/{{survey_id:[0-9a-fA-F-]{{32,36}}}}");
    let surveys = |id, summary| Operation::new("surveys", id, summary);
    let flags = |id, summary| Operation::new("feature_flags", id, summary);
    let cohort_operation = |id, summary| Operation::new("cohorts", id, summary);
    let features = |id, summary| Operation::new("early_access_features", id, summary);
    let group_operation = |id, summary| Operation::new("groups", id, summary);
    let configs = |id, summary| Operation::new("plugin_configs", id, summary);
    let hooks = |id, summary| Operation::new("webhooks", id, summary);
    let all_webhooks = format!("{project}/webhooks");
    // Webhook ids are UUIDs, so `activity` never reads as one.
    let webhook = format!("{all_webhooks}/{{webhook_id:[0-9a-fA-F-]{{32,36}}}}");
    let resources = vec![
        ResourceSpec::at(all_webhooks.clone())
            .get(
                webhooks::list,
                hooks("webhooks_list", "The project's webhooks, newest first")
                    .paginated::<WebhookResponse>(),
            )
            .post(
                webhooks::create,
                hooks(
                    "webhooks_create",
                    "Create a webhook (answers its secret, once)",
                )
                .body::<WebhookWrite>()
                .created::<WebhookWithSecret>(),
            ),
        ResourceSpec::at(format!("{all_webhooks}/activity")).get(
            webhooks::project_activity,
            hooks(
                "webhooks_activity",
                "The activity of every webhook of the project",
            )
            .numbered::<ActivityResponse>(),
        ),
        ResourceSpec::at(format!("{webhook}/activity")).get(
            webhooks::webhook_activity,
            hooks("webhooks_webhook_activity", "One webhook's activity")
                .numbered::<ActivityResponse>(),
        ),
        ResourceSpec::at(webhook.clone())
            .get(
                webhooks::retrieve,
                hooks("webhooks_retrieve", "One webhook").ok::<WebhookResponse>(),
            )
            .patch(
                webhooks::update,
                hooks("webhooks_partial_update", "Change a webhook")
                    .body::<WebhookWrite>()
                    .ok::<WebhookResponse>(),
            )
            .delete(
                webhooks::delete,
                hooks("webhooks_destroy", "Delete a webhook and its deliveries").no_content(),
            ),
        ResourceSpec::at(format!("{webhook}/rotate_secret")).post(
            webhooks::rotate_secret,
            hooks(
                "webhooks_rotate_secret",
                "A new secret (the old one signs beside it for 24 hours)",
            )
            .ok::<WebhookWithSecret>(),
        ),
        ResourceSpec::at(format!("{webhook}/test")).post(
            webhooks::test,
            hooks("webhooks_test", "Send a sample `webhook.test` event now")
                .ok::<DeliveryResponse>(),
        ),
        ResourceSpec::at(format!("{webhook}/deliveries")).get(
            webhooks::deliveries,
            hooks(
                "webhooks_deliveries",
                "The webhook's deliveries, newest first, with attempts",
            )
            .paginated::<DeliveryResponse>(),
        ),
        ResourceSpec::at(format!("{webhook}/deliveries/{{delivery_id}}/retry")).post(
            webhooks::retry,
            hooks(
                "webhooks_deliveries_retry",
                "Make a delivery due now, with fresh attempts",
            )
            .ok::<DeliveryResponse>(),
        ),
        ResourceSpec::at(all_surveys.clone())
            .get(
                surveys::list,
                surveys("surveys_list", "The project's surveys, newest first")
                    .query([
                        query(
                            "ids",
                            &format!(
                                "Comma-separated survey ids (at most {MAX_FILTERED_IDS}); ids of \
                                 no survey of the project are left out."
                            ),
                            string(),
                        ),
                        query("type", "Only surveys of this type.", SchemaSurveyType::schema()),
                        query(
                            "archived",
                            "Only archived (`true`) or unarchived (`false`) surveys.",
                            ObjectBuilder::new().schema_type(Type::Boolean),
                        ),
                        query(
                            "created_by",
                            "Only the surveys of the user with this id.",
                            ObjectBuilder::new().schema_type(Type::Integer),
                        ),
                        query(
                            "status",
                            "`draft` (no start date), `running` (a start date and no end \
                             date) or `complete` (an end date).",
                            string().enum_values(Some(SurveyStatus::ALL.map(SurveyStatus::as_str))),
                        ),
                        query(
                            "search",
                            &format!(
                                "Surveys whose name or description contains this text (at most \
                                 {MAX_SEARCH_CHARS} characters), ignoring case; when none does, \
                                 those with a similar word (pg_trgm). Most relevant first, each \
                                 with its `search_match_type`."
                            ),
                            string(),
                        ),
                    ])
                    .paginated::<SurveyResponse>(),
            )
            .post(
                surveys::create,
                surveys("surveys_create", "Create a survey")
                    .body::<SurveyWrite>()
                    .created::<SurveyResponse>(),
            ),
        ResourceSpec::at(format!("{all_surveys}/question_labels")).get(
            surveys::question_labels,
            surveys(
                "surveys_question_labels",
                "The questions of the project's newest surveys, by question id",
            )
            .ok::<QuestionLabels>(),
        ),
        ResourceSpec::at(format!("{all_surveys}/responses_count")).get(
            survey_responses::responses_count,
            surveys("surveys_responses_count", "Responses per survey id")
                .query([
                    query("survey_ids", "Comma-separated survey ids.", string()),
                    exclude_archived(),
                ])
                .ok_inline(
                    ObjectBuilder::new().additional_properties(Some(
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(0)),
                    )),
                ),
        ),
        ResourceSpec::at(format!("{all_surveys}/stats")).get(
            survey_responses::project_stats,
            surveys("surveys_stats", "Survey events of the project")
                .date_window()
                .ok::<StatsBody>(),
        ),
        ResourceSpec::at(format!("{survey}/stats")).get(
            survey_responses::survey_stats,
            surveys("surveys_survey_stats", "One survey's events")
                .date_window()
                .query([
                    exclude_archived(),
                    query(
                        "include_per_question_stats",
                        "Add each question's stats (`per_question_stats`).",
                        ObjectBuilder::new().schema_type(Type::Boolean),
                    ),
                ])
                .ok::<StatsBody>(),
        ),
        ResourceSpec::at(format!("{survey}/responses")).get(
            survey_responses::list,
            surveys(
                "surveys_responses_list",
                "One survey's responses, merged per submission (PostHog's JSON list)",
            )
            .query(responses_list_parameters())
            .ok::<ResponseListBody>(),
        ),
        // `browse` is no UUID, so it never reads as a response.
        ResourceSpec::at(format!("{survey}/responses/browse")).get(
            survey_responses::browse,
            surveys(
                "surveys_responses_browse",
                "One survey's responses, counted and searchable, with `next` links (Burrow)",
            )
            .date_window()
                .query([
                    exclude_archived(),
                    query(
                        "question",
                        "Only responses that answered the question with this id.",
                        string(),
                    ),
                    query(
                        "search",
                        "Only responses with a text answer (to `question` when given) holding \
                         this text, ignoring case; at most 200 characters.",
                        string().max_length(Some(200)),
                    ),
                ])
                .paginated::<ResponseBody>(),
        ),
        ResourceSpec::at(format!("{survey}/results")).get(
            survey_responses::results,
            surveys(
                "surveys_results",
                "Per question: how many answered and how often each value was given (Burrow)",
            )
            .date_window()
            .query([exclude_archived()])
            .ok::<ResultsBody>(),
        ),
        ResourceSpec::at(format!("{survey}/responses/export")).get(
            survey_responses::export,
            surveys(
                "surveys_responses_export",
                "The survey's responses as CSV or JSON Lines, streamed",
            )
            .date_window()
            .query([
                query(
                    "format",
                    "`csv` (the default) or `jsonl`.",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(["csv", "jsonl"])),
                ),
                exclude_archived(),
            ])
            .text(&[
                "text/csv; charset=utf-8",
                "application/jsonl; charset=utf-8",
            ]),
        ),
        ResourceSpec::at(format!("{survey}/responses/reset")).post(
            survey_responses::reset,
            surveys(
                "surveys_responses_reset",
                "Delete every response and event of the survey",
            )
            .ok::<DeletedBody>(),
        ),
        // Response uuids are UUIDs, so `export` and `reset` never read as one.
        ResourceSpec::at(format!(
            "{survey}/responses/{{response_uuid:[0-9a-fA-F-]{{32,36}}}}"
        ))
        .delete(
            survey_responses::delete,
            surveys(
                "surveys_responses_destroy",
                "Delete a response and the events behind it",
            )
            .no_content(),
        ),
        ResourceSpec::at(format!("{project}/persons/bulk_delete")).post(
            survey_responses::delete_persons,
            Operation::new(
                "persons",
                "persons_bulk_delete",
                "Delete persons' properties and, with `delete_events`, their survey events and responses",
            )
            .body::<BulkDeleteWrite>()
            .ok::<DeletedBody>(),
        ),
        ResourceSpec::at(format!("{survey}/responses/{{response_uuid}}/archive")).post(
            survey_responses::archive,
            surveys("surveys_responses_archive", "Archive a response").ok_inline(success()),
        ),
        ResourceSpec::at(format!("{survey}/responses/{{response_uuid}}/unarchive")).post(
            survey_responses::unarchive,
            surveys("surveys_responses_unarchive", "Unarchive a response").ok_inline(success()),
        ),
        ResourceSpec::at(format!("{survey}/archived-response-uuids")).get(
            survey_responses::archived_uuids,
            surveys(
                "surveys_archived_response_uuids",
                "Uuids of the survey's archived responses",
            )
            .ok_inline(ArrayBuilder::new().items(uuid())),
        ),
        ResourceSpec::at(format!("{all_surveys}/activity")).get(
            surveys::project_activity,
            surveys(
                "surveys_activity",
                "The activity of every survey of the project",
            )
            .numbered::<ActivityResponse>(),
        ),
        ResourceSpec::at(format!("{survey}/activity")).get(
            surveys::survey_activity,
            surveys("surveys_survey_activity", "One survey's activity")
                .numbered::<ActivityResponse>(),
        ),
        ResourceSpec::at(format!("{survey}/launch")).post(
            surveys::launch,
            surveys(
                "surveys_launch",
                "Launch the survey: `start_date` becomes now (nothing changes once launched)",
            )
            .ok::<SurveyResponse>(),
        ),
        ResourceSpec::at(format!("{survey}/stop")).post(
            surveys::stop,
            surveys(
                "surveys_stop",
                "Stop the survey: `end_date` becomes now (nothing changes once stopped)",
            )
            .ok::<SurveyResponse>(),
        ),
        ResourceSpec::at(format!("{survey}/duplicate_to_projects")).post(
            surveys::duplicate_to_projects,
            surveys(
                "surveys_duplicate_to_projects",
                "Copy the survey, as a draft, into other projects",
            )
            .body::<DuplicateToProjects>()
            .created::<DuplicatedResponse>(),
        ),
        ResourceSpec::at(survey)
            .get(
                surveys::retrieve,
                surveys("surveys_retrieve", "One survey").ok::<SurveyResponse>(),
            )
            .patch(
                surveys::partial_update,
                surveys("surveys_partial_update", "Change a survey")
                    .body::<SurveyWrite>()
                    .ok::<SurveyResponse>(),
            )
            .put(
                surveys::full_update,
                surveys(
                    "surveys_update",
                    "Change a survey (`name` and `type` required)",
                )
                .body::<SurveyWrite>()
                .ok::<SurveyResponse>(),
            )
            .delete(
                surveys::delete,
                surveys("surveys_destroy", "Delete a survey").no_content(),
            ),
        ResourceSpec::at(format!("{project}/feature_flags"))
            .get(
                feature_flags::list,
                flags("feature_flags_list", "The project's live flags").paginated::<FlagResponse>(),
            )
            .post(
                feature_flags::create,
                flags("feature_flags_create", "Create a flag")
                    .body::<feature_flags::FeatureFlagWrite>()
                    .created::<FlagResponse>(),
            ),
        ResourceSpec::at(format!("{project}/cohorts"))
            .get(
                cohorts::list,
                cohort_operation("cohorts_list", "The project's live cohorts")
                    .query([
                        query(
                            "type",
                            "Only static (`static`) or dynamic (`dynamic`) cohorts.",
                            string().enum_values(Some(["static", "dynamic"])),
                        ),
                        query(
                            "created_by_id",
                            "Only the cohorts this user created.",
                            integer_within(i32::MIN.into(), i32::MAX.into(), false),
                        ),
                        query(
                            "search",
                            "Only cohorts whose name holds this text, ignoring case.",
                            string().max_length(Some(MAX_COHORT_SEARCH_CHARS)),
                        ),
                        query(
                            "hide_behavioral_cohorts",
                            "Accepted; hides none (Burrow stores no behavioral cohort).",
                            ObjectBuilder::new().schema_type(Type::Boolean),
                        ),
                        query(
                            "basic",
                            "Each cohort without `filters`, `query` and `groups`.",
                            ObjectBuilder::new().schema_type(Type::Boolean),
                        ),
                    ])
                    .paginated::<cohorts::CohortResponse>(),
            )
            .post(
                cohorts::create,
                cohort_operation(
                    "cohorts_create",
                    "Create a cohort of person properties, or a static list of persons (a CSV \
                     form)",
                )
                .body::<cohorts::CohortWrite>()
                .form(cohorts::form_schema())
                .created::<cohorts::CohortResponse>(),
            ),
        ResourceSpec::at(format!("{project}/cohorts/{{cohort_id}}"))
            .get(
                cohorts::retrieve,
                cohort_operation("cohorts_retrieve", "One live cohort")
                    .ok::<cohorts::CohortResponse>(),
            )
            .patch(
                cohorts::update,
                cohort_operation(
                    "cohorts_partial_update",
                    "Change a cohort; `deleted: true` deletes it; a CSV form adds to a static one",
                )
                .body::<cohorts::CohortWrite>()
                .form(cohorts::form_schema())
                .ok::<cohorts::CohortResponse>(),
            ),
        ResourceSpec::at(format!(
            "{project}/cohorts/{{cohort_id}}/add_persons_to_static_cohort"
        ))
        .patch(
            cohorts::add_persons,
            cohort_operation(
                "cohorts_add_persons_to_static_cohort_partial_update",
                "Add persons, by UUID, to a static cohort",
            )
            .body_inline(
                ObjectBuilder::new()
                    .property("person_ids", ArrayBuilder::new().items(uuid()))
                    .required("person_ids"),
            )
            .ok_inline(success()),
        ),
        ResourceSpec::at(format!(
            "{project}/cohorts/{{cohort_id}}/remove_person_from_static_cohort"
        ))
        .patch(
            cohorts::remove_person,
            cohort_operation(
                "cohorts_remove_person_from_static_cohort_partial_update",
                "Remove a person, by UUID, from a static cohort",
            )
            .body_inline(ObjectBuilder::new().property("person_id", uuid()).required("person_id"))
            .ok_inline(success()),
        ),
        ResourceSpec::at(format!("{project}/cohorts/{{cohort_id}}/persons")).get(
            cohorts::persons,
            cohort_operation(
                "cohorts_persons_retrieve",
                "A static cohort's captured persons, by distinct id",
            )
            .paginated::<cohorts::CohortPersonResponse>(),
        ),
        ResourceSpec::at(format!("{project}/groups_types")).get(
            groups::list_types,
            group_operation("groups_types_list", "The project's group types, by index")
                .ok_around::<groups::GroupTypeResponse>(|item| ArrayBuilder::new().items(item).into()),
        ),
        ResourceSpec::at(format!("{project}/groups_types/update_metadata")).patch(
            groups::update_metadata,
            group_operation(
                "groups_types_update_metadata_partial_update",
                "Rename group types (all or none); answers every type",
            )
            .required_body::<groups::GroupTypesMetadataWrite>()
            .ok_around::<groups::GroupTypeResponse>(|item| ArrayBuilder::new().items(item).into()),
        ),
        ResourceSpec::at(format!("{project}/groups_types/set_default_columns")).put(
            groups::set_default_columns,
            group_operation(
                "groups_types_set_default_columns_update",
                "Set the console's columns for a type's groups",
            )
            .required_body::<groups::DefaultColumnsWrite>()
            .ok::<groups::GroupTypeResponse>(),
        ),
        ResourceSpec::at(format!("{project}/groups_types/{{group_type_index:\\d+}}")).delete(
            groups::delete_type,
            group_operation("groups_types_destroy", "Delete a group type and its groups")
                .no_content(),
        ),
        ResourceSpec::at(format!("{project}/groups/find")).get(
            groups::find,
            group_operation("groups_find_retrieve", "One group, by type and key")
                .query(groups::find_parameters())
                .ok::<groups::GroupResponse>(),
        ),
        ResourceSpec::at(format!("{project}/early_access_feature"))
            .get(
                early_access::list,
                features("early_access_feature_list", "The project's early access features")
                    .paginated::<early_access::EarlyAccessResponse>(),
            )
            .post(
                early_access::create,
                features(
                    "early_access_feature_create",
                    "Create an early access feature (and its flag, unless one is named)",
                )
                .body::<early_access::EarlyAccessWrite>()
                .created::<early_access::EarlyAccessResponse>(),
            ),
        ResourceSpec::at(format!(
            "{project}/early_access_feature/{{feature_id:[0-9a-fA-F-]{{32,36}}}}"
        ))
        .get(
            early_access::retrieve,
            features("early_access_feature_retrieve", "One early access feature")
                .ok::<early_access::EarlyAccessResponse>(),
        )
        .patch(
            early_access::update,
            features(
                "early_access_feature_partial_update",
                "Change a feature; a move into or out of a release stage switches enrollment",
            )
            .body::<early_access::EarlyAccessWrite>()
            .ok::<early_access::EarlyAccessResponse>(),
        )
        .delete(
            early_access::delete,
            features(
                "early_access_feature_destroy",
                "Delete a feature (its flag stays)",
            )
            .no_content(),
        ),
        ResourceSpec::at(format!("{project}/plugin_configs"))
            .get(
                plugin_configs::list,
                configs("plugin_configs_list", "The project's plugin configs")
                    .paginated::<PluginConfigResponse>(),
            )
            .post(
                plugin_configs::create,
                configs("plugin_configs_create", "Configure a plugin")
                    .body::<plugin_configs::PluginConfigWrite>()
                    .created::<PluginConfigResponse>(),
            ),
        ResourceSpec::at(format!("{project}/plugin_configs/{{config_id}}"))
            .get(
                plugin_configs::retrieve,
                configs("plugin_configs_retrieve", "One plugin config")
                    .ok::<PluginConfigResponse>(),
            )
            .patch(
                plugin_configs::update,
                configs("plugin_configs_partial_update", "Change a plugin config")
                    .body::<plugin_configs::PluginConfigWrite>()
                    .ok::<PluginConfigResponse>(),
            )
            .delete(
                plugin_configs::delete,
                configs("plugin_configs_destroy", "Remove a plugin config").no_content(),
            ),
        ResourceSpec::at(format!("{project}/feature_flags/{{flag_id}}"))
            .get(
                feature_flags::retrieve,
                flags("feature_flags_retrieve", "One live flag").ok::<FlagResponse>(),
            )
            .patch(
                feature_flags::update,
                flags("feature_flags_partial_update", "Change a flag")
                    .body::<feature_flags::FeatureFlagWrite>()
                    .ok::<FlagResponse>(),
            )
            .delete(
                feature_flags::delete,
                flags("feature_flags_destroy", "Delete a flag (soft)").no_content(),
            ),
        ResourceSpec::at(format!("{project}/feature_flags/{{flag}}/remote_config")).get(
            feature_flags::remote_config,
            flags(
                "feature_flags_remote_config_retrieve",
                "A remote configuration flag's payload, the flag named by id or key",
            )
            .ok::<serde_json::Value>(),
        ),
    ];
    ResourceSpec::family(&project, resources)
}

/// PostHog's JSON responses list's parameters.
fn responses_list_parameters() -> Vec<utoipa::openapi::path::Parameter> {
    let datetime = || {
        string().format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
            utoipa::openapi::schema::KnownFormat::DateTime,
        )))
    };
    let number = || ObjectBuilder::new().schema_type(Type::Number);
    vec![
        query(
            "since",
            "Only responses at or after this (default: the survey's start, else its creation).",
            datetime(),
        ),
        query(
            "until",
            "Only responses at or before this (default: the survey's end, else now).",
            datetime(),
        ),
        query(
            "question_id",
            "Only responses that answered this question, showing only its answer.",
            string(),
        ),
        query(
            "score_lte",
            "Only responses whose answer to `question_id` is a number at most this.",
            number(),
        ),
        query(
            "score_gte",
            "Only responses whose answer to `question_id` is a number at least this.",
            number(),
        ),
        exclude_archived(),
        query(
            "limit",
            "Responses per slice, 1 to 500 (default 100).",
            integer_within(1, 500, false),
        ),
        query(
            "offset",
            "Responses skipped (default 0).",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(0)),
        ),
    ]
}

/// `exclude_archived`, as every read of responses takes it.
fn exclude_archived() -> utoipa::openapi::path::Parameter {
    query(
        "exclude_archived",
        "Leave archived responses out.",
        ObjectBuilder::new().schema_type(Type::Boolean),
    )
}
