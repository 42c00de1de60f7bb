//! What a failover run adds up to: the clients' attempts set against what the database holds
//! afterwards, the summary line `cargo xtask failover` ends with, and the targets
//! `cargo xtask test` holds it to.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use uuid::Uuid;

use super::load::{Answer, Attempt};

/// The failover must answer 2xx again within this of the kill.
const BACK_WITHIN: Duration = Duration::from_secs(30);
/// A switchover's 503s must end within this.
const SWITCHOVER_WITHIN: Duration = Duration::from_secs(10);

/// When the two faults happened, on the load's clock.
pub(super) struct Faults {
    pub(super) kill: Duration,
    pub(super) switchover: Duration,
}

/// What the database holds afterwards for the load's survey.
pub(super) struct Stored {
    /// Each stored event's uuid with how many rows it has.
    pub(super) events: HashMap<Uuid, u64>,
    /// The survey's `responses_count`, as the API answers it.
    pub(super) responses_count: u64,
}

#[derive(Debug)]
pub(super) struct Summary {
    pub(super) acknowledged: usize,
    /// Acknowledged events the database does not hold, each with its acknowledging attempt.
    pub(super) lost: Vec<Attempt>,
    /// Rows beyond one per event, and responses counted beyond the events stored.
    pub(super) duplicated: u64,
    /// Answers 5xx other than 503.
    pub(super) server_errors: usize,
    /// 503s without `Retry-After`.
    pub(super) unavailable_without_retry_after: usize,
    /// Answers neither 2xx nor 5xx (a 4xx), and requests no node answered.
    pub(super) other_answers: usize,
    /// Events whose client gave up retrying before a 2xx.
    pub(super) unacknowledged: usize,
    /// Stored events, and the `responses_count` that should equal their number.
    pub(super) stored: usize,
    pub(super) responses_count: u64,
    /// From the kill to the first 2xx after the failures it caused; `None`: never.
    pub(super) back_in: Option<Duration>,
    /// From the first attempt the switchover failed to the last failed answer.
    pub(super) switchover_unavailable: Duration,
}

impl Summary {
    pub(super) fn of(attempts: &[Attempt], stored: &Stored, faults: &Faults) -> Self {
        let acknowledged: HashSet<Uuid> = attempts
            .iter()
            .filter(|attempt| attempt.answer == Answer::Acknowledged)
            .map(|attempt| attempt.event)
            .collect();
        let sent: HashSet<Uuid> = attempts.iter().map(|attempt| attempt.event).collect();
        let extra_rows: u64 = stored.events.values().map(|rows| rows - 1).sum();
        let extra_count = stored
            .responses_count
            .saturating_sub(stored.events.len() as u64);
        let failed = |attempt: &&Attempt| attempt.answer != Answer::Acknowledged;
        Self {
            acknowledged: acknowledged.len(),
            lost: attempts
                .iter()
                .filter(|attempt| {
                    attempt.answer == Answer::Acknowledged
                        && !stored.events.contains_key(&attempt.event)
                })
                .copied()
                .collect(),
            duplicated: extra_rows + extra_count,
            server_errors: attempts
                .iter()
                .filter(|attempt| matches!(attempt.answer, Answer::Status(500..=599)))
                .count(),
            unavailable_without_retry_after: attempts
                .iter()
                .filter(|attempt| attempt.answer == Answer::Unavailable { retry_after: false })
                .count(),
            other_answers: attempts
                .iter()
                .filter(|attempt| matches!(attempt.answer, Answer::None | Answer::Status(..=499)))
                .count(),
            unacknowledged: sent.len() - acknowledged.len(),
            stored: stored.events.len(),
            responses_count: stored.responses_count,
            back_in: back_in(attempts, faults),
            switchover_unavailable: {
                let failures: Vec<&Attempt> = attempts
                    .iter()
                    .filter(failed)
                    .filter(|attempt| attempt.answered >= faults.switchover)
                    .collect();
                match (
                    failures.iter().map(|attempt| attempt.sent).min(),
                    failures.iter().map(|attempt| attempt.answered).max(),
                ) {
                    (Some(first), Some(last)) => last - first,
                    _ => Duration::ZERO,
                }
            },
        }
    }

    /// What misses the targets, one line each; empty when every target is met.
    pub(super) fn misses(&self) -> Vec<String> {
        let mut misses = Vec::new();
        let mut miss = |missed: bool, what: String| {
            if missed {
                misses.push(what);
            }
        };
        miss(
            !self.lost.is_empty(),
            format!("{} acknowledged answers lost", self.lost.len()),
        );
        miss(
            self.duplicated > 0,
            format!("{} answers stored or counted twice", self.duplicated),
        );
        miss(
            self.server_errors > 0,
            format!("{} answers 5xx other than 503", self.server_errors),
        );
        miss(
            self.unavailable_without_retry_after > 0,
            format!(
                "{} 503s without Retry-After",
                self.unavailable_without_retry_after
            ),
        );
        miss(
            self.other_answers > 0,
            format!("{} requests answered 4xx or not at all", self.other_answers),
        );
        miss(
            self.unacknowledged > 0,
            format!("{} answers never acknowledged", self.unacknowledged),
        );
        miss(
            self.responses_count != self.stored as u64,
            format!(
                "responses_count {} for {} stored answers",
                self.responses_count, self.stored
            ),
        );
        miss(
            self.back_in.is_none_or(|back| back > BACK_WITHIN),
            format!(
                "2xx again only after {} (target {BACK_WITHIN:?})",
                seconds(self.back_in)
            ),
        );
        miss(
            self.switchover_unavailable >= SWITCHOVER_WITHIN,
            format!(
                "the switchover's 503s lasted {:.1} s (target under {SWITCHOVER_WITHIN:?})",
                self.switchover_unavailable.as_secs_f64()
            ),
        );
        misses
    }
}

