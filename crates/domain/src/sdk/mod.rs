//! The SDK edge: what posthog-js and the server-side SDKs ask of a project on behalf of every
//! visitor of every customer site (remote config, `/flags`, the survey feed, local evaluation,
//! capture's token). Their traffic grows with the customers' visitors, so each project is read
//! from storage once into an [`SdkSnapshot`] kept in the node's memory, and read again only
//! when something it holds changes.
//!
//! Freshness across nodes: storage announces every committed change to a project's flags,
//! surveys, cohorts, group types or the project itself, and each node's listener ([`SnapshotInvalidation`]) forgets
//! that project's snapshot as it hears it. A node that cannot hear (its listener is connecting
//! or reconnecting) keeps nothing and reads storage on every request, so no node answers from
//! a snapshot older than the last change it could have heard of. Kept snapshots also expire
//! after [`SNAPSHOT_LIFETIME`], a safety net.

mod evaluation_slots;
mod flags_request;
mod hosted;
mod sent_properties;
mod service;
mod snapshot;

pub use evaluation_slots::EvaluationSlots;
pub use flags_request::FlagsRequest;
pub use hosted::HostedSurvey;
pub use sent_properties::{MAX_PERSON_PROPERTIES_BYTES, SentProperties};
pub use service::{
    EVALUATION_BUDGET, Evaluated, SNAPSHOT_LIFETIME, SdkService, SnapshotCounts, SnapshotSettings,
    SnapshotSources,
};
pub use snapshot::{PersonCohorts, SNAPSHOT_FLAG_BYTES, SdkSnapshot, SnapshotCohorts};

use crate::tenancy::ProjectId;

/// What the node's change listener tells the SDK service. Not async: each call only updates
/// what the node keeps in memory.
pub trait SnapshotInvalidation: Send + Sync {
    /// The listener hears every change from now on: snapshots may be kept again (none from
    /// before is, since changes may have been missed while it was not listening).
    fn listening(&self);

    /// The listener lost its connection: changes may go unheard, so nothing is kept until it
    /// is listening again.
    fn deaf(&self);

    /// A change to `project`'s flags, surveys or settings committed.
    fn changed(&self, project: ProjectId);
}
