//! The `burrow` binary's library half: configuration, the CLI, and the composition root that
//! wires PostgreSQL adapters into the domain services and the HTTP app. Tests drive it too.

pub mod admin;
pub mod cli;
pub mod startup;
