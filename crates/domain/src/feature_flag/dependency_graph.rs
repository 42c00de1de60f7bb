//! The dependencies among a project's flags as a graph: the order `/flags` evaluates them in
//! (each flag after the flags it depends on), the chains the definitions serve the SDKs
//! (PostHog's `dependency_chain`), and the checks a write must pass so the graph stays
//! acyclic, shallow, and made of active flags, with PostHog's messages.

use std::collections::HashMap;

use super::{FeatureFlag, FlagFilters, FlagId};
use crate::error::ValidationError;

/// Most flags one dependency chain may hold (a flag, what it depends on, what that depends on,
/// …): deep enough for any real rollout plan, and a bound on what one `/flags` evaluation and
/// an SDK's recursion walk. Checked when written.
pub const MAX_DEPENDENCY_DEPTH: usize = 10;

/// A set of flags (a snapshot's, or a project's active ones) and who depends on whom.
#[derive(Debug, Default)]
pub struct DependencyGraph {
    /// Index of each flag by id; of two flags with one id, the first.
    index: HashMap<FlagId, usize>,
    /// Each flag's dependencies, as indices; `None` for a dependency not in the set.
    edges: Vec<Vec<Option<usize>>>,
}

/// Where a depth-first walk stands with one flag.
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Unseen,
    OnPath,
    Done,
}

impl DependencyGraph {
    pub fn of(flags: &[FeatureFlag]) -> Self {
        Self::from_filters(flags.iter().map(|flag| (flag.id, &flag.filters)))
    }

    /// The graph of flags given by id and filters, in order.
    fn from_filters<'f>(flags: impl Iterator<Item = (FlagId, &'f FlagFilters)> + Clone) -> Self {
        let mut index = HashMap::new();
        for (position, (id, _)) in flags.clone().enumerate() {
            index.entry(id).or_insert(position);
        }
        let edges = flags
            .map(|(_, filters)| {
                filters
                    .dependencies()
                    .map(|id| index.get(&id).copied())
                    .collect()
            })
            .collect();
        Self { index, edges }
    }

    /// Whether any flag of the set depends on another.
    pub fn is_empty(&self) -> bool {
        self.edges.iter().all(Vec::is_empty)
    }

    /// The position of the flag with this id in the set.
    pub fn position(&self, id: FlagId) -> Option<usize> {
        self.index.get(&id).copied()
    }

    /// Every flag's position, each after the flags it depends on (a flag in a cycle, which
    /// writes refuse, after the rest of its cycle's walk): the order `/flags` evaluates in.
    pub fn evaluation_order(&self) -> Vec<usize> {
        let mut marks = vec![Mark::Unseen; self.edges.len()];
        let mut order = Vec::with_capacity(self.edges.len());
        for start in 0..self.edges.len() {
            self.post_order(start, &mut marks, &mut order);
        }
        order
    }

    /// Appends `start` and what it depends on, not yet appended, dependencies first.
    /// Iterative, so a long chain stored before depths were bounded cannot exhaust the stack.
    fn post_order(&self, start: usize, marks: &mut [Mark], order: &mut Vec<usize>) {
        if marks[start] != Mark::Unseen {
            return;
        }
        marks[start] = Mark::OnPath;
        let mut stack = vec![(start, 0)];
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            match self.edges[node].get(*next) {
                Some(edge) => {
                    *next += 1;
                    if let Some(dependency) = *edge
                        && marks[dependency] == Mark::Unseen
                    {
                        marks[dependency] = Mark::OnPath;
                        stack.push((dependency, 0));
                    }
                }
                None => {
                    marks[node] = Mark::Done;
                    order.push(node);
                    stack.pop();
                }
            }
        }
    }

    /// PostHog's `dependency_chain` for a dependency on `target`: the flags to evaluate before
    /// the filter is decided, `target` last, dependencies first. Empty, as PostHog serves it,
    /// when `target` is not in the set or its walk meets a missing flag or a cycle: the SDK
    /// then asks the server.
    pub fn chain(&self, target: FlagId) -> Vec<usize> {
        let Some(start) = self.position(target) else {
            return Vec::new();
        };
        let mut marks = vec![Mark::Unseen; self.edges.len()];
        let mut chain = Vec::new();
        if self.walk_checked(start, &mut marks, &mut chain) {
            chain
        } else {
            Vec::new()
        }
    }

    /// Depth-first from `node`, appending in post-order; false on a cycle or a missing flag.
    fn walk_checked(&self, node: usize, marks: &mut [Mark], chain: &mut Vec<usize>) -> bool {
        match marks[node] {
            Mark::Done => return true,
            Mark::OnPath => return false,
            Mark::Unseen => {}
        }
        marks[node] = Mark::OnPath;
        for edge in &self.edges[node] {
            match *edge {
                Some(dependency) if dependency != node => {
                    if !self.walk_checked(dependency, marks, chain) {
                        return false;
                    }
                }
                // A self-dependency, refused when written, makes no chain.
                Some(_) | None => return false,
            }
        }
        marks[node] = Mark::Done;
        chain.push(node);
        true
    }

    /// A cycle through `start` (its first and last flag), as PostHog shows one; the rest of
    /// the graph is acyclic, as writes keep it, so a cycle can only pass the flag written.
    fn cycle_through(&self, start: usize) -> Option<Vec<usize>> {
        let mut path = vec![start];
        let mut seen = vec![false; self.edges.len()];
        self.find_cycle(start, &mut path, &mut seen).then_some(path)
    }

    fn find_cycle(&self, start: usize, path: &mut Vec<usize>, seen: &mut [bool]) -> bool {
        let node = *path.last().unwrap_or(&start);
        for &dependency in self.edges[node].iter().flatten() {
            path.push(dependency);
            if dependency == start {
                return true;
            }
            if !seen[dependency] {
                seen[dependency] = true;
                if self.find_cycle(start, path, seen) {
                    return true;
                }
            }
            path.pop();
        }
        false
    }

    /// How many flags the longest chain starting at `node` holds (1 without dependencies). A
    /// cycle stored by a race of two writes counts once around, not forever.
    fn depth(&self, node: usize, depths: &mut [Option<usize>]) -> usize {
        if let Some(depth) = depths[node] {
            return depth;
        }
        depths[node] = Some(0);
        let deepest = self.edges[node]
            .iter()
            .flatten()
            .map(|&dependency| self.depth(dependency, depths))
            .max()
            .unwrap_or(0);
        depths[node] = Some(deepest + 1);
        deepest + 1
    }
}

