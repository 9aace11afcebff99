//! `runner exec PROMPT`: a one-off task from the command line, for what
//! `codex exec "…"` and `claude -p "…"` are used for.
//!
//! Its first phase writes the task it runs as a task file, `OUT/exec.yaml`
//! (the prompt, the model, the workspace `.`, the policy), and then runs
//! it as `runner run` would run that file: the same phases, the same
//! outputs (transcript, diff, JUnit, summary), the same exit statuses. So
//! `runner run OUT/exec.yaml` runs it again, and a task file with the same
//! fields gives the same transcript. Only stdout differs: the task's
//! answer (JSON under `--output-schema`), or the events with `--json`.
//!
//! The policy: `--policy FILE`s, else `.runner/policy.yaml` or
//! `policies/default.yaml` where there is one, else the built-in read-only
//! policy (the low-risk tools only: `read_file`, `grep`, `glob`, `ls`,
//! `probe`, `save_memory`; no edits, no commands), which `--allow RULE` widens. `--deny RULE` narrows
//! whichever holds.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::run_args::{ExecRun, RunArgs, parse_usd};
use super::{CliError, CliResult};

/// Where `runner exec` looks for a policy when none is given, in order.
pub const DEFAULT_POLICY_FILES: [&str; 2] = [".runner/policy.yaml", "policies/default.yaml"];

/// The options of `runner exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// What the agent is asked to do; `-` reads it from stdin, `@FILE`
    /// from a file.
    prompt: String,
    /// PROVIDER:MODEL (`openai:MODEL`, `anthropic:MODEL`, `gemini:MODEL`;
    /// `OPENAI_BASE_URL` for a local server); default: $RUNNER_MODEL.
    #[arg(long)]
    model: Option<String>,
    /// A policy file (repeatable; each a layer, the strictest decision
    /// wins). Default: .runner/policy.yaml or policies/default.yaml when
    /// there, else the built-in read-only policy.
    #[arg(long = "policy", value_name = "FILE")]
    policies: Vec<PathBuf>,
    /// Allow calls RULE matches (`Edit(src/**)`, `Bash(cargo test:*)`) on
    /// top of the built-in read-only policy. Repeatable.
    #[arg(long = "allow", value_name = "RULE")]
    allow: Vec<String>,
    /// Deny calls RULE matches, whatever the policy allows. Repeatable.
    #[arg(long = "deny", value_name = "RULE")]
    deny: Vec<String>,
    /// Most model turns (default 20).
    #[arg(long, value_name = "N")]
    max_turns: Option<u32>,
    /// Stop the agent once it has spent this many US dollars (the model's
    /// price must be known).
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    max_cost: Option<f64>,
    /// A JSON Schema the answer must be valid against; stdout then gets
    /// the answer as JSON.
    #[arg(long, value_name = "FILE")]
    output_schema: Option<PathBuf>,
    /// Output folder (default runner-out).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Apply the changes to the working tree when the task passes.
    #[arg(long)]
    apply: bool,
    /// Reuse an --out folder holding an earlier run's other tasks,
    /// removing their folders (the default folder holds the last run).
    #[arg(long)]
    force_out: bool,
    /// Every event as a JSON line on stdout (`runner schema events`), in
    /// place of the answer.
    #[arg(long)]
    json: bool,
    /// Only the answer: no progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
    /// For a GitHub Actions step that ends by `exec`-ing the runner: the
    /// exit code and the outputs (`last-message`, `structured-output` ...)
    /// appended to FILE (`$GITHUB_OUTPUT`), and exit 0.
    #[arg(long, value_name = "FILE")]
    github_output: Option<PathBuf>,
    /// How each task's copy of its workspace is made: `auto` mounts an
    /// overlay of the original where the runner may (as root; nothing is
    /// copied, changes are read from the overlay's upper folder), else
    /// copies the files; `overlay` fails a task that cannot have one;
    /// `copy` always copies.
    #[arg(long, value_enum, value_name = "MODE", default_value = "auto")]
    workspace_mode: crate::workspace::WorkspaceMode,
}

impl ExecArgs {
    /// How the task's workspace is made (`--workspace-mode`).
    pub fn workspace_mode(&self) -> crate::workspace::WorkspaceMode {
        self.workspace_mode
    }

    /// Where `--github-output` writes, and the run's output folder.
    pub fn github_output(&self) -> Option<(PathBuf, PathBuf)> {
        let out = self
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("runner-out"));
        self.github_output.clone().map(|file| (file, out))
    }
}

