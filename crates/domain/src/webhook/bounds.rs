//! How large the webhook backlog may grow and how much of it one dispatcher round takes, so one
//! project's answers can neither delay another project's deliveries nor grow without end.

/// The delivery queue's per-tenant budget. Past a bound the oldest pending work is dropped (and
/// the dispatcher logs and counts it); each round takes a bounded share per project, so the
/// projects with work are served in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBounds {
    /// Outbox entries (captured answers) one round turns into deliveries, per project.
    pub fan_out_per_project: u32,
    /// Deliveries one round claims per project (each of a different webhook); every project's
    /// first claim comes before any project's second.
    pub claims_per_project: u32,
    /// Pending deliveries a webhook keeps; past it its oldest pending ones are dropped.
    pub pending_per_webhook: u32,
    /// Pending deliveries a project keeps, shared evenly by its enabled webhooks (each keeps at
    /// most this divided by their number, and at most `pending_per_webhook`).
    pub pending_per_project: u32,
    /// Answers a project's outbox keeps while they wait to be fanned out; past it the oldest
    /// are dropped (delivered to none of its webhooks).
    pub outbox_per_project: u32,
}

impl Default for QueueBounds {
    fn default() -> Self {
        Self {
            fan_out_per_project: 1_000,
            claims_per_project: 8,
            pending_per_webhook: 10_000,
            pending_per_project: 100_000,
            outbox_per_project: 100_000,
        }
    }
}
