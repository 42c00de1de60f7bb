//! The node's evaluation slots (`domain::sdk::EvaluationSlots`): costly `/flags` evaluations
//! run on tokio's blocking threads, never on the threads that serve requests, as many at once
//! as the machine has cores, and each project at most half of them, so another project always
//! finds a slot free while one project's requests are slow.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use domain::Unexpected;
use domain::sdk::EvaluationSlots;
use domain::tenancy::ProjectId;
use tokio::sync::Semaphore;

/// The longest a request waits for a slot before it is answered 503: past it the node is
/// evaluating more than it can finish.
const SLOT_WAIT: Duration = Duration::from_secs(5);

pub struct BlockingEvaluationSlots {
    all: Arc<Semaphore>,
    /// Each project's share, while it has evaluations running or waiting.
    projects: Mutex<HashMap<ProjectId, Arc<Semaphore>>>,
    share: usize,
    wait: Duration,
}

impl BlockingEvaluationSlots {
    /// `slots` at once (at least one), a project at most half of them (at least one), a
    /// request waiting at most `wait` for its project's.
    pub fn new(slots: usize, wait: Duration) -> Self {
        let slots = slots.max(1);
        Self {
            all: Arc::new(Semaphore::new(slots)),
            projects: Mutex::default(),
            share: (slots / 2).max(1),
            wait,
        }
    }

    /// One slot for each core this process may use, a request waiting at most 5 s.
    pub fn per_core() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Self::new(cores, SLOT_WAIT)
    }

    fn share_of(&self, project: ProjectId) -> Arc<Semaphore> {
        let mut projects = self.projects.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            projects
                .entry(project)
                .or_insert_with(|| Arc::new(Semaphore::new(self.share))),
        )
    }

    /// Forgets `project`'s share once nobody holds or waits for it, so the map holds only
    /// projects evaluating now.
    fn release(&self, project: ProjectId) {
        let mut projects = self.projects.lock().unwrap_or_else(PoisonError::into_inner);
        if projects
            .get(&project)
            .is_some_and(|share| Arc::strong_count(share) == 1)
        {
            projects.remove(&project);
        }
    }
}

#[async_trait]
impl EvaluationSlots for BlockingEvaluationSlots {
    async fn run(
        &self,
        project: ProjectId,
        work: Box<dyn FnOnce() + Send>,
    ) -> Result<(), Unexpected> {
        let share = self.share_of(project);
        let permits = tokio::time::timeout(self.wait, async {
            let own = Arc::clone(&share).acquire_owned().await;
            let any = Arc::clone(&self.all).acquire_owned().await;
            own.and_then(|own| any.map(|any| (own, any)))
        })
        .await;
        drop(share);
        let ran = match permits {
            Ok(Ok(permits)) => tokio::task::spawn_blocking(move || {
                // Held until the work ends, even when the request stopped waiting for it.
                let _permits = permits;
                work();
            })
            .await
            .map_err(Unexpected::new),
            Ok(Err(closed)) => Err(Unexpected::new(closed)),
            Err(_) => Err(Unexpected::busy(format!(
                "every evaluation slot this project may use stayed taken for {:?}",
                self.wait
            ))),
        };
        self.release(project);
        ran
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    use super::*;

    /// A project holding its share waits alone: another project's work still runs at once, and
    /// the project's own next evaluation is told the node is busy once the wait is over.
    #[tokio::test(flavor = "current_thread")]
    async fn a_busy_project_leaves_slots_to_others() {
        let slots = Arc::new(BlockingEvaluationSlots::new(2, Duration::from_millis(200)));
        let (busy, other) = (ProjectId(1), ProjectId(2));
        let running = Arc::new(AtomicUsize::new(0));
        let (release, released) = std::sync::mpsc::channel::<()>();
        let hold = {
            let slots = Arc::clone(&slots);
            let running = Arc::clone(&running);
            tokio::spawn(async move {
                let work = move || {
                    running.fetch_add(1, Ordering::SeqCst);
                    released.recv().ok();
                };
                slots.run(busy, Box::new(work)).await
            })
        };
        while running.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }

        let started = Instant::now();
        let done = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&done);
        let work = move || {
            counted.fetch_add(1, Ordering::SeqCst);
        };
        slots.run(other, Box::new(work)).await.unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 1);
        assert!(
            started.elapsed() < slots.wait,
            "the other project did not wait"
        );

        let refused = slots.run(busy, Box::new(|| {})).await.unwrap_err();
        assert!(refused.is_busy() && !refused.is_unavailable(), "{refused}");

        // The busy project's second evaluation waits for its first.
        let second = {
            let slots = Arc::clone(&slots);
            tokio::spawn(async move { slots.run(busy, Box::new(|| {})).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !second.is_finished(),
            "a project's share is one slot of two"
        );
        release.send(()).unwrap();
        hold.await.unwrap().unwrap();
        second.await.unwrap().unwrap();
        assert!(
            slots.projects.lock().unwrap().is_empty(),
            "shares forgotten"
        );
    }
}
