//! Services' memories in this process (`domain::memory::Memories`): a moka cache per lookup,
//! each entry living a fixed time from when it was kept unless it is forgotten sooner.

use std::hash::Hash;
use std::time::Duration;

use domain::memory::{Memories, Memory};
use moka::sync::Cache;

/// Entries per lookup; enough for every key and tenant of a large installation, small in memory.
const CAPACITY: u64 = 10_000;

/// Makes services' memories as moka caches.
#[derive(Debug, Clone, Copy, Default)]
pub struct MokaMemories;

impl Memories for MokaMemories {
    fn memory<K, V>(&self, freshness: Duration) -> Box<dyn Memory<K, V>>
    where
        K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
        K::Owned: Hash + Eq + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static,
    {
        Box::new(MokaMemory::<K, V>(
            Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(freshness)
                .build(),
        ))
    }

    fn weighed_memory<K, V>(
        &self,
        freshness: Duration,
        budget: u64,
        size: fn(&V) -> u32,
    ) -> Box<dyn Memory<K, V>>
    where
        K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
        K::Owned: Hash + Eq + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static,
    {
        Box::new(MokaMemory::<K, V>(
            Cache::builder()
                .max_capacity(budget)
                .weigher(move |_, value| size(value))
                .time_to_live(freshness)
                .build(),
        ))
    }
}

/// A cache whose time to live counts from each insert, so a kept entry expires `freshness`
/// after it was kept, and one kept again after that.
struct MokaMemory<K: ?Sized + ToOwned, V>(Cache<K::Owned, V>);

impl<K, V> Memory<K, V> for MokaMemory<K, V>
where
    K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
    K::Owned: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    fn recall(&self, key: &K) -> Option<V> {
        self.0.get(key)
    }

    fn keep(&self, key: K::Owned, value: V) {
        self.0.insert(key, value);
    }

    fn forget(&self, key: &K) {
        self.0.invalidate(key);
    }

    fn forget_all(&self) {
        self.0.invalidate_all();
    }

    fn entries(&self) -> u64 {
        // moka counts inserts and evictions as it gets round to them; settle them first.
        self.0.run_pending_tasks();
        self.0.entry_count()
    }

    fn weight(&self) -> u64 {
        self.0.run_pending_tasks();
        // An unweighed cache weighs each entry 1.
        self.0.weighted_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_answer_is_recalled_until_it_expires() {
        let memory = MokaMemories.memory(Duration::from_millis(20));
        assert_eq!(memory.recall(&1), None);
        memory.keep(1, "found");
        assert_eq!(memory.recall(&1), Some("found"));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(memory.recall(&1), None, "expired");
    }

    #[test]
    fn keeping_again_replaces_the_answer_and_restarts_its_time() {
        let memory = MokaMemories.memory(Duration::from_millis(100));
        memory.keep(1, "first");
        std::thread::sleep(Duration::from_millis(60));
        memory.keep(1, "second");
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(memory.recall(&1), Some("second"));
    }

    #[test]
    fn a_forgotten_answer_is_gone_at_once() {
        let memory = MokaMemories.memory(Duration::from_secs(60));
        memory.keep(1, "one");
        memory.keep(2, "two");
        memory.forget(&1);
        assert_eq!((memory.recall(&1), memory.recall(&2)), (None, Some("two")));
        memory.forget_all();
        assert_eq!(memory.recall(&2), None);
    }

    #[test]
    fn entries_count_what_is_kept() {
        let memory = MokaMemories.memory::<str, u8>(Duration::from_secs(60));
        assert_eq!(memory.entries(), 0);
        memory.keep("a".to_owned(), 1);
        memory.keep("b".to_owned(), 2);
        memory.keep("a".to_owned(), 3);
        assert_eq!(memory.entries(), 2);
        memory.forget("a");
        assert_eq!(memory.entries(), 1);
    }
}
