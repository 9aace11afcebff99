//! What makes a run fast, measured against what users would otherwise use
//! (issue "Benchmarks"): search against ripgrep, the harness's cost per
//! tool call and per model turn, a parallel batch, and the memory of a run
//! whose command prints a gigabyte.
//!
//! Run with `cargo bench --features test-tools --bench agent` (or
//! `scripts/bench`). It drives the release `runner` binary as a user would.
//! `BENCH_REPO` names the repository to search (default: this machine's
//! cargo registry sources, a few hundred MB of Rust); `BENCH_ROUNDS`
//! (default 3) sets how many rounds each figure is the median of;
//! `BENCH_ONLY=calls,batch` runs only the named parts (governor, redaction, search, calls,
//! batch, turns, bash, journal, memory). `BENCH_RUNNER` runs another build of `runner`
//! instead (the telemetry row needs this one's). Prints a Markdown table
//! for docs/src/performance-log.md.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support {
    pub mod bash_turns;
    pub mod fake_model;
    pub mod http;
    pub mod turns;
}

use support::turns::{journal_overhead, turn_overhead};

/// The binary under test: this build's, or `BENCH_RUNNER` (another
/// build, to compare side by side).
fn runner_bin() -> String {
    std::env::var("BENCH_RUNNER").unwrap_or_else(|_| env!("CARGO_BIN_EXE_runner").to_string())
}

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn timed(mut f: impl FnMut()) -> Duration {
    median(
        (0..rounds())
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The repository to search.
fn search_repo() -> PathBuf {
    if let Some(r) = std::env::var_os("BENCH_REPO") {
        return PathBuf::from(r);
    }
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let src = home.join(".cargo/registry/src");
    std::fs::read_dir(&src)
        .expect("~/.cargo/registry/src (or set BENCH_REPO)")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .max_by_key(|p| std::fs::read_dir(p).map(|d| d.count()).unwrap_or(0))
        .expect("a registry folder")
}

fn du_mb(p: &Path) -> String {
    let out = Command::new("du").arg("-sm").arg(p).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string()
}

/// The count in the runner's display line (`grep X: N matches ...`).
fn count_in_display(stderr: &[u8], after: &str) -> usize {
    let s = String::from_utf8_lossy(stderr);
    let tail = s.rsplit_once(after).map(|x| x.1).unwrap_or("");
    let n: String = tail
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    n.parse().unwrap_or(usize::MAX)
}

fn row(what: &str, runner: String, anchor: String, result: String, goal: &str) {
    println!("| {what} | {runner} | {anchor} | {result} | {goal} |");
}

fn grep_and_glob(repo: &Path) {
    let pattern = r"unsafe fn \w+";
    let tool = |name: &str, args: &str| {
        let mut c = Command::new(runner_bin());
        c.args(["tool", name, args, "--workspace"]).arg(repo);
        c.stdout(Stdio::null());
        c
    };
    let grep_args = format!(
        "{{\"pattern\": {}, \"limit\": 1}}",
        serde_json::to_string(pattern).unwrap()
    );
    let ours = run_ok(&mut tool("grep", &grep_args));
    let ours_n = count_in_display(&ours.stderr, ":");
    let rg = run_ok(
        Command::new("rg")
            .args(["-n", "--no-require-git", pattern])
            .arg(repo),
    );
    let rg_n = rg.stdout.iter().filter(|&&b| b == b'\n').count();
    let t_ours = timed(|| {
        run_ok(&mut tool("grep", &grep_args));
    });
    let t_rg = timed(|| {
        run_ok(
            Command::new("rg")
                .args(["-n", "--no-require-git", pattern])
                .arg(repo)
                .stdout(Stdio::null()),
        );
    });
    row(
        &format!("grep `{pattern}` ({rg_n} matches; runner found {ours_n})"),
        ms(t_ours),
        format!("rg -n: {}", ms(t_rg)),
        format!("{:.2}x", t_ours.as_secs_f64() / t_rg.as_secs_f64()),
        "within 1.1x of rg, same matches",
    );

    let glob_args = r#"{"pattern": "**/*.rs"}"#;
    let ours = run_ok(&mut tool("glob", glob_args));
    let ours_n = count_in_display(&ours.stderr, ":");
    let rg = run_ok(
        Command::new("rg")
            .args(["--files", "--no-require-git", "-g", "*.rs"])
            .arg(repo),
    );
    let rg_n = rg.stdout.iter().filter(|&&b| b == b'\n').count();
    let t_ours = timed(|| {
        run_ok(&mut tool("glob", glob_args));
    });
    let t_rg = timed(|| {
        run_ok(
            Command::new("rg")
                .args(["--files", "--no-require-git", "-g", "*.rs"])
                .arg(repo)
                .stdout(Stdio::null()),
        );
    });
    row(
        &format!("glob `**/*.rs` ({rg_n} files; runner found {ours_n})"),
        ms(t_ours),
        format!("rg --files -g: {}", ms(t_rg)),
        format!("{:.2}x", t_ours.as_secs_f64() / t_rg.as_secs_f64()),
        "same files",
    );
}

/// A task folder with a workspace of one small file and a scripted model.
fn scripted_task(dir: &Path, script: &str, extra: &str) {
    std::fs::create_dir_all(dir.join("ws")).unwrap();
    std::fs::write(dir.join("ws/small.txt"), "a small file\n").unwrap();
    std::fs::write(
        dir.join("task.yaml"),
        format!(
            "name: t\nprompt: bench\nworkspace: ws\nmax_turns: 1000\nsandbox: off\n{extra}script:\n{script}"
        ),
    )
    .unwrap();
}

fn run_task(dir: &Path, envs: &[(&str, String)]) -> Duration {
    let t = Instant::now();
    let mut c = Command::new(runner_bin());
    c.current_dir(dir)
        .env("CI", "true")
        .args(["run", "--quiet", "--out", "out", "task.yaml"])
        .stdout(Stdio::null());
    // `BENCH_WORKSPACE_MODE=copy`: tasks' copies made the other way
    // (`auto` is an overlay as root).
    if let Ok(mode) = std::env::var("BENCH_WORKSPACE_MODE") {
        c.args(["--workspace-mode", &mode]);
    }
    for (k, v) in envs {
        c.env(k, v);
    }
    run_ok(&mut c);
    t.elapsed()
}

/// `turns` turns of `per_turn` read_file calls each.
fn read_calls(turns: usize, per_turn: usize) -> String {
    let call = "      - {name: read_file, args: {file_path: small.txt}}\n";
    let turn = format!("  - tool_calls:\n{}", call.repeat(per_turn));
    turn.repeat(turns)
}

/// The task's own duration from its transcript: the run without loading
/// the task file and writing the outputs.
fn run_ms(dir: &Path) -> f64 {
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/t/transcript.json")).unwrap()).unwrap();
    t["duration_ms"].as_f64().unwrap()
}

fn per_call_overhead() {
    let scratch = tempfile::tempdir().unwrap();
    let one = scratch.path().join("one");
    let many = scratch.path().join("many");
    scripted_task(&one, &read_calls(1, 1), "");
    scripted_task(&many, &read_calls(10, 1000), "");
    // Wall times and the runs' own durations (read after the timing).
    let (mut t_ones, mut t_manys, mut in_one, mut in_many) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds() {
        t_ones.push(run_task(&one, &[]));
        in_one.push(run_ms(&one));
        t_manys.push(run_task(&many, &[]));
        in_many.push(run_ms(&many));
    }
    let (t_one, t_many) = (median(t_ones), median(t_manys));
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    // The raw cost of the work one call does: open and read the file.
    let file = one.join("ws/small.txt");
    let n = 10_000u32;
    let t = Instant::now();
    for _ in 0..n {
        let mut s = String::new();
        std::fs::File::open(&file)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
    }
    let raw_us = (t.elapsed() / n).as_secs_f64() * 1e6;
    let whole_us = (t_many.saturating_sub(t_one)).as_secs_f64() * 1e6 / 9_999.0 - raw_us;
    let in_run_us = (med(in_many) - med(in_one)) * 1000.0 / 9_999.0 - raw_us;
    row(
        "harness overhead per call (10,000 read_file calls in 10 turns)",
        format!(
            "{in_run_us:.1} µs in the run; {whole_us:.1} µs for the whole process (YAML script parsing and an 11 MB transcript included)"
        ),
        format!("LangChain seed: 1000-3000 µs (raw read {raw_us:.1} µs)"),
        format!("{:.0}x less", 2000.0 / in_run_us.max(0.001)),
        "under 50 µs",
    );
}

fn batch_of_16() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("batch");
    let calls: String = (0..16)
        .map(|i| format!("      - {{name: probe, args: {{label: p{i}, sleep_ms: 100}}}}\n"))
        .collect();
    scripted_task(&dir, &format!("  - tool_calls:\n{calls}"), "");
    let empty = scratch.path().join("empty");
    scripted_task(&empty, "  - text: nothing\n", "");
    run_task(&dir, &[]);
    let wall = timed(|| {
        run_task(&dir, &[]);
    });
    let base = timed(|| {
        run_task(&empty, &[]);
    });
    // The batch's own wall time, from the transcript's call timings.
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/t/transcript.json")).unwrap()).unwrap();
    let calls = t["tool_calls"].as_array().unwrap();
    let start = calls
        .iter()
        .map(|c| c["started_ms"].as_u64().unwrap())
        .min()
        .unwrap();
    let end = calls
        .iter()
        .map(|c| c["started_ms"].as_u64().unwrap() + c["duration_ms"].as_u64().unwrap())
        .max()
        .unwrap();
    row(
        "16 read-only calls of 100 ms in one turn",
        format!(
            "{} ms (batch), {} run - empty run",
            end - start,
            ms(wall.saturating_sub(base))
        ),
        "100 ms (one call)".into(),
        format!("{:.2}x", (end - start) as f64 / 100.0),
        "under 130 ms",
    );
}

/// Peak resident size of a process, polled from /proc until it exits.
fn peak_rss_kib(mut child: std::process::Child) -> u64 {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status)
            && let Some(l) = s.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib: u64 = l
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            peak = peak.max(kib);
        }
        if child.try_wait().unwrap().is_some() {
            return peak;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn peak_memory() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("mem");
    scripted_task(
        &dir,
        "  - tool_calls:\n      - {name: bash, args: {command: \"yes | head -c 1000000000; echo the end\"}}\n",
        "policy:\n  default: allow\n  rules:\n    - allow: [\"Bash(*)\"]\n",
    );
    let child = Command::new(runner_bin())
        .current_dir(&dir)
        .env("CI", "true")
        .args(["run", "--quiet", "--out", "out", "task.yaml"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let kib = peak_rss_kib(child);
    row(
        "peak memory of a run whose command prints 1 GB",
        format!("{:.1} MiB", kib as f64 / 1024.0),
        "1 GB of output".into(),
        format!("{:.1}% of it", kib as f64 / 1024.0 / 10.0),
        "under 100 MB",
    );
}

fn main() {
    let repo = search_repo();
    println!(
        "Search repository: {} ({} MB). Median of {} rounds.\n",
        repo.display(),
        du_mb(&repo),
        rounds()
    );
    println!("| measurement | runner | anchor | result | goal |");
    println!("|---|---|---|---|---|");
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    if wanted("search") {
        grep_and_glob(&repo);
    }
    if wanted("calls") {
        per_call_overhead();
    }
    if wanted("batch") {
        batch_of_16();
    }
    if wanted("turns") {
        turn_overhead();
    }
    if wanted("bash") {
        support::bash_turns::bash_turn_overhead();
    }
    if wanted("canaries") {
        support::bash_turns::canary_turn_overhead();
    }
    if wanted("journal") {
        journal_overhead();
    }
    if wanted("memory") {
        peak_memory();
    }
    if wanted("redaction") {
        redaction_per_mb();
    }
    if wanted("governor") {
        governor_per_request();
    }
}

/// What the run's rate governor costs a request far from any limit: its
/// admission and the answer's headers read (the request's tokens are its
/// body's length, known once it is serialized).
fn governor_per_request() {
    use reqwest::header::{HeaderMap, HeaderValue};
    use runner::testkit::{Governor, Limits};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    // A 50 KB request.
    let tokens = 50_000 / 4;
    let mut openai = HeaderMap::new();
    for (k, v) in [
        ("x-ratelimit-remaining-requests", "9999"),
        ("x-ratelimit-reset-requests", "6ms"),
        ("x-ratelimit-remaining-tokens", "1999000"),
        ("x-ratelimit-reset-tokens", "20s"),
    ] {
        openai.insert(k, HeaderValue::from_static(v));
    }
    const N: u32 = 10_000;
    for (what, headers) in [
        ("no rate-limit headers", HeaderMap::new()),
        ("OpenAI's headers, far from the limits", openai),
    ] {
        let g = Governor::new("bench");
        let t = timed(|| {
            rt.block_on(async {
                for _ in 0..N {
                    g.admit(tokens).await;
                    g.answered(Limits::of(&headers));
                }
            })
        });
        row(
            &format!("rate governor per request ({what})"),
            format!("{:.2} µs", t.as_secs_f64() * 1e6 / f64::from(N)),
            "a turn's own overhead: ~500 µs".into(),
            String::new(),
            "nothing measurable when no limit is near",
        );
    }
}

/// What redaction costs per megabyte of tool output (every result is
/// redacted before the model sees it): clean text, and text holding
/// secrets, with no secret value known and with 20 (each looked for in
/// its forms: plain, three base64 alignments, URL-encoded, hex in both
/// cases, reversed, and as JSON strings hold them). Goal (issue 72):
/// under 2 ms for 1 MB.
fn redaction_per_mb() {
    use runner::testkit::Redactor;
    let line = "src/lib.rs:42:    let value = compute(&input, Some(\"https://example.com/path\"))?; // note\n";
    let clean: String = line.repeat(1_000_000 / line.len());
    let mut dirty = clean.clone();
    for i in 0..50 {
        let at = dirty.len() * i / 50;
        let at = (at..).find(|&a| dirty.is_char_boundary(a)).unwrap();
        dirty.insert_str(
            at,
            " ghs_16C7e42F292c6912E7710c838347Ae178B4a secret-value-07 ",
        );
    }
    let values: Vec<String> = (0..20).map(|i| format!("secret-value-{i:02}")).collect();
    // The URL password's shape is tried only on text with an `@`.
    let at_line = "src/lib.rs:42:    let to = mail(\"ops@example.com\", Some(\"https://example.com/path\"))?;\n";
    let with_at: String = at_line.repeat(1_000_000 / at_line.len());
    for (known, redactor) in [
        ("no secret values", Redactor::new(Vec::new())),
        ("20 secret values", Redactor::new(values)),
    ] {
        for (kind, text) in [
            ("clean", &clean),
            ("50 secrets", &dirty),
            ("clean, an `@` in every line", &with_at),
        ] {
            let mb = text.len() as f64 / 1e6;
            let t = timed(|| {
                std::hint::black_box(redactor.redact(text));
            });
            row(
                &format!("redaction of 1 MB of tool output ({kind}, {known})"),
                format!("{:.2} ms/MB", t.as_secs_f64() * 1e3 / mb),
                "reading 1 MB from the page cache: ~0.1 ms".into(),
                String::new(),
                "well under a command's own time",
            );
        }
    }
}
