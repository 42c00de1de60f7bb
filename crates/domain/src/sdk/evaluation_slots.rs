//! Where a `/flags` evaluation too costly for a request thread runs: a thread that serves no
//! requests, a bounded number at a time, each project holding at most part of them, so one
//! project's heavy flags (regex and substring filters over large properties) never hold up
//! `/_health` or another project's requests. A port, because threads are the runtime's
//! business; the domain decides what is costly ([`super::SdkService`]).

use async_trait::async_trait;

use crate::error::Unexpected;
use crate::tenancy::ProjectId;

#[async_trait]
pub trait EvaluationSlots: Send + Sync {
    /// Runs `work` off the request threads once `project` may take a slot, and returns when it
    /// is done. The slot is held until `work` ends, even if the caller stops waiting.
    ///
    /// # Errors
    /// `Unexpected::busy` when no slot freed for `project` within the wait: the node is
    /// evaluating as much of the project's as it may, and the request may be sent again shortly.
    async fn run(
        &self,
        project: ProjectId,
        work: Box<dyn FnOnce() + Send>,
    ) -> Result<(), Unexpected>;
}
