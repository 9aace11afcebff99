//! One task from start to finish.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::checks::{feedback, run_checks};
use super::prompt::system_prompt;
use crate::contain::CommandSetup;
use crate::engine::{AgentEnv, AgentLimits, AgentStop, Event, ToolEnv, run_agent};
use crate::mcp::McpServers;
use crate::provider::config::resolve;
use crate::provider::{
    Message, Provider, ProviderConfig, ProviderSetupError, ScriptedProvider, Usage, http_provider,
};
use crate::report::progress::{Fanout, RunReporter, TaskEvents};
use crate::report::transcript::{ChangedFile, Counts, TRANSCRIPT_VERSION};
use crate::report::{CheckRecord, Outcome, OutcomeStatus, Transcript, TranscriptRecorder};
use crate::task::{Mode, Task};
use crate::tools::{Registry, ToolContext};
use crate::workspace::{FileChange, IsolatedWorkspace, Workspace, render_git_diff};
use runner_policy::{Policy, PolicySet};

/// Options shared by every task of a run.
#[derive(Clone)]
pub struct RunOptions {
    pub out_dir: PathBuf,
    /// `--policy` layers, added to each task's policy.
    pub extra_policies: Vec<Policy>,
    /// Told about every task and event (progress lines, bars, JSON).
    pub reporter: Arc<dyn RunReporter>,
    pub max_parallel_calls: usize,
    /// Fired by SIGINT/SIGTERM: tasks stop and record `cancelled`.
    pub cancel: super::Cancel,
}

/// What a task produced.
pub struct TaskResult {
    pub transcript: Transcript,
    pub diff: String,
    pub changes: Vec<FileChange>,
    /// The original workspace, for `--apply`.
    pub workspace: PathBuf,
}

