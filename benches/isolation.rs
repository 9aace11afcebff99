//! Workspace isolation: how long it takes to give a task its own copy of a
//! repository, against the alternatives a user could reach for.
//!
//! Run with `cargo bench --bench isolation` (or `scripts/bench`). For each
//! synthetic repository (1k, 10k and 100k files of about 2 KB, committed to
//! git) and, when `BENCH_REPO` names one, a real repository, it times:
//! - `runner overlay`: [`IsolatedWorkspace::create`] as root, where the
//!   task's copy is an overlay of the original (issue 77): the walk that
//!   finds what the view hides, the whiteouts and the mount;
//! - `runner copy`: [`IsolatedWorkspace::create_copy`], the copy every
//!   task got before (tracked and untracked files, ignored ones and `.git`
//!   left out), and still gets where no overlay can be mounted;
//! - for both, finishing: three files edited in the copy, then the diff
//!   ([`IsolatedWorkspace::changes`]) and the copy removed;
//! - `git worktree add --detach`: tracked files only, plus git's index;
//! - `cp -a`: everything, `.git` and ignored build folders included.
//!
//! Then, through the binary, a task with one `bash` call and one edit on
//! each repository, its workspace an overlay and a copy: when the
//! workspace was ready, when the task finished, and how long finishing
//! took after the model's last answer (from `--format json`'s events);
//! and the disk eight overlay views of the largest repository take.
//!
//! Prints Markdown tables (median of `BENCH_ROUNDS`, default 3, rounds);
//! `BENCH_DISK_ONLY=1` only weighs the views.
//! Each timed run starts after `sync`, so the figures are the time to a copy
//! in the page cache, not the disk's writeback of the run before.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use runner::workspace::IsolatedWorkspace;

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("git runs");
    assert!(st.success(), "git {args:?} failed in {}", dir.display());
}

