//! The options of `runner run`, and how their values are read.

use std::path::PathBuf;

use crate::run::Shard;
use crate::task::ModelSpec;

/// The options of `runner run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Task files (paths or globs).
    #[arg(required_unless_present = "otel")]
    pub(super) tasks: Vec<String>,
    /// Output folder (default runner-out).
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
    /// A policy added to every task's policy; the strictest decision wins. Repeatable.
    #[arg(long = "policy")]
    pub(super) policies: Vec<PathBuf>,
    /// Override every task's model: PROVIDER:MODEL or scripted; a
    /// comma-separated list falls back to the next model when one fails.
    #[arg(long, value_parser = parse_models)]
    pub(super) model: Option<Models>,
    /// Run every task under each of these models (comma-separated), each
    /// run a task of its own (`TASK/VARIANT`); the summary and the report
    /// set them side by side. With --repeat, each model's N attempts.
    #[arg(long, value_name = "A,B,...", value_parser = super::matrix::parse_models, conflicts_with = "model")]
    pub(super) models: Option<super::matrix::ModelList>,
    /// Run every task under each of these values of a task parameter
    /// (`NAME=v1,v2`; repeatable: their product, and with --models), each
    /// run a task of its own, set side by side as --models does.
    #[arg(long = "params", value_name = "NAME=V1,V2,...", value_parser = super::matrix::parse_param_values)]
    pub(super) params_matrix: Vec<super::matrix::ParamValues>,
    /// Tasks run in parallel (default 1; every task under --batch).
    #[arg(long)]
    pub(super) jobs: Option<usize>,
    /// Run only shard K of N (stable by the set of task names, balanced
    /// by count).
    #[arg(long)]
    pub(super) shard: Option<Shard>,
    /// Apply each passing task's changes to its original workspace.
    #[arg(long)]
    pub(super) apply: bool,
    /// For a GitHub Actions step that ends by `exec`-ing the runner (so no
    /// shell holding the secrets stays beside it): append the exit code
    /// and the outputs' paths to FILE (`$GITHUB_OUTPUT`) as `exit-code`,
    /// `junit`, `report` and, for one task, `output`, and exit 0 so that a
    /// later step decides on the code.
    #[arg(long, value_name = "FILE")]
    pub(super) github_output: Option<PathBuf>,
    /// Cap the whole run's cost in US dollars: once the finished tasks
    /// have spent it, the tasks not yet started are skipped.
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub(super) max_cost: Option<f64>,
    /// Most bytes a task's changes.diff holds (default 10 MB): over it,
    /// large and binary files keep only their headers and a line saying
    /// what was left out; `--apply` applies the whole change all the same.
    #[arg(long, value_name = "BYTES", default_value_t = crate::workspace::DEFAULT_MAX_DIFF_BYTES)]
    pub(super) max_diff_bytes: u64,
    /// Print only the final line.
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// Print every turn.
    #[arg(long, short)]
    pub(super) verbose: bool,
    /// stdout: `text` (a final summary line) or `json` (every event as a JSON line).
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: OutputFormat,
    /// Set a task parameter (`{{NAME}}` in prompts and checks). Repeatable.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = crate::task::params::parse_param)]
    pub(super) params: Vec<(String, String)>,
    /// Send the run's traces and metrics over OpenTelemetry (OTLP) to
    /// ENDPOINT, or without one to where the `OTEL_EXPORTER_OTLP_*`
    /// variables say (a task file right after `--otel` is a task). Also on
    /// with a task's or policy's `telemetry:`, or those variables.
    #[arg(long, value_name = "ENDPOINT", num_args = 0..=1, default_missing_value = "")]
    pub(super) otel: Option<String>,
    /// Go on with the run in DIR (its output folder) that did not finish:
    /// tasks that ended are kept, tasks cancelled, timed out or stopped by
    /// their model go on from their transcripts, the others run.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub(super) resume: Option<PathBuf>,
    /// Ask the models through the vendors' batch APIs (half the price,
    /// answers within a day): the tasks' turns go in one batch per
    /// vendor, model and key. For single-turn work; a task with
    /// `batch: false` stays interactive.
    #[arg(long)]
    pub(super) batch: bool,
    /// How long a batch may take before its tasks fail (its id is kept
    /// for --resume); a task's timeout is its own plus this.
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = parse_batch_timeout, requires = "batch")]
    pub(super) batch_timeout: std::time::Duration,
    /// Run every task in every repository FILE lists (one a line: a git
    /// URL or a path, with an optional @REF); outputs in OUT/REPO/TASK.
    #[arg(long, value_name = "FILE", conflicts_with = "apply")]
    pub(super) repos: Option<PathBuf>,
    /// Where --repos keeps its clones (default: the user's cache folder,
    /// runner/repos); reused and fetched again on later runs.
    #[arg(long, value_name = "DIR", requires = "repos")]
    pub(super) repos_cache: Option<PathBuf>,
    /// With --repos: start no new repository once N have failed (the rest
    /// are skipped).
    #[arg(long, value_name = "N", requires = "repos")]
    pub(super) max_failures: Option<usize>,
    /// With --repos: push each passing repository's changes as one commit
    /// on BRANCH to its origin (an earlier one replaced with a lease).
    #[arg(long, value_name = "BRANCH", requires = "repos")]
    pub(super) push: Option<String>,
    /// The author of --push's commits.
    #[arg(long, value_name = "NAME <EMAIL>", requires = "push", default_value = crate::fleet::AUTHOR)]
    pub(super) author: String,
    /// The message of --push's commits (default: the tasks' names).
    #[arg(long, value_name = "TEXT", requires = "push")]
    pub(super) message: Option<String>,
    /// Files the tasks are about (a pre-commit hook's staged files): `{{files}}`
    /// in prompts and checks, and `Edit({{files}})` in policies. Takes every
    /// argument after it.
    #[arg(long, num_args = 0.., value_name = "FILE")]
    pub(super) files: Option<Vec<String>>,
    /// Run every task N times, each attempt in a copy of its own (outputs
    /// in OUT/TASK/attempt-K/): pass rates, pass@k and flaky tasks in the
    /// summary and JUnit.
    #[arg(long, value_name = "N")]
    pub(super) repeat: Option<u32>,
    /// Best-of-N: run every task as up to N attempts and keep one passing
    /// attempt (`--keep`), whose changes --apply applies and whose outcome
    /// is the task's; the others stay in OUT/TASK/attempt-K/.
    #[arg(long, value_name = "N", conflicts_with = "repeat")]
    pub(super) attempts: Option<u32>,
    /// Which passing attempt --attempts keeps: the first to pass (the
    /// later ones are not started), the smallest diff, or the cheapest.
    #[arg(long, value_enum, default_value = "first-pass", requires = "attempts")]
    pub(super) keep: crate::run::Keep,
    /// Reuse an output folder that holds an earlier run's other tasks,
    /// removing their folders (without it a folder given with --out is
    /// refused: its report would mix the two runs; the default folder
    /// holds the last run, and replaces it).
    #[arg(long)]
    pub(super) force_out: bool,
    /// How each task's copy of its workspace is made: `auto` mounts an
    /// overlay of the original where the runner may (as root; nothing is
    /// copied, changes are read from the overlay's upper folder), else
    /// copies the files; `overlay` fails a task that cannot have one;
    /// `copy` always copies.
    #[arg(long, value_enum, value_name = "MODE", default_value = "auto")]
    pub(super) workspace_mode: crate::workspace::WorkspaceMode,
    #[command(flatten)]
    pub(super) shadow: super::shadow::ShadowArgs,
    /// Which command the run is for (what its stdout gets).
    #[arg(skip)]
    pub(super) front: Front,
}

