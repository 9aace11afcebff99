//! `runner run [OPTIONS] TASK...`: loads and checks everything first (bad
//! input runs nothing and exits 2), then hands the tasks to [`crate::run`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use super::run_args::{Front, Models, OutputFormat, RunArgs, UsdError, parse_usd};
use super::{CliError, CliResult, Exit, load_policies};
use crate::report::bars::Bars;
use crate::report::events::JsonLines;
use crate::report::progress::{PlainLines, Reporters, RunReporter, Verbosity};
use crate::run::{
    Cancel, RunBudget, RunOptions, apply_kept, apply_passed, keep_shard, run_tasks, watch_signals,
    write_run_outputs,
};
use crate::task::{LoadOptions, load_tasks};
use crate::tools::Registry;

/// `--otel` takes an optional ENDPOINT, so `runner run --otel tasks/x.yaml`
/// read the task file as the endpoint (issue 50). A value that names a
/// task file (one that exists, or ends in `.yaml`/`.yml`) is a task, and
/// `--otel` has no value: where the `OTEL_EXPORTER_OTLP_*` variables say.
fn otel_took_a_task(args: &mut RunArgs) {
    let Some(v) = &args.otel else { return };
    let task_like = v.ends_with(".yaml") || v.ends_with(".yml") || Path::new(v).is_file();
    if !v.contains("://") && task_like {
        args.tasks
            .insert(0, std::mem::take(args.otel.as_mut().unwrap()));
    }
}

/// The run's telemetry: off unless `--otel`, a task's `telemetry:` or the
/// `OTEL_EXPORTER_OTLP_*` variables ask for it.
fn start_telemetry(
    cli: Option<&str>,
    tasks: &[crate::task::Task],
    extra: &[runner_policy::Policy],
) -> Result<Option<Arc<crate::telemetry::Telemetry>>, CliError> {
    use crate::telemetry::{RunTrace, Telemetry, settings};
    // The tasks' blocks, and their policy layers' (--policy ones included).
    fn block(t: &Option<runner_policy::Telemetry>, source: String) -> Option<settings::Block<'_>> {
        t.as_ref()
            .map(|telemetry| settings::Block { telemetry, source })
    }
    let blocks: Vec<settings::Block> = tasks
        .iter()
        .flat_map(|t| {
            [
                block(&t.telemetry, t.file.display().to_string()),
                block(&t.policy.telemetry, t.policy.source.clone()),
            ]
        })
        .chain(extra.iter().map(|p| block(&p.telemetry, p.source.clone())))
        .flatten()
        .collect();
    let env = |k: &str| std::env::var(k).ok();
    let Some(s) =
        settings::resolve(cli, &blocks, env).map_err(|e| CliError::Invalid(e.to_string()))?
    else {
        return Ok(None);
    };
    Telemetry::start(&s, RunTrace::from_env(&env), &env)
        .map(Some)
        .map_err(|e| CliError::Invalid(e.to_string()))
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

/// The run as phases: [`load`] the task and policy files (every error of
/// every file, exit 2 before anything runs), [`plan`] what runs where,
/// [`execute`] the tasks and write the outputs, then [`conclude`] with the
/// exit status. `runner exec` writes its task file first, then runs the
/// same phases.
pub async fn run(mut args: RunArgs) -> CliResult {
    otel_took_a_task(&mut args);
    if args.tasks.is_empty() {
        return Err(CliError::Invalid(
            "no task files given (`runner run TASK...`)".into(),
        ));
    }
    let loaded = load(&args)?;
    let planned = plan(&args, loaded).await?;
    let done = execute(&args, planned).await?;
    Ok(conclude(&args, done))
}

/// What the files gave: the tasks, the `--policy` layers and the shadow
/// policy's.
struct Loaded {
    tasks: Vec<crate::task::Task>,
    extra: Vec<runner_policy::Policy>,
    shadow: Vec<runner_policy::Policy>,
}

