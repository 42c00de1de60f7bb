//! What the access service remembers between requests: keys with their owners, and tenants
//! with the caller's membership. Every request needs them and they rarely change, so reading
//! them from storage each time would cost more than the request's own work.
//!
//! Which answers are kept, and for how long, is decided here; where they are kept is the
//! [`Memories`] port, which the adapters implement in the node's own memory. Entries expire
//! after a fixed time of at most [`MAX_FRESHNESS`] whatever happens, so a deactivated user, a
//! changed scope or a removed membership reaches every running node within that bound, without
//! the nodes (or `burrow admin`) having to tell each other anything.

use std::future::Future;
use std::hash::Hash;
use std::time::Duration;

use crate::error::Unexpected;
use crate::memory::{Memories, Memory};

/// The longest an answer is remembered: admin changes must reach running servers within 5 s.
pub const MAX_FRESHNESS: Duration = Duration::from_secs(5);

/// Remembered answers of one lookup, found ones only: an unknown key or project is asked again
/// every time, so what is created is usable at once.
pub(super) struct Remembered<K, V>(Option<Box<dyn Memory<K, V>>>);

impl<K, V> Remembered<K, V>
where
    K: Clone + Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// Remembers in `memories` for `freshness` (capped at [`MAX_FRESHNESS`]); zero remembers
    /// nothing.
    pub(super) fn new(freshness: Duration, memories: &impl Memories) -> Self {
        let freshness = freshness.min(MAX_FRESHNESS);
        Self((!freshness.is_zero()).then(|| memories.memory(freshness)))
    }

    /// The remembered answer for `key`, else what `load` finds, remembered when found and
    /// `worth_keeping` (what grants access is kept; what refuses it is asked again, so a grant
    /// takes effect at once).
    pub(super) async fn get_or_load<F, Fut>(
        &self,
        key: K,
        load: F,
        worth_keeping: impl FnOnce(&V) -> bool,
    ) -> Result<Option<V>, Unexpected>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<V>, Unexpected>>,
    {
        if let Some(found) = self.0.as_ref().and_then(|memory| memory.recall(&key)) {
            return Ok(Some(found));
        }
        let loaded = load().await?;
        if let (Some(memory), Some(found)) = (&self.0, &loaded)
            && worth_keeping(found)
        {
            memory.keep(key, found.clone());
        }
        Ok(loaded)
    }

    /// Replaces what is remembered for `key` (after this node changed it), keeping its expiry
    /// bound: the entry lives at most `freshness` from now.
    pub(super) fn replace(&self, key: K, value: V) {
        if let Some(memory) = &self.0 {
            memory.keep(key, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::testing::TimedMemories;

    async fn lookups(remembered: &Remembered<u8, &'static str>, times: usize) -> usize {
        let loads = AtomicUsize::new(0);
        for _ in 0..times {
            let found = remembered
                .get_or_load(
                    1,
                    || async {
                        loads.fetch_add(1, Ordering::SeqCst);
                        Ok(Some("found"))
                    },
                    |_| true,
                )
                .await
                .unwrap();
            assert_eq!(found, Some("found"));
        }
        loads.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn a_found_answer_is_loaded_once_while_fresh() {
        let remembered = Remembered::new(MAX_FRESHNESS, &TimedMemories);
        assert_eq!(lookups(&remembered, 3).await, 1);
    }

    #[tokio::test]
    async fn zero_freshness_remembers_nothing() {
        let remembered = Remembered::new(Duration::ZERO, &TimedMemories);
        assert_eq!(lookups(&remembered, 3).await, 3);
    }

    #[tokio::test]
    async fn what_was_not_found_is_asked_again() {
        let remembered = Remembered::<u8, &str>::new(MAX_FRESHNESS, &TimedMemories);
        for _ in 0..2 {
            let found = remembered.get_or_load(1, || async { Ok(None) }, |_| true);
            assert_eq!(found.await.unwrap(), None);
        }
        let found = remembered.get_or_load(1, || async { Ok(Some("created since")) }, |_| true);
        assert_eq!(found.await.unwrap(), Some("created since"));
    }

    #[tokio::test]
    async fn what_is_not_worth_keeping_is_asked_again() {
        let remembered = Remembered::<u8, &str>::new(MAX_FRESHNESS, &TimedMemories);
        let refused = remembered.get_or_load(1, || async { Ok(Some("refused")) }, |_| false);
        assert_eq!(refused.await.unwrap(), Some("refused"));
        let granted = remembered.get_or_load(1, || async { Ok(Some("granted")) }, |_| true);
        assert_eq!(granted.await.unwrap(), Some("granted"));
    }

    #[tokio::test]
    async fn an_answer_expires_after_its_freshness() {
        let remembered = Remembered::new(Duration::from_millis(20), &TimedMemories);
        assert_eq!(lookups(&remembered, 1).await, 1);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(lookups(&remembered, 1).await, 1, "expired, so loaded again");
    }

    /// Memories that note the freshness they were asked for.
    #[derive(Default)]
    struct Asked(Mutex<Vec<Duration>>);

    impl Memories for Asked {
        fn memory<K, V>(&self, freshness: Duration) -> Box<dyn Memory<K, V>>
        where
            K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
            K::Owned: Hash + Eq + Send + Sync + 'static,
            V: Clone + Send + Sync + 'static,
        {
            self.0.lock().unwrap().push(freshness);
            TimedMemories.memory(freshness)
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
            self.0.lock().unwrap().push(freshness);
            TimedMemories.weighed_memory(freshness, budget, size)
        }
    }

    #[test]
    fn no_answer_is_remembered_longer_than_the_bound() {
        let asked = Asked::default();
        Remembered::<u8, u8>::new(Duration::from_secs(60), &asked);
        Remembered::<u8, u8>::new(Duration::from_secs(2), &asked);
        assert_eq!(
            *asked.0.lock().unwrap(),
            [MAX_FRESHNESS, Duration::from_secs(2)]
        );
    }
}
