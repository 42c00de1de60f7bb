//! What the SDK endpoints render from one project snapshot, kept with it
//! (`SdkSnapshot::renderings`): each answer rendered by the first request that asks for it and
//! shared by the next ones, until a change replaces the snapshot (and forgets them with it).

use std::sync::OnceLock;

use super::rendered::Rendered;

/// The SDK answers of one snapshot, each empty until first asked for.
#[derive(Debug, Default)]
pub struct SnapshotRenderings {
    pub(super) remote_config: OnceLock<Rendered>,
    pub(super) remote_config_script: OnceLock<Rendered>,
    pub(super) survey_feed: OnceLock<Rendered>,
    pub(super) flag_definitions: OnceLock<Rendered>,
    /// The definitions with the cohorts the flags name (`send_cohorts`, as the SDKs ask).
    pub(super) flag_definitions_with_cohorts: OnceLock<Rendered>,
    /// What each flag's entry in a `/flags` answer holds whoever asks (its key, escaped, and
    /// its id), by index into `SdkSnapshot::flags`.
    pub(super) flag_entries: OnceLock<Box<[Box<[u8]>]>>,
}