/// A committed repository of `files` files of about 2 KB, 100 per folder,
/// with an ignored `target/` folder that must not be copied.
fn synthetic(root: &Path, files: usize) -> PathBuf {
    let repo = root.join(format!("repo-{files}"));
    let line = "fn example() { let value = compute(42); println!(\"{value}\"); }\n";
    let body = line.repeat(2048 / line.len());
    for i in 0..files {
        let dir = repo.join(format!("src/m{:04}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.rs")), format!("// {i}\n{body}")).unwrap();
    }
    std::fs::create_dir_all(repo.join("target")).unwrap();
    for i in 0..(files / 10).max(10) {
        std::fs::write(repo.join(format!("target/o{i}.o")), &body).unwrap();
    }
    std::fs::write(repo.join(".gitignore"), "target/\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "bench"]);
    repo
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Flushes dirty pages so that one method's writeback does not slow the
/// next one down (on a slow disk it otherwise dominates every figure).
fn settle() {
    let _ = Command::new("sync").status();
}

/// A task's copy made (`copy`: by copying), then three files edited and
/// its changes read and the copy removed: how long each took.
fn time_runner(repo: &Path, copy: bool) -> (Duration, Duration) {
    settle();
    let start = Instant::now();
    let ws = if copy {
        IsolatedWorkspace::create_copy(repo, &[])
    } else {
        IsolatedWorkspace::create(repo, &[])
    }
    .expect("copy");
    let ready = start.elapsed();
    for i in [0, 1, 2] {
        let f = ws.path().join(format!("src/m0000/f{i}.rs"));
        std::fs::write(&f, format!("// edited {i}\n")).unwrap();
    }
    let start = Instant::now();
    let changes = ws.changes().expect("changes");
    drop(ws);
    let finish = start.elapsed();
    assert_eq!(changes.len(), 3);
    (ready, finish)
}

fn time_worktree(repo: &Path, scratch: &Path) -> Duration {
    let dest = scratch.join("wt");
    let d = dest.to_str().unwrap();
    settle();
    let start = Instant::now();
    git(repo, &["worktree", "add", "-q", "--detach", d, "HEAD"]);
    let took = start.elapsed();
    git(repo, &["worktree", "remove", "--force", d]);
    took
}

fn time_cp(repo: &Path, scratch: &Path) -> Duration {
    let dest = scratch.join("cp");
    settle();
    let start = Instant::now();
    let st = Command::new("cp")
        .arg("-a")
        .arg(repo)
        .arg(&dest)
        .status()
        .unwrap();
    let took = start.elapsed();
    assert!(st.success());
    std::fs::remove_dir_all(&dest).unwrap();
    took
}

/// One task (a `bash` call, an edit, an answer) on `repo` through the
/// binary with `--workspace-mode MODE`: milliseconds to `workspace_ready`,
/// from the last answer to `task_finished`, and to `run_finished`.
fn time_task(repo: &Path, scratch: &Path, mode: &str) -> (u64, u64, u64) {
    let task = scratch.join("task.yaml");
    std::fs::write(
        &task,
        format!(
            "name: t\nprompt: x\nworkspace: {}\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: 'ls src | head -3'}}}}\n      - {{name: read_file, args: {{file_path: src/m0000/f0.rs}}}}\n  - tool_calls:\n      - {{name: edit_file, args: {{file_path: src/m0000/f0.rs, old_string: \"// 0\\n\", new_string: \"// zero\\n\"}}}}\n  - text: done\n",
            repo.display()
        ),
    )
    .unwrap();
    let out = scratch.join("task-out");
    let _ = std::fs::remove_dir_all(&out);
    settle();
    let o = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(["run", "--format", "json", "--workspace-mode", mode, "--out"])
        .arg(&out)
        .arg(&task)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut at = std::collections::HashMap::new();
    for line in o.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line).unwrap();
        let kind = v["event"].as_str().unwrap_or_default().to_string();
        at.insert(kind, v["time_ms"].as_u64().unwrap_or_default());
    }
    let diff = std::fs::read_to_string(out.join("t/changes.diff")).unwrap();
    assert!(diff.contains("+// zero"), "{diff}");
    let finished = at["task_finished"];
    (
        at["workspace_ready"],
        finished - at["model_responded"],
        at["run_finished"],
    )
}

/// The disk (KB) that `n` overlay views of `repo`, each with three files
/// edited, take in the temp folder, against one copy (`n` copies take `n`
/// times that; making them would take minutes).
fn disk_of_views(repo: &Path, n: usize) -> (u64, u64) {
    let du = |copy: bool| {
        let views: Vec<IsolatedWorkspace> = (0..if copy { 1 } else { n })
            .map(|_| {
                let ws = if copy {
                    IsolatedWorkspace::create_copy(repo, &[])
                } else {
                    IsolatedWorkspace::create(repo, &[])
                }
                .unwrap();
                for i in [0, 1, 2] {
                    let f = ws.path().join(format!("src/m0000/f{i}.rs"));
                    std::fs::write(&f, format!("// edited {i}\n")).unwrap();
                }
                ws
            })
            .collect();
        let tmp = std::env::temp_dir();
        let mut kb = 0;
        for e in std::fs::read_dir(&tmp).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // A view's layers (its mount point shows the original's
            // files, on the original's disk); a copy's files.
            let ours = if copy { "runner-ws-" } else { "runner-ov-" };
            if !name.starts_with(ours) || name.ends_with(".owner") {
                continue;
            }
            let o = Command::new("du")
                .args(["-sk", "-x"])
                .arg(e.path())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&o.stdout);
            kb += text
                .split_whitespace()
                .next()
                .and_then(|k| k.parse::<u64>().ok())
                .unwrap_or(0);
        }
        drop(views);
        kb
    };
    (du(false), du(true))
}

