//! HTTP tests: each starts the real app on a free port with its own database.

mod agent_toolkit;
mod agents;
mod auth;
mod capture;
mod cli;
mod docs_ui;
mod errors;
mod fake_upstream;
mod feature_flags;
mod helpers;
mod logs;
mod methods;
mod openapi;
mod plugin_installs;
mod plugins;
mod posthog_python;
mod survey_activity;
mod surveys;
mod tenancy;
