//! Services' memories for tests: a map whose entries note when they expire. Unbounded (a
//! weighed memory ignores its budget) and locked as a whole, which a test never notices and a
//! server would.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::memory::{Memories, Memory};

/// Makes [`Memory`]s that keep every entry for exactly their freshness.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimedMemories;

impl Memories for TimedMemories {
    fn memory<K, V>(&self, freshness: Duration) -> Box<dyn Memory<K, V>>
    where
        K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
        K::Owned: Hash + Eq + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static,
    {
        Box::new(TimedMemory {
            freshness,
            size: |_| 1,
            entries: Mutex::new(HashMap::new()),
        })
    }

    fn weighed_memory<K, V>(
        &self,
        freshness: Duration,
        _budget: u64,
        size: fn(&V) -> u32,
    ) -> Box<dyn Memory<K, V>>
    where
        K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
        K::Owned: Hash + Eq + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static,
    {
        Box::new(TimedMemory {
            freshness,
            size,
            entries: Mutex::new(HashMap::new()),
        })
    }
}

struct TimedMemory<K: ?Sized + ToOwned, V> {
    freshness: Duration,
    /// What an entry weighs, for [`Memory::weight`].
    size: fn(&V) -> u32,
    /// Each value with the instant it expires.
    entries: Mutex<HashMap<K::Owned, (Instant, V)>>,
}

impl<K: ?Sized + ToOwned, V> TimedMemory<K, V> {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<K::Owned, (Instant, V)>> {
        self.entries.lock().expect("memory poisoned")
    }
}

impl<K, V> Memory<K, V> for TimedMemory<K, V>
where
    K: ?Sized + ToOwned + Hash + Eq + Send + Sync,
    K::Owned: Hash + Eq + Send + Sync,
    V: Clone + Send + Sync,
{
    fn recall(&self, key: &K) -> Option<V> {
        let entries = self.entries();
        let (expires, value) = entries.get(key)?;
        (Instant::now() < *expires).then(|| value.clone())
    }

    fn keep(&self, key: K::Owned, value: V) {
        let expires = Instant::now() + self.freshness;
        self.entries().insert(key, (expires, value));
    }

    fn forget(&self, key: &K) {
        self.entries().remove(key);
    }

    fn forget_all(&self) {
        self.entries().clear();
    }

    fn entries(&self) -> u64 {
        let now = Instant::now();
        let live = self
            .entries()
            .values()
            .filter(|(expires, _)| now < *expires)
            .count();
        u64::try_from(live).unwrap_or(u64::MAX)
    }

    fn weight(&self) -> u64 {
        let now = Instant::now();
        self.entries()
            .values()
            .filter(|(expires, _)| now < *expires)
            .map(|(_, value)| u64::from((self.size)(value)))
            .sum()
    }
}
