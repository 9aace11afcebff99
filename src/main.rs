//! The `runner` command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use runner::cli::{self, CliError, CliResult, Exit};
use runner::task::LoadOptions;

/// What each exit status means: in `runner --help`, `runner run --help`
/// and the manual page (kept with docs/src/troubleshooting.md's table).
macro_rules! exit_status {
    () => {
        "Exit status:
  0   every task passed (runner check: the call is allowed)
  1   a task failed: its checks, its budget, a denial under fail_on_denial,
      a tripwire (outcome.tripwire: denials, credentials, network, exec,
      canary), skipped by --max-cost, or a conflict under --apply
  2   invalid input: nothing ran; the error names file:line:column
  75  the tasks that did not pass were all cut short (cancelled, out of
      time, the provider unavailable): --resume OUT goes on
  130, 143  stopped by a second SIGINT or SIGTERM"
    };
}

#[derive(Parser)]
#[command(
    name = "runner",
    version,
    about = "Runs LLM coding agents in CI with declarative tool permissions",
    after_help = exit_status!()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The examples `--help` shows (clap's `after_help`); each line after a
/// `$ ` parses (tested below).
const RUN_EXAMPLES: &str = concat!(
    "Examples:
  $ runner run tasks/*.yaml
  $ runner run --policy policies/ci.yaml --jobs 4 --out runner-out tasks/*.yaml
  $ runner run --resume runner-out tasks/*.yaml
  $ runner run --apply --max-cost 2.50 --param files=src/lib.rs tasks/fix.yaml
  $ runner run --batch --jobs 50 tasks/triage/*.yaml
  $ runner run --repos fleet/repos.txt --jobs 8 --push runner/logging tasks/fleet/*.yaml

",
    exit_status!()
);
const EXEC_EXAMPLES: &str = concat!(
    "Examples:
  $ runner exec --model openai:gpt-5-mini \"list the files and say what each does\"
  $ runner exec --allow 'Edit(src/**)' --allow 'Bash(cargo test:*)' \"fix the failing test\"
  $ runner exec --policy policies/ci.yaml --output-schema schema.json @prompt.md
  $ runner exec --json -

",
    exit_status!()
);
const CHECK_EXAMPLES: &str = "Examples:
  $ runner check --policy policies/ci.yaml bash '{\"command\": \"git push origin main\"}'
  $ runner check --policy policies/ci.yaml --backstops all bash '{\"command\": \"python3 -c \\\"print(6*7)\\\"\"}'
  $ runner check --policy policies/ci.yaml edit_file '{\"file_path\": \".env\", \"old_string\": \"a\", \"new_string\": \"b\"}'";
const REPLAY_EXAMPLES: &str = "Examples:
  $ runner replay --policy policies/stricter.yaml runner-out/*/transcript.json
  $ runner replay --policy policies/ci.yaml --policy policies/repo.yaml --format json runner-out/fix/transcript.json";
const PLAN_EXAMPLES: &str = "Examples:
  $ runner plan --repos fleet/repos.txt --per-shard 20 --max-cost 50 --format github
  $ runner plan --repos fleet/repos.txt --shards 10 --format k8s --image ghcr.io/acme/runner-fleet:1 tasks/fleet/logging.yaml";
const MERGE_EXAMPLES: &str = "Examples:
  $ runner merge --out runner-out shard-1 shard-2 shard-3
  $ runner merge --out merged out-*";

#[derive(Subcommand)]
enum Command {
    /// Run task files (paths or globs).
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<cli::run::RunArgs>),
    /// Run one prompt as a task in the current folder: the answer on
    /// stdout, the outputs (transcript, diff, JUnit, summary) in --out.
    /// Without --policy (or .runner/policy.yaml, policies/default.yaml),
    /// the built-in read-only policy: the low-risk tools (read_file,
    /// grep, glob, ls, probe, save_memory), no edits, no commands; --allow
    /// widens it.
    #[command(after_help = EXEC_EXAMPLES)]
    Exec(Box<cli::exec::ExecArgs>),
    /// Merge the output folders of `--shard` runs into one (junit.xml, summary.md, task folders).
    #[command(after_help = MERGE_EXAMPLES)]
    Merge {
        /// The merged output folder.
        #[arg(long, required = true)]
        out: PathBuf,
        /// The shards' output folders.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
    /// Send a finished run's transcripts to an OpenTelemetry collector
    /// (the spans and metrics `--otel` sends as the run goes).
    Export {
        /// A `runner run` or `runner merge` output folder.
        out: PathBuf,
        /// The collector's OTLP base URL (default: the
        /// `OTEL_EXPORTER_OTLP_*` variables).
        #[arg(long, value_name = "ENDPOINT")]
        otel: Option<String>,
    },
    /// Check task and policy files; errors name file:line:column.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Decide one tool call against a policy; prints JSON.
    #[command(after_help = CHECK_EXAMPLES)]
    Check {
        #[arg(long = "policy", required = true)]
        policies: Vec<PathBuf>,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Decide as a run holding these backstops does (comma-separated:
        /// reads, edits, confined, network-off, exec, history, private-tmp;
        /// `all`; `auto`: those a run here holds, as `runner doctor`
        /// reports them). Default: none.
        #[arg(long, value_parser = cli::check::parse_backstops, default_value = "")]
        backstops: runner_policy::Backstops,
        tool: String,
        args_json: String,
    },
    /// Decide every call of recorded transcripts again under other
    /// policy layers; prints the calls whose decision changes.
    #[command(after_help = REPLAY_EXAMPLES)]
    Replay {
        /// The policy layers to decide under (as `runner run --policy`).
        #[arg(long = "policy", required = true)]
        policies: Vec<PathBuf>,
        /// `text` (a line per changed call) or `json`.
        #[arg(long, value_enum, default_value = "text")]
        format: cli::replay::ReplayFormat,
        /// transcript.json files of earlier runs.
        #[arg(required = true)]
        transcripts: Vec<PathBuf>,
    },
    /// Write OUT/report.html from the outputs of an earlier run.
    Report {
        /// A `runner run` or `runner merge` output folder.
        out: PathBuf,
    },
    /// Work with policies.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Print the tool declarations.
    Tools {
        #[arg(long, value_enum, default_value = "openai")]
        format: cli::tool::DeclarationFormat,
        /// List the tools this task gets: its `tools:` and mode applied,
        /// its MCP servers started and asked.
        #[arg(long)]
        task: Option<PathBuf>,
    },
    /// Run one tool call (content on stdout, display line on stderr).
    Tool {
        name: String,
        args_json: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Write a starter task, policy and workflow (never overwrites a file).
    Init(cli::init::InitArgs),
    /// Print how to run a fleet (--repos) on a GitHub matrix or a
    /// Kubernetes Indexed Job, one shard per job.
    #[command(after_help = PLAN_EXAMPLES)]
    Plan {
        /// The repository list, as `runner run --repos` reads it.
        #[arg(long, value_name = "FILE")]
        repos: PathBuf,
        /// How many shards.
        #[arg(long, value_name = "N", conflicts_with = "per_shard")]
        shards: Option<u32>,
        /// How many repositories a shard (about).
        #[arg(long, value_name = "K")]
        per_shard: Option<u32>,
        /// The fleet's budget in US dollars, shared by the shards in
        /// proportion to their repositories.
        #[arg(long, value_name = "USD", value_parser = cli::run::parse_usd)]
        max_cost: Option<f64>,
        /// `github` (a matrix, JSON) or `k8s` (an Indexed Job, YAML).
        #[arg(long, value_enum)]
        format: cli::plan::PlanFormat,
        /// The Job's image (it holds runner, the list and the task files).
        #[arg(long, default_value = "runner:latest")]
        image: String,
        /// The Secret whose keys become the Job's environment (API keys).
        #[arg(long, default_value = "runner-keys")]
        secret: String,
        /// The volume claim the shards write their outputs to.
        #[arg(long, default_value = "runner-out")]
        claim: String,
        /// The task files each shard runs.
        tasks: Vec<PathBuf>,
    },
    /// Show the sandbox a task's commands get here (--print), or run one
    /// command under it in a copy of the task's workspace (after --).
    Sandbox {
        /// The task file.
        task: PathBuf,
        /// Print what the sandbox enforces, what is writable and hidden.
        #[arg(long)]
        print: bool,
        /// The platform whose sandbox to print: `linux` (the Landlock,
        /// seccomp and supervisor plan this kernel gives) or `macos` (the
        /// Seatbelt profile); this machine's by default. Running a command
        /// needs this machine's.
        #[arg(long, value_enum)]
        platform: Option<cli::sandbox::Platform>,
        /// The command and its arguments, after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Report what this machine offers the sandbox, and which backstops a
    /// run here would hold (exit 1 when one `--require` names is missing).
    Doctor {
        /// `text` (aligned lines) or `json` (`runner schema doctor`).
        #[arg(long, value_enum, default_value = "text")]
        format: cli::doctor::DoctorFormat,
        /// Backstops that must hold, comma-separated: reads, edits,
        /// confined, exec, network.
        #[arg(long, value_delimiter = ',', value_name = "LIST")]
        require: Vec<String>,
    },
    /// Print the JSON Schema of a file format.
    Schema {
        #[arg(value_enum)]
        kind: cli::schema::SchemaKind,
    },
    /// Compare two runs of the same tasks (output folders): pass rates
    /// (with Fisher's exact test), cost, turns, new denials; exit 1 on a
    /// regression beyond the tolerances.
    Compare(cli::compare::CompareArgs),
    /// Print the shell completion script for SHELL (bash, zsh, fish,
    /// powershell, elvish) on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on stdout: `runner man | man -l -`;
    /// with --all DIR, write a page per command into DIR.
    Man {
        /// Write runner.1 and a page per command (runner-run.1 ...) here.
        #[arg(long, value_name = "DIR")]
        all: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// The narrowest allow rules for the calls a policy's default denied
    /// in earlier runs, printed as a policy file (the base's rules, then
    /// the suggestions) to review.
    Suggest {
        /// The policy the transcripts ran under (default: a policy of the
        /// deny rules they show).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// transcript.json files of earlier runs.
        #[arg(required = true)]
        transcripts: Vec<PathBuf>,
    },
    /// Rules that never match, shadowed rules, allow rules a deny rule
    /// overrules, unanchored deny paths (exit 0 none, 1 some, 2 bad input).
    Lint {
        /// Policy files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() {
    // Secrets the runner was given (a provider's key) out of the block any
    // process of this user can read, the commands it runs among them.
    // SAFETY: first thing in main: no other thread runs yet, and nothing
    // holds a pointer into the environment.
    unsafe { runner::hide_own_secrets() };
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Usage errors are bad input (2); --help and --version are not.
            let code = if e.use_stderr() {
                Exit::Invalid.code()
            } else {
                0
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    // Overlay workspaces live in a mount namespace of the runner's own,
    // entered while it has one thread (see workspace::overlay); doctor,
    // sandbox and tool make what a run would.
    let (github, mode) = match &cli.command {
        Command::Run(args) => (args.github_output(), Some(args.workspace_mode())),
        Command::Exec(args) => (args.github_output(), Some(args.workspace_mode())),
        Command::Doctor { .. } | Command::Sandbox { .. } | Command::Tool { .. } => {
            (None, Some(Default::default()))
        }
        _ => (None, None),
    };
    if let Some(mode) = mode {
        runner::workspace::overlay::init(mode);
    }
    let code = match try_main(cli) {
        Ok(exit) => exit.code(),
        Err(e) => {
            e.print();
            e.exit().code()
        }
    };
    // A second SIGINT/SIGTERM that came first decides the code (130/143);
    // its handler is then removing what the run left and exits itself.
    let decided = runner::decide_exit(code);
    if decided != code {
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    // `--github-output`: the code goes to the next step, which decides.
    if let Some((file, out)) = github {
        match cli::github_output::write(&file, &out, decided) {
            Ok(()) => std::process::exit(0),
            Err(e) => eprintln!("runner: --github-output {}: {e}", file.display()),
        }
    }
    std::process::exit(decided);
}

/// Writes `text` to stdout; a reader that stopped early (`| head`) is no
/// error.
fn print_all(text: &[u8], what: &str) -> CliResult {
    use std::io::Write;
    match std::io::stdout().lock().write_all(text) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::Failed(format!("writing {what}: {e}")))
        }
        _ => Ok(Exit::Passed),
    }
}

/// Runs the command; errors are printed by `main`, in one place.
fn try_main(cli: Cli) -> CliResult {
    // Warnings (a provider's retries) go to stderr; RUNNER_LOG=debug and
    // the like show more.
    let filter = tracing_subscriber::EnvFilter::try_from_env("RUNNER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"));
    // Colours only for a person at a terminal: CI logs and files get plain
    // text, as NO_COLOR asks everywhere.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    let result = rt.block_on(async move {
        match cli.command {
            Command::Run(args) => cli::run::run(*args).await,
            Command::Exec(args) => cli::exec::exec(*args).await,
            Command::Merge { out, shards } => cli::merge::merge(&out, &shards),
            Command::Export { out, otel } => cli::export::export(&out, otel.as_deref()).await,
            Command::Validate { files } => cli::validate::validate(&files, &LoadOptions::lenient()),
            Command::Check {
                policies,
                workspace,
                backstops,
                tool,
                args_json,
            } => cli::check::check(&policies, &workspace, backstops, &tool, &args_json),
            Command::Tools { format, task: None } => cli::tool::print_tools(format),
            Command::Tools {
                format,
                task: Some(task),
            } => cli::tool::print_task_tools(format, &task).await,
            Command::Tool {
                name,
                args_json,
                workspace,
                policy,
            } => cli::tool::run_tool(&name, &args_json, &workspace, policy.as_deref()).await,
            Command::Replay {
                policies,
                format,
                transcripts,
            } => cli::replay::replay(&policies, &transcripts, format),
            Command::Policy {
                command:
                    PolicyCommand::Suggest {
                        policy,
                        transcripts,
                    },
            } => cli::suggest::suggest(policy.as_deref(), &transcripts),
            Command::Policy {
                command: PolicyCommand::Lint { files },
            } => cli::lint::lint(&files),
            Command::Report { out } => cli::report::report(&out),
            Command::Schema { kind } => cli::schema::print_schema(kind),
            Command::Compare(args) => cli::compare::compare(&args),
            Command::Doctor { format, require } => cli::doctor::doctor(format, &require),
            Command::Sandbox {
                task,
                print,
                platform,
                command,
            } => cli::sandbox::sandbox(&task, print, platform, &command).await,
            Command::Plan {
                repos,
                shards,
                per_shard,
                max_cost,
                format,
                image,
                secret,
                claim,
                tasks,
            } => cli::plan::plan(&cli::plan::PlanArgs {
                repos: &repos,
                shards,
                per_shard,
                max_cost,
                format,
                tasks: &tasks,
                image: &image,
                secret: &secret,
                claim: &claim,
            }),
            Command::Init(args) => cli::init::init(&args),
            Command::Completions { shell } => {
                let mut cmd = <Cli as clap::CommandFactory>::command();
                let mut text = Vec::new();
                clap_complete::generate(shell, &mut cmd, "runner", &mut text);
                print_all(&text, "the completion script")
            }
            Command::Man { all } => {
                match cli::man::man(<Cli as clap::CommandFactory>::command(), all.as_deref())? {
                    Some(text) => print_all(&text, "the manual page"),
                    None => Ok(Exit::Passed),
                }
            }
        }
    });
    // The process exits next: a blocking task still running (a cancelled
    // search) must not hold it up.
    rt.shutdown_background();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every example `--help` shows parses as the command line it is (the
    /// shell's quoting and globs aside: each word as the shell passes it).
    #[test]
    fn the_help_examples_parse() {
        let mut n = 0;
        for examples in [
            RUN_EXAMPLES,
            EXEC_EXAMPLES,
            CHECK_EXAMPLES,
            REPLAY_EXAMPLES,
            MERGE_EXAMPLES,
            PLAN_EXAMPLES,
        ] {
            for line in examples.lines().filter_map(|l| l.trim().strip_prefix("$ ")) {
                let words = runner_policy::words::split_words(line);
                assert!(Cli::try_parse_from(&words).is_ok(), "{line}: {words:?}");
                n += 1;
            }
        }
        assert_eq!(n, 19);
        assert!(Cli::try_parse_from(["runner", "merge", "shard-1"]).is_err());
    }
}
