//! The `runner` command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use runner::cli;
use runner::run::Shard;
use runner::task::{LoadOptions, ModelSpec};
use runner::tools::{Dialect, Registry};

#[derive(Parser)]
#[command(
    name = "runner",
    version,
    about = "Runs LLM coding agents in CI with declarative tool permissions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run task files (paths or globs).
    Run {
        #[arg(required = true)]
        tasks: Vec<String>,
        /// Output folder.
        #[arg(long, default_value = "runner-out")]
        out: PathBuf,
        /// A policy added to every task's policy; the strictest decision wins. Repeatable.
        #[arg(long = "policy")]
        policies: Vec<PathBuf>,
        /// Override every task's model: PROVIDER:MODEL or scripted.
        #[arg(long)]
        model: Option<String>,
        /// Tasks run in parallel.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Run only shard K of N (stable by task name).
        #[arg(long)]
        shard: Option<Shard>,
        /// Apply each passing task's changes to its original workspace.
        #[arg(long)]
        apply: bool,
        /// Print only the final line.
        #[arg(long, short)]
        quiet: bool,
        /// Print every turn.
        #[arg(long, short)]
        verbose: bool,
        /// stdout: `text` (a final summary line) or `json` (every event as a JSON line).
        #[arg(long, value_enum, default_value = "text")]
        format: cli::run::OutputFormat,
        /// Set a task parameter (`{{NAME}}` in prompts and checks). Repeatable.
        #[arg(long = "param", value_name = "NAME=VALUE", value_parser = runner::task::params::parse_param)]
        params: Vec<(String, String)>,
        /// Files the tasks are about (a pre-commit hook's staged files): `{{files}}`
        /// in prompts and checks, and `Edit({{files}})` in policies. Takes every
        /// argument after it.
        #[arg(long, num_args = 0.., value_name = "FILE")]
        files: Option<Vec<String>>,
    },
    /// Merge the output folders of `--shard` runs into one (junit.xml, summary.md, task folders).
    Merge {
        /// The merged output folder.
        #[arg(long, required = true)]
        out: PathBuf,
        /// The shards' output folders.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
    /// Check task and policy files; errors name file:line:column.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Decide one tool call against a policy; prints JSON.
    Check {
        #[arg(long = "policy", required = true)]
        policies: Vec<PathBuf>,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        tool: String,
        args_json: String,
    },
    /// Print the tool declarations.
    Tools {
        #[arg(long, value_enum, default_value = "openai")]
        format: Dialect,
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
    Init {
        /// The repository to start (default: the current folder).
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Print the JSON Schema of a file format.
    Schema {
        #[arg(value_enum)]
        kind: cli::schema::SchemaKind,
    },
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { cli::EXIT_INVALID } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    // Warnings (a provider's retries) go to stderr; RUNNER_LOG=debug and
    // the like show more.
    let filter = tracing_subscriber::EnvFilter::try_from_env("RUNNER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = rt.block_on(async move {
        match cli.command {
            Command::Run {
                tasks,
                out,
                policies,
                model,
                jobs,
                shard,
                apply,
                quiet,
                verbose,
                format,
                params,
                files,
            } => {
                let model_override = match model.as_deref().map(ModelSpec::parse).transpose() {
                    Ok(m) => m,
                    Err(e) => {
                        eprintln!("error: --model: {e}");
                        return cli::EXIT_INVALID;
                    }
                };
                let load = LoadOptions {
                    model_override,
                    registry: Registry::builtin(),
                    params: params.into_iter().collect(),
                    files: files.unwrap_or_default(),
                    params_optional: false,
                };
                cli::run::run(cli::run::RunArgs {
                    tasks,
                    out,
                    policies,
                    load,
                    jobs,
                    shard,
                    apply,
                    quiet,
                    verbose,
                    format,
                })
                .await
            }
            Command::Merge { out, shards } => cli::merge::merge(&out, &shards),
            Command::Validate { files } => cli::validate::validate(&files, &LoadOptions::lenient()),
            Command::Check {
                policies,
                workspace,
                tool,
                args_json,
            } => cli::check::check(&policies, &workspace, &tool, &args_json),
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
            Command::Schema { kind } => cli::schema::print_schema(kind),
            Command::Init { dir } => cli::init::init(&dir),
        }
    });
    std::process::exit(code);
}
