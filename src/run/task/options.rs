//! What a run gives each of its tasks ([`RunOptions`], the run's budget)
//! and what each task gives back ([`TaskResult`]); the tools a task gets.

use std::path::PathBuf;
use std::sync::Arc;

use crate::report::progress::RunReporter;
use crate::report::{OutcomeStatus, Transcript};
use crate::task::{Mode, Task};
use crate::tools::Registry;
use crate::workspace::FileChange;
use runner_policy::Policy;

/// Options shared by every task of a run.
#[derive(Clone)]
pub struct RunOptions {
    pub out_dir: PathBuf,
    /// `--policy` layers, added to each task's policy.
    pub extra_policies: Vec<Policy>,
    /// `--shadow-policy` layers: the candidate every call is decided under
    /// too, unenforced (over a task's `shadow_policy:`).
    pub shadow_policies: Vec<Policy>,
    /// Told about every task and event (progress lines, bars, JSON).
    pub reporter: Arc<dyn RunReporter>,
    pub max_parallel_calls: usize,
    /// Fired by SIGINT/SIGTERM: tasks stop and record `cancelled`.
    pub cancel: crate::run::cancel::Cancel,
    /// `--max-cost`: what the whole run may spend.
    pub budget: Option<Arc<RunBudget>>,
    /// The run's telemetry, when it exports any: tasks run under their
    /// trace context and record their ids.
    pub telemetry: Option<Arc<crate::telemetry::Telemetry>>,
    /// `--resume`: `out_dir` holds an earlier run to go on from.
    pub resume: bool,
    /// `--batch`: the tasks' models are asked through the vendors' batch
    /// APIs; a batch may take this long (`--batch-timeout`).
    pub batch: Option<std::time::Duration>,
    /// `--max-failures` of a fleet run (`--repos`).
    pub fleet: Option<Arc<FailureBreaker>>,
    /// `--max-diff-bytes`: the bound of each task's `changes.diff`.
    pub max_diff_bytes: u64,
    /// `--attempts N`: best-of-N, and which attempt it keeps.
    pub best_of: Option<Arc<crate::run::BestOf>>,
    /// What the runs of each task run more than once have spent: a
    /// task's `max_cost` covers them together.
    pub task_costs: Arc<super::shared_cost::TaskCosts>,
}

/// `runner run --repos … --max-failures N`: once N repositories have a
/// task that did not pass, no new repository starts (the tasks of those
/// already started go on).
#[derive(Debug)]
pub struct FailureBreaker {
    max: usize,
    /// Repositories (their folders) started, and those that failed.
    seen: std::sync::Mutex<(
        std::collections::BTreeSet<String>,
        std::collections::BTreeSet<String>,
    )>,
}

impl FailureBreaker {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            seen: Default::default(),
        }
    }

    /// Whether a task of repository `folder` may start: yes when the
    /// repository already started, or fewer than the bound failed.
    /// Starting it marks the repository started.
    pub(super) fn may_start(&self, folder: &str) -> Result<(), usize> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if !seen.0.contains(folder) && seen.1.len() >= self.max {
            return Err(seen.1.len());
        }
        seen.0.insert(folder.to_string());
        Ok(())
    }

    /// A task of repository `folder` did not pass.
    pub(super) fn failed(&self, folder: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.1.insert(folder.to_string());
    }
}

/// `runner run --max-cost`: once the tasks that ran have spent it, the
/// tasks not yet started are skipped.
#[derive(Debug)]
pub struct RunBudget {
    /// USD.
    pub max: f64,
    spent: std::sync::Mutex<f64>,
}

impl RunBudget {
    pub fn new(max: f64) -> Self {
        Self {
            max,
            spent: std::sync::Mutex::new(0.0),
        }
    }

    /// What the finished tasks cost so far.
    pub fn spent(&self) -> f64 {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn add(&self, usd: f64) {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner()) += usd;
    }
}

/// What a task produced.
pub struct TaskResult {
    pub transcript: Transcript,
    pub diff: String,
    pub changes: Vec<FileChange>,
    /// The original workspace, for `--apply`.
    pub workspace: PathBuf,
    /// Kept as an earlier run ended it (`--resume`): its outputs stand,
    /// whether they were applied included.
    pub kept: bool,
    /// The policy the task ran under, which `--apply` and `--push` check
    /// its changes against again; none for a task that never started.
    pub policy: Option<std::sync::Arc<runner_policy::PolicySet>>,
    /// What the diff's paths start with (the workspace's folder in its
    /// repository): `--push` renders the whole diff again from `changes`
    /// where `changes.diff` was cut to `--max-diff-bytes`.
    pub diff_prefix: String,
}

impl TaskResult {
    /// The whole diff: `diff`, or where it was cut, rendered again from
    /// the changes.
    pub fn whole_diff(&self) -> std::borrow::Cow<'_, str> {
        match &self.transcript.diff_cut {
            Some(_) if !self.changes.is_empty() => std::borrow::Cow::Owned(
                crate::workspace::render_git_diff(&self.changes, &self.diff_prefix),
            ),
            _ => std::borrow::Cow::Borrowed(&self.diff),
        }
    }
}

impl TaskResult {
    pub fn passed(&self) -> bool {
        self.transcript.outcome.status == OutcomeStatus::Passed
    }
}

/// The tools a task gets: its `tools:` list, read-only ones in plan mode.
pub fn task_registry(task: &Task, base: &Registry) -> Registry {
    let mut r = base.clone();
    match &task.tools {
        Some(names) => r.retain_named(names),
        None => r.drop_named(crate::tools::builtin::OPT_IN),
    }
    // A task with profiles gets the tool that starts them.
    if let Some(agents) = &task.agents {
        let tool = crate::tools::builtin::TaskTool {
            profiles: agents
                .profiles
                .values()
                .map(|p| (p.name.clone(), p.description.clone()))
                .collect(),
        };
        let _ = r.register(crate::tools::typed(tool));
    }
    if task.mode == Mode::Plan {
        r.read_only()
    } else {
        r
    }
}