/// Loads and checks every task and policy file.
fn load(args: &RunArgs) -> Result<Loaded, CliError> {
    // The tools' schemas (generated from their types, a fraction of a
    // millisecond) are made while the task files load, off the path to the
    // first request.
    tokio::task::spawn_blocking(|| drop(Registry::builtin().specs()));
    let load = LoadOptions {
        model_override: args.model.clone().map(|m| m.0),
        registry: Registry::builtin(),
        params: args.params.iter().cloned().collect(),
        files: args.files.clone().unwrap_or_default(),
        params_optional: false,
    };
    let paths =
        super::expand::expand_args(&args.tasks).map_err(|e| CliError::Invalid(e.to_string()))?;
    let policies = super::expand::expand_policy_args(&args.policies)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    // Every error of every file at once: the policies' and the tasks'.
    super::repeat::check(args)?;
    for p in &args.params_matrix {
        if load.params.contains_key(&p.name) {
            return Err(CliError::Invalid(format!(
                "--params {0}: --param {0} sets it too; give one",
                p.name
            )));
        }
    }
    let (layers, tasks, shadow) = (
        load_policies(&policies, &load.files),
        match (&args.models, args.params_matrix.as_slice()) {
            (None, []) => load_tasks(&paths, &load),
            (models, params) => super::matrix::load_cells(&paths, &load, models.as_ref(), params),
        },
        args.shadow.load(&load.files),
    );
    let (extra, tasks, shadow) = match (layers, tasks, shadow) {
        (Ok(l), Ok(t), Ok(s)) => (l, t, s),
        (l, t, s) => {
            let errors = (l.err().into_iter().chain(t.err()).chain(s.err()))
                .flatten()
                .collect();
            return Err(CliError::Config(errors));
        }
    };
    args.shadow.check(&tasks)?;
    // What each task makes secret, before any task runs (issue 72).
    for t in &tasks {
        let redact: Vec<String> = (t.env.redact.iter())
            .chain(t.policy.redact.iter())
            .chain(extra.iter().flat_map(|l| l.redact.iter()))
            .cloned()
            .collect();
        crate::contain::learn_task_secrets(&redact, &t.env.set);
    }
    // A --param (or --params) no task declares is a typo, not something
    // to ignore.
    let names = (load.params.keys()).chain(args.params_matrix.iter().map(|p| &p.name));
    for name in names {
        if !tasks.iter().any(|t| t.params.contains_key(name)) {
            return Err(CliError::Invalid(format!(
                "--param {name}: no task declares a parameter `{name}`"
            )));
        }
    }
    let tasks = match (args.repeat, args.attempts) {
        (Some(n), _) | (None, Some(n)) => super::repeat::repeat(tasks, n),
        (None, None) => tasks,
    };
    Ok(Loaded {
        tasks,
        extra,
        shadow,
    })
}

/// What runs, where, with what: the tasks of this shard (in every
/// repository of a fleet), the options every task gets.
struct Planned {
    tasks: Vec<crate::task::Task>,
    /// A fleet's tasks whose repository could not be fetched.
    unfetched: Vec<crate::run::TaskResult>,
    jobs: usize,
    out: PathBuf,
    opts: RunOptions,
    telemetry: Option<Arc<crate::telemetry::Telemetry>>,
    tmp: PathBuf,
}

