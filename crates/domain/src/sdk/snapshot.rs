//! One project as the SDK endpoints read it, taken whole: its token, its flags ready to
//! evaluate (patterns compiled), its survey feed, and room for what the API renders from them.
//! A snapshot never changes once built; a change to what it holds makes a new one.

use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;

use crate::cohort::{Cohort, CohortFilters, CohortId, CohortLookup, KnownCohort};
use crate::feature_flag::evaluation::regex_pattern;
use crate::feature_flag::pattern::Patterns;
use crate::feature_flag::{
    ConditionSet, DependencyGraph, FeatureFlag, MAX_PROJECT_FLAG_WEIGHT, Operator, PropertyFilter,
    ServingFlags,
};
use crate::group::{GroupType, GroupTypeIndex, MAX_GROUP_TYPES};
use crate::json_fields::json_length;
use crate::survey::Survey;
use crate::tenancy::Project;

/// What the SDK endpoints serve of one project, as of one moment, with `R`, what the API
/// renders from it (its answers, as `RenderedSurveys` keeps survey renderings behind a type
/// the API names).
pub struct SdkSnapshot<R> {
    pub project: Project,
    /// What `/flags` evaluates, in the order it answers: the project's serving flags by id,
    /// then each unarchived survey's internal targeting flag (with the project's wait period,
    /// `survey_config`, as it was when the snapshot was built) and, while it samples
    /// responses, its sampling flag.
    pub flags: Vec<FeatureFlag>,
    /// The survey feed: every unarchived survey, newest first.
    pub surveys: Vec<Survey>,
    /// The bytes of the project's serving flags when they were too many to load
    /// ([`SNAPSHOT_FLAG_BYTES`]): `flags` then holds only the surveys' targeting flags, and
    /// `/flags` says it could not compute the rest.
    pub flags_withheld: Option<u64>,
    /// Created empty with the snapshot and filled by the API as it renders, so each answer is
    /// rendered once per snapshot and forgotten with it.
    pub renderings: R,
    patterns: CompiledPatterns,
    answer_order: Vec<usize>,
    dependencies: DependencyGraph,
    evaluation_order: Vec<usize>,
    cohorts: SnapshotCohorts,
    group_types: Vec<GroupType>,
    /// By group type index: whether some flag (or condition set) aggregates by the type, so
    /// `/flags` reads the properties of the request's group of it.
    aggregated: [bool; MAX_GROUP_TYPES as usize],
    /// The keys of the flags that ensure experience continuity.
    continuity_flags: Vec<String>,
    size: u32,
    evaluation_cost: usize,
}

impl<R> std::fmt::Debug for SdkSnapshot<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SdkSnapshot")
            .field("project", &self.project.id)
            .field("flags", &self.flags.len())
            .field("surveys", &self.surveys.len())
            .finish_non_exhaustive()
    }
}

/// The most weight of serving flags (`FlagFilters::weight`) a snapshot loads: twice what a
/// project may write (`MAX_PROJECT_FLAG_WEIGHT`), room for its surveys' targeting flags. A project whose flags
/// pass it (stored under older limits, or through many surveys) has them withheld rather than
/// holding a node's memory: parsed, they take several times their text.
pub const SNAPSHOT_FLAG_BYTES: u64 = 2 * MAX_PROJECT_FLAG_WEIGHT as u64;