fn count_files(repo: &Path) -> usize {
    let out = Command::new("git")
        .args(["ls-files"])
        .current_dir(repo)
        .output()
        .unwrap();
    out.stdout.iter().filter(|&&b| b == b'\n').count()
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

fn main() {
    // Overlays live in the process's own mount namespace, entered while it
    // has one thread (as root; elsewhere every copy is a copy).
    runner::workspace::overlay::init(runner::workspace::WorkspaceMode::Auto);
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let sizes: Vec<usize> = std::env::var("BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let scratch = tempfile::tempdir().unwrap();
    let mut repos: Vec<(String, PathBuf)> = Vec::new();
    for &n in &sizes {
        eprintln!("bench: building a {n}-file repository");
        repos.push((
            format!("synthetic, {n} files"),
            synthetic(scratch.path(), n),
        ));
    }
    if let Ok(real) = std::env::var("BENCH_REPO") {
        let p = PathBuf::from(&real);
        let name = p
            .file_name()
            .map_or(real.clone(), |n| n.to_string_lossy().into_owned());
        repos.push((format!("{name}, {} files", count_files(&p)), p));
    }
    let overlay = IsolatedWorkspace::create(&repos[0].1, &[]).map(|w| w.record().mode);
    if !matches!(overlay, Ok(runner_output::CopyMode::Overlay)) {
        eprintln!("bench: no overlay here (not root?): both runner columns are copies");
    }
    // `BENCH_DISK_ONLY=1`: only the disk eight views take.
    if std::env::var_os("BENCH_DISK_ONLY").is_some() {
        if let Some((name, repo)) = repos.last() {
            let (views, copies) = disk_of_views(repo, 8);
            println!("{name}: eight views {views} KB; one copy {copies} KB");
        }
        return;
    }
    println!(
        "| repository | overlay ready | overlay diff + removal | copy ready | copy diff + removal | git worktree add | cp -a |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, repo) in &repos {
        eprintln!("bench: timing {name}");
        // One warm-up round of each, so every method sees a warm page cache.
        time_runner(repo, false);
        time_runner(repo, true);
        time_worktree(repo, scratch.path());
        let (o, c): (Vec<_>, Vec<_>) = (0..rounds)
            .map(|_| (time_runner(repo, false), time_runner(repo, true)))
            .unzip();
        let w = median(
            (0..rounds)
                .map(|_| time_worktree(repo, scratch.path()))
                .collect(),
        );
        let cp = median((0..rounds).map(|_| time_cp(repo, scratch.path())).collect());
        let half = |v: &[(Duration, Duration)], first: bool| {
            median(v.iter().map(|p| if first { p.0 } else { p.1 }).collect())
        };
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            ms(half(&o, true)),
            ms(half(&o, false)),
            ms(half(&c, true)),
            ms(half(&c, false)),
            ms(w),
            ms(cp),
        );
    }
    println!();
    println!(
        "| repository | overlay: workspace_ready | overlay: finishing | overlay: whole run | copy: workspace_ready | copy: finishing | copy: whole run |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, repo) in &repos {
        eprintln!("bench: a task on {name}");
        let o: Vec<_> = (0..rounds)
            .map(|_| time_task(repo, scratch.path(), "auto"))
            .collect();
        let c: Vec<_> = (0..rounds)
            .map(|_| time_task(repo, scratch.path(), "copy"))
            .collect();
        let med = |v: &[(u64, u64, u64)], f: fn(&(u64, u64, u64)) -> u64| {
            let mut x: Vec<u64> = v.iter().map(f).collect();
            x.sort();
            x[x.len() / 2]
        };
        println!(
            "| {name} | {} ms | {} ms | {} ms | {} ms | {} ms | {} ms |",
            med(&o, |t| t.0),
            med(&o, |t| t.1),
            med(&o, |t| t.2),
            med(&c, |t| t.0),
            med(&c, |t| t.1),
            med(&c, |t| t.2),
        );
    }
    if let Some((name, repo)) = repos.last() {
        let (views, copies) = disk_of_views(repo, 8);
        println!();
        println!(
            "Eight tasks' copies of {name}, three files edited in each: {views} KB in the temp folder as overlays; one copy takes {copies} KB, eight {} KB.",
            copies * 8
        );
    }
}