impl TaskResult {
    pub fn passed(&self) -> bool {
        self.transcript.outcome.status == OutcomeStatus::Passed
    }
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The configuration of a task's HTTP model from the environment and its
/// `model_options` (`None` for `scripted`). The error names what to set.
pub fn provider_config(task: &Task) -> Result<Option<ProviderConfig>, ProviderSetupError> {
    if task.model.is_scripted() {
        return Ok(None);
    }
    resolve(&task.model, &task.model_options, |k| std::env::var(k).ok()).map(Some)
}

fn make_provider(task: &Task) -> Result<Box<dyn Provider>, ProviderSetupError> {
    match provider_config(task)? {
        None => Ok(Box::new(ScriptedProvider::new(std::sync::Arc::clone(
            &task.script,
        )))),
        Some(cfg) => http_provider(cfg),
    }
}

/// The tools a task gets: its `tools:` list, read-only ones in plan mode.
pub fn task_registry(task: &Task, base: &Registry) -> Registry {
    let mut r = base.clone();
    if let Some(names) = &task.tools {
        r.retain_named(names);
    }
    if task.mode == Mode::Plan {
        r.read_only()
    } else {
        r
    }
}

/// Why a task could not start.
enum SetupError {
    Failure(String),
    Cancelled(String),
}
use SetupError::{Cancelled, Failure};

/// Runs one task. Never fails: problems become the outcome.
pub async fn run_task(task: &Task, opts: &RunOptions) -> TaskResult {
    let epoch = Instant::now();
    let started_at = now_rfc3339();
    let task_out = opts.out_dir.join(&task.name);
    let recorder = TranscriptRecorder::default();
    opts.reporter.task_started(&task.name);
    let progress = TaskEvents {
        task: &task.name,
        reporter: opts.reporter.as_ref(),
    };
    let sink = Fanout(vec![&recorder, &progress]);
    let mut layers = vec![task.policy.clone()];
    layers.extend(opts.extra_policies.iter().cloned());
    let policy = Arc::new(PolicySet::new(layers));
    let mut registry = task_registry(task, &Registry::builtin());

    let mut messages = vec![Message::User {
        content: task.prompt.clone(),
    }];
    let mut checks: Vec<CheckRecord> = Vec::new();
    let mut usage = Usage::default();
    let mut final_answer = String::new();
    let mut attempts = 0;
    let mut system = String::new();
    let mut changes = Vec::new();
    let mut diff_prefix = String::new();
    let mut sandbox_note = String::new();
    let mut mcp_sandbox = std::collections::BTreeMap::new();
    let mut warnings: Vec<String> = Vec::new();

    // The provider first: a task that cannot reach its model should not
    // pay for a copy of the workspace.
    let setup = if let Some(why) = opts.cancel.reason() {
        Err(Cancelled(format!("cancelled before it started ({why})")))
    } else {
        make_provider(task).map_err(|e| Failure(e.to_string()))
    };
    let setup = setup.and_then(|provider| {
        let excludes: Vec<PathBuf> = opts.out_dir.canonicalize().into_iter().collect();
        let iso = IsolatedWorkspace::create(&task.workspace, &excludes).map_err(|e| {
            Failure(format!(
                "could not prepare the workspace copy of {}: {e}",
                task.workspace.display()
            ))
        })?;
        let ws = Workspace::new(iso.path()).map_err(|e| Failure(e.to_string()))?;
        diff_prefix = iso.diff_prefix();
        // Commands may write in the copy (and its `.git`) and the task's
        // temp folder, nowhere else (under the sandbox).
        let commands = CommandSetup::new(
            iso.path(),
            iso.git_dir().as_deref(),
            &task.env,
            &task.sandbox,
        )
        .map_err(|e| Failure(e.to_string()))?;
        sandbox_note = commands.sandbox_note;
        let mut ctx = ToolContext::new(ws)
            .with_spill_dir(task_out.join("tool-results"))
            .with_visibility(policy.clone());
        ctx.env = Some(commands.env);
        ctx.confine = commands.confine.map(Arc::new);
        Ok((
            provider,
            (iso, (commands.tmp, commands.registered)),
            Arc::new(ctx),
        ))
    });

    let outcome = match setup {
        Err(Failure(e)) => Outcome {
            status: OutcomeStatus::Error,
            reason: e,
        },
        Err(Cancelled(e)) => Outcome {
            status: OutcomeStatus::Cancelled,
            reason: e,
        },
        Ok((provider, (iso, _task_tmp), ctx)) => 'arm: {
            let mut mcp = match McpServers::start_into(
                &task.mcp_servers,
                task.mode == Mode::Plan,
                iso.path(),
                &task_out,
                &mut registry,
            )
            .await
            {
                Ok((servers, w)) => {
                    warnings.extend(w);
                    servers
                }
                Err(e) => {
                    break 'arm Outcome {
                        status: OutcomeStatus::Error,
                        reason: e.to_string(),
                    };
                }
            };
            system = system_prompt(task, &registry, iso.path());
            let env = AgentEnv {
                provider: provider.as_ref(),
                system: &system,
                tools: ToolEnv {
                    registry: &registry,
                    policy: &policy,
                    ctx: ctx.clone(),
                    sink: &sink,
                    epoch,
                },
            };
            let limits = AgentLimits {
                max_turns: task.max_turns,
                max_parallel: opts.max_parallel_calls,
                max_tokens_total: task.max_tokens_total,
            };
            // Dropping the agent on cancellation kills what it runs.
            let outcome = tokio::select! {
                o = attempts_loop(
                    task,
                    &env,
                    &limits,
                    &mut messages,
                    &mut usage,
                    &mut checks,
                    &mut final_answer,
                    &mut attempts,
                    epoch,
                    iso.path(),
                ) => o,
                why = opts.cancel.cancelled() => Outcome {
                    status: OutcomeStatus::Cancelled,
                    reason: format!("cancelled ({why})"),
                },
            };
            mcp_sandbox = mcp.sandbox_notes();
            mcp.shutdown().await;
            match iso.changes() {
                Ok(c) => {
                    changes = c;
                    outcome
                }
                Err(e) => Outcome {
                    status: OutcomeStatus::Error,
                    reason: format!("could not compare the workspace with the original: {e}"),
                },
            }
        }
    };
    let (turns, tool_calls) = recorder.take();
    let counts = Counts::from(attempts, &turns, &tool_calls);
    let outcome = if outcome.status == OutcomeStatus::Passed
        && task.fail_on_denial
        && counts.denied_calls > 0
    {
        Outcome {
            status: OutcomeStatus::Failed,
            reason: format!(
                "{} call(s) were denied and fail_on_denial is set",
                counts.denied_calls
            ),
        }
    } else {
        outcome
    };
    let diff = render_git_diff(&changes, &diff_prefix);
    let transcript = Transcript {
        version: TRANSCRIPT_VERSION,
        task: task.name.clone(),
        task_file: task.file.display().to_string(),
        model: task.model.to_string(),
        workspace: task.workspace.display().to_string(),
        mode: format!("{:?}", task.mode).to_lowercase(),
        parameters: task.params.clone(),
        sandbox: sandbox_note,
        mcp_sandbox,
        warnings,
        started_at,
        duration_ms: epoch.elapsed().as_millis() as u64,
        policies: policy.layers().iter().map(|l| l.source.clone()).collect(),
        system_prompt: system,
        messages,
        turns,
        tool_calls,
        checks,
        usage,
        counts,
        changes: changes
            .iter()
            .map(|c| ChangedFile {
                path: c.path.clone(),
                change: format!("{:?}", c.kind).to_lowercase(),
            })
            .collect(),
        final_answer,
        outcome,
    };
    opts.reporter.task_finished(&task.name, &transcript.outcome);
    TaskResult {
        transcript,
        diff,
        changes,
        workspace: task.workspace.clone(),
    }
}

