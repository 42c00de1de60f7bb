//! The SDK edge: what posthog-js and the server-side SDKs call on behalf of every visitor of
//! every customer site, named by a project's public token rather than a personal key — capture,
//! `/flags`, the remote config, the survey feed, local evaluation, hosted survey pages and
//! posthog-js's own files — with what only they share: how the SDKs pack their bodies
//! (`transport.rs`) and answers rendered once per snapshot (`snapshot_renderings.rs`), sent with
//! an entity tag (`rendered.rs`). The route table
//! (`routes/table.rs`) declares their paths.

pub(crate) mod capture;
pub(crate) mod capture_v1;
pub(crate) mod early_access_features;
pub(crate) mod flag_definitions;
pub(crate) mod flags;
pub(crate) mod hosted_surveys;
pub(crate) mod public_surveys;
pub(crate) mod remote_config;
mod rendered;
mod snapshot_renderings;
pub(crate) mod static_assets;
mod transport;

pub use snapshot_renderings::SnapshotRenderings;