impl<R: Default> SdkSnapshot<R> {
    /// The snapshot of `project` holding `flags` (serving ones, by id), the cohorts they name
    /// (of the project's live `cohorts`), its `group_types` and `surveys` (unarchived, newest
    /// first), with every pattern its flags filter by compiled by `patterns`.
    pub fn new(
        project: Project,
        flags: ServingFlags,
        cohorts: Vec<Cohort>,
        group_types: Vec<GroupType>,
        surveys: Vec<Survey>,
        patterns: &dyn Patterns,
    ) -> Self {
        let (mut flags, flags_withheld) = match flags {
            ServingFlags::Loaded(flags) => (flags, None),
            ServingFlags::TooLarge(bytes) => (Vec::new(), Some(bytes)),
        };
        let config = project.survey_config.as_ref();
        flags.extend(surveys.iter().flat_map(|survey| {
            std::iter::once(survey.internal_targeting_flag(config))
                .chain(survey.internal_response_sampling_flag())
        }));
        let cohorts = SnapshotCohorts::of(&flags, cohorts);
        let patterns = CompiledPatterns::of(&flags, &cohorts, patterns);
        let size = estimated_size(&flags, &cohorts, &surveys);
        let evaluation_cost = evaluation_cost(&flags, &cohorts);
        let mut aggregated = [false; MAX_GROUP_TYPES as usize];
        let indices = flags.iter().flat_map(|flag| {
            let sets = flag.filters.groups.iter();
            let own = sets.map(|set| set.aggregation_group_type_index);
            std::iter::once(flag.filters.aggregation_group_type_index).chain(own)
        });
        for index in indices.flatten().filter_map(GroupTypeIndex::new) {
            aggregated[usize::from(index.get())] = true;
        }
        let continuity_flags = flags
            .iter()
            .filter(|flag| flag.ensure_experience_continuity && flag.active && !flag.deleted)
            .map(|flag| flag.key.clone())
            .collect();
        let answer_order = answer_order(&flags);
        let dependencies = DependencyGraph::of(&flags);
        let evaluation_order = dependencies.evaluation_order();
        Self {
            project,
            flags,
            surveys,
            flags_withheld,
            patterns,
            answer_order,
            dependencies,
            evaluation_order,
            cohorts,
            group_types,
            aggregated,
            continuity_flags,
            renderings: R::default(),
            size,
            evaluation_cost,
        }
    }
}

impl<R> SdkSnapshot<R> {
    /// The compiled patterns of the snapshot's flags, for evaluating them.
    pub fn patterns(&self) -> &dyn Patterns {
        &self.patterns
    }

    /// The flags as an answer names them, by index into [`Self::flags`]: ordered by key, each
    /// key once (of two flags with one key the later, as a map keeps it). Sorted when the
    /// snapshot is built, not on every `/flags` request.
    pub fn answer_order(&self) -> &[usize] {
        &self.answer_order
    }

    /// Who depends on whom among [`Self::flags`]: the chains the definitions serve.
    pub fn dependencies(&self) -> &DependencyGraph {
        &self.dependencies
    }

    /// The cohorts the snapshot's flags name, nested ones included.
    pub fn cohorts(&self) -> &SnapshotCohorts {
        &self.cohorts
    }

    /// The project's group types, by index: the definitions' `group_type_mapping`.
    pub fn group_types(&self) -> &[GroupType] {
        &self.group_types
    }

    /// The index of the group type named `group_type`, when some flag aggregates by it: the
    /// groups of a `/flags` request whose properties are read.
    pub fn aggregated_type(&self, group_type: &str) -> Option<GroupTypeIndex> {
        self.group_types
            .iter()
            .find(|known| known.group_type == group_type)
            .map(|known| known.index)
            .filter(|index| self.aggregated[usize::from(index.get())])
    }

    /// The keys of the flags that ensure experience continuity (hash key overrides are read,
    /// and written on identify, only when there are some).
    pub fn continuity_flags(&self) -> &[String] {
        &self.continuity_flags
    }

    /// Indices into [`Self::flags`], each flag after the flags it depends on: the order
    /// `/flags` evaluates in, worked out once per snapshot.
    pub fn evaluation_order(&self) -> &[usize] {
        &self.evaluation_order
    }

