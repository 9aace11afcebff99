//! `runner run [OPTIONS] TASK...`

use std::path::PathBuf;

use futures::StreamExt;

use super::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, load_policies, report_errors};
use std::sync::Arc;

use crate::report::bars::Bars;
use crate::report::events::JsonLines;
use crate::report::progress::{PlainLines, Reporters, RunReporter, Verbosity};
use crate::report::{Outcome, OutcomeStatus};
use crate::run::{
    Cancel, RunOptions, Shard, TaskResult, in_shard, run_task, write_run_outputs,
    write_task_outputs,
};
use crate::task::{LoadOptions, load_tasks};
use crate::workspace::{ApplyError, apply_changes};

pub struct RunArgs {
    pub tasks: Vec<String>,
    pub out: PathBuf,
    pub policies: Vec<PathBuf>,
    pub load: LoadOptions,
    pub jobs: usize,
    pub shard: Option<Shard>,
    pub apply: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub format: OutputFormat,
}

/// What `runner run` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The final `N passed, M failed` line (progress goes to stderr).
    Text,
    /// Every event as a JSON line (`runner schema events`).
    Json,
}

/// Bars in a terminal, plain lines otherwise (CI sets `CI`), JSON on
/// stdout with `--format json` (plain lines on stderr then).
fn reporter(args: &RunArgs) -> Arc<dyn RunReporter> {
    use std::io::IsTerminal;
    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else if args.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    let human: Box<dyn RunReporter> =
        if verbosity != Verbosity::Quiet && !in_ci && std::io::stderr().is_terminal() {
            Box::new(Bars::new(args.verbose))
        } else {
            Box::new(PlainLines { verbosity })
        };
    match args.format {
        OutputFormat::Text => Arc::from(human),
        OutputFormat::Json => Arc::new(Reporters(vec![Box::new(JsonLines::default()), human])),
    }
}

pub async fn run(args: RunArgs) -> i32 {
    let paths = match super::expand::expand_args(&args.tasks) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID;
        }
    };
    let (extra, mut errors) = match load_policies(&args.policies, &args.load.files) {
        Ok(layers) => (layers, vec![]),
        Err(es) => (vec![], es),
    };
    let tasks = match load_tasks(&paths, &args.load) {
        Ok(t) if errors.is_empty() => t,
        Ok(_) => {
            report_errors(&errors);
            return EXIT_INVALID;
        }
        Err(es) => {
            errors.extend(es);
            report_errors(&errors);
            return EXIT_INVALID;
        }
    };
    // A --param no task declares is a typo, not something to ignore.
    for name in args.load.params.keys() {
        if !tasks.iter().any(|t| t.params.contains_key(name)) {
            eprintln!("error: --param {name}: no task declares a parameter `{name}`");
            return EXIT_INVALID;
        }
    }
    let tasks: Vec<_> = match args.shard {
        Some(s) => tasks.into_iter().filter(|t| in_shard(&t.name, s)).collect(),
        None => tasks,
    };
    // A model that cannot be reached for want of a key is an input error:
    // say so before anything runs.
    let mut bad_model = false;
    for t in &tasks {
        if let Err(e) = crate::run::provider_config(t) {
            eprintln!("error: {}: task `{}`: {e}", t.file.display(), t.name);
            bad_model = true;
        }
    }
    if bad_model {
        return EXIT_INVALID;
    }
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!(
            "error: cannot create output folder {}: {e}",
            args.out.display()
        );
        return EXIT_INVALID;
    }
    let opts = RunOptions {
        out_dir: args.out.clone(),
        extra_policies: extra,
        reporter: reporter(&args),
        max_parallel_calls: 16,
        cancel: Cancel::default(),
    };
    watch_signals(opts.cancel.clone());
    let names: Vec<String> = tasks.iter().map(|t| t.name.clone()).collect();
    opts.reporter.run_started(&names, args.jobs.max(1));
    if !args.quiet {
        eprintln!("runner: outputs in {}", args.out.display());
    }
    let mut results: Vec<(usize, TaskResult)> = futures::stream::iter(tasks.iter().enumerate())
        .map(|(i, t)| {
            let opts = &opts;
            async move {
                let r = run_task(t, opts).await;
                if let Err(e) = write_task_outputs(&opts.out_dir, &r) {
                    eprintln!("error: writing outputs of {}: {e}", t.name);
                }
                (i, r)
            }
        })
        .buffer_unordered(args.jobs.max(1))
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    let mut results: Vec<TaskResult> = results.into_iter().map(|(_, r)| r).collect();
    let mut failed = results.iter().any(|r| !r.passed());
    if args.apply {
        for r in results
            .iter_mut()
            .filter(|r| r.passed() && !r.changes.is_empty())
        {
            match apply_changes(&r.workspace, &r.changes) {
                Ok(n) => eprintln!(
                    "[{}] applied {n} change(s) to {}",
                    r.transcript.task,
                    r.workspace.display()
                ),
                Err(e) => {
                    eprintln!("error: [{}] --apply: {e}", r.transcript.task);
                    let status = match e {
                        ApplyError::Conflict { .. } => OutcomeStatus::Conflict,
                        ApplyError::Io { .. } => OutcomeStatus::Error,
                    };
                    r.transcript.outcome = Outcome {
                        status,
                        reason: format!("--apply: {e} (its diff is in changes.diff)"),
                    };
                    if let Err(e) = write_task_outputs(&args.out, r) {
                        eprintln!("error: writing the outputs of {}: {e}", r.transcript.task);
                    }
                    failed = true;
                }
            }
        }
    }
    if let Err(e) = write_run_outputs(&args.out, &results) {
        eprintln!("error: writing run outputs: {e}");
        return EXIT_FAILED;
    }
    let passed = results.iter().filter(|r| r.passed()).count();
    opts.reporter.run_finished(passed, results.len() - passed);
    if args.format == OutputFormat::Text {
        println!("{passed} passed, {} failed", results.len() - passed);
    }
    // The process exits next: freeing thousands of call records one by one
    // is work nobody needs.
    std::mem::forget(results);
    if failed { EXIT_FAILED } else { EXIT_OK }
}

/// The first SIGINT or SIGTERM cancels the run (tasks stop, outputs are
/// written, outcome `cancelled`); a second one kills every command's
/// process group, removes the temporary copies and folders (waiting a
/// second at most) and exits at once with 130 (SIGINT) or 143 (SIGTERM).
fn watch_signals(cancel: Cancel) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        eprintln!("warning: cannot listen for SIGINT/SIGTERM; a cancelled run writes no outputs");
        return;
    };
    tokio::spawn(async move {
        let mut seen = 0;
        loop {
            let name = tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            };
            seen += 1;
            if seen == 1 {
                eprintln!(
                    "runner: {name}: cancelling the running tasks and writing their outputs (send it again to exit at once)"
                );
                cancel.cancel(name);
            } else {
                eprintln!("runner: {name} again: exiting now");
                crate::process::kill_all_groups();
                if !crate::cleanup::remove_all(std::time::Duration::from_secs(1)) {
                    eprintln!("runner: some temporary folders could not be removed in time");
                }
                std::process::exit(if name == "SIGINT" { 130 } else { 143 });
            }
        }
    });
}