/// Shards and fleets, the checks a run makes before it starts (keys,
/// prices, the folders), telemetry, and the run's options.
async fn plan(args: &RunArgs, loaded: Loaded) -> Result<Planned, CliError> {
    let Loaded {
        tasks,
        extra,
        shadow,
    } = loaded;
    // A fleet is sharded by repository (each with all its tasks), below.
    let mut tasks: Vec<_> = match args.shard {
        Some(s) if args.repos.is_none() => keep_shard(tasks, |t| t.name.as_str(), s),
        _ => tasks,
    };
    // A fleet: every task in every repository of the list.
    let mut unfetched = Vec::new();
    if let Some(file) = &args.repos {
        crate::fleet::check_author(&args.author).map_err(|e| CliError::Invalid(e.to_string()))?;
        let mut repos = crate::fleet::load(file).map_err(CliError::Config)?;
        if let Some(s) = args.shard {
            repos = keep_shard(repos, |r| r.folder.as_str(), s);
        }
        let cache = args
            .repos_cache
            .clone()
            .unwrap_or_else(crate::fleet::default_cache);
        let base = file.parent().unwrap_or(Path::new("."));
        let base = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        let jobs = args.jobs.unwrap_or(1);
        let fleet = crate::fleet::prepare(&repos, (base, &cache), &tasks, jobs).await;
        tasks = fleet.tasks;
        unfetched = fleet.unfetched;
    }
    // A batch's wait is the vendor's time, not the task's own.
    if args.batch {
        for t in tasks.iter_mut().filter(|t| t.batch) {
            t.timeout += args.batch_timeout;
        }
    }
    // Under --batch the tasks wait together: a batch holds the turns of
    // the tasks running at once.
    let jobs = args
        .jobs
        .unwrap_or(if args.batch { tasks.len() } else { 1 })
        .max(1);
    super::run_checks::models_usable(&tasks, args.max_cost.is_some())?;
    if let Some(max) = args
        .max_cost
        .filter(|_| !args.quiet && args.resume.is_none())
    {
        eprintln!("{}", super::budget_plan::plan_line(&tasks, max));
    }
    if let Some(dir) = &args.resume
        && !dir.join("junit.xml").is_file()
        && !dir.is_dir()
    {
        return Err(CliError::Invalid(format!(
            "--resume {}: no such output folder",
            dir.display()
        )));
    }
    let out = args.out_folder();
    // A fleet's folders are OUT/REPO/TASK, and --resume goes on in its own.
    if args.resume.is_none() && args.repos.is_none() {
        super::run_checks::out_is_ours(&out, &tasks, args.out.is_some(), args.force_out)?;
    }
    // Every task copies its workspace there: a temp folder that is not
    // there fails them all, each with a message about its copy.
    let tmp = std::env::temp_dir();
    if !tmp.is_dir() {
        return Err(CliError::Invalid(format!(
            "the temp folder {} is not a folder that exists (TMPDIR); the runner copies each task's workspace there",
            tmp.display()
        )));
    }
    let telemetry = start_telemetry(args.otel.as_deref(), &tasks, &extra)?;
    std::fs::create_dir_all(&out).map_err(|e| {
        CliError::Invalid(format!(
            "cannot create output folder {}: {e}",
            out.display()
        ))
    })?;
    let opts = RunOptions {
        out_dir: out.clone(),
        extra_policies: extra,
        shadow_policies: shadow,
        reporter: reporter(args),
        max_parallel_calls: 16,
        cancel: Cancel::default(),
        budget: args.max_cost.map(|m| Arc::new(RunBudget::new(m))),
        telemetry: telemetry.clone(),
        resume: args.resume.is_some(),
        batch: args.batch.then_some(args.batch_timeout),
        fleet: args
            .max_failures
            .map(|n| Arc::new(crate::run::FailureBreaker::new(n))),
        max_diff_bytes: args.max_diff_bytes,
        best_of: args
            .attempts
            .map(|_| Arc::new(crate::run::BestOf::new(args.keep))),
        task_costs: Arc::default(),
    };
    Ok(Planned {
        tasks,
        unfetched,
        jobs,
        out,
        opts,
        telemetry,
        tmp,
    })
}

/// What the run did: its tasks' results, whether `--apply` and `--push`
/// went through, and the sweeper of what killed runs left.
struct Done {
    results: Vec<crate::run::TaskResult>,
    applied_and_pushed: bool,
    out: PathBuf,
    sweeper: crate::cleanup::Sweeper,
}

