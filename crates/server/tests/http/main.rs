//! HTTP tests: each starts the real app on a free port with its own database.

mod agent_toolkit;
mod agents;
mod auth;
mod capture;
mod cli;
mod cross_tenant;
mod docs_ui;
mod errors;
mod fake_upstream;
mod faults;
mod feature_flags;
mod helpers;
mod logs;
mod methods;
mod metrics;
mod openapi;
mod own_postgres;
mod plugin_installs;
mod plugins;
mod posthog_python;
mod process;
mod rate_limits;
mod sdk;
mod survey_activity;
mod surveys;
mod tenancy;
