//! Surveys as the API renders them, kept in the node's memory per survey with the revision they
//! were rendered from. A read asks the store only for the revisions it would show, and loads
//! whole (and renders) only the surveys whose rendering it does not hold: reading and rendering
//! a page of a hundred surveys was most of a list's cost, and a revision is a few bytes. Every
//! read still goes to the store, so a write is seen by the next read on any node.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::{
    SearchMatch, SearchTerm, Survey, SurveyFilter, SurveyId, SurveyRepository, SurveyRevision,
    SurveySearch,
};
use crate::error::OrNotFound as _;
use crate::error::{DomainError, Unexpected};
use crate::memory::{Memories, Memory};
use crate::ports::{Page, PageRequest};
use crate::tenancy::ProjectId;

/// What a survey is rendered into (the API's JSON text): kept and handed out cloned.
pub trait Rendering: Clone + Send + Sync + 'static {
    /// Its size in bytes, which bounds how many a node keeps.
    fn bytes(&self) -> u32;
}

/// How long a rendering is kept at most. Revisions are unique for far longer; the bound keeps
/// memory of surveys nobody reads from lingering.
const FRESHNESS: Duration = Duration::from_secs(600);

/// How many bytes of renderings a node keeps at most (about three thousand rich surveys).
const BUDGET_BYTES: u64 = 8 * 1024 * 1024;

type Kept<R> = (SurveyRevision, R);

/// A page of a list, rendered, and for a search the tier every survey of it matched in.
#[derive(Debug)]
pub struct RenderedPage<R> {
    pub page: Page<R>,
    pub matched: Option<SearchMatch>,
}

/// Reads of whole surveys that reuse renderings while their revision is the stored one.
pub struct RenderedSurveys<R> {
    surveys: Arc<dyn SurveyRepository>,
    render: fn(Survey) -> Result<R, Unexpected>,
    kept: Box<dyn Memory<SurveyId, Kept<R>>>,
}

impl<R: Rendering> RenderedSurveys<R> {
    /// Renders with `render`, keeping renderings where `memories` keeps things.
    pub fn new(
        surveys: Arc<dyn SurveyRepository>,
        render: fn(Survey) -> Result<R, Unexpected>,
        memories: &impl Memories,
    ) -> Self {
        Self {
            surveys,
            render,
            kept: memories.weighed_memory(FRESHNESS, BUDGET_BYTES, |(_, r): &Kept<R>| r.bytes()),
        }
    }

    /// One survey of the project, rendered.
    ///
    /// # Errors
    /// `NotFound`; `Unexpected` when storage or rendering fails.
    pub async fn get(&self, project: ProjectId, id: SurveyId) -> Result<R, DomainError> {
        let revision = self.surveys.revision(project, id).await?.or_not_found()?;
        let mut rendered = self.rendered(project, &[(id, revision)]).await?;
        rendered.pop().flatten().or_not_found()
    }

    /// A page of the project's surveys that `filter` keeps (as `SurveyRepository::list` pages
    /// them), rendered; with a `search`, those matching it in its tier
    /// ([`SurveySearch::among`]: one more read first). A survey deleted between the reads is
    /// left out of the page.
    ///
    /// # Errors
    /// `Unexpected` when storage or rendering fails.
    pub async fn list(
        &self,
        project: ProjectId,
        filter: SurveyFilter,
        search: Option<SearchTerm>,
        page: PageRequest,
    ) -> Result<RenderedPage<R>, Unexpected> {
        let filter = match search {
            Some(term) => SurveyFilter {
                search: Some(SurveySearch::among(&*self.surveys, project, &filter, term).await?),
                ..filter
            },
            None => filter,
        };
        let revisions = self.surveys.revisions(project, &filter, page).await?;
        let rendered = self.rendered(project, &revisions.items).await?;
        Ok(RenderedPage {
            page: Page {
                count: revisions.count,
                items: rendered.into_iter().flatten().collect(),
            },
            matched: filter.search.map(|search| search.tier),
        })
    }

    /// The renderings of these surveys at these revisions, in their order: those kept, and the
    /// others loaded whole in one read, rendered and kept. A survey the load no longer finds is
    /// `None`. What the load finds may be newer than the revision asked about; it is kept with
    /// the revision it was loaded at, so a rendering is only ever reused for its own revision.
    async fn rendered(
        &self,
        project: ProjectId,
        revisions: &[(SurveyId, SurveyRevision)],
    ) -> Result<Vec<Option<R>>, Unexpected> {
        let mut rendered: Vec<Option<R>> = revisions
            .iter()
            .map(|(id, revision)| {
                self.kept
                    .recall(id)
                    .filter(|(kept, _)| kept == revision)
                    .map(|(_, rendering)| rendering)
            })
            .collect();
        let missing: Vec<SurveyId> = revisions
            .iter()
            .zip(&rendered)
            .filter(|(_, rendering)| rendering.is_none())
            .map(|((id, _), _)| *id)
            .collect();
        if missing.is_empty() {
            return Ok(rendered);
        }
        // Where each survey goes in the answer (a page holds up to a thousand).
        let slots: HashMap<SurveyId, usize> = revisions
            .iter()
            .enumerate()
            .map(|(slot, (id, _))| (*id, slot))
            .collect();
        for (survey, revision) in self.surveys.whole(project, &missing).await? {
            let id = survey.id;
            let rendering = (self.render)(survey)?;
            self.kept.keep(id, (revision, rendering.clone()));
            if let Some(&slot) = slots.get(&id) {
                rendered[slot] = Some(rendering);
            }
        }
        Ok(rendered)
    }
}
