//! `runner run --attempts N --keep first-pass|smallest|cheapest`:
//! best-of-N. Each task runs as N attempts (`TASK/attempt-K`, as
//! `--repeat` runs them); one passing attempt is kept, and it alone stands
//! for the task: its changes are what `--apply` applies, its outcome the
//! task's. Under `first-pass` an attempt that has not started when one of
//! its task's has passed is not run (attempts already running finish).

use std::collections::HashSet;
use std::sync::Mutex;

use crate::report::repeats::attempt_of;

/// Which passing attempt is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Keep {
    /// The first that passes (by attempt number); the rest are not started.
    FirstPass,
    /// The passing attempt with the smallest diff.
    Smallest,
    /// The passing attempt that cost least (an unknown cost last).
    Cheapest,
}

impl Keep {
    /// As `--keep` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Keep::FirstPass => "first-pass",
            Keep::Smallest => "smallest",
            Keep::Cheapest => "cheapest",
        }
    }
}

/// A best-of-N run's state: the tasks an attempt of which has passed.
#[derive(Debug)]
pub struct BestOf {
    pub keep: Keep,
    passed: Mutex<HashSet<String>>,
}

impl BestOf {
    pub fn new(keep: Keep) -> Self {
        Self {
            keep,
            passed: Mutex::default(),
        }
    }

    /// Notes that attempt `name` (`TASK/attempt-K`) passed.
    pub fn passed(&self, name: &str) {
        if let Some((task, _)) = attempt_of(name) {
            self.lock().insert(task.to_string());
        }
    }

    /// Why attempt `name` need not start: under `first-pass`, an attempt
    /// of its task has passed.
    pub fn needless(&self, name: &str) -> Option<String> {
        let (task, k) = attempt_of(name)?;
        (self.keep == Keep::FirstPass && self.lock().contains(task)).then(|| {
            format!("not run: an earlier attempt of {task} passed (--keep first-pass; this was attempt {k})")
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.passed.lock().unwrap_or_else(|e| e.into_inner())
    }
}
