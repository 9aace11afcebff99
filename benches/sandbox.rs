//! What the supervisor costs the commands it watches: the same commands
//! under the same policy (one program deny rule, so that every exec and
//! connect goes to the runner), with the supervisor and without it
//! (`RUNNER_SIMULATE_NO_SUPERVISOR`), through `runner tool bash`.
//!
//! - a shell loop of 1,000 execs of `/bin/true`: the time added per exec;
//! - `cargo build` of a small crate (a dependency-free library and binary,
//!   built from clean each round): the share added;
//! - the exec wall's worst case for a program whose aliases it reads: 100
//!   execs of a stand-in `cargo` under `deny Bash(cargo publish:*)`, each
//!   with 64 words that are aliases in a `.cargo/config.toml` of 1 MiB
//!   (the bounds: the largest file, the most readings), all allowed.
//!
//! Run with `cargo bench --bench sandbox` (or `scripts/bench`); medians of
//! `BENCH_ROUNDS` (default 5) rounds (`BENCH_SANDBOX=exec,build,aliases` picks
//! rows: many rounds of the exec loop alone take minutes, not an hour), the arms alternating in swapped order
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

/// Whether `BENCH_SANDBOX` (comma-separated row names) asks for `row`; all
/// rows when it is unset.
fn wanted(row: &str) -> bool {
    std::env::var("BENCH_SANDBOX").map_or(true, |only| only.split(',').any(|r| r.trim() == row))
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
    /// Its row of the table: `added` writes seconds added in the row's
    /// unit (the median, then the quartiles).
    fn print_row(&self, what: &str, added: impl Fn(f64) -> String, unit: &str, goal: &str) {
        println!(
            "| {what} | {:.0} ms | {:.0} ms | {}{unit} ({} to {}) | {goal} |",
            self.with.as_secs_f64() * 1e3,
            self.without.as_secs_f64() * 1e3,
            added(self.added_quantile(0.5)),
            added(self.added_quantile(0.25)),
            added(self.added_quantile(0.75)),
        );
    }

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
    if wanted("exec") {
        let p = pair(&ws, &policy, "for i in $(seq 1000); do /bin/true; done");
        p.print_row(
            "a shell loop of 1,000 execs",
            |s| format!("{:.1}", s * 1e6 / 1000.0),
            " µs per exec",
            "under 50 µs",
        );
    }
    if wanted("build") {
        let build = "rm -rf target && cargo build --offline -q";
        let p = pair(&ws, &policy, build);
        let without = p.without.as_secs_f64();
        p.print_row(
            "`cargo build` of a small crate (from clean)",
            |s| format!("{:.1}", s / without * 100.0),
            "%",
            "under 5%",
        );
    }
    if !wanted("aliases") {
        return;
    }
    // The aliases' worst case: the largest configuration file, and as many
    // readings as an exec may have, each decided (none denied).
    let aliases = dir.path().join("aliases");
    std::fs::create_dir_all(aliases.join(".cargo")).unwrap();
    std::fs::create_dir_all(aliases.join("bin")).unwrap();
    let mut config = String::from("[alias]\n");
    let words: Vec<String> = (0..64).map(|i| format!("a{i}")).collect();
    for w in &words {
        config.push_str(&format!("{w} = \"build --release -v\"\n"));
    }
    while config.len() < (1 << 20) - 80 {
        config.push_str("# padding to the largest file the exec wall reads, one line at a time\n");
    }
    std::fs::write(aliases.join(".cargo/config.toml"), config).unwrap();
    let cargo = aliases.join("bin/cargo");
    std::fs::write(&cargo, "#!/bin/sh\n:\n").unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cargo_policy = dir.path().join("cargo-policy.yaml");
    std::fs::write(
        &cargo_policy,
        "default: allow\nrules:\n  - deny: [\"Bash(cargo publish:*)\"]\n",
    )
    .unwrap();
    let command = format!(
        "for i in $(seq 100); do bin/cargo {}; done",
        words.join(" ")
    );
    pair(&aliases, &cargo_policy, &command).print_row(
        "100 execs of `cargo` with 64 aliases in a 1 MiB `.cargo/config.toml` (the alias readers' bounds)",
        |s| format!("{:.2}", s * 1e3 / 100.0),
        " ms per exec",
        "bounded",
    );
}
