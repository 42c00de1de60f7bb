//! What services keep in the node's own memory between requests (keys and tenants, SDK
//! snapshots): a port, because where and how it is kept (a bounded concurrent cache) is the
//! adapters' business, and the domain only decides what is kept and for how long.

use std::hash::Hash;
use std::time::Duration;

/// One lookup's remembered answers. Not async: it is asked before storage on every request and
/// is only worth having when it answers at once, from the node's own memory.
///
/// Keys are kept owned (`String`) and asked for borrowed (`str`), so asking, which every SDK
/// request does with the token it was sent, allocates nothing.
pub trait Memory<K: ?Sized + ToOwned, V>: Send + Sync {
    /// The answer kept for `key`, unless it has expired.
    fn recall(&self, key: &K) -> Option<V>;

    /// Keeps `value` for `key` in place of what was kept, to expire the memory's freshness
    /// from now.
    fn keep(&self, key: K::Owned, value: V);

    /// Drops what is kept for `key`: it changed, and the next ask must load it again.
    fn forget(&self, key: &K);

    /// Drops everything kept: changes may have been missed.
    fn forget_all(&self);

    /// How many entries are kept now, for metrics: what a flood of unknown keys would grow.
    fn entries(&self) -> u64;

    /// What the kept entries weigh together, as a weighed memory's `size` counts them (an
    /// unweighed memory's entries weigh 1 each), for metrics.
    fn weight(&self) -> u64;
}

/// Where services keep what they remember: one [`Memory`] per lookup.
pub trait Memories {
    /// An empty memory of a bounded number of entries, each expiring `freshness` (more than
    /// zero) after it was kept, never later: how soon a change made elsewhere is felt depends
    /// on it. It may forget sooner (to bound its size), which only costs a lookup.
    fn memory<K, V>(&self, freshness: Duration) -> Box<dyn Memory<K, V>>
    where
        K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
        K::Owned: Hash + Eq + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static;

    /// [`Self::memory`] for values of very different sizes: it holds at most about `budget`
    /// bytes, as `size` estimates each value, forgetting the least used first.
    fn weighed_memory<K, V>(
        &self,
        freshness: Duration,
        budget: u64,
        size: fn(&V) -> u32,
    ) -> Box<dyn Memory<K, V>>
    where
        K: ?Sized + ToOwned + Hash + Eq + Send + Sync + 'static,
        K::Owned: Hash + Eq + Send + Sync + 'static,
        V: Clone + Send + Sync + 'static;
}