/// A flag being written, as the dependency checks see it.
#[derive(Debug, Clone, Copy)]
pub struct WrittenFlag<'a> {
    /// `None` for a flag being created.
    pub id: Option<FlagId>,
    pub key: &'a str,
    pub filters: &'a FlagFilters,
    /// Whether it serves after the write.
    pub active: bool,
}

/// Checks a write's new filters (`written.filters`, sent) against the project: every flag they
/// depend on exists and is active, none is the flag itself, no cycle forms, and no chain
/// grows past [`MAX_DEPENDENCY_DEPTH`]. `active` holds the project's active flags, `inactive`
/// any live inactive flag the filters name (to tell "disabled" from "non-existent").
///
/// # Errors
/// PostHog's messages (the depth bound's are Burrow's), `attr: filters`.
pub fn check_new_dependencies(
    written: &WrittenFlag<'_>,
    active: &[FeatureFlag],
    inactive: &[FeatureFlag],
) -> Result<(), ValidationError> {
    let invalid = |detail: String| ValidationError::invalid("filters", detail);
    for id in written.filters.dependencies() {
        if Some(id) == written.id || active.iter().any(|flag| flag.id == id) {
            continue;
        }
        return Err(invalid(match inactive.iter().find(|flag| flag.id == id) {
            Some(flag) => format!(
                "Cannot create dependency on disabled flag '{}' (ID: {}). Flag dependencies must \
                 reference active flags only.",
                flag.key, id.0
            ),
            None => format!(
                "Flag dependency references non-existent flag with ID {}",
                id.0
            ),
        }));
    }
    if written
        .filters
        .dependencies()
        .any(|id| Some(id) == written.id)
    {
        return Err(invalid(format!(
            "Feature flag '{}' cannot depend on itself",
            written.key
        )));
    }
    // The project's active flags with the written one's new filters, last: the graph as it
    // would serve. A new flag has no id yet, and no flag depends on it.
    let others: Vec<&FeatureFlag> = active
        .iter()
        .filter(|flag| Some(flag.id) != written.id)
        .collect();
    let keys: Vec<&str> = others
        .iter()
        .map(|flag| flag.key.as_str())
        .chain([written.key])
        .collect();
    let graph = DependencyGraph::from_filters(
        others
            .iter()
            .map(|flag| (flag.id, &flag.filters))
            .chain([(written.id.unwrap_or(UNSAVED), written.filters)]),
    );
    let written_at = others.len();
    if let Some(cycle) = graph.cycle_through(written_at) {
        let path: Vec<&str> = cycle.iter().map(|&node| keys[node]).collect();
        return Err(invalid(format!(
            "Circular dependency detected: {}",
            path.join(" → ")
        )));
    }
    let mut depths = vec![None; keys.len()];
    let deepest = (0..keys.len())
        .map(|node| (graph.depth(node, &mut depths), node))
        .max();
    if let Some((depth, node)) = deepest.filter(|(depth, _)| *depth > MAX_DEPENDENCY_DEPTH) {
        return Err(invalid(format!(
            "A flag dependency chain may hold at most {MAX_DEPENDENCY_DEPTH} flags; with these \
             filters the chain of '{}' would hold {depth}.",
            keys[node]
        )));
    }
    Ok(())
}