    /// About how many bytes the snapshot takes in memory, with its compiled patterns and
    /// what the API renders from it (estimated when it is built, before anything is
    /// rendered): what a node's budget for snapshots counts.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// How much evaluating every flag for one person costs, in property filters (a regex or
    /// substring filter counted as several): what decides whether a `/flags` request is
    /// evaluated off the request threads.
    pub fn evaluation_cost(&self) -> usize {
        self.evaluation_cost
    }
}

/// The patterns of a snapshot's flags, compiled when it was built: evaluation finds each one
/// in a map instead of compiling it (or asking a shared cache) per request.
struct CompiledPatterns(HashMap<String, Option<Arc<Regex>>>);

impl CompiledPatterns {
    fn of(flags: &[FeatureFlag], cohorts: &SnapshotCohorts, compiler: &dyn Patterns) -> Self {
        let patterns = flags
            .iter()
            .flat_map(|flag| {
                flag.filters
                    .condition_sets()
                    .flat_map(ConditionSet::properties)
            })
            .chain(cohorts.person_filters())
            .filter_map(regex_pattern)
            .map(|pattern| {
                let compiled = compiler.compiled(&pattern);
                (pattern, compiled)
            })
            .collect();
        Self(patterns)
    }
}

impl Patterns for CompiledPatterns {
    fn compiled(&self, pattern: &str) -> Option<Arc<Regex>> {
        self.0.get(pattern).cloned().flatten()
    }
}

/// The cohorts a snapshot's flags name, and the cohorts those name, by id: what a cohort
/// filter is evaluated with (a static cohort by the membership each request reads). Others of
/// the project are not kept.
#[derive(Debug, Default)]
pub struct SnapshotCohorts {
    /// `None` for a static cohort.
    kept: HashMap<CohortId, Option<CohortFilters>>,
    statics: Vec<CohortId>,
}

impl SnapshotCohorts {
    fn of(flags: &[FeatureFlag], live: Vec<Cohort>) -> Self {
        let mut live: HashMap<CohortId, Cohort> =
            live.into_iter().map(|cohort| (cohort.id, cohort)).collect();
        let mut kept = HashMap::new();
        let mut statics = Vec::new();
        let mut wanted: Vec<CohortId> = flags
            .iter()
            .flat_map(|flag| flag.filters.cohort_ids())
            .collect();
        while let Some(id) = wanted.pop() {
            let Some(cohort) = live.remove(&id) else {
                continue;
            };
            if cohort.is_static {
                statics.push(id);
                kept.insert(id, None);
            } else {
                wanted.extend(cohort.filters.cohort_ids());
                kept.insert(id, Some(cohort.filters));
            }
        }
        statics.sort_unstable();
        Self { kept, statics }
    }

    /// Each kept dynamic cohort, by id: what the SDKs can evaluate themselves.
    pub fn dynamic(&self) -> impl Iterator<Item = (CohortId, &CohortFilters)> {
        self.kept
            .iter()
            .filter_map(|(id, filters)| Some((*id, filters.as_ref()?)))
    }

    /// The kept static cohorts: whose membership a `/flags` request reads.
    pub fn statics(&self) -> &[CohortId] {
        &self.statics
    }

    /// The cohorts as one person's evaluation sees them: static ones listing them are
    /// `members` (read for the request).
    pub fn for_person<'a>(&'a self, members: &'a [CohortId]) -> PersonCohorts<'a> {
        PersonCohorts {
            kept: self,
            members,
        }
    }

    fn person_filters(&self) -> impl Iterator<Item = &PropertyFilter> {
        self.dynamic()
            .flat_map(|(_, filters)| filters.person_filters())
    }

    fn json_length(&self) -> usize {
        self.dynamic()
            .map(|(_, filters)| json_length(filters))
            .sum()
    }
}

/// A snapshot's cohorts for one person ([`SnapshotCohorts::for_person`]).
pub struct PersonCohorts<'a> {
    kept: &'a SnapshotCohorts,
    members: &'a [CohortId],
}

