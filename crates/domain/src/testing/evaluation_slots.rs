//! Evaluation slots for tests: the work runs in place, on the caller's thread, at once.

use async_trait::async_trait;

use crate::error::Unexpected;
use crate::sdk::EvaluationSlots;
use crate::tenancy::ProjectId;

/// [`EvaluationSlots`] that run every evaluation where it is asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct InPlaceSlots;

#[async_trait]
impl EvaluationSlots for InPlaceSlots {
    async fn run(&self, _: ProjectId, work: Box<dyn FnOnce() + Send>) -> Result<(), Unexpected> {
        work();
        Ok(())
    }
}
