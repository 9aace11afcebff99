//! Running a task's hooks around its tool calls: its own `hooks:` and those
//! of every policy layer (the data and matching are `runner_policy`'s).
//!
//! A hook is a bash command run in the workspace copy with the commands'
//! scrubbed environment, sandbox and limits, the call as one JSON object
//! on stdin and `RUNNER_HOOK` naming its kind. `pre_tool` fails closed:
//! only exit 0 lets the call run; exit 2 denies it with the hook's stderr
//! as the reason, and any other exit, a timeout or a signal denies it
//! too. `post_tool` adds its stdout (exit 0) or stderr (exit 2) to the
//! result; anything else fails the task. Every run is recorded on its
//! call.

use std::sync::Mutex;

use serde_json::{Value, json};

use crate::process::{CommandSpec, run_shell};
use crate::tools::ToolContext;
use runner_output::{HookEffect, HookKind, HookRun};
use runner_policy::{Decision, Hook, Hooks};

/// Bytes kept of a hook's stdout and of its stderr.
const HOOK_OUTPUT_BYTES: usize = 64 * 1024;

/// The hooks a task's calls run through.
#[derive(Debug, Default)]
pub struct TaskHooks {
    task: String,
    hooks: Hooks,
    /// Why a `post_tool` hook failed the task.
    failure: Mutex<Option<String>>,
}

/// What the call looked like to the hook.
pub struct CallView<'a> {
    pub tool: &'a str,
    pub args: &'a Value,
    pub decision: &'a Decision,
}

impl TaskHooks {
    pub fn new(task: &str, hooks: Hooks) -> Self {
        Self {
            task: task.to_string(),
            hooks,
            failure: Mutex::new(None),
        }
    }

    /// Why a `post_tool` hook failed the task, once one did.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn input(&self, call: &CallView<'_>, after: Option<(&str, &str)>) -> Vec<u8> {
        let mut v = json!({
            "task": self.task,
            "tool": call.tool,
            "args": call.args,
            "signatures": call.decision.signatures.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "decision": call.decision,
        });
        if let Some((status, content)) = after {
            v["status"] = json!(status);
            v["content"] = json!(content);
        }
        serde_json::to_vec(&v).unwrap_or_default()
    }

    /// Runs the matching `pre_tool` hooks in order: their runs, and the
    /// reason to deny the call when one did (the rest then do not run).
    pub async fn pre_tool(
        &self,
        ctx: &ToolContext,
        call: &CallView<'_>,
    ) -> (Vec<HookRun>, Option<(&Hook, String)>) {
        let mut runs = Vec::new();
        for hook in Self::matching(&self.hooks.pre_tool, call) {
            let mut run = run_hook(HookKind::PreTool, hook, ctx, self.input(call, None)).await;
            let denial = match (run.exit_code, run.timed_out) {
                (Some(0), false) => None,
                (Some(2), false) => {
                    run.effect = HookEffect::Denied;
                    let why = run.stderr.trim();
                    Some(if why.is_empty() {
                        format!("denied by the pre_tool hook `{}`", hook.run)
                    } else {
                        format!("denied by the pre_tool hook `{}`: {why}", hook.run)
                    })
                }
                _ => {
                    run.effect = HookEffect::FailedClosed;
                    Some(format!(
                        "denied: the pre_tool hook `{}` {} (a failing hook denies the call)",
                        hook.run,
                        how_it_failed(&run)
                    ))
                }
            };
            runs.push(run);
            if let Some(reason) = denial {
                return (runs, Some((hook, reason)));
            }
        }
        (runs, None)
    }

    /// Runs the matching `post_tool` hooks: their runs, and what they add
    /// to the result. A failing one records the task's failure.
    pub async fn post_tool(
        &self,
        ctx: &ToolContext,
        call: &CallView<'_>,
        status: &str,
        content: &str,
    ) -> (Vec<HookRun>, Vec<String>) {
        let mut runs = Vec::new();
        let mut added = Vec::new();
        for hook in Self::matching(&self.hooks.post_tool, call) {
            let input = self.input(call, Some((status, content)));
            let mut run = run_hook(HookKind::PostTool, hook, ctx, input).await;
            match (run.exit_code, run.timed_out) {
                (Some(0), false) if !run.stdout.trim().is_empty() => {
                    added.push(format!(
                        "[post_tool hook `{}`]\n{}",
                        hook.run,
                        run.stdout.trim_end()
                    ));
                }
                (Some(0), false) => {}
                (Some(2), false) => {
                    added.push(format!(
                        "[post_tool hook `{}`]\n{}",
                        hook.run,
                        run.stderr.trim_end()
                    ));
                }
                _ => {
                    run.effect = HookEffect::FailedTask;
                    let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
                    f.get_or_insert_with(|| {
                        format!("the post_tool hook `{}` {}", hook.run, how_it_failed(&run))
                    });
                }
            }
            runs.push(run);
        }
        (runs, added)
    }

    /// Whether any `pre_tool` hook is set (none: no work at all).
    pub fn has_pre(&self) -> bool {
        !self.hooks.pre_tool.is_empty()
    }

    /// Whether any `post_tool` hook is set.
    pub fn has_post(&self) -> bool {
        !self.hooks.post_tool.is_empty()
    }

    fn matching<'h>(hooks: &'h [Hook], call: &CallView<'_>) -> Vec<&'h Hook> {
        hooks
            .iter()
            .filter(|h| h.matches(&call.decision.signatures))
            .collect()
    }
}

fn how_it_failed(run: &HookRun) -> String {
    match (run.exit_code, run.timed_out) {
        (_, true) => "ran out of time".into(),
        (Some(code), _) => format!("exited {code}"),
        (None, _) if run.stderr.starts_with("could not start") => run.stderr.clone(),
        (None, _) => "was killed".into(),
    }
}

async fn run_hook(kind: HookKind, hook: &Hook, ctx: &ToolContext, input: Vec<u8>) -> HookRun {
    let name = match kind {
        HookKind::PreTool => "pre_tool",
        HookKind::PostTool => "post_tool",
    };
    let mut env: Vec<(String, String)> = match &ctx.env {
        Some(e) => e.clone(),
        None => std::env::vars().collect(),
    };
    env.retain(|(k, _)| k != "RUNNER_HOOK");
    env.push(("RUNNER_HOOK".into(), name.into()));
    let result = run_shell(CommandSpec {
        script: &hook.run,
        argv: &[],
        cwd: ctx.workspace.root(),
        env: Some(&env),
        timeout: hook.timeout,
        max_output_bytes: HOOK_OUTPUT_BYTES,
        confine: ctx.confine.clone(),
        stdin: Some(input),
    })
    .await;
    let effect = match kind {
        HookKind::PreTool => HookEffect::Allowed,
        HookKind::PostTool => HookEffect::Added,
    };
    match result {
        Ok(r) => HookRun {
            kind,
            run: hook.run.clone(),
            source: hook.source.clone(),
            exit_code: r.exit_code,
            timed_out: r.timed_out,
            duration_ms: r.duration.as_millis() as u64,
            stdout: crate::contain::redact(&r.stdout.text).into_owned(),
            stderr: crate::contain::redact(&r.stderr.text).into_owned(),
            effect,
        },
        Err(e) => HookRun {
            kind,
            run: hook.run.clone(),
            source: hook.source.clone(),
            exit_code: None,
            timed_out: false,
            duration_ms: 0,
            stdout: String::new(),
            stderr: format!("could not start: {e}"),
            effect,
        },
    }
}