/// Stands for a flag being created, which has no id yet, in the graph a write is checked on.
const UNSAVED: FlagId = FlagId(-1);

/// The flag a write leaves inactive or deleted must have no active dependents, and one it
/// leaves active no disabled (or deleted) dependency, with PostHog's messages (`attr: null`).
/// `action` is PostHog's word for the write (`disable`, `delete`).
///
/// # Errors
/// Names up to five of the flags in the way, as PostHog does.
pub fn check_switch(
    written: &WrittenFlag<'_>,
    action: &str,
    active: &[FeatureFlag],
    inactive: &[FeatureFlag],
) -> Result<(), ValidationError> {
    let Some(id) = written.id else {
        return Ok(());
    };
    if !written.active {
        let dependents: Vec<&FeatureFlag> = active
            .iter()
            .filter(|flag| flag.id != id && flag.filters.dependencies().any(|on| on == id))
            .collect();
        if !dependents.is_empty() {
            return Err(ValidationError::invalid_input(format!(
                "Cannot {action} this feature flag because other flags depend on it: {}. Please \
                 update or disable the dependent flags first.",
                named(&dependents)
            )));
        }
        return Ok(());
    }
    let disabled: Vec<&FeatureFlag> = written
        .filters
        .dependencies()
        .filter(|on| !active.iter().any(|flag| flag.id == *on))
        .filter_map(|on| inactive.iter().find(|flag| flag.id == on))
        .collect();
    if !disabled.is_empty() {
        return Err(ValidationError::invalid_input(format!(
            "Cannot enable this feature flag because it depends on disabled flags: {}. Please \
             enable the dependency flags first.",
            named(&disabled)
        )));
    }
    if let Some(missing) = written
        .filters
        .dependencies()
        .find(|on| !active.iter().chain(inactive).any(|flag| flag.id == *on))
    {
        return Err(ValidationError::invalid_input(format!(
            "Flag dependency references non-existent flag with ID {}",
            missing.0
        )));
    }
    Ok(())
}

/// `key (ID: 1), other (ID: 2), and 3 more`, as PostHog lists flags in the way.
fn named(flags: &[&FeatureFlag]) -> String {
    let mut names: Vec<String> = flags
        .iter()
        .take(5)
        .map(|flag| format!("{} (ID: {})", flag.key, flag.id.0))
        .collect();
    if flags.len() > 5 {
        names.push(format!("and {} more", flags.len() - 5));
    }
    names.join(", ")
}
