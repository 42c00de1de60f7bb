//! Outward adapters: PostgreSQL (diesel-async) implementations of the domain's ports,
//! the connection pool, and the embedded migrations.

mod api_keys;
mod database;
mod errors;
mod migrations;
mod rows;
mod schema;
mod tenancy;
#[cfg(feature = "testing")]
pub mod testing;

pub use api_keys::PgApiKeyRepository;
pub use database::{Database, PoolSettings};
pub use migrations::{ensure_database_exists, run_migrations};
pub use tenancy::PgTenancyRepository;
