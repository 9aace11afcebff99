//! What the supervisor costs the commands it watches: the same commands
//! under the same policy (one program deny rule, so that every exec and
//! connect goes to the runner), with the supervisor and without it
//! (`RUNNER_SIMULATE_NO_SUPERVISOR`), through `runner tool bash`.
//!
//! - a shell loop of 1,000 execs of `/bin/true`: the time added per exec;
//! - `cargo build` of a small crate (a dependency-free library and binary,
//!   built from clean each round): the share added.
//!
//! Run with `cargo bench --bench sandbox` (or `scripts/bench`); medians of
//! `BENCH_ROUNDS` (default 5) rounds, the arms alternating in swapped order
//! and the cost taken within each round (this VM's speed drifts by more
//! than the cost between rounds). Prints a Markdown table.
//! `BENCH_RUNNER=/path/to/runner` measures another build (an earlier
//! commit's, to compare), as the first-request bench does.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs `command` with `runner tool bash` in `ws` under `policy`, with the
/// supervisor or without; the wall time.
fn timed(ws: &Path, policy: &Path, command: &str, supervised: bool) -> Duration {
    let runner =
        std::env::var("BENCH_RUNNER").unwrap_or_else(|_| env!("CARGO_BIN_EXE_runner").into());
    let mut c = Command::new(runner);
    c.args(["tool", "bash"])
        .arg(serde_json::json!({"command": command, "timeout": 600_000}).to_string())
        .arg("--workspace")
        .arg(ws)
        .arg("--policy")
        .arg(policy)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // The crate builds into its own folder, inside the workspace: a
        // target folder set for the bench's own build lies outside what
        // the sandbox lets commands write.
        .env_remove("CARGO_TARGET_DIR");
    if !supervised {
        c.env("RUNNER_SIMULATE_NO_SUPERVISOR", "1");
    }
    let t = Instant::now();
    let st = c.status().expect("runner runs");
    let took = t.elapsed();
    assert!(st.success(), "{command} failed (supervised: {supervised})");
    took
}

/// One measurement's rounds: the medians with and without the supervisor,
/// and the median and quartiles of the per-round differences.
struct Paired {
    with: Duration,
    without: Duration,
    /// Seconds added by the supervisor in each round (with minus without),
    /// sorted.
    added: Vec<f64>,
}

impl Paired {
    fn added_quantile(&self, q: f64) -> f64 {
        let i = ((self.added.len() - 1) as f64 * q).round() as usize;
        self.added[i]
    }
}

/// Both arms once per round, the order swapped every round (with first,
/// then without first), so that a drift of the machine's speed during the
/// run lands on both arms alike; the difference is taken within each
/// round, where the two runs are seconds apart.
fn pair(ws: &Path, policy: &Path, command: &str) -> Paired {
    let (mut with, mut without, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds() {
        let (w, wo) = if round % 2 == 0 {
            let w = timed(ws, policy, command, true);
            (w, timed(ws, policy, command, false))
        } else {
            let wo = timed(ws, policy, command, false);
            (timed(ws, policy, command, true), wo)
        };
        added.push(w.as_secs_f64() - wo.as_secs_f64());
        with.push(w);
        without.push(wo);
    }
    added.sort_by(f64::total_cmp);
    Paired {
        with: median(with),
        without: median(without),
        added,
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/lib.rs"),
        "pub fn add(a: u64, b: u64) -> u64 {\n    a + b\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/main.rs"),
        "fn main() { println!(\"{}\", small::add(2, 40)); }\n",
    )
    .unwrap();
    // `default: allow` with one program deny rule: the exec wall is on
    // (without the supervisor, the gate decides these visible commands
    // alike).
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\nrules:\n  - deny: [\"Bash(git push:*)\"]\n",
    )
    .unwrap();
    println!(
        "Medians of {} rounds, `runner tool bash` under `deny Bash(git push:*)`; \
         the arms alternate (their order swapped each round) and \
         \"added\" is the median of the per-round differences, with its \
         quartiles.\n",
        rounds()
    );
    println!("| measurement | with the supervisor | without | added (quartiles) | goal |");
    println!("|---|---|---|---|---|");
    let execs = 1000.0;
    let p = pair(&ws, &policy, "for i in $(seq 1000); do /bin/true; done");
    let per_exec = |s: f64| s * 1e6 / execs;
    println!(
        "| a shell loop of 1,000 execs | {:.0} ms | {:.0} ms | {:.1} µs per exec ({:.1} to {:.1}) | under 50 µs |",
        p.with.as_secs_f64() * 1e3,
        p.without.as_secs_f64() * 1e3,
        per_exec(p.added_quantile(0.5)),
        per_exec(p.added_quantile(0.25)),
        per_exec(p.added_quantile(0.75)),
    );
    let build = "rm -rf target && cargo build --offline -q";
    let p = pair(&ws, &policy, build);
    let share = |s: f64| s / p.without.as_secs_f64() * 100.0;
    println!(
        "| `cargo build` of a small crate (from clean) | {:.0} ms | {:.0} ms | {:.1}% ({:.1} to {:.1}) | under 5% |",
        p.with.as_secs_f64() * 1e3,
        p.without.as_secs_f64() * 1e3,
        share(p.added_quantile(0.5)),
        share(p.added_quantile(0.25)),
        share(p.added_quantile(0.75)),
    );
}
