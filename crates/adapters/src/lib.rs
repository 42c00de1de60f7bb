//! Outward adapters, one module per thing Burrow talks to: PostgreSQL (`postgres`: the pool,
//! migrations and every storage port), the plugin upstreams (`plugin_upstream`: GitHub, GitLab,
//! npm, the repository listing, the local plugins directory), Redis (`redis_rate_counters`: rate
//! counts shared between nodes), JavaScript analysis (`js_analysis`: a plugin's exports, read
//! with oxc), the node's own memory (`in_process`: what it keeps in process), its blocking threads
//! (`evaluation_slots`: costly flag evaluations), and webhook receivers
//! (`webhook_sender`: signed deliveries, with the SSRF policy enforced after DNS).

mod evaluation_slots;
mod in_process;
mod js_analysis;
mod plugin_upstream;
mod postgres;
mod redis_rate_counters;
#[cfg(feature = "testing")]
pub mod testing;
mod webhook_sender;

pub use evaluation_slots::BlockingEvaluationSlots;
pub use in_process::{LocalRateCounters, MokaMemories, MokaPatterns};
pub use js_analysis::OxcSourceAnalyzer;
pub use plugin_upstream::{HttpPluginUpstream, UpstreamSettings};
pub use postgres::api_keys::PgApiKeyRepository;
pub use postgres::cohorts::PgCohortRepository;
pub use postgres::database::{Database, PoolSettings};
pub use postgres::delivery_queue::PgDeliveryQueue;
pub use postgres::early_access::PgEarlyAccessRepository;
pub use postgres::feature_flags::PgFeatureFlagRepository;
pub use postgres::groups::PgGroupRepository;
pub use postgres::migrations::{ensure_database_exists, run_migrations};
pub use postgres::persons::PgPersonRepository;
pub use postgres::plugin_configs::PgPluginConfigRepository;
pub use postgres::plugins::PgPluginRepository;
pub use postgres::replica::Replica;
pub use postgres::sdk_changes::listen_for_sdk_changes;
pub use postgres::statement_log::STATEMENT_LOG_TARGET;
pub use postgres::survey_responses::PgSurveyResponseRepository;
pub use postgres::surveys::PgSurveyRepository;
pub use postgres::tenancy::PgTenancyRepository;
pub use postgres::webhooks::PgWebhookRepository;
pub use redis_rate_counters::RedisRateCounters;
pub use webhook_sender::{HttpWebhookSender, SenderSettings, SystemResolver};