/// Runs the tasks, applies and pushes what passed, writes the run's
/// outputs.
async fn execute(args: &RunArgs, planned: Planned) -> Result<Done, CliError> {
    let Planned {
        tasks,
        unfetched,
        jobs,
        out,
        opts,
        telemetry,
        tmp,
    } = planned;
    watch_signals(opts.cancel.clone());
    // What runs killed outright (SIGKILL) left in the temp folder, and
    // their partial writes in the output folder, go beside this run's work
    // (see `cleanup`).
    let sweeper = crate::cleanup::Sweeper::start(tmp, out.clone());
    let names: Vec<String> = tasks.iter().map(|t| t.name.clone()).collect();
    opts.reporter.run_started(&names, jobs);
    let held = crate::contain::secrets_held_by_parent();
    if !held.is_empty() {
        // Said even with --quiet: the runner cannot clear another
        // process's block (docs/src/sandbox.md, "Environment").
        eprintln!(
            "runner: warning: the process that started runner holds {} in its environment, which commands can read (/proc/PID/environ): start runner with exec",
            held.join(", ")
        );
    }
    if !args.quiet {
        eprintln!("runner: outputs in {}", out.display());
    }
    let mut results = run_tasks(&tasks, &opts, jobs).await;
    // The tasks of repositories that could not be fetched, in the report
    // too.
    for r in &unfetched {
        crate::run::write_task_outputs(&out, r)
            .map_err(|e| CliError::Failed(format!("writing {}: {e}", r.transcript.task)))?;
    }
    results.extend(unfetched);
    let pushed = match &args.push {
        Some(branch) => {
            let push = crate::fleet::Push {
                branch: branch.clone(),
                author: args.author.clone(),
                message: args.message.clone(),
            };
            crate::fleet::push_all(&mut results, &push, &out)
        }
        None => true,
    };
    // Kept tasks a killed run never applied first, in the order given.
    let kept_applied = !args.apply || args.resume.is_none() || apply_kept(&mut results, &out);
    let all_applied = (!args.apply
        || match args.attempts {
            // Best-of-N: the kept attempts alone.
            Some(_) => super::repeat::apply_kept_attempts(&mut results, &out, args.keep),
            None => apply_passed(&mut results, &out),
        })
        && kept_applied;
    let written = write_run_outputs(&out, &results);
    if let Some(t) = &telemetry {
        // Bounded by the export timeout; a collector that is down costs
        // the run that long at most, and never its outcome.
        if let Some(w) = t.finish(true).await.warning(t.target()) {
            eprintln!("{w}");
        }
    }
    written.map_err(|e| CliError::Failed(format!("writing run outputs: {e}")))?;
    let passed = results.iter().filter(|r| r.passed()).count();
    opts.reporter.run_finished(passed, results.len() - passed);
    Ok(Done {
        results,
        applied_and_pushed: all_applied && pushed,
        out,
        sweeper,
    })
}

/// What stdout gets (`N passed, M failed`, or `runner exec`'s answer),
/// the exit status, and the closing lines on stderr.
fn conclude(args: &RunArgs, done: Done) -> Exit {
    let Done {
        results,
        applied_and_pushed,
        out,
        sweeper,
    } = done;
    // Best-of-N: a task passes when the attempt it keeps passes.
    let best = args
        .attempts
        .map(|n| (n, super::repeat::keep_and_say(&results, &out, args.keep)));
    if args.format == OutputFormat::Text {
        match (args.front, &best) {
            (Front::Run, None) => {
                let passed = results.iter().filter(|r| r.passed()).count();
                println!("{passed} passed, {} failed", results.len() - passed);
            }
            (Front::Run, Some((n, (passed, failed)))) => {
                println!("{passed} passed, {failed} failed (best of {n} attempts)");
            }
            (Front::Exec, _) => super::run_end::print_answer(&results),
        }
    }
    // A conflict under `--apply` is a failure (its task says `conflict`),
    // and so is a rejected `--push` (its repository's tasks say why).
    let exit = match (applied_and_pushed, best) {
        (false, _) => Exit::Failed,
        (true, Some((_, (_, failed)))) => Exit::passed_if(failed == 0),
        (true, None) => Exit::of_run(results.iter().map(|r| &r.transcript.outcome)),
    };
    let (exit, shadow_line) = args.shadow.exit(exit, &results);
    if let Some(swept) = sweeper.finish(std::time::Duration::from_secs(30))
        && !swept.removed.is_empty()
        && !args.quiet
    {
        eprintln!(
            "runner: removed {} temporary folder(s) and file(s) left by runs that were killed: {}",
            swept.removed.len(),
            swept
                .removed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let spent = super::budget_plan::spent_line(&results);
    for line in spent.into_iter().chain(super::run_end::closing_lines(
        &results, &out, args.quiet, exit,
    )) {
        eprintln!("{line}");
    }
    if let Some(line) = shadow_line {
        eprintln!("{line}");
    }
    // The process exits next: freeing thousands of call records one by one
    // is work nobody needs.
    std::mem::forget(results);
    exit
}
