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
//! `BENCH_ROUNDS` (default 5) rounds. Prints a Markdown table.
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
        .stderr(std::process::Stdio::null());
    if !supervised {
        c.env("RUNNER_SIMULATE_NO_SUPERVISOR", "1");
    }
    let t = Instant::now();
    let st = c.status().expect("runner runs");
    let took = t.elapsed();
    assert!(st.success(), "{command} failed (supervised: {supervised})");
    took
}

/// Medians with and without the supervisor, alternating.
fn pair(ws: &Path, policy: &Path, command: &str) -> (Duration, Duration) {
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..rounds() {
        with.push(timed(ws, policy, command, true));
        without.push(timed(ws, policy, command, false));
    }
    (median(with), median(without))
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
        "Medians of {} rounds, `runner tool bash` under `deny Bash(git push:*)`.\n",
        rounds()
    );
    println!("| measurement | with the supervisor | without | added | goal |");
    println!("|---|---|---|---|---|");
    let (w, wo) = pair(&ws, &policy, "for i in $(seq 1000); do /bin/true; done");
    let added_us = (w.as_secs_f64() - wo.as_secs_f64()) * 1e6 / 1000.0;
    println!(
        "| a shell loop of 1,000 execs | {:.0} ms | {:.0} ms | {added_us:.1} µs per exec | under 50 µs |",
        w.as_secs_f64() * 1e3,
        wo.as_secs_f64() * 1e3
    );
    let build = "rm -rf target && cargo build --offline -q";
    let (w, wo) = pair(&ws, &policy, build);
    let share = (w.as_secs_f64() / wo.as_secs_f64() - 1.0) * 100.0;
    println!(
        "| `cargo build` of a small crate (from clean) | {:.0} ms | {:.0} ms | {share:.1}% | under 5% |",
        w.as_secs_f64() * 1e3,
        wo.as_secs_f64() * 1e3
    );
}