impl CohortLookup for PersonCohorts<'_> {
    fn cohort(&self, cohort: CohortId) -> Option<KnownCohort<'_>> {
        Some(match self.kept.kept.get(&cohort)? {
            Some(filters) => KnownCohort::Dynamic(filters),
            None => KnownCohort::Static {
                member: self.members.contains(&cohort),
            },
        })
    }
}

/// Indices of `flags` sorted by key, the later of two flags with one key kept.
fn answer_order(flags: &[FeatureFlag]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..flags.len()).rev().collect();
    // Stable: of equal keys the later flag, first after the reversal, is the one kept.
    order.sort_by(|a, b| flags[*a].key.cmp(&flags[*b].key));
    order.dedup_by(|next, kept| flags[*next].key == flags[*kept].key);
    order
}

/// Each filter counts 1; a regex or substring filter scans its value (one substring filter
/// may hold several), so counts 8; a cohort filter counts its cohort's filters (nested ones
/// included), each time a flag names it.
fn evaluation_cost(flags: &[FeatureFlag], cohorts: &SnapshotCohorts) -> usize {
    let cohort_costs: HashMap<CohortId, usize> = cohorts
        .dynamic()
        .map(|(id, _)| (id, cohort_cost(id, cohorts, 1)))
        .collect();
    flags
        .iter()
        .flat_map(|flag| flag.filters.condition_sets())
        .flat_map(ConditionSet::properties)
        .map(|filter| match filter.cohort_id() {
            Some(id) => 1 + cohort_costs.get(&id).copied().unwrap_or_default(),
            None => filter_cost(filter),
        })
        .sum()
}

/// What evaluating a dynamic cohort costs: its person filters and its nested cohorts', as
/// often as they are named, down to where evaluation stops.
fn cohort_cost(id: CohortId, cohorts: &SnapshotCohorts, depth: usize) -> usize {
    let Some(Some(filters)) = cohorts.kept.get(&id) else {
        return 1;
    };
    if depth > crate::cohort::MAX_COHORT_DEPTH {
        return 1;
    }
    let own: usize = filters.person_filters().into_iter().map(filter_cost).sum();
    let nested: usize = filters
        .cohort_ids()
        .into_iter()
        .map(|nested| cohort_cost(nested, cohorts, depth + 1))
        .sum();
    own.saturating_add(nested)
}

fn filter_cost(filter: &PropertyFilter) -> usize {
    match filter.operator() {
        Operator::Regex
        | Operator::NotRegex
        | Operator::IContains
        | Operator::NotIContains
        | Operator::IContainsMulti
        | Operator::NotIContainsMulti => 8,
        _ => 1,
    }
}

/// What the snapshot's flags weigh (their JSON, and 4 KiB for each regex filter, which covers
/// its compiled program), the cohorts they name and its surveys' JSON, times a factor for their
/// parsed form and the renderings made from them; an estimate, which is all a memory budget
/// needs.
fn estimated_size(flags: &[FeatureFlag], cohorts: &SnapshotCohorts, surveys: &[Survey]) -> u32 {
    const PARSED_AND_RENDERED: usize = 6;
    let json_len = |value: Result<Vec<u8>, serde_json::Error>| value.map_or(0, |v| v.len());
    let flags: usize = flags
        .iter()
        .map(|flag| flag.filters.weight() + flag.key.len() + flag.name.len())
        .sum();
    let surveys: usize = surveys
        .iter()
        .map(|survey| {
            let state = &survey.state;
            json_len(serde_json::to_vec(&state.questions))
                + json_len(serde_json::to_vec(&state.appearance))
                + json_len(serde_json::to_vec(&state.conditions))
                + state.name.len()
                + 256
        })
        .sum();
    let total = flags + cohorts.json_length() + surveys + 1024;
    u32::try_from(total.saturating_mul(PARSED_AND_RENDERED)).unwrap_or(u32::MAX)
}
