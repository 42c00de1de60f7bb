//! `BodyBudget`: how many bytes of request bodies one node holds at once, whatever the number of
//! connections. Every body is counted against it as its bytes arrive (a client that announces a
//! large body but sends it slowly holds only what it sent), and so is what a gzip body inflates
//! to; a request that finds the budget spent waits a moment for it, then is answered 503.
//!
//! With the per-request limits (`BURROW_MAX_BODY_BYTES`, `BURROW_CAPTURE_MAX_BODY_BYTES`) it
//! makes a node's memory for request bodies a number an operator can state: see
//! `docs/operations.md`, "Limits".

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// The budget is counted in KiB, so that a semaphore's `u32` permits cover terabytes.
const UNIT: usize = 1024;
/// Bodies are counted in steps of at most this much as they arrive.
const STEP: usize = 64 * 1024;
/// How long a request waits for the budget before its 503.
const WAIT: Duration = Duration::from_secs(5);

/// The node's budget for request bodies. Cheap to clone: clones share one budget.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    units: Arc<Semaphore>,
    total_units: usize,
    wait: Duration,
}

impl BodyBudget {
    /// The default budget, `BURROW_BODY_MEMORY_MB`.
    pub const DEFAULT_BYTES: usize = 256 * 1024 * 1024;

    /// A budget of `bytes` (at least one step).
    pub fn new(bytes: usize) -> Self {
        let total_units = bytes
            .div_ceil(UNIT)
            .clamp(STEP / UNIT, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Self {
            units: Arc::new(Semaphore::new(total_units)),
            total_units,
            wait: WAIT,
        }
    }

    /// The whole budget, in bytes.
    pub fn bytes(&self) -> usize {
        self.total_units * UNIT
    }

    /// Nothing held yet; grow it with [`Held::grow_to`].
    pub(crate) fn hold(&self) -> Held {
        Held {
            budget: Some(self.clone()),
            permit: None,
            units: 0,
        }
    }
}

/// A part of the budget held by one request, given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    budget: Option<BodyBudget>,
    permit: Option<OwnedSemaphorePermit>,
    units: usize,
}

impl Held {
    /// Holding nothing of no budget (apps built without one, in unit tests).
    pub(crate) fn unbudgeted() -> Self {
        Self {
            budget: None,
            permit: None,
            units: 0,
        }
    }

    /// Holds enough for `bytes` in all, rounded up to a step (never past the whole budget).
    ///
    /// # Errors
    /// 503 `server_busy` when the budget stays spent for the wait.
    pub(crate) async fn grow_to(&mut self, bytes: usize) -> Result<(), ApiError> {
        let Some(budget) = &self.budget else {
            return Ok(());
        };
        let wanted = bytes
            .div_ceil(STEP)
            .saturating_mul(STEP / UNIT)
            .min(budget.total_units);
        if wanted <= self.units {
            return Ok(());
        }
        let more = u32::try_from(wanted - self.units).unwrap_or(u32::MAX);
        let permit =
            tokio::time::timeout(budget.wait, budget.units.clone().acquire_many_owned(more))
                .await
                .map_err(|_| ApiError::busy())?
                .map_err(|_| ApiError::busy())?;
        match &mut self.permit {
            Some(held) => held.merge(permit),
            None => self.permit = Some(permit),
        }
        self.units = wanted;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_a_request_holds_is_given_back_when_it_is_dropped() {
        let budget = BodyBudget::new(256 * 1024);
        let mut first = budget.hold();
        first.grow_to(200 * 1024).await.unwrap();
        assert_eq!(budget.units.available_permits(), 0, "rounded up to steps");
        drop(first);
        assert_eq!(budget.units.available_permits(), 256);
    }

    #[tokio::test]
    async fn a_spent_budget_is_waited_for_then_refused_with_a_503() {
        let budget = BodyBudget {
            wait: Duration::from_millis(20),
            ..BodyBudget::new(128 * 1024)
        };
        let mut holder = budget.hold();
        holder.grow_to(128 * 1024).await.unwrap();
        let mut waiting = budget.hold();
        let error = waiting.grow_to(1).await.unwrap_err();
        assert_eq!(error.status().as_u16(), 503);
    }

    #[tokio::test]
    async fn a_body_larger_than_the_whole_budget_holds_the_whole_budget() {
        let budget = BodyBudget::new(64 * 1024);
        let mut held = budget.hold();
        held.grow_to(10 * 1024 * 1024).await.unwrap();
        assert_eq!(budget.units.available_permits(), 0);
    }
}
