//! The kernel's automatic task groups (`kernel.sched_autogroup_enabled`), off while the bench
//! runs. With them on, this bench's machine (2 cores, Linux 6.18) left PostgreSQL backends
//! runnable but unscheduled for up to 5.5 s (`perf sched latency`) while wrk, Burrow and
//! PostgreSQL kept both cores busy: a query waited seconds before its backend read it, a few
//! requests in a run took 1–5 s, and wrk's latency correction turned them into a p99 of seconds
//! and a failed run. With them off, 1.1 million requests of the same scenario had none over
//! 100 ms (`docs/benchmarks.md`). The setting is the whole machine's, so it is put back when the
//! bench ends, also on failure (not when the bench is killed).

use std::fs;
use std::path::Path;

const AUTOGROUP: &str = "/proc/sys/kernel/sched_autogroup_enabled";

/// What the bench did to autogrouping; dropping it puts back what it changed.
#[derive(Debug)]
pub(super) enum Autogroups {
    /// The kernel has no autogrouping, or it was off already.
    Off,
    /// Turned off for the run; turned on again when dropped.
    TurnedOff,
    /// On, and the bench could not turn it off (not root, or `/proc/sys` read-only).
    LeftOn(String),
}

impl Autogroups {
    /// Turns autogrouping off if it is on and the bench may.
    pub(super) fn off() -> Self {
        let path = Path::new(AUTOGROUP);
        match fs::read_to_string(path) {
            Ok(value) if value.trim() == "1" => match fs::write(path, "0") {
                Ok(()) => Self::TurnedOff,
                Err(error) => {
                    eprintln!(
                        "xtask: bench: could not turn off {AUTOGROUP} ({error}); latency tails \
                         may be the kernel's scheduling, not Burrow's"
                    );
                    Self::LeftOn(error.to_string())
                }
            },
            _ => Self::Off,
        }
    }

    /// How the run was scheduled, for the report.
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Off => "autogroup off".to_owned(),
            Self::TurnedOff => "autogroup turned off for the run".to_owned(),
            Self::LeftOn(error) => format!("autogroup ON (could not turn it off: {error})"),
        }
    }
}

impl Drop for Autogroups {
    fn drop(&mut self) {
        if matches!(self, Self::TurnedOff)
            && let Err(error) = fs::write(AUTOGROUP, "1")
        {
            eprintln!("xtask: bench: could not turn {AUTOGROUP} back on: {error}");
        }
    }
}
