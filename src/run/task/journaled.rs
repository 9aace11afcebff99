//! The task's journal (see [`crate::run::journal`]), begun once the
//! workspace is prepared: what it starts from is what the earlier runs
//! did (a resumed task's) and the conversation as this run starts it.

use super::finish::blank;
use super::prepare::Ready;
use super::progress::{Prior, Progress};
use super::scene::Scene;
use crate::report::transcript::Counts;
use crate::report::{Transcript, TranscriptRecorder};
use crate::run::journal::{Begin, TaskJournal};

/// Begins the task's journal in its output folder.
pub(super) fn begin<'a>(
    scene: &Scene<'_>,
    ready: &'a Ready<'_>,
    progress: &Progress,
    prior: Option<&'a Prior>,
    recorder: &'a TranscriptRecorder,
) -> Option<TaskJournal<'a>> {
    TaskJournal::start(Begin {
        dir: scene.task_out.clone(),
        base: base(scene, progress, prior),
        diff: prior.map_or("", |p| p.diff.as_str()),
        recorder,
        differ: ready.workspace.iso.differ(),
        registry: &ready.registry,
        diff_prefix: ready.setup.diff_prefix.clone(),
        epoch: scene.epoch,
    })
}

/// What the task starts this run from, as a transcript: the earlier runs'
/// records (none for a new task) with the progress as it stands. Only
/// what `--resume` reads of it matters; the rest the finished transcript
/// takes from the task again.
fn base(scene: &Scene<'_>, progress: &Progress, prior: Option<&Prior>) -> Transcript {
    let earlier = prior.map(|p| &*p.transcript);
    Transcript {
        warnings: progress.warnings.clone(),
        // The run that writes this journal is one more resume.
        resumes: earlier.map_or(0, |p| p.resumes + 1),
        started_at: progress.started_at.clone(),
        duration_ms: earlier.map_or(0, |p| p.duration_ms),
        system_prompt: progress.system.clone(),
        messages: progress.conversation.log().to_vec(),
        turns: list(earlier, |p| &p.turns),
        tool_calls: list(earlier, |p| &p.tool_calls),
        checks: progress.checks.clone(),
        model_switches: list(earlier, |p| &p.model_switches),
        compactions: list(earlier, |p| &p.compactions),
        usage: progress.usage,
        counts: Counts {
            attempts: progress.attempts,
            ..Counts::default()
        },
        connections: list(earlier, |p| &p.connections),
        violations: progress.violations.clone(),
        // Still to collect, until the task asks for it.
        pending_batch: earlier.and_then(|p| p.pending_batch.clone()),
        ..blank(scene.task)
    }
}

/// A list of the earlier runs' transcript, or none.
fn list<T: Clone>(earlier: Option<&Transcript>, f: impl Fn(&Transcript) -> &Vec<T>) -> Vec<T> {
    earlier.map(|p| f(p).clone()).unwrap_or_default()
}
