//! `runner compare BASE NEW`: two runs of the same tasks side by side (two
//! output folders, or two merged shard sets), for a pull request that
//! changes a prompt, a policy or a model: per task the pass rate and
//! whether the counts can tell the two apart (Fisher's exact test), the
//! cost, the turns, and the denials the new run has that the base had
//! not. It exits 1 on a regression beyond the tolerances, so a workflow
//! can fail such a change.
//!
//! A task's runs are its folder's transcript, or its attempts'
//! (`TASK/attempt-K/transcript.json`).

mod fisher;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{CliError, CliResult, Exit};
use runner_output::{
    COMPARE_VERSION, Comparison, OutcomeStatus, RunStats, TRANSCRIPT_VERSION, TaskComparison,
    Verdict,
};

/// `--format` of `runner compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// A table for `$GITHUB_STEP_SUMMARY`, then the regressions.
    Markdown,
    /// One JSON object (`runner schema compare`).
    Json,
}

/// The options of `runner compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The base run's output folder.
    base: PathBuf,
    /// The new run's output folder.
    new: PathBuf,
    /// `markdown` (for $GITHUB_STEP_SUMMARY) or `json`.
    #[arg(long, value_enum, default_value = "markdown")]
    format: CompareFormat,
    /// A pass rate may drop by this much (0 to 1) before a drop the
    /// counts can tell apart is a regression.
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    tolerance: f64,
    /// A median cost that grows by more than this fraction (0.2: a
    /// fifth) is a regression; without it, cost is reported only.
    #[arg(long, value_name = "FRACTION")]
    cost_tolerance: Option<f64>,
    /// The significance level of the pass counts' test.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
}

/// What decides a regression.
#[derive(Debug, Clone, Copy)]
pub struct Tolerances {
    /// A pass rate that drops by more than this, when the counts can tell
    /// the rates apart.
    pub pass_rate: f64,
    /// A median cost that grows by more than this fraction; none: cost is
    /// reported only.
    pub cost: Option<f64>,
    /// The significance level of the pass counts' test.
    pub alpha: f64,
}

/// What a comparison reads of a transcript.
#[derive(Deserialize)]
struct Run {
    version: u32,
    outcome: Outcome,
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    counts: Counts,
    #[serde(default)]
    tool_calls: Vec<Call>,
}

#[derive(Deserialize)]
struct Outcome {
    status: OutcomeStatus,
}

#[derive(Deserialize, Default)]
struct Usage {
    #[serde(default)]
    cost_usd: Option<f64>,
}

#[derive(Deserialize, Default)]
struct Counts {
    #[serde(default)]
    turns: u32,
}

#[derive(Deserialize)]
struct Call {
    tool: String,
    #[serde(default)]
    decision: Option<Decided>,
}

#[derive(Deserialize)]
struct Decided {
    decision: Verdict,
    #[serde(default)]
    rule: Option<String>,
}

