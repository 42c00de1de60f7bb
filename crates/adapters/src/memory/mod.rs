//! What one node keeps in its own memory instead of asking PostgreSQL or Redis: bounded in size
//! and in age, so no client can grow it without limit and nothing stays stale for long.

mod access;
mod rate_counters;

pub use access::MokaMemories;
pub use rate_counters::LocalRateCounters;