/// From the kill to the first 2xx answered after the last failure before the switchover: the end
/// of the 503 window the kill opened (zero if it opened none).
fn back_in(attempts: &[Attempt], faults: &Faults) -> Option<Duration> {
    let in_failover = |attempt: &&Attempt| {
        attempt.answered >= faults.kill && attempt.answered < faults.switchover
    };
    let window_end = attempts
        .iter()
        .filter(in_failover)
        .filter(|attempt| attempt.answer != Answer::Acknowledged)
        .map(|attempt| attempt.answered)
        .max();
    let Some(window_end) = window_end else {
        return Some(Duration::ZERO);
    };
    attempts
        .iter()
        .filter(|attempt| attempt.answer == Answer::Acknowledged && attempt.answered >= window_end)
        .map(|attempt| attempt.answered)
        .min()
        .map(|again| again - faults.kill)
}

fn seconds(duration: Option<Duration>) -> String {
    duration.map_or_else(
        || "never".to_owned(),
        |d| format!("{:.1} s", d.as_secs_f64()),
    )
}

impl fmt::Display for Summary {
    /// The line `cargo xtask failover` ends with.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "failover: acknowledged {}, lost {}, duplicated {}, 5xx other than 503 {}, back in {} \
             (switchover: 503s for {:.1} s)",
            self.acknowledged,
            self.lost.len(),
            self.duplicated,
            self.server_errors,
            seconds(self.back_in),
            self.switchover_unavailable.as_secs_f64()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(event: Uuid, sent_ms: u64, answered_ms: u64, answer: Answer) -> Attempt {
        Attempt {
            event,
            node: 0,
            sent: Duration::from_millis(sent_ms),
            answered: Duration::from_millis(answered_ms),
            answer,
        }
    }

    const UNAVAILABLE: Answer = Answer::Unavailable { retry_after: true };

    #[test]
    fn a_run_adds_up_acknowledged_lost_duplicated_and_the_503_windows() {
        let [a, b, c, d] = [(); 4].map(|()| Uuid::new_v4());
        let attempts = [
            at(a, 0, 10, Answer::Acknowledged),
            // The kill at 1 s: b's first try fails, the window ends at 3.5 s.
            at(b, 900, 1_500, UNAVAILABLE),
            at(b, 1_600, 3_500, UNAVAILABLE),
            at(b, 3_600, 4_200, Answer::Acknowledged),
            at(c, 4_000, 4_100, Answer::Acknowledged),
            // The switchover at 10 s: two failures from 10.5 s to 11.7 s, one a 500.
            at(d, 10_500, 11_000, Answer::Status(500)),
            at(d, 11_100, 11_700, UNAVAILABLE),
            at(d, 11_800, 11_900, Answer::Acknowledged),
        ];
        let stored = Stored {
            events: HashMap::from([(a, 1), (b, 2), (d, 1)]),
            responses_count: 5,
        };
        let faults = Faults {
            kill: Duration::from_secs(1),
            switchover: Duration::from_secs(10),
        };
        let summary = Summary::of(&attempts, &stored, &faults);
        assert_eq!(summary.acknowledged, 4);
        assert_eq!(
            summary.lost.len(),
            1,
            "c was acknowledged and is not stored"
        );
        assert_eq!(summary.lost[0].event, c);
        assert_eq!(
            summary.duplicated,
            1 + 2,
            "b twice, and two responses too many"
        );
        assert_eq!(summary.server_errors, 1);
        assert_eq!(summary.back_in, Some(Duration::from_millis(3_100)));
        assert_eq!(summary.switchover_unavailable, Duration::from_millis(1_200));
        assert_eq!(
            summary.to_string(),
            "failover: acknowledged 4, lost 1, duplicated 3, 5xx other than 503 1, back in 3.1 s \
             (switchover: 503s for 1.2 s)"
        );
        let misses = summary.misses();
        assert_eq!(misses.len(), 4, "{misses:?}");
    }

    #[test]
    fn a_clean_run_meets_every_target() {
        let [a, b] = [(); 2].map(|()| Uuid::new_v4());
        let attempts = [
            at(a, 0, 10, Answer::Acknowledged),
            at(b, 1_100, 1_200, UNAVAILABLE),
            at(b, 1_300, 5_000, Answer::Acknowledged),
        ];
        let stored = Stored {
            events: HashMap::from([(a, 1), (b, 1)]),
            responses_count: 2,
        };
        let faults = Faults {
            kill: Duration::from_secs(1),
            switchover: Duration::from_secs(10),
        };
        let summary = Summary::of(&attempts, &stored, &faults);
        assert_eq!(summary.misses(), Vec::<String>::new());
        assert_eq!(summary.back_in, Some(Duration::from_secs(4)));
        assert_eq!(summary.switchover_unavailable, Duration::ZERO);
    }

    #[test]
    fn a_503_without_retry_after_or_an_answer_never_acknowledged_misses() {
        let a = Uuid::new_v4();
        let attempts = [at(a, 0, 10, Answer::Unavailable { retry_after: false })];
        let stored = Stored {
            events: HashMap::new(),
            responses_count: 0,
        };
        let faults = Faults {
            kill: Duration::from_secs(1),
            switchover: Duration::from_secs(10),
        };
        let misses = Summary::of(&attempts, &stored, &faults).misses();
        assert!(
            misses.iter().any(|miss| miss.contains("Retry-After")),
            "{misses:?}"
        );
        assert!(
            misses
                .iter()
                .any(|miss| miss.contains("never acknowledged")),
            "{misses:?}"
        );
    }
}