#[allow(clippy::too_many_arguments)]
async fn attempts_loop(
    task: &Task,
    env: &AgentEnv<'_>,
    limits: &AgentLimits,
    messages: &mut Vec<Message>,
    usage: &mut Usage,
    checks: &mut Vec<CheckRecord>,
    final_answer: &mut String,
    attempts: &mut u32,
    epoch: Instant,
    workdir: &Path,
) -> Outcome {
    loop {
        *attempts += 1;
        let attempt = *attempts;
        env.tools.sink.emit(&Event::AttemptStarted { attempt });
        let remaining = task.timeout.saturating_sub(epoch.elapsed());
        let stop =
            match tokio::time::timeout(remaining, run_agent(env, messages, limits, usage)).await {
                Ok(s) => s,
                Err(_) => {
                    return Outcome {
                        status: OutcomeStatus::Failed,
                        reason: format!("timed out after {}", humanize(task.timeout)),
                    };
                }
            };
        match stop {
            AgentStop::Finished { text } => *final_answer = text,
            AgentStop::MaxTurns => {
                return Outcome {
                    status: OutcomeStatus::Failed,
                    reason: format!("ran out of turns (max_turns: {})", task.max_turns),
                };
            }
            AgentStop::TokenBudget => {
                return Outcome {
                    status: OutcomeStatus::Failed,
                    reason: "the token budget (max_tokens_total) is spent".into(),
                };
            }
            AgentStop::ProviderFailed(e) => {
                return Outcome {
                    status: OutcomeStatus::Error,
                    reason: format!("the model provider failed: {e}"),
                };
            }
        }
        if task.checks.is_empty() {
            return Outcome {
                status: OutcomeStatus::Passed,
                reason: "the agent finished".into(),
            };
        }
        let results = run_checks(
            &task.checks,
            workdir,
            env.tools.ctx.env.as_deref(),
            env.tools.ctx.confine.as_ref(),
            attempt,
        )
        .await;
        let failed: Vec<&CheckRecord> = results.iter().filter(|c| !c.passed).collect();
        let summary = if failed.is_empty() {
            None
        } else {
            Some((
                feedback(&failed),
                failed
                    .iter()
                    .map(|c| format!("`{}`", c.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            ))
        };
        checks.extend(results);
        match summary {
            None => {
                return Outcome {
                    status: OutcomeStatus::Passed,
                    reason: format!(
                        "the agent finished and {} check(s) passed",
                        task.checks.len()
                    ),
                };
            }
            Some((_, names)) if attempt > task.retries => {
                return Outcome {
                    status: OutcomeStatus::Failed,
                    reason: format!("check(s) failed: {names}"),
                };
            }
            Some((text, _)) => messages.push(Message::User { content: text }),
        }
        if epoch.elapsed() >= task.timeout {
            return Outcome {
                status: OutcomeStatus::Failed,
                reason: format!("timed out after {}", humanize(task.timeout)),
            };
        }
    }
}

fn humanize(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else if s > 0 {
        format!("{s}s")
    } else {
        format!("{}ms", d.as_millis())
    }
}