/// The prompt `arg` gives: itself, stdin's (`-`) or a file's (`@FILE`).
fn prompt_text(arg: &str) -> Result<String, CliError> {
    let text = if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| CliError::Invalid(format!("reading the prompt from stdin: {e}")))?;
        s
    } else if let Some(file) = arg.strip_prefix('@') {
        std::fs::read_to_string(file)
            .map_err(|e| CliError::Invalid(format!("the prompt file {file}: {e}")))?
    } else {
        arg.to_string()
    };
    if text.trim().is_empty() {
        return Err(CliError::Invalid(
            "the prompt is empty: runner exec \"what to do\" (or - for stdin, @FILE for a file)"
                .into(),
        ));
    }
    Ok(text)
}

/// `path` from the current folder `cwd`.
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// The task file `runner exec` runs (see the module's doc).
fn task_file(args: &ExecArgs, prompt: &str, model: &str, cwd: &Path, files: bool) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("a string serialises");
    let list = |rules: &[String]| rules.iter().map(|r| q(r)).collect::<Vec<_>>().join(", ");
    let mut y =
        String::from("# Written by `runner exec`: the task it ran (`runner run` runs it again).\n");
    y.push_str(&format!(
        "name: exec\nprompt: {}\nmodel: {}\nworkspace: {}\n",
        q(prompt),
        q(model),
        q(&cwd.display().to_string())
    ));
    if let Some(n) = args.max_turns {
        y.push_str(&format!("max_turns: {n}\n"));
    }
    if let Some(c) = args.max_cost {
        y.push_str(&format!("max_cost: {c}\n"));
    }
    if let Some(s) = &args.output_schema {
        y.push_str(&format!(
            "output_schema: {}\n",
            q(&absolute(cwd, s).display().to_string())
        ));
    }
    // With policy files, this layer only narrows them; without, it is the
    // built-in read-only policy and what --allow adds.
    y.push_str(if files {
        "policy:\n  default: allow\n  rules:\n"
    } else {
        "policy:\n  default: deny\n  rules:\n"
    });
    if !args.deny.is_empty() {
        y.push_str(&format!("    - deny: [{}]\n", list(&args.deny)));
    }
    if !args.allow.is_empty() {
        y.push_str(&format!("    - allow: [{}]\n", list(&args.allow)));
    }
    if args.deny.is_empty() && args.allow.is_empty() {
        y = y.replace("  rules:\n", "  rules: []\n");
    }
    y
}

/// Runs the prompt (see the module's doc).
pub async fn exec(args: ExecArgs) -> CliResult {
    let prompt = prompt_text(&args.prompt)?;
    let model = args
        .model
        .clone()
        .or_else(|| std::env::var("RUNNER_MODEL").ok())
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| {
            CliError::Invalid(
                "no model: give --model PROVIDER:MODEL (openai:MODEL, anthropic:MODEL or gemini:MODEL), or set RUNNER_MODEL".into(),
            )
        })?;
    let spec = crate::task::ModelSpec::parse(&model)
        .map_err(|e| CliError::Invalid(format!("--model {model}: {e}")))?;
    if spec.is_scripted() {
        return Err(CliError::Invalid(
            "--model scripted: the scripted model plays a task file's `script:`, and runner exec has none; run a task file with `runner run`, or give a real model".into(),
        ));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::Invalid(format!("the current folder: {e}")))?;
    let policies: Vec<PathBuf> = if args.policies.is_empty() {
        (DEFAULT_POLICY_FILES.iter().map(|f| cwd.join(f)))
            .find(|p| p.is_file())
            .into_iter()
            .collect()
    } else {
        args.policies.iter().map(|p| absolute(&cwd, p)).collect()
    };
    if let (Some(first), false) = (policies.first(), args.allow.is_empty()) {
        return Err(CliError::Invalid(format!(
            "--allow widens the built-in read-only policy only; under {} (every layer must allow a call) add the rule to the file",
            first.display()
        )));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runner-out"));
    std::fs::create_dir_all(&out).map_err(|e| {
        CliError::Invalid(format!(
            "cannot create output folder {}: {e}",
            out.display()
        ))
    })?;
    let task = out.join("exec.yaml");
    let text = task_file(&args, &prompt, &model, &cwd, !policies.is_empty());
    crate::workspace::durable_write(&task, text.as_bytes())
        .map_err(|e| CliError::Invalid(format!("writing {}: {e}", task.display())))?;
    let run = RunArgs::for_exec(
        task,
        ExecRun {
            out: args.out.clone(),
            policies,
            apply: args.apply,
            quiet: args.quiet,
            json: args.json,
            force_out: args.force_out,
        },
    );
    super::run::run(run).await
}