/// The transcripts of task folder `dir`: its own, or its attempts'.
fn transcripts_of(dir: &Path) -> Vec<PathBuf> {
    let own = dir.join("transcript.json");
    if own.is_file() {
        return vec![own];
    }
    let mut attempts: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("attempt-"))
                .map(|e| e.path().join("transcript.json"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    attempts.sort();
    attempts
}

/// Every task of output folder `out`, with its runs.
fn read_side(out: &Path) -> Result<BTreeMap<String, Vec<Run>>, CliError> {
    let entries = std::fs::read_dir(out)
        .map_err(|e| CliError::Invalid(format!("{}: not an output folder: {e}", out.display())))?;
    let mut tasks = BTreeMap::new();
    for e in entries.filter_map(|e| e.ok()) {
        let mut runs = Vec::new();
        for path in transcripts_of(&e.path()) {
            let bytes = std::fs::read(&path)
                .map_err(|err| CliError::Invalid(format!("{}: {err}", path.display())))?;
            let run: Run = serde_json::from_slice(&bytes).map_err(|err| {
                CliError::Invalid(format!(
                    "{}: not a runner transcript: {err}",
                    path.display()
                ))
            })?;
            if run.version != TRANSCRIPT_VERSION {
                return Err(CliError::Invalid(format!(
                    "{}: the field `version` is {}; this runner compares transcripts of version {TRANSCRIPT_VERSION}",
                    path.display(),
                    run.version
                )));
            }
            runs.push(run);
        }
        if !runs.is_empty() {
            tasks.insert(e.file_name().to_string_lossy().into_owned(), runs);
        }
    }
    if tasks.is_empty() {
        return Err(CliError::Invalid(format!(
            "{}: holds no task's transcript",
            out.display()
        )));
    }
    Ok(tasks)
}

fn median(v: Vec<f64>) -> f64 {
    crate::report::repeats::median(v).unwrap_or(0.0)
}

fn stats(runs: &[Run]) -> RunStats {
    let passed = runs
        .iter()
        .filter(|r| r.outcome.status == OutcomeStatus::Passed)
        .count() as u32;
    let costs: Option<Vec<f64>> = runs.iter().map(|r| r.usage.cost_usd).collect();
    RunStats {
        runs: runs.len() as u32,
        passed,
        pass_rate: f64::from(passed) / runs.len().max(1) as f64,
        median_cost: costs.map(median),
        median_turns: median(runs.iter().map(|r| f64::from(r.counts.turns)).collect()),
    }
}

/// The denials of `runs`, as `tool: rule`.
fn denials(runs: &[Run]) -> BTreeSet<String> {
    runs.iter()
        .flat_map(|r| &r.tool_calls)
        .filter_map(|c| {
            let d = c
                .decision
                .as_ref()
                .filter(|d| d.decision == Verdict::Deny)?;
            Some(format!(
                "{}: {}",
                c.tool,
                d.rule.as_deref().unwrap_or("no rule")
            ))
        })
        .collect()
}

fn compare_task(task: &str, base: &[Run], new: &[Run], tol: Tolerances) -> TaskComparison {
    let (b, n) = (stats(base), stats(new));
    let p_value = fisher::two_sided(b.passed, b.runs - b.passed, n.passed, n.runs - n.passed);
    let significant = p_value < tol.alpha;
    let change = n.pass_rate - b.pass_rate;
    let cost_change = match (b.median_cost, n.median_cost) {
        (Some(bc), Some(nc)) if bc > 0.0 => Some(nc / bc - 1.0),
        _ => None,
    };
    let counts = format!("{}/{} → {}/{}", b.passed, b.runs, n.passed, n.runs);
    let regression = if change < -tol.pass_rate && significant {
        Some(format!(
            "the pass rate fell from {:.2} to {:.2} ({counts}, p = {p_value:.3})",
            b.pass_rate, n.pass_rate
        ))
    } else {
        match (cost_change, tol.cost) {
            (Some(c), Some(t)) if c > t => Some(format!(
                "the median cost grew by {:.0}% (more than {:.0}%)",
                c * 100.0,
                t * 100.0
            )),
            _ => None,
        }
    };
    let before = denials(base);
    TaskComparison {
        task: task.to_string(),
        pass_rate_change: change,
        p_value,
        significant,
        cost_change,
        turns_change: n.median_turns - b.median_turns,
        new_denials: denials(new).difference(&before).cloned().collect(),
        regression,
        base: b,
        new: n,
    }
}

/// Compares the runs in `base` and `new`.
pub fn comparison(base: &Path, new: &Path, tol: Tolerances) -> Result<Comparison, CliError> {
    let (b, n) = (read_side(base)?, read_side(new)?);
    let tasks: Vec<TaskComparison> = b
        .iter()
        .filter_map(|(t, runs)| {
            n.get(t)
                .map(|new_runs| compare_task(t, runs, new_runs, tol))
        })
        .collect();
    let regressions = tasks
        .iter()
        .filter_map(|t| t.regression.as_ref().map(|r| format!("{}: {r}", t.task)))
        .collect();
    Ok(Comparison {
        version: COMPARE_VERSION,
        base: base.display().to_string(),
        new: new.display().to_string(),
        only_in_base: b.keys().filter(|t| !n.contains_key(*t)).cloned().collect(),
        only_in_new: n.keys().filter(|t| !b.contains_key(*t)).cloned().collect(),
        tasks,
        regressions,
    })
}

/// The comparison as markdown, for `$GITHUB_STEP_SUMMARY`.
pub fn markdown(c: &Comparison, alpha: f64) -> String {
    let pct = |x: f64| format!("{:+.0}%", x * 100.0);
    let mut s = format!(
        "## runner compare: {} task(s), {} regression(s)\n\n| task | base | new | pass rate | p | cost | turns | new denials |\n|---|---:|---:|---:|---:|---:|---:|---|\n",
        c.tasks.len(),
        c.regressions.len()
    );
    for t in &c.tasks {
        let mark = if t.regression.is_some() { " ⚠" } else { "" };
        s.push_str(&format!(
            "| {}{mark} | {}/{} | {}/{} | {} | {:.3} | {} | {:+.1} | {} |\n",
            t.task.replace('|', "\\|"),
            t.base.passed,
            t.base.runs,
            t.new.passed,
            t.new.runs,
            pct(t.pass_rate_change),
            t.p_value,
            t.cost_change.map_or_else(|| "unknown".into(), pct),
            t.turns_change,
            t.new_denials.join("; ").replace('|', "\\|"),
        ));
    }
    if !c.regressions.is_empty() {
        s.push_str("\nRegressions:\n\n");
        for r in &c.regressions {
            s.push_str(&format!("- {r}\n"));
        }
    }
    let untold: Vec<&TaskComparison> = c
        .tasks
        .iter()
        .filter(|t| t.pass_rate_change < 0.0 && !t.significant)
        .collect();
    if !untold.is_empty() {
        s.push_str(&format!(
            "\nLower, but not a regression: the counts cannot tell the rates apart (p ≥ {alpha}; more runs with --repeat can):\n\n"
        ));
        for t in untold {
            s.push_str(&format!(
                "- {}: {}/{} → {}/{} (p = {:.3})\n",
                t.task, t.base.passed, t.base.runs, t.new.passed, t.new.runs, t.p_value
            ));
        }
    }
    for (what, list) in [
        ("Only in the base", &c.only_in_base),
        ("Only in the new run", &c.only_in_new),
    ] {
        if !list.is_empty() {
            s.push_str(&format!("\n{what}: {}\n", list.join(", ")));
        }
    }
    s
}

pub fn compare(args: &CompareArgs) -> CliResult {
    let tol = Tolerances {
        pass_rate: args.tolerance,
        cost: args.cost_tolerance,
        alpha: args.alpha,
    };
    let c = comparison(&args.base, &args.new, tol)?;
    match args.format {
        CompareFormat::Markdown => print!("{}", markdown(&c, tol.alpha)),
        CompareFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&c).map_err(|e| CliError::Failed(e.to_string()))?
        ),
    }
    Ok(Exit::passed_if(c.regressions.is_empty()))
}
