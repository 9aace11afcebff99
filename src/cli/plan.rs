//! `runner plan --repos FILE (--shards N | --per-shard K) [--max-cost USD]
//! --format github|k8s TASK...`: how to run a fleet on an engine a team
//! already operates, one shard (`--shard K/N`, each repository with all
//! its tasks) per job.
//!
//! - `github`: a matrix for `strategy.matrix: ${{ fromJSON(...) }}`, a row
//!   per shard with its repositories and its share of `--max-cost` (in
//!   proportion to its repositories).
//! - `k8s`: a `batch/v1` Job, `completionMode: Indexed`, one completion
//!   per shard, the shard taken from `JOB_COMPLETION_INDEX`;
//!   `backoffLimitPerIndex` and `maxFailedIndexes` as the fleet's failure
//!   breaker; the keys from a Secret; the outputs on a volume. The image
//!   holds runner, the task files and the list, at the paths given,
//!   under its working folder.

use std::path::{Path, PathBuf};

use super::{CliError, CliResult, Exit};
use crate::run::shards_of;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFormat {
    /// A GitHub Actions matrix (JSON).
    Github,
    /// A Kubernetes Indexed Job (YAML).
    K8s,
}

/// What `runner plan` was asked.
pub struct PlanArgs<'a> {
    pub repos: &'a Path,
    pub shards: Option<u32>,
    pub per_shard: Option<u32>,
    pub max_cost: Option<f64>,
    pub format: PlanFormat,
    pub tasks: &'a [PathBuf],
    /// The Job's image, Secret and volume claim.
    pub image: &'a str,
    pub secret: &'a str,
    pub claim: &'a str,
}

pub fn plan(a: &PlanArgs) -> CliResult {
    let repos = crate::fleet::load(a.repos).map_err(CliError::Config)?;
    let count = match (a.shards, a.per_shard) {
        (Some(0), _) | (_, Some(0)) => {
            return Err(CliError::Invalid(
                "--shards and --per-shard take a number above 0".into(),
            ));
        }
        (Some(n), None) => n,
        (None, Some(k)) => (repos.len() as u32).div_ceil(k),
        _ => {
            return Err(CliError::Invalid(
                "say how to split the fleet: --shards N or --per-shard K".into(),
            ));
        }
    };
    // No shard without a repository to run.
    let count = count.min(repos.len() as u32).max(1);
    // One pass over the list, however many shards.
    let mut sizes = vec![0usize; count as usize];
    let folders: Vec<&str> = repos.iter().map(|r| r.folder.as_str()).collect();
    for s in shards_of(&folders, count) {
        sizes[s as usize - 1] += 1;
    }
    let share = |n: usize| {
        a.max_cost
            .map(|m| m * n as f64 / repos.len() as f64)
            .map(|c| format!("{:.2}", (c * 100.0).floor() / 100.0))
    };
    match a.format {
        PlanFormat::Github => {
            let rows: Vec<serde_json::Value> = sizes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let mut row = serde_json::json!({
                        "shard": format!("{}/{count}", i + 1),
                        "repositories": n,
                    });
                    if let Some(c) = share(*n) {
                        row["max_cost"] = serde_json::json!(c);
                    }
                    row
                })
                .collect();
            println!("{}", serde_json::json!({ "include": rows }));
        }
        // One command for every index: an equal share, so that the
        // shards together never pass the budget.
        PlanFormat::K8s => {
            let equal = a
                .max_cost
                .map(|m| format!("{:.2}", (m / count as f64 * 100.0).floor() / 100.0));
            print!("{}", job(a, count, equal));
        }
    }
    Ok(Exit::Passed)
}

/// A double-quoted YAML (and JSON) string.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The Indexed Job: every shard's command, a breaker, keys and outputs.
fn job(a: &PlanArgs, count: u32, share: Option<String>) -> String {
    let tasks: Vec<String> = a
        .tasks
        .iter()
        .map(|t| shell_word(&t.display().to_string()))
        .collect();
    let cost = share.map_or(String::new(), |c| format!(" --max-cost {c}"));
    let command = format!(
        "exec runner run --repos {} --shard \"$((JOB_COMPLETION_INDEX + 1))/{count}\"{cost} --out \"/out/shard-$((JOB_COMPLETION_INDEX + 1))\" {}",
        shell_word(&a.repos.display().to_string()),
        tasks.join(" ")
    );
    // The breaker: a quarter of the shards may fail (at least one).
    let breaker = (count / 4).max(1);
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: runner-fleet
  labels:
    app.kubernetes.io/name: runner
spec:
  completionMode: Indexed
  completions: {count}
  parallelism: {parallel}
  backoffLimitPerIndex: 1
  maxFailedIndexes: {breaker}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: runner
    spec:
      restartPolicy: Never
      containers:
        - name: runner
          image: {image}
          workingDir: /work
          command: [\"sh\", \"-c\"]
          args:
            - {command}
          env:
            - name: CI
              value: \"true\"
          envFrom:
            - secretRef:
                name: {secret}
          volumeMounts:
            - name: out
              mountPath: /out
      volumes:
        - name: out
          persistentVolumeClaim:
            claimName: {claim}
",
        parallel = count.min(20),
        image = quoted(a.image),
        command = quoted(&command),
        secret = quoted(a.secret),
        claim = quoted(a.claim),
    )
}

/// `word` as one word for `sh`.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