/// The command a run is for: `runner run` prints `N passed, M failed` on
/// stdout, `runner exec` the task's answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Front {
    #[default]
    Run,
    Exec,
}

/// `--model`'s value: a model, or a fallback chain.
#[derive(Debug, Clone)]
pub struct Models(pub(super) Vec<ModelSpec>);

fn parse_models(s: &str) -> Result<Models, crate::provider::ModelSpecError> {
    s.split(',')
        .map(|m| ModelSpec::parse(m.trim()))
        .collect::<Result<_, _>>()
        .map(Models)
}

/// A `--max-cost` that is not an amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an amount of US dollars above 0")]
pub struct UsdError(String);

fn parse_batch_timeout(s: &str) -> Result<std::time::Duration, crate::task::DurationError> {
    crate::task::parse_duration(s)
}

pub fn parse_usd(s: &str) -> Result<f64, UsdError> {
    match s.trim_start_matches('$').parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(UsdError(s.to_string())),
    }
}

/// What `runner run` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The final `N passed, M failed` line (progress goes to stderr).
    Text,
    /// Every event as a JSON line (`runner schema events`).
    Json,
}

impl RunArgs {
    /// The run's output folder: the one `--resume` goes on in, `--out`,
    /// or `runner-out`.
    pub(super) fn out_folder(&self) -> PathBuf {
        match (&self.resume, &self.out) {
            (Some(dir), _) | (None, Some(dir)) => dir.clone(),
            (None, None) => PathBuf::from("runner-out"),
        }
    }

    /// The run of one task file `task` that `runner exec` wrote: the
    /// run's other options at their defaults.
    pub(super) fn for_exec(task: PathBuf, x: ExecRun) -> Self {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Defaults {
            #[command(flatten)]
            run: RunArgs,
        }
        let mut run = Defaults::parse_from(["runner", "x"]).run;
        run.tasks = vec![task.display().to_string()];
        run.out = x.out;
        run.policies = x.policies;
        run.apply = x.apply;
        run.quiet = x.quiet;
        run.force_out = x.force_out;
        if x.json {
            run.format = OutputFormat::Json;
        }
        run.front = Front::Exec;
        run
    }

    /// How tasks' workspaces are made (`--workspace-mode`).
    pub fn workspace_mode(&self) -> crate::workspace::WorkspaceMode {
        self.workspace_mode
    }

    /// Where `--github-output` writes, and the run's output folder.
    pub fn github_output(&self) -> Option<(PathBuf, PathBuf)> {
        self.github_output
            .clone()
            .map(|file| (file, self.out_folder()))
    }
}

/// What `runner exec` sets of a run.
pub(super) struct ExecRun {
    /// `--out`, when given (else the default folder).
    pub out: Option<PathBuf>,
    /// The policy files, each a layer beside the task's own.
    pub policies: Vec<PathBuf>,
    pub apply: bool,
    pub quiet: bool,
    /// The event stream on stdout (`--format json`).
    pub json: bool,
    pub force_out: bool,
}
