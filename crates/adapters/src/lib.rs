//! Outward adapters: PostgreSQL (diesel-async) implementations of the domain's ports,
//! the connection pool, and the embedded migrations.

mod api_keys;
mod capabilities;
mod database;
mod errors;
mod feature_flags;
mod migrations;
mod paging;
mod persons;
mod plugin_configs;
mod plugin_upstream;
mod plugins;
mod redis_rate_counters;
mod rows;
mod schema;
mod statement_log;
mod survey_responses;
mod surveys;
mod tenancy;
#[cfg(feature = "testing")]
pub mod testing;
mod text;
mod transaction;
mod whole_surveys;

pub use api_keys::PgApiKeyRepository;
pub use capabilities::OxcSourceAnalyzer;
pub use database::{Database, PoolSettings};
pub use feature_flags::PgFeatureFlagRepository;
pub use migrations::{ensure_database_exists, run_migrations};
pub use persons::PgPersonRepository;
pub use plugin_configs::PgPluginConfigRepository;
pub use plugin_upstream::{HttpPluginUpstream, UpstreamSettings};
pub use plugins::PgPluginRepository;
pub use redis_rate_counters::RedisRateCounters;
pub use statement_log::STATEMENT_LOG_TARGET;
pub use survey_responses::PgSurveyResponseRepository;
pub use surveys::PgSurveyRepository;
pub use tenancy::PgTenancyRepository;
