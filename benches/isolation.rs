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
//! Prints a Markdown table (median of `BENCH_ROUNDS`, default 3, rounds).
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
}
