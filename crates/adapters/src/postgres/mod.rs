//! PostgreSQL (diesel-async): the connection pool, the embedded migrations, the statement log,
//! and the repositories implementing the domain's storage ports over one schema.

/// A storage port's implementation over the shared pool: the struct (with the caller's doc) and
/// its `new`.
macro_rules! over_the_pool {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name {
            database: crate::postgres::database::Database,
        }

        impl $name {
            /// One over the shared pool.
            pub fn new(database: crate::postgres::database::Database) -> Self {
                Self { database }
            }
        }
    };
}
pub(crate) use over_the_pool;

pub(crate) mod activity;
pub(crate) mod api_keys;
pub(crate) mod cohorts;
pub(crate) mod confirmed;
pub(crate) mod database;
pub(crate) mod delivery_queue;
pub(crate) mod early_access;
pub(crate) mod errors;
pub(crate) mod feature_flags;
pub(crate) mod groups;
pub(crate) mod migrations;
pub(crate) mod paging;
pub(crate) mod persons;
pub(crate) mod plugin_configs;
pub(crate) mod plugins;
pub(crate) mod prepared;
#[cfg(feature = "testing")]
pub(crate) mod query_plan;
pub(crate) mod replica;
pub(crate) mod rows;
pub(crate) mod schema;
pub(crate) mod sdk_changes;
pub(crate) mod server_watch;
pub(crate) mod statement_log;
pub(crate) mod survey_responses;
pub(crate) mod survey_search;
pub(crate) mod surveys;
pub(crate) mod tenancy;
pub(crate) mod text;
pub(crate) mod transaction;
pub(crate) mod webhooks;
pub(crate) mod whole_surveys;
