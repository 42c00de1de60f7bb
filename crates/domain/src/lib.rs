//! Burrow's domain: entities, validation rules, ports and the use-case services built on them.
//!
//! Nothing here performs I/O. Adapters implement the port traits; the `testing` feature ships
//! in-memory fakes of every repository port so the rules can be tested without a database.

pub mod access;
pub mod activity;
pub mod admin;
pub mod api_key;
pub mod error;
pub mod feature_flag;
mod json_fields;
pub mod memory;
pub mod patch;
pub mod person;
pub mod plugin;
pub mod plugin_config;
pub mod ports;
pub mod rate_limit;
pub mod scope;
pub mod sdk;
pub mod survey;
pub mod survey_response;
pub mod tenancy;
#[cfg(feature = "testing")]
pub mod testing;
pub mod webhook;

pub use error::{DomainError, Unexpected, ValidationError};
