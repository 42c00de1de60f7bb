//! What one node keeps in its own memory: answers it would otherwise ask PostgreSQL for, rate-limit
//! counts when no Redis is shared, compiled flag patterns. Each is bounded in size, so no client
//! can grow it without limit, and what can go stale expires.

mod memories;
mod patterns;
mod rate_counters;

pub use memories::MokaMemories;
pub use patterns::MokaPatterns;
pub use rate_counters::LocalRateCounters;
