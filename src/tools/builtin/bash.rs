//! bash: run a shell command in the workspace.

mod plain;

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::process::{CommandSpec, run_shell};
use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::Signature;
use runner_policy::shell;

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
/// Bytes of each stream kept in memory; the rest is counted and summarised.
const MAX_STREAM_BYTES: usize = 1024 * 1024;

pub struct Bash;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The bash script to run.
    pub command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Folder to run in, relative to the workspace (default: the root).
    #[serde(default)]
    pub working_directory: Option<String>,
    /// A few words on what the command does, for the log.
    #[serde(default)]
    pub description: Option<String>,
}

/// True when every command of the script only reads (so calls may run in
/// parallel): known read-only programs and no redirection that writes.
pub fn bash_is_read_only(command: &str) -> bool {
    shell::analyze(command).is_read_only()
}

impl Tool for Bash {
    type Args = Args;

    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> Description {
        Description::new("Runs a bash script in the workspace and returns its exit code, stdout and stderr.")
            .long("The command runs non-interactively with stdin closed, in its own process group, with a timeout (default 2 minutes, at most 10). Output beyond 1 MB per stream is cut in the middle.")
            .note("Prefer read_file, grep, glob and ls over cat, grep, find and ls: they are faster and their results are structured")
            .note("Every command in the script is checked against the policy, including those in pipes, subshells and $(...)")
            .note("Background jobs are stopped when the command ends")
            .example("Run the tests", json!({"command": "cargo test --quiet", "description": "Run tests"}))
            .example("In a sub-folder with a timeout", json!({"command": "npm test", "working_directory": "web", "timeout": 300000}))
            .important("Do not use interactive commands (editors, pagers, prompts): nobody is there to answer")
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn validate(&self, args: &Args, ctx: &ToolContext) -> Result<(), ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::validation("command is empty"));
        }
        if let Some(t) = args.timeout
            && !(1..=MAX_TIMEOUT_MS).contains(&t)
        {
            return Err(ToolError::validation(format!(
                "timeout must be between 1 and {MAX_TIMEOUT_MS} milliseconds, got {t}"
            )));
        }
        if let Some(wd) = &args.working_directory {
            let r = ctx.resolve(wd)?;
            if !r.real.is_dir() {
                return Err(ToolError::validation(format!(
                    "working_directory {wd} is not a folder"
                )));
            }
        }
        Ok(())
    }

    fn is_concurrency_safe(&self, args: &Args) -> bool {
        bash_is_read_only(&args.command)
    }

    fn signatures(&self, args: &Args, ctx: &ToolContext) -> Vec<Signature> {
        let cwd = args.working_directory.as_deref().unwrap_or(".");
        shell::analyze(&args.command).signatures(&ctx.workspace, cwd)
    }

    async fn call(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let cwd = match &args.working_directory {
            Some(wd) => ctx.resolve(wd)?.real,
            None => ctx.workspace.root().to_path_buf(),
        };
        let timeout = Duration::from_millis(args.timeout.unwrap_or(DEFAULT_TIMEOUT_MS));
        let spec = |argv, env| CommandSpec {
            argv,
            script: &args.command,
            cwd: &cwd,
            env,
            timeout,
            max_output_bytes: MAX_STREAM_BYTES,
            confine: ctx.confine.clone(),
            stdin: None,
        };
        // A plain command starts without bash in front of it; where it
        // cannot start (a wall refused the exec: nothing ran), bash runs
        // it, and says what happened as it would have.
        let plain =
            (ctx.env.as_deref()).and_then(|env| plain::plain_command(&args.command, env, &cwd));
        let direct = match &plain {
            Some(p) => run_shell(spec(&p.argv, Some(&p.env))).await.ok(),
            None => None,
        };
        let r = match direct {
            Some(r) => r,
            None => run_shell(spec(&[], ctx.env.as_deref()))
                .await
                .map_err(|e| ToolError::execution(format!("could not start bash: {e}")))?,
        };
        let mut content = String::new();
        let status = if r.timed_out {
            format!(
                "timed out after {} ms (process group killed)",
                timeout.as_millis()
            )
        } else if let Some(code) = r.exit_code {
            format!("exit code {code}")
        } else {
            format!("killed by signal {}", r.signal.unwrap_or(0))
        };
        content.push_str(&format!("{status}\n"));
        for (name, s) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
            if s.total_bytes == 0 {
                continue;
            }
            content.push_str(&format!("--- {name}"));
            if s.truncated {
                content.push_str(&format!(" ({} bytes, middle cut)", s.total_bytes));
            }
            content.push_str(" ---\n");
            content.push_str(&s.text);
            if !s.text.ends_with('\n') {
                content.push('\n');
            }
        }
        // What the sandbox's supervisor refused to start: the model hears
        // which rule, and the record counts it as a denial.
        for refusal in &r.exec_refusals {
            content.push_str(&format!("--- refused by the sandbox: {refusal} ---\n"));
        }
        for call in &r.refused_calls {
            content.push_str(&format!("--- refused by the sandbox: {call} ---\n"));
        }
        let mut meta = json!({
            "exit_code": r.exit_code, "signal": r.signal, "timed_out": r.timed_out,
            "stdout_bytes": r.stdout.total_bytes, "stderr_bytes": r.stderr.total_bytes,
            "duration_ms": r.duration.as_millis() as u64,
        });
        if !r.exec_refusals.is_empty() {
            meta["sandbox_refusals"] = json!(r.exec_refusals);
        }
        if !r.refused_calls.is_empty() {
            meta["refused_calls"] = json!(r.refused_calls);
        }
        let label = args.description.as_deref().unwrap_or(&args.command);
        let label: String = label.chars().take(80).collect();
        if r.timed_out {
            return Err(ToolError::timeout(content).with_metadata(meta));
        }
        if r.exit_code != Some(0) {
            return Err(ToolError::execution(content).with_metadata(meta));
        }
        Ok(ToolOutput::new(content, format!("$ {label} ({status})")).with_metadata(meta))
    }
}
