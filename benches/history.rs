//! The cost of keeping denied content out of the copy's git history
//! (issue 72), on a repository of 10,000 commits over 1,000 files.
//!
//! Run with `cargo bench --bench history` (or `scripts/bench`). Two
//! repositories: one whose history never held `.env`, one where commit
//! 5,000 added it and the next removed it. For each it times, against the
//! plain copy ([`IsolatedWorkspace::create`], no history settled):
//! - the copy hiding what `deny Read(./.env)` hides, for the run's first
//!   task (its history scanned) and for a later one (the scan kept);
//! - the first git request in the copy (`git log -1 --stat`), its view
//!   whole (the first) or cut to one commit (the second).
//!
//! Prints a Markdown table (median of `BENCH_ROUNDS`, default 5).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use runner::workspace::{IsolatedWorkspace, forget_listings};

/// `commits` commits over 1,000 files, each changing one; with `env`, a
/// `.env` added halfway and removed by the next commit.
fn repository(root: &Path, name: &str, commits: usize, env: bool) -> PathBuf {
    let repo = root.join(name);
    std::fs::create_dir_all(&repo).unwrap();
    let ok = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(&repo)
        .status()
        .unwrap();
    assert!(ok.success());
    let mut fi = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(&repo)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut s = String::new();
    for i in 0..commits {
        s.push_str(&format!(
            "commit refs/heads/main\ncommitter b <b@b> {} +0000\ndata 3\nc{}\n",
            1_600_000_000 + i,
            i % 10
        ));
        let files: Vec<usize> = if i == 0 {
            (0..1000).collect()
        } else {
            vec![(i * 7) % 1000]
        };
        for f in files {
            let body = format!("file {f} version {i}\n").repeat(20);
            s.push_str(&format!(
                "M 100644 inline src/d{}/f{f}.txt\ndata {}\n{body}",
                f % 50,
                body.len()
            ));
        }
        if env && i == commits / 2 {
            let body = "PASSWORD=hunter2\n";
            s.push_str(&format!(
                "M 100644 inline .env\ndata {}\n{body}",
                body.len()
            ));
        }
        if env && i == commits / 2 + 1 {
            s.push_str("D .env\n");
        }
        s.push('\n');
    }
    fi.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    assert!(fi.wait().unwrap().success());
    let ok = Command::new("git")
        .args(["checkout", "-q", "main"])
        .current_dir(&repo)
        .status()
        .unwrap();
    assert!(ok.success());
    repo
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn denied(rel: &str) -> bool {
    rel == ".env"
}

/// The copy's time and its first git request's, after `sync` (so that
/// one copy's writeback does not slow the next: see benches/isolation.rs).
fn time(repo: &Path, hiding: bool, first_task: bool) -> (Duration, Duration) {
    let _ = Command::new("sync").status();
    if first_task {
        forget_listings();
    }
    let start = Instant::now();
    let ws = if hiding {
        IsolatedWorkspace::create_hiding(repo, &[], &denied)
    } else {
        IsolatedWorkspace::create(repo, &[])
    }
    .expect("copy");
    let copy = start.elapsed();
    let start = Instant::now();
    let out = Command::new("git")
        .args(["log", "-1", "--stat"])
        .current_dir(ws.path())
        .output()
        .unwrap();
    let request = start.elapsed();
    assert!(out.status.success());
    (copy, request)
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let scratch = tempfile::tempdir().unwrap();
    println!(
        "| history | copy, plain | copy hiding, first task | copy hiding, later task | first git request |"
    );
    println!("|---|---|---|---|---|");
    for (name, env) in [("never held .env", false), (".env in commit 5,000", true)] {
        eprintln!("bench: building {name}");
        let repo = repository(
            scratch.path(),
            if env { "env" } else { "clean" },
            10_000,
            env,
        );
        let runs = |hiding: bool, first: bool| {
            let all: Vec<(Duration, Duration)> =
                (0..rounds).map(|_| time(&repo, hiding, first)).collect();
            (
                median(all.iter().map(|t| t.0).collect()),
                median(all.iter().map(|t| t.1).collect()),
            )
        };
        time(&repo, true, true);
        let plain = runs(false, false);
        let first = runs(true, true);
        let later = runs(true, false);
        println!(
            "| {name} | {} | {} | {} | {} |",
            ms(plain.0),
            ms(first.0),
            ms(later.0),
            ms(first.1)
        );
    }
}
