//! Time to the first model request (issue "Fast to start, fast to test"):
//! from the moment the `runner` process is spawned to the moment a fake
//! OpenAI-compatible server on 127.0.0.1 reads the first byte of the
//! first request, for a task whose workspace is a git repository (this
//! project's own checkout, and a synthetic one of 10,000 files).
//!
//! The same runs' `--format json` events say when the workspace copy was
//! ready (`workspace_ready`) against when the first request left
//! (`turn_started`), so the table shows whether the request overlapped
//! the copy.
//!
//! Run with `cargo bench --bench first_request` (or `scripts/bench`).
//! `BENCH_ROUNDS` (default 5) sets how many rounds each figure is the
//! median of; `BENCH_FILES` (default 10000) the synthetic repository's
//! size; `BENCH_REPO=/path` adds a repository of your own (one with a
//! long history: issue 72); `BENCH_RUNNER=/path/to/runner` measures another build (an
//! earlier commit's, side by side). Prints a Markdown table for
//! docs/src/performance-log.md.

use std::io::BufReader;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod support {
    pub mod http;
}

const RUNNER: &str = env!("CARGO_BIN_EXE_runner");

fn runner() -> String {
    std::env::var("BENCH_RUNNER").unwrap_or_else(|_| RUNNER.to_string())
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@b")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@b")
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(st.success(), "git {args:?} failed in {}", dir.display());
}

/// A committed repository of `files` small files, 100 per folder, with an
/// ignored `target/`.
fn synthetic_repo(dir: &Path, files: usize) {
    for i in 0..files {
        let folder = dir.join(format!("src/m{}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&folder).unwrap();
        }
        std::fs::write(
            folder.join(format!("f{i}.rs")),
            format!("pub fn f{i}() -> usize {{ {i} }}\n"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(dir.join("target/debug")).unwrap();
    std::fs::write(dir.join("target/debug/big"), vec![0u8; 1 << 20]).unwrap();
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "r"]);
}

/// A fake Chat Completions server that answers every request at once with
/// a final text; sends the instant it read the first byte of each request.
fn fake_model() -> (u16, mpsc::Receiver<Instant>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (first, probe) =
                support::http::read_request(&mut BufReader::new(conn.try_clone().unwrap()));
            if probe {
                support::http::answer_probe(&mut conn);
                continue;
            }
            let _ = tx.send(first);
            let body = serde_json::json!({
                "choices": [{"message": {"role": "assistant", "content": "done"},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}
            })
            .to_string();
            support::http::answer_json(&mut conn, &body);
        }
    });
    (port, rx)
}

/// One run's figures.
struct Start {
    /// Process spawn to the first byte of the first request.
    first_request: Duration,
    /// The events' `time_ms` of the first `turn_started` and of
    /// `workspace_ready` (absent before the event existed).
    turn_ms: Option<u64>,
    ready_ms: Option<u64>,
    /// The whole process.
    wall: Duration,
}

fn run_once(
    scratch: &Path,
    workspace: &Path,
    port: u16,
    requests: &mpsc::Receiver<Instant>,
) -> Start {
    let task = scratch.join("task.yaml");
    std::fs::write(
        &task,
        format!(
            "name: t\nprompt: bench\nworkspace: {}\nmodel: openai:bench\nmodel_options: {{stream: false}}\n",
            workspace.display()
        ),
    )
    .unwrap();
    while requests.try_recv().is_ok() {}
    let t0 = Instant::now();
    let out = Command::new(runner())
        .current_dir(scratch)
        .env("CI", "true")
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .env("OPENAI_API_KEY", "sk-bench")
        .args(["run", "--format", "json", "--out", "out", "task.yaml"])
        .stderr(Stdio::null())
        .output()
        .expect("runner runs");
    let wall = t0.elapsed();
    assert!(
        out.status.success(),
        "the run failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let first = requests
        .recv_timeout(Duration::from_secs(5))
        .expect("the fake saw a request");
    let (mut turn_ms, mut ready_ms) = (None, None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let t = v["time_ms"].as_u64();
        match v["event"].as_str() {
            Some("turn_started") if turn_ms.is_none() => turn_ms = t,
            Some("workspace_ready") => ready_ms = t,
            _ => {}
        }
    }
    Start {
        first_request: first.duration_since(t0),
        turn_ms,
        ready_ms,
        wall,
    }
}

fn median<T: Ord + Copy>(mut v: Vec<T>) -> T {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn opt_ms(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| format!("{v} ms"))
}

fn measure(what: &str, workspace: &Path, files: usize) {
    let scratch = tempfile::tempdir().unwrap();
    let (port, requests) = fake_model();
    // One run to warm the page cache.
    run_once(scratch.path(), workspace, port, &requests);
    let runs: Vec<Start> = (0..env_or("BENCH_ROUNDS", 5))
        .map(|_| run_once(scratch.path(), workspace, port, &requests))
        .collect();
    let first = median(runs.iter().map(|r| r.first_request).collect());
    let wall = median(runs.iter().map(|r| r.wall).collect());
    let turn = median(runs.iter().map(|r| r.turn_ms).collect());
    let ready = median(runs.iter().map(|r| r.ready_ms).collect());
    println!(
        "| {what}, {files} files | {} | {} | {} | {} |",
        ms(first),
        opt_ms(turn),
        opt_ms(ready),
        ms(wall),
    );
}

fn main() {
    let rounds = env_or("BENCH_ROUNDS", 5);
    println!("{}: medians of {rounds} rounds.\n", runner());
    println!(
        "| workspace | spawn to first request | first turn_started (events) | workspace_ready (events) | whole run |"
    );
    println!("|---|---|---|---|---|");
    let scratch = tempfile::tempdir().unwrap();
    let own = scratch.path().join("own");
    let manifest = env!("CARGO_MANIFEST_DIR");
    let st = Command::new("git")
        .args(["clone", "-q", manifest])
        .arg(&own)
        .status()
        .expect("git runs");
    assert!(st.success(), "git clone of {manifest} failed");
    let own_files = String::from_utf8(
        Command::new("git")
            .current_dir(&own)
            .args(["ls-files"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .lines()
    .count();
    measure("this project's checkout", &own, own_files);
    let files = env_or("BENCH_FILES", 10_000);
    let synth = scratch.path().join("synthetic");
    std::fs::create_dir_all(&synth).unwrap();
    synthetic_repo(&synth, files);
    measure("synthetic git repository", &synth, files);
    // Another repository, such as one with a long history (issue 72).
    if let Ok(more) = std::env::var("BENCH_REPO") {
        let path = Path::new(&more);
        let n = String::from_utf8_lossy(
            &Command::new("git")
                .current_dir(path)
                .args(["ls-files"])
                .output()
                .unwrap()
                .stdout,
        )
        .lines()
        .count();
        measure(&more, path, n);
    }
}
