//! The last phase: the task's transcript, diff and changes, from its
//! progress, what the other phases handed over and the recorder's records
//! (a resumed task's are the earlier runs' and this one's).

use std::collections::BTreeMap;

use super::attempts::Answer;
use super::options::TaskResult;
use super::prepare::Setup;
use super::progress::{Prior, Progress};
use super::scene::Scene;
use super::violations::verdict;
use crate::report::transcript::{ChangedFile, Counts, TRANSCRIPT_VERSION};
use crate::report::{Outcome, Transcript, TranscriptRecorder};
use crate::workspace::{FileChange, render_bounded_diff};

/// What the phases that held the workspace hand to the transcript.
pub(super) struct Worked {
    pub outcome: Outcome,
    pub answer: Answer,
    /// None when the task never got a workspace.
    pub setup: Option<Setup>,
    /// The changes the task leaves (none the policy denies).
    pub changes: Vec<FileChange>,
    /// How each MCP server was sandboxed.
    pub mcp_sandbox: BTreeMap<String, String>,
    /// What the model's server taught the runner (see `provider::learn`).
    pub server_adaptations: Vec<String>,
    /// The vendor batch the task was waiting on when it ended.
    pub pending_batch: Option<runner_output::PendingBatch>,
}

impl Worked {
    /// A task that ended before its attempts (or never started).
    pub fn early(outcome: Outcome, setup: Option<Setup>) -> Self {
        Self {
            outcome,
            answer: Answer::default(),
            setup,
            changes: Vec::new(),
            mcp_sandbox: BTreeMap::new(),
            server_adaptations: Vec::new(),
            pending_batch: None,
        }
    }
}

/// The transcript, the diff and the changes.
pub(super) fn finish(
    scene: &Scene,
    progress: Progress,
    worked: Worked,
    recorder: &TranscriptRecorder,
    prior: Option<Prior>,
) -> TaskResult {
    let task = scene.task;
    let (mut turns, mut tool_calls) = recorder.take();
    let mut compactions = recorder.take_compactions();
    let mut switches = recorder.take_switches();
    let mut connections = recorder.take_connections();
    let (resumes, earlier_ms) = match &prior {
        Some(Prior { transcript: p, .. }) => {
            turns.splice(0..0, p.turns.iter().cloned());
            tool_calls.splice(0..0, p.tool_calls.iter().cloned());
            compactions.splice(0..0, p.compactions.iter().cloned());
            switches.splice(0..0, p.model_switches.iter().cloned());
            connections.splice(0..0, p.connections.iter().cloned());
            (p.resumes + 1, p.duration_ms)
        }
        None => (0, 0),
    };
    let mut counts = Counts::from(progress.attempts, &turns, &tool_calls);
    counts.denied_connections = connections.iter().filter(|c| !c.allowed).count() as u32;
    let mut outcome = verdict(worked.outcome, task, &counts, &progress.violations);
    // A decoy written into a file is on its way out with the diff.
    if let Some(c) = &scene.canaries {
        for ch in &worked.changes {
            let Some(new) = &ch.new else { continue };
            let link = new
                .symlink
                .as_ref()
                .map(|l| l.to_string_lossy().into_owned());
            let _ = c.moving(&new.bytes, || format!("the diff ({})", ch.path))
                || c.moving(link.unwrap_or_default().as_bytes(), || {
                    format!("the diff ({}, a link)", ch.path)
                });
        }
        if let Some(s) = c.tripped()
            && outcome.tripwire != Some(runner_output::Tripwire::Canary)
        {
            outcome = Outcome {
                status: crate::report::OutcomeStatus::Failed,
                reason: crate::canary::reason(&s),
                error_class: None,
                tripwire: Some(runner_output::Tripwire::Canary),
            };
        }
    }
    let (policy, sandbox, credentials_removed, diff_prefix, workspace_copy) = match worked.setup {
        Some(s) => (
            s.policy,
            s.sandbox_note,
            s.credentials_removed,
            s.diff_prefix,
            Some(s.workspace_copy),
        ),
        None => (
            scene.policy.clone(),
            String::new(),
            Vec::new(),
            String::new(),
            None,
        ),
    };
    let (diff, diff_cut) =
        render_bounded_diff(&worked.changes, &diff_prefix, scene.opts.max_diff_bytes);
    let transcript = Transcript {
        trace: (scene.opts.telemetry.as_ref()).map(|t| t.task_ids(&task.name)),
        sandbox,
        workspace_copy,
        mcp_sandbox: worked.mcp_sandbox,
        credentials_removed,
        backstops: policy.backstops(),
        canaries: scene.canaries.as_ref().map(|c| c.record()),
        server_adaptations: worked.server_adaptations,
        pending_batch: worked.pending_batch,
        warnings: progress.warnings,
        started_at: progress.started_at,
        duration_ms: earlier_ms + scene.epoch.elapsed().as_millis() as u64,
        resumes,
        policies: policy.layers().iter().map(|l| l.source.clone()).collect(),
        system_prompt: progress.system,
        messages: progress.conversation.into_log(),
        compactions,
        model_switches: switches,
        connections,
        turns,
        tool_calls,
        checks: progress.checks,
        usage: progress.usage,
        counts,
        changes: (worked.changes.iter())
            .map(|c| ChangedFile {
                path: c.path.clone(),
                change: c.kind,
            })
            .collect(),
        violations: progress.violations,
        diff_cut,
        final_answer: worked.answer.text,
        output: worked.answer.output,
        outcome,
        ..blank(task)
    };
    TaskResult {
        transcript,
        diff,
        changes: worked.changes,
        workspace: task.workspace.clone(),
        kept: false,
        policy: Some(policy),
        diff_prefix,
    }
}

/// A transcript of `task` with what comes from the task alone (its name,
/// file, model, workspace, mode, parameters) and nothing done: what the
/// finished transcript and the journal's start fill in.
pub(super) fn blank(task: &crate::task::Task) -> Transcript {
    Transcript {
        version: TRANSCRIPT_VERSION,
        task: task.name.clone(),
        task_file: task.file.display().to_string(),
        model: task.model.to_string(),
        workspace: task.workspace.display().to_string(),
        workspace_copy: None,
        mode: task.mode,
        trace: None,
        matrix: task.matrix.clone(),
        parameters: task.params.clone(),
        sandbox: String::new(),
        mcp_sandbox: Default::default(),
        credentials_removed: Vec::new(),
        backstops: Default::default(),
        canaries: None,
        server_adaptations: Vec::new(),
        pending_batch: None,
        repository: task.repository.clone(),
        warnings: Vec::new(),
        resumes: 0,
        started_at: String::new(),
        duration_ms: 0,
        policies: Vec::new(),
        system_prompt: String::new(),
        messages: Vec::new(),
        turns: Vec::new(),
        tool_calls: Vec::new(),
        checks: Vec::new(),
        model_switches: Vec::new(),
        compactions: Vec::new(),
        usage: Default::default(),
        counts: Counts::default(),
        connections: Vec::new(),
        changes: Vec::new(),
        violations: Vec::new(),
        diff_cut: None,
        final_answer: String::new(),
        output: None,
        outcome: Outcome {
            status: crate::report::OutcomeStatus::Cancelled,
            reason: String::new(),
            error_class: None,
            tripwire: None,
        },
    }
}
